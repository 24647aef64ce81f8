//! TLS to the backends, one way of saying it for each: the same URL parameters as MariaDB's.
//!
//! - MariaDB: `DATABASE_URL=mysql://…/docnum?ssl-mode=VERIFY_IDENTITY&ssl-ca=/etc/docnum/tls/ca.pem` (and optionally
//!   `&ssl-cert=…&ssl-key=…`, a client certificate). sqlx reads them; every pool is made from that URL (the main pool,
//!   the committers', the session store's, the failover watcher's probes), so all of them verify the server.
//! - Redis: `rediss://…:6380/?ssl-ca=/etc/docnum/tls/ca.pem` (optionally `ssl-cert`, `ssl-key`). [`redis_client`]
//!   takes those parameters out of the URL and gives them to the Redis client; every use opens its client here (the
//!   Redlock servers, the rate limiter, the login throttle, pub/sub, the witness, the metrics' PING).
//! - Without `ssl-ca`, servers are checked against the system's store, or `SSL_CERT_FILE` when set (OpenSSL's
//!   convention, which rustls' native roots follow).
//!
//! A certificate that does not verify is an error naming the server; there is no fall back to plain text (a
//! `rediss://` URL never connects without TLS, nor does `ssl-mode=VERIFY_IDENTITY`). [`cert_files`] lists the
//! certificate files named, for the expiry gauge `docnum_tls_cert_expiry_seconds`.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The parameters of a Redis URL that are ours, not the Redis client's.
const REDIS_TLS_PARAMS: [&str; 3] = ["ssl-ca", "ssl-cert", "ssl-key"];

/// `url` with its password replaced by `***`: for logs and errors. Unparsable text is replaced as a whole.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            if u.password().is_some() {
                let _ = u.set_password(Some("***"));
            }
            u.to_string()
        }
        Err(_) => "<unparsable URL>".into(),
    }
}

/// `host:port` of a URL (what an error names).
pub fn server_of(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(u) => match (u.host_str(), u.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            _ => "<no host>".into(),
        },
        Err(_) => "<unparsable URL>".into(),
    }
}

/// The Redis client of one URL of `REDIS_URLS`. For `rediss://`, `ssl-ca` (the CA the server's certificate must chain
/// to, instead of the system store) and `ssl-cert` + `ssl-key` (a client certificate) are read from their files; the
/// server's name is verified. Those parameters on a `redis://` URL are refused: they would be ignored, in plain text.
pub fn redis_client(url: &str) -> Result<redis::Client, String> {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return Err(format!("Redis URL {} is not a URL", redact(url)));
    };
    let mut ours: Vec<(String, String)> = Vec::new();
    let mut rest: Vec<(String, String)> = Vec::new();
    for (k, v) in parsed.query_pairs() {
        if REDIS_TLS_PARAMS.contains(&k.as_ref()) {
            ours.push((k.into_owned(), v.into_owned()));
        } else {
            rest.push((k.into_owned(), v.into_owned()));
        }
    }
    if ours.is_empty() {
        return redis::Client::open(url).map_err(|e| format!("Redis URL {}: {e}", redact(url)));
    }
    if parsed.scheme() != "rediss" {
        return Err(format!("Redis URL {}: ssl-ca, ssl-cert and ssl-key need rediss:// (TLS)", redact(url)));
    }
    if rest.is_empty() {
        parsed.set_query(None);
    } else {
        parsed.query_pairs_mut().clear().extend_pairs(rest);
    }
    let param = |name: &str| ours.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let read = |name: &str| -> Result<Option<Vec<u8>>, String> {
        param(name).map(|path| std::fs::read(&path).map_err(|e| format!("Redis URL {}: {name} {path}: {e}", redact(url)))).transpose()
    };
    let root_cert = read("ssl-ca")?;
    let client_tls = match (read("ssl-cert")?, read("ssl-key")?) {
        (Some(client_cert), Some(client_key)) => Some(redis::ClientTlsConfig { client_cert, client_key }),
        (None, None) => None,
        _ => return Err(format!("Redis URL {}: ssl-cert and ssl-key go together", redact(url))),
    };
    redis::Client::build_with_tls(parsed.as_str(), redis::TlsCertificates { client_tls, root_cert })
        .map_err(|e| format!("Redis URL {}: {e}", redact(url)))
}

