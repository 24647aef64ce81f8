//! Where a webhook may point: a public address only, unless `WEBHOOK_ALLOW_PRIVATE_TARGETS=true`. A URL whose host is,
//! or resolves to, a loopback, link-local, private (RFC 1918, RFC 6598), unique-local (fc00::/7), unspecified,
//! multicast or broadcast address is refused when the webhook is saved (400), and again when a delivery connects:
//! the HTTP client resolves names through [`PublicOnly`], which hands it public addresses only, so a name that
//! resolves elsewhere later (DNS rebinding) reaches nothing. An IPv4 address written inside IPv6 (`::ffff:10.0.0.1`)
//! is judged as the IPv4 address. Redirects are not followed (the client's policy), so a public receiver cannot send
//! a delivery on to an internal one.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// Why an address is not a webhook's to reach; None for a public one.
pub fn refused(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return refused_v4(v4).map(|_| "an IPv4-mapped internal address");
            }
            let first = v6.segments()[0];
            if v6.is_loopback() {
                Some("loopback")
            } else if v6.is_unspecified() {
                Some("unspecified")
            } else if first & 0xffc0 == 0xfe80 {
                Some("link-local")
            } else if first & 0xfe00 == 0xfc00 {
                Some("unique-local")
            } else if v6.is_multicast() {
                Some("multicast")
            } else if v6.segments()[..6] == [0; 6] {
                // IPv4-compatible (::a.b.c.d, deprecated): whatever it embeds, nothing public is written so
                Some("an IPv4-compatible address")
            } else {
                None
            }
        }
    }
}

fn refused_v4(v4: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = v4.octets();
    if v4.is_loopback() {
        Some("loopback")
    } else if v4.is_unspecified() || a == 0 {
        Some("unspecified")
    } else if v4.is_link_local() {
        Some("link-local")
    } else if v4.is_private() {
        Some("private")
    } else if a == 100 && (64..128).contains(&b) {
        Some("private (shared address space)")
    } else if v4.is_broadcast() {
        Some("broadcast")
    } else if v4.is_multicast() {
        Some("multicast")
    } else {
        None
    }
}

/// The host of a webhook URL as an address, when it is written as one (`http://10.0.0.1/`, `http://[::1]/`).
pub fn literal_host(url: &url::Url) -> Option<IpAddr> {
    match url.host()? {
        url::Host::Ipv4(v4) => Some(IpAddr::V4(v4)),
        url::Host::Ipv6(v6) => Some(IpAddr::V6(v6)),
        url::Host::Domain(_) => None,
    }
}

/// The first refused address a URL's host is or resolves to: (address, why). A name that does not resolve now is not
/// refused here (the delivery checks again when it connects).
pub async fn first_refused(url: &url::Url) -> Option<(IpAddr, &'static str)> {
    if let Some(ip) = literal_host(url) {
        return refused(ip).map(|why| (ip, why));
    }
    let host = url.host_str()?;
    let port = url.port_or_known_default().unwrap_or(443);
    let addrs = tokio::net::lookup_host((host, port)).await.ok()?;
    addrs.map(|a| a.ip()).find_map(|ip| refused(ip).map(|why| (ip, why)))
}

/// The webhooks' resolver: a name's public addresses only; a name with none is an error naming what it resolved to.
pub struct PublicOnly;

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        Box::pin(public_addresses(name.as_str().to_string()))
    }
}

async fn public_addresses(host: String) -> Result<reqwest::dns::Addrs, Box<dyn std::error::Error + Send + Sync>> {
    let all: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
    let public: Vec<SocketAddr> = all.iter().copied().filter(|a| refused(a.ip()).is_none()).collect();
    if public.is_empty() {
        let listed = all.iter().map(|a| a.ip().to_string()).collect::<Vec<_>>().join(", ");
        let why = all.first().and_then(|a| refused(a.ip())).unwrap_or("no address");
        return Err(format!(
            "webhook target {host} refused: it resolves to {listed} ({why}); set WEBHOOK_ALLOW_PRIVATE_TARGETS=true to allow internal receivers"
        )
        .into());
    }
    Ok(Box::new(public.into_iter()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv6Addr;

    fn why(text: &str) -> Option<&'static str> {
        refused(text.parse().unwrap())
    }

    #[test]
    fn internal_addresses_are_refused_and_public_ones_pass() {
        for (ip, expected) in [
            ("127.0.0.1", "loopback"),
            ("127.8.9.10", "loopback"),
            ("::1", "loopback"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.254", "private"),
            ("192.168.1.1", "private"),
            ("100.64.0.1", "private (shared address space)"),
            ("169.254.169.254", "link-local"),
            ("fe80::1", "link-local"),
            ("fc00::1", "unique-local"),
            ("fd12:3456::1", "unique-local"),
            ("0.0.0.0", "unspecified"),
            ("::", "unspecified"),
            ("::ffff:127.0.0.1", "an IPv4-mapped internal address"),
            ("::ffff:10.0.0.1", "an IPv4-mapped internal address"),
            ("::ffff:169.254.169.254", "an IPv4-mapped internal address"),
            ("::10.0.0.1", "an IPv4-compatible address"),
            ("224.0.0.1", "multicast"),
            ("255.255.255.255", "broadcast"),
        ] {
            assert_eq!(why(ip), Some(expected), "{ip}");
        }
        for ip in ["93.184.216.34", "172.32.0.1", "100.128.0.1", "2606:2800:220:1::1", "::ffff:93.184.216.34", "1.1.1.1"] {
            assert_eq!(why(ip), None, "{ip}");
        }
    }

    #[test]
    fn a_literal_host_is_read_from_the_url() {
        assert_eq!(literal_host(&url::Url::parse("http://[::1]:8080/x").unwrap()), Some(Ipv6Addr::LOCALHOST.into()));
        assert_eq!(literal_host(&url::Url::parse("https://10.0.0.1/").unwrap()), Some(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1))));
        assert_eq!(literal_host(&url::Url::parse("https://hooks.example/").unwrap()), None);
    }
}