/// Whether a URL's host is this machine (`localhost`, 127.0.0.0/8, `::1`); None when it has no host.
pub fn on_loopback(url: &url::Url) -> Option<bool> {
    Some(match url.host()? {
        // mysql:// and redis:// are not special schemes to the URL parser: an address arrives as a domain
        url::Host::Domain(d) => {
            d.eq_ignore_ascii_case("localhost") || d.trim_matches(['[', ']']).parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
        }
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
    })
}

/// A warning for a backend URL that crosses the network unverified: MariaDB without `ssl-mode=VERIFY_IDENTITY` (or
/// `VERIFY_CA`), Redis without `rediss://`, to a host other than loopback. None for SQLite and for loopback.
pub fn unverified(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    if on_loopback(&parsed)? {
        return None;
    }
    let server = server_of(url);
    match parsed.scheme() {
        "mysql" | "mariadb" => {
            let mode = parsed.query_pairs().find(|(k, _)| k == "ssl-mode" || k == "sslmode").map(|(_, v)| v.to_ascii_uppercase());
            (!matches!(mode.as_deref(), Some("VERIFY_IDENTITY" | "VERIFY_CA")))
                .then(|| format!("MariaDB at {server}: the server is not verified (add ssl-mode=VERIFY_IDENTITY&ssl-ca=<CA file> to DATABASE_URL)"))
        }
        "redis" => Some(format!("Redis at {server}: plain text (use rediss://…/?ssl-ca=<CA file> in REDIS_URLS)")),
        _ => None,
    }
}

/// Connects to one Redis server and sends PING: Ok, or why not, naming the server (a certificate that does not
/// verify says so). The start logs it, so that a TLS mistake is not mistaken for an outage.
pub async fn check_redis(url: &str, timeout: Duration) -> Result<(), String> {
    let client = redis_client(url)?;
    let server = server_of(url);
    let ping = async {
        let mut con = client.get_multiplexed_async_connection().await?;
        redis::cmd("PING").query_async::<String>(&mut con).await
    };
    match tokio::time::timeout(timeout, ping).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(format!("Redis at {server}: {}", explain(&crate::server::error::report(&e)))),
        Err(_) => Err(format!("Redis at {server}: no answer within {timeout:?}")),
    }
}

/// A connection error of MariaDB with the server it was for: sqlx's TLS and I/O errors do not say which (a
/// certificate that does not verify arrives as an I/O error of the handshake).
pub fn name_db_error(url: &str, e: sqlx::Error) -> sqlx::Error {
    match e {
        sqlx::Error::Tls(inner) => {
            let why = explain(&crate::server::error::report(inner.as_ref()));
            sqlx::Error::Tls(format!("MariaDB at {}: TLS: {why}", server_of(url)).into())
        }
        sqlx::Error::Io(io) => {
            let why = explain(&crate::server::error::report(&io));
            sqlx::Error::Io(std::io::Error::new(io.kind(), format!("MariaDB at {}: {why}", server_of(url))))
        }
        other => other,
    }
}

/// A certificate failure says what to check.
fn explain(report: &str) -> String {
    let lower = report.to_ascii_lowercase();
    if lower.contains("certificate") || lower.contains("unknownissuer") || lower.contains("notvalidforname") {
        format!("{report} (the server's certificate does not verify against the trusted CA: check ssl-ca / SSL_CERT_FILE and its name)")
    } else {
        report.to_string()
    }
}

/// The certificate files named by these URLs (`ssl-ca`, `ssl-cert`) and the extra ones given: those whose expiry
/// the instance exports. Duplicates once.
pub fn cert_files<'a>(urls: impl IntoIterator<Item = &'a str>, extra: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    for url in urls {
        if let Ok(u) = url::Url::parse(url) {
            for (k, v) in u.query_pairs() {
                if k == "ssl-ca" || k == "ssl-cert" {
                    files.push(PathBuf::from(v.as_ref()));
                }
            }
        }
    }
    files.extend(extra);
    files.sort();
    files.dedup();
    files
}

/// The earliest `notAfter` (Unix seconds) of the certificates of a PEM file; None when none can be read.
pub fn expiry_of(path: &Path) -> Option<i64> {
    let text = std::fs::read_to_string(path).ok()?;
    pem_certificates(&text).iter().filter_map(|der| not_after(der)).min()
}

/// The DER bodies of the `CERTIFICATE` blocks of a PEM text.
fn pem_certificates(text: &str) -> Vec<Vec<u8>> {
    use base64::Engine;
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN CERTIFICATE-----") {
        let body = &rest[start + "-----BEGIN CERTIFICATE-----".len()..];
        let Some(end) = body.find("-----END CERTIFICATE-----") else { break };
        let b64: String = body[..end].chars().filter(|c| !c.is_whitespace()).collect();
        if let Ok(der) = base64::engine::general_purpose::STANDARD.decode(b64) {
            out.push(der);
        }
        rest = &body[end..];
    }
    out
}

/// One DER element: (tag, its content, what follows it).
fn der(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        (rest[..n].iter().fold(0usize, |acc, b| (acc << 8) | usize::from(*b)), &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

/// `notAfter` of an X.509 certificate (Certificate → tbsCertificate → [version], serial, signature, issuer, validity).
fn not_after(cert: &[u8]) -> Option<i64> {
    let (_, certificate, _) = der(cert)?;
    let (_, tbs, _) = der(certificate)?;
    let mut rest = tbs;
    if rest.first() == Some(&0xa0) {
        rest = der(rest)?.2; // the explicit version
    }
    for _ in 0..3 {
        rest = der(rest)?.2; // serial, signature algorithm, issuer
    }
    let (_, validity, _) = der(rest)?;
    let (_, _, after) = der(validity)?;
    let (tag, time, _) = der(after)?;
    let text = std::str::from_utf8(time).ok()?.strip_suffix('Z')?;
    let full = match tag {
        // UTCTime: YYMMDDHHMMSS, 50–99 → 19xx
        0x17 if text.len() == 12 => {
            let yy: i32 = text[..2].parse().ok()?;
            format!("{}{}", if yy >= 50 { 1900 + yy } else { 2000 + yy }, &text[2..])
        }
        // GeneralizedTime: YYYYMMDDHHMMSS
        0x18 if text.len() == 14 => text.to_string(),
        _ => return None,
    };
    chrono::NaiveDateTime::parse_from_str(&full, "%Y%m%d%H%M%S").ok().map(|t| t.and_utc().timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted_and_servers_named() {
        assert_eq!(redact("rediss://:hunter2@10.0.0.6:6380/"), "rediss://:***@10.0.0.6:6380/");
        assert_eq!(
            redact("mysql://docnum:s3cret@db:3306/docnum?ssl-mode=VERIFY_IDENTITY"),
            "mysql://docnum:***@db:3306/docnum?ssl-mode=VERIFY_IDENTITY"
        );
        assert!(!redact("not a url s3cret").contains("s3cret"));
        assert_eq!(server_of("rediss://:pw@10.0.0.6:6380/?ssl-ca=/x"), "10.0.0.6:6380");
    }

    #[test]
    fn backends_across_the_network_without_verification_are_named() {
        assert!(unverified("mysql://u:pw@db1.internal:3306/docnum").unwrap().contains("MariaDB at db1.internal:3306"));
        assert!(unverified("mysql://u:pw@10.0.0.5/docnum?ssl-mode=REQUIRED").is_some(), "encrypted but not verified");
        assert!(unverified("mysql://u:pw@db1/docnum?ssl-mode=VERIFY_IDENTITY&ssl-ca=/ca.pem").is_none());
        assert!(unverified("mysql://root@127.0.0.1:3306/docnum").is_none(), "loopback");
        assert!(unverified("redis://:pw@10.0.0.6:6379").unwrap().contains("Redis at 10.0.0.6:6379"));
        assert!(unverified("rediss://10.0.0.6:6380/").is_none());
        assert!(unverified("redis://localhost:6379").is_none());
        assert!(unverified("sqlite:///var/lib/docnum/docnum.db").is_none());
        assert!(!unverified("redis://:pw@10.0.0.6:6379").unwrap().contains("pw"));
    }

    #[test]
    fn tls_parameters_need_rediss_and_their_files() {
        let plain = redis_client("redis://127.0.0.1:6379/?ssl-ca=/nonexistent").unwrap_err();
        assert!(plain.contains("need rediss://"), "{plain}");
        let missing = redis_client("rediss://:pw@127.0.0.1:6380/?ssl-ca=/nonexistent/ca.pem").unwrap_err();
        assert!(missing.contains("/nonexistent/ca.pem") && !missing.contains("pw@"), "{missing}");
        assert!(redis_client("rediss://127.0.0.1:6380/").is_ok(), "the system store");
    }

    #[test]
    fn certificate_files_are_listed_once() {
        let files = cert_files(
            [
                "mysql://u@db/d?ssl-mode=VERIFY_IDENTITY&ssl-ca=/tls/ca.pem&ssl-cert=/tls/me.pem&ssl-key=/tls/me.key",
                "rediss://r:6380/?ssl-ca=/tls/ca.pem",
            ],
            [PathBuf::from("/tls/hooks.pem")],
        );
        assert_eq!(files, ["/tls/ca.pem", "/tls/hooks.pem", "/tls/me.pem"].map(PathBuf::from));
    }

    /// A certificate made by `openssl req -x509 -days 1 -subj /CN=t` on 2026-11-28 (valid to 2026-11-29 23:17:41).
    const CERT: &str = "-----BEGIN CERTIFICATE-----
MIIBbjCCAROgAwIBAgIUEJ/no62Pc1JUFYU0ZtmiJu9izzIwCgYIKoZIzj0EAwIw
DDEKMAgGA1UEAwwBdDAeFw0yNjExMjgyMzE3NDFaFw0yNjExMjkyMzE3NDFaMAwx
CjAIBgNVBAMMAXQwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAARLwd8jlJb57oJN
y3aVoUKstwMtvVMmHImkvIilkvu/CY/69ifX9w+RFhPw1Eyh+NYtyqo3Sq0lQC4O
m01MWdhWo1MwUTAdBgNVHQ4EFgQU6TeuMdW6U08sXYsbF07cxFWhd+0wHwYDVR0j
BBgwFoAU6TeuMdW6U08sXYsbF07cxFWhd+0wDwYDVR0TAQH/BAUwAwEB/zAKBggq
hkjOPQQDAgNJADBGAiEA9taaGfRjaBdkYnoKeBhXRuGkODG6aJZr9esYDVzPJYYC
IQCQSNMAXM2DG8HJ/xBChyiwocSLGBziwRdfORbh7rLD8Q==
-----END CERTIFICATE-----
";

    #[test]
    fn a_certificates_expiry_is_read() {
        let ders = pem_certificates(CERT);
        assert_eq!(ders.len(), 1);
        let expected = chrono::DateTime::parse_from_rfc3339("2026-11-29T23:17:41Z").unwrap().timestamp();
        assert_eq!(not_after(&ders[0]), Some(expected));
    }
}
