//! The network edge (docs/rules/api.md#callers-and-authentication): one middleware, outermost in `http::router`, that every request passes.
//!
//! 1. **Who the client is.** The TCP peer; only when the peer lies inside `TRUSTED_PROXIES`, the right-most
//!    `X-Forwarded-For` entry that is not itself a trusted proxy (and the proxy's `X-Forwarded-Proto` /
//!    `X-Forwarded-Host`). From anyone else those headers are ignored. The result is put in the request as
//!    [`ClientAddr`]; `auth::client_of` reads it, so rate limits and audit rows use it.
//! 2. **Where a state change comes from (CSRF).** A request other than GET / HEAD / OPTIONS is refused (403, error
//!    body) when its `Origin` is not the service's own (host and port of the `Host` the request was sent to, and
//!    the scheme when it is known), or, without `Origin`, when `Sec-Fetch-Site` is not `same-origin` / `none`.
//!    With neither header (not a browser: browsers send `Origin` on every POST), it passes only when it carries
//!    no session cookie, so a cookie cannot be ridden by an old browser either; a login without them (curl, a
//!    script) passes, one with a foreign `Origin` does not (login CSRF). A REST request with
//!    `Authorization: Bearer` is a machine client's (a browser cannot add that header across sites) and is exempt.
//! 3. **Server functions take JSON only**: a state-changing `/sfn` request whose `Content-Type` is not
//!    `application/json` is 415, before Leptos reads it.
//! 4. **Headers on every response**: a Content-Security-Policy (pages: scripts only from the site and the inline
//!    ones carrying this response's nonce, which Leptos puts on its hydration and streaming scripts; the API: nothing
//!    at all), `frame-ancestors 'none'` and `X-Frame-Options: DENY`, `X-Content-Type-Options: nosniff`,
//!    `Referrer-Policy: same-origin`; over HTTPS (`SECURE_COOKIES`, or `X-Forwarded-Proto: https` from a trusted
//!    proxy) `Strict-Transport-Security` and `Secure` on every cookie set.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::uri::{Authority, Uri};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use ipnet::IpNet;
use leptos::nonce::Nonce;

use crate::server::error::AppError;
use crate::server::AppState;

pub(crate) use crate::server::auth::ClientAddr;

/// Where the server functions live (the `prefix` of every `#[server]`).
pub(crate) const SERVER_FN_PATH: &str = "/sfn/";

/// The session cookie's name.
pub(crate) const SESSION_COOKIE: &str = "docnum_session";

/// How a request reached the service, as far as the service can tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Reached {
    /// The client: the TCP peer, or the address a trusted proxy forwarded for.
    pub(crate) client: Option<IpAddr>,
    /// `https` / `http` when known: `SECURE_COOKIES` says https; a trusted proxy's `X-Forwarded-Proto` says which.
    pub(crate) scheme: Option<&'static str>,
    /// The host (and port) the request was sent to: `Host` (or a trusted proxy's `X-Forwarded-Host`).
    pub(crate) host: Option<String>,
}

/// The site as its visitor reached it (`https://host`): the verify links the QR codes carry.
#[derive(Clone, Debug)]
pub(crate) struct Site(pub(crate) String);

impl Reached {
    pub(crate) fn site(&self) -> Option<Site> {
        self.host.as_ref().map(|h| Site(format!("{}://{h}", self.scheme.unwrap_or("http"))))
    }

    pub(crate) fn https(&self) -> bool {
        self.scheme == Some("https")
    }
}

const SEC_FETCH_SITE: HeaderName = HeaderName::from_static("sec-fetch-site");
const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
const X_FORWARDED_PROTO: HeaderName = HeaderName::from_static("x-forwarded-proto");
const X_FORWARDED_HOST: HeaderName = HeaderName::from_static("x-forwarded-host");

/// Where the REST API lives.
const API_PATH: &str = "/api/";
/// The policy of every API response: JSON is never a document, a script or a frame.
pub const API_CSP: &str = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
/// One year; no `includeSubDomains`: other hosts of the domain are not this service's to decide.
const HSTS: &str = "max-age=31536000";

/// The middleware (wired in `http::router`, outside the sessions).
pub(crate) async fn guard(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let peer = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip());
    let reached = resolve(peer, req.headers(), req.uri(), &state.config.trusted_proxies, state.config.secure_cookies);
    if let Some(ip) = reached.client {
        req.extensions_mut().insert(ClientAddr(ip));
    }
    if let Some(site) = reached.site() {
        req.extensions_mut().insert(site);
    }
    let path = req.uri().path().to_string();
    // the API answers JSON only: no page, no scripts, no nonce
    let nonce = (!path.starts_with(API_PATH)).then(Nonce::new);
    if let Some(nonce) = &nonce {
        req.extensions_mut().insert(nonce.clone());
    }
    let response = match check(req.method(), &path, req.headers(), &reached) {
        Ok(()) => next.run(req).await,
        Err(e) => {
            tracing::info!(path, client = ?reached.client, error = %e, "refused at the edge");
            e.into_response()
        }
    };
    secure(response, nonce.as_ref(), reached.https() && !state.config.secure_cookies, reached.https(), state.config.live_reload)
}

/// Puts this request's nonce (made by [`guard`]) in the Leptos context, where `use_nonce` finds it for the
/// hydration and streaming scripts; the CSP header of the response names the same nonce. Called from the
/// router's additional context, right after leptos_axum has provided the request parts (and a nonce of its own,
/// which this one replaces).
pub(crate) fn provide_nonce() {
    use leptos::prelude::{provide_context, use_context};
    if let Some(nonce) = use_context::<axum::http::request::Parts>().and_then(|p| p.extensions.get::<Nonce>().cloned()) {
        provide_context(nonce);
    }
}

/// The client, scheme and host of a request that came from `peer` (see the module documentation).
pub(crate) fn resolve(peer: Option<IpAddr>, headers: &HeaderMap, uri: &Uri, trusted: &[IpNet], secure_cookies: bool) -> Reached {
    let peer = peer.map(|p| p.to_canonical());
    let from_proxy = peer.is_some_and(|p| is_trusted(p, trusted));
    let client = match peer {
        Some(p) if from_proxy => Some(forwarded_client(p, headers, trusted)),
        other => other,
    };
    let forwarded_proto = if from_proxy { last_value(headers, &X_FORWARDED_PROTO) } else { None };
    let scheme = match forwarded_proto.as_deref() {
        Some(p) if p.eq_ignore_ascii_case("https") => Some("https"),
        Some(p) if p.eq_ignore_ascii_case("http") && !secure_cookies => Some("http"),
        _ if secure_cookies => Some("https"),
        _ => None,
    };
    let forwarded_host = if from_proxy { last_value(headers, &X_FORWARDED_HOST) } else { None };
    let host = forwarded_host
        .or_else(|| headers.get(header::HOST).and_then(|h| h.to_str().ok()).map(str::to_string))
        .or_else(|| uri.authority().map(|a| a.to_string()));
    Reached { client, scheme, host }
}

fn is_trusted(ip: IpAddr, trusted: &[IpNet]) -> bool {
    trusted.iter().any(|net| net.contains(&ip))
}

/// Walks `X-Forwarded-For` from the right (the entry the nearest proxy added) past the trusted proxies; the first
/// address that is not one of them is the client. An entry that is not an address stops the walk at the last hop
/// read; a chain of trusted proxies only gives its left-most address.
fn forwarded_client(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    let entries: Vec<&str> = headers.get_all(&X_FORWARDED_FOR).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).collect();
    let mut client = peer;
    for entry in entries.iter().rev() {
        match parse_forwarded_ip(entry) {
            Some(ip) => {
                client = ip;
                if !is_trusted(ip, trusted) {
                    break;
                }
            }
            None => break,
        }
    }
    client
}

/// `203.0.113.9`, `2001:db8::1`, and the forms with a port some proxies write: `203.0.113.9:4711`, `[2001:db8::1]:4711`.
fn parse_forwarded_ip(entry: &str) -> Option<IpAddr> {
    let entry = entry.trim();
    entry.parse::<IpAddr>().or_else(|_| entry.parse::<SocketAddr>().map(|s| s.ip())).ok().map(|ip| ip.to_canonical())
}

/// The right-most non-empty value of a comma-separated header: what the nearest proxy set.
fn last_value(headers: &HeaderMap, name: &HeaderName) -> Option<String> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .rfind(|v| !v.is_empty())
        .map(str::to_string)
}

/// The refusals of the edge: a state change from another site (403), a server function body that is not JSON (415).
pub(crate) fn check(method: &Method, path: &str, headers: &HeaderMap, reached: &Reached) -> Result<(), AppError> {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return Ok(());
    }
    let machine_client = path.starts_with(API_PATH) && crate::server::auth::bearer_token(headers).is_some();
    if !machine_client {
        match source(headers, reached) {
            Source::SameOrigin => {}
            Source::Foreign(why) => return Err(AppError::CrossOrigin(why)),
            Source::Unknown if has_session_cookie(headers) => {
                return Err(AppError::CrossOrigin("a request with the session cookie but neither Origin nor Sec-Fetch-Site".into()))
            }
            Source::Unknown => {}
        }
    }
    if path.starts_with(SERVER_FN_PATH) && !is_json(headers) {
        let sent = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("none");
        return Err(AppError::UnsupportedMediaType(format!("server functions take application/json, not {sent}")));
    }
    Ok(())
}

#[derive(Debug, PartialEq, Eq)]
enum Source {
    SameOrigin,
    /// From elsewhere: why.
    Foreign(String),
    /// Neither `Origin` nor `Sec-Fetch-Site`: not a browser's request.
    Unknown,
}

fn source(headers: &HeaderMap, reached: &Reached) -> Source {
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = String::from_utf8_lossy(origin.as_bytes());
        return if same_origin(&origin, reached) {
            Source::SameOrigin
        } else {
            Source::Foreign(format!("Origin {origin} is not this service ({})", reached.host.as_deref().unwrap_or("no Host")))
        };
    }
    match headers.get(SEC_FETCH_SITE) {
        Some(site) if site == "same-origin" || site == "none" => Source::SameOrigin,
        Some(site) => Source::Foreign(format!("Sec-Fetch-Site: {}", String::from_utf8_lossy(site.as_bytes()))),
        None => Source::Unknown,
    }
}

/// `Origin` (`scheme://host[:port]`) names the host and port the request was sent to, and the scheme it came by
/// when that is known. `null` (a sandboxed frame, a redirect across sites) is never the service.
fn same_origin(origin: &str, reached: &Reached) -> bool {
    let Ok(origin) = origin.trim().parse::<Uri>() else { return false };
    let (Some(scheme), Some(authority)) = (origin.scheme_str(), origin.authority()) else { return false };
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "https" => 443,
        "http" => 80,
        _ => return false,
    };
    if reached.scheme.is_some_and(|s| !s.eq_ignore_ascii_case(scheme)) {
        return false;
    }
    let Some(host) = reached.host.as_deref().and_then(|h| h.trim().parse::<Authority>().ok()) else { return false };
    authority.host().eq_ignore_ascii_case(host.host()) && authority.port_u16().unwrap_or(default_port) == host.port_u16().unwrap_or(default_port)
}

fn has_session_cookie(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .any(|c| c.split_once('=').is_some_and(|(name, _)| name.trim() == SESSION_COOKIE))
}

/// Server functions take `application/json` only.
fn is_json(headers: &HeaderMap) -> bool {
    crate::server::error::media_type(headers).is_some_and(|m| m == "application/json")
}

/// The policy of a page: scripts from the site and the inline ones with this response's nonce (Leptos' hydration
/// and streaming scripts), WebAssembly compiled from the site, styles and images from the site, no plugins, no
/// framing, forms and `<base>` only to the site. Under `cargo leptos watch` the live-reload socket is allowed.
pub(crate) fn page_csp(nonce: &str, live_reload: bool) -> String {
    let connect = if live_reload { "'self' ws: wss:" } else { "'self'" };
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; font-src 'self'; \
         connect-src {connect}; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
    )
}

/// The security headers of a response (see the module documentation): the page policy with `nonce`, or without
/// one the API's.
fn secure(mut response: Response, nonce: Option<&Nonce>, mark_cookies_secure: bool, https: bool, live_reload: bool) -> Response {
    let csp = nonce.map_or_else(|| API_CSP.to_string(), |n| page_csp(n, live_reload));
    let headers = response.headers_mut();
    if let Ok(csp) = HeaderValue::from_str(&csp) {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    if https {
        headers.insert(header::STRICT_TRANSPORT_SECURITY, HeaderValue::from_static(HSTS));
    }
    if mark_cookies_secure {
        secure_cookies(headers);
    }
    response
}

/// Adds `Secure` to every `Set-Cookie` that lacks it (HTTPS known per request, `SECURE_COOKIES` off).
fn secure_cookies(headers: &mut HeaderMap) {
    let cookies: Vec<HeaderValue> = headers.get_all(header::SET_COOKIE).iter().cloned().collect();
    if cookies.is_empty() {
        return;
    }
    headers.remove(header::SET_COOKIE);
    for cookie in cookies {
        let text = String::from_utf8_lossy(cookie.as_bytes());
        let secure = text.split(';').skip(1).any(|a| a.trim().eq_ignore_ascii_case("secure"));
        let value = if secure { Some(cookie.clone()) } else { HeaderValue::from_str(&format!("{text}; Secure")).ok() };
        headers.append(header::SET_COOKIE, value.unwrap_or(cookie));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nets(list: &[&str]) -> Vec<IpNet> {
        list.iter().map(|n| crate::server::config::parse_trusted_proxy(n).unwrap()).collect()
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(HeaderName::from_bytes(k.as_bytes()).unwrap(), HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    fn client(peer: &str, pairs: &[(&str, &str)], trusted: &[&str]) -> IpAddr {
        resolve(ip(peer), &headers(pairs), &Uri::from_static("/"), &nets(trusted), false).client.unwrap()
    }

    #[test]
    fn forwarded_for_is_believed_only_from_a_trusted_peer() {
        let xff = [("x-forwarded-for", "203.0.113.9")];
        assert_eq!(client("127.0.0.1", &xff, &[]), "127.0.0.1".parse::<IpAddr>().unwrap());
        assert_eq!(client("198.51.100.7", &xff, &["127.0.0.0/8"]), "198.51.100.7".parse::<IpAddr>().unwrap());
        assert_eq!(client("127.0.0.1", &xff, &["127.0.0.0/8"]), "203.0.113.9".parse::<IpAddr>().unwrap());
        // IPv4 peer seen through a dual-stack socket
        assert_eq!(client("::ffff:127.0.0.1", &xff, &["127.0.0.0/8"]), "203.0.113.9".parse::<IpAddr>().unwrap());
        // no header from a trusted proxy: the proxy is the client
        assert_eq!(client("127.0.0.1", &[], &["127.0.0.0/8"]), "127.0.0.1".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn the_right_most_untrusted_entry_is_the_client_and_a_spoofed_left_part_is_not() {
        let trusted = ["10.0.0.0/8", "127.0.0.1"];
        // the client wrote "1.1.1.1" itself; the edge proxy appended the real peer, an inner proxy appended the edge
        let chain = [("x-forwarded-for", "1.1.1.1, 203.0.113.9, 10.0.0.5")];
        assert_eq!(client("127.0.0.1", &chain, &trusted), "203.0.113.9".parse::<IpAddr>().unwrap());
        // the same over two header lines, with ports and IPv6
        let lines = [("x-forwarded-for", "1.1.1.1"), ("x-forwarded-for", "[2001:db8::7]:4711, 10.0.0.5:80")];
        assert_eq!(client("127.0.0.1", &lines, &trusted), "2001:db8::7".parse::<IpAddr>().unwrap());
        // garbage stops the walk at the last hop read
        let garbage = [("x-forwarded-for", "203.0.113.9, not-an-ip, 10.0.0.5")];
        assert_eq!(client("127.0.0.1", &garbage, &trusted), "10.0.0.5".parse::<IpAddr>().unwrap());
        // every entry trusted: the left-most
        let all = [("x-forwarded-for", "10.0.0.9, 10.0.0.5")];
        assert_eq!(client("127.0.0.1", &all, &trusted), "10.0.0.9".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn scheme_and_host_come_from_a_trusted_proxy_or_the_configuration() {
        let h = headers(&[("host", "internal:3000"), ("x-forwarded-proto", "https"), ("x-forwarded-host", "docs.example.org")]);
        let uri = Uri::from_static("/");
        let untrusted = resolve(ip("192.0.2.1"), &h, &uri, &nets(&["127.0.0.0/8"]), false);
        assert_eq!((untrusted.scheme, untrusted.host.as_deref()), (None, Some("internal:3000")));
        let trusted = resolve(ip("127.0.0.1"), &h, &uri, &nets(&["127.0.0.0/8"]), false);
        assert_eq!((trusted.scheme, trusted.host.as_deref()), (Some("https"), Some("docs.example.org")));
        assert!(trusted.https());
        let configured = resolve(ip("192.0.2.1"), &h, &uri, &[], true);
        assert_eq!(configured.scheme, Some("https"));
    }

    fn reached(host: &str, scheme: Option<&'static str>) -> Reached {
        Reached { client: ip("127.0.0.1"), scheme, host: Some(host.into()) }
    }

    #[test]
    fn the_own_origin_matches_host_port_and_known_scheme() {
        let r = reached("127.0.0.1:3000", None);
        assert!(same_origin("http://127.0.0.1:3000", &r));
        assert!(same_origin("HTTP://127.0.0.1:3000", &r));
        assert!(!same_origin("http://127.0.0.1:3001", &r));
        assert!(!same_origin("http://evil.example", &r));
        assert!(!same_origin("null", &r));
        assert!(!same_origin("", &r));
        // default ports on either side
        assert!(same_origin("https://docs.example.org", &reached("docs.example.org:443", Some("https"))));
        assert!(same_origin("https://docs.example.org:443", &reached("Docs.Example.org", Some("https"))));
        assert!(!same_origin("http://docs.example.org", &reached("docs.example.org", Some("https"))));
        assert!(!same_origin("http://docs.example.org", &Reached { host: None, ..reached("x", None) }));
    }

    #[test]
    fn state_changes_need_the_own_origin_or_no_cookie() {
        let r = reached("127.0.0.1:3000", None);
        let post = Method::POST;
        let rest = "/api/v1/document-numbering/reserve";
        let cookie = ("cookie", "theme=dark; docnum_session=abc");
        let own = ("origin", "http://127.0.0.1:3000");
        let foreign = ("origin", "https://evil.example");
        assert!(check(&post, rest, &headers(&[cookie, own]), &r).is_ok());
        assert_eq!(check(&post, rest, &headers(&[cookie, foreign]), &r).unwrap_err().status(), 403);
        assert_eq!(check(&post, rest, &headers(&[cookie]), &r).unwrap_err().status(), 403);
        assert!(check(&Method::GET, rest, &headers(&[cookie, foreign]), &r).is_ok());
        // a machine client: no cookie and no Origin, or a bearer token whatever it sends
        assert!(check(&post, rest, &headers(&[]), &r).is_ok());
        assert!(check(&post, rest, &headers(&[("authorization", "Bearer t"), foreign]), &r).is_ok());
        // login CSRF: no cookie yet, but a foreign Origin
        assert_eq!(check(&post, "/api/v1/auth/login", &headers(&[foreign]), &r).unwrap_err().status(), 403);
        // Sec-Fetch-Site without Origin
        assert!(check(&post, rest, &headers(&[cookie, ("sec-fetch-site", "same-origin")]), &r).is_ok());
        assert!(check(&post, rest, &headers(&[cookie, ("sec-fetch-site", "none")]), &r).is_ok());
        assert_eq!(check(&post, rest, &headers(&[cookie, ("sec-fetch-site", "same-site")]), &r).unwrap_err().status(), 403);
        assert_eq!(check(&post, rest, &headers(&[("sec-fetch-site", "cross-site")]), &r).unwrap_err().status(), 403);
        // a cookie whose name only ends like the session's is not the session
        assert!(check(&post, rest, &headers(&[("cookie", "not_docnum_session=1")]), &r).is_ok());
    }

    #[test]
    fn server_functions_take_json_only_and_a_bearer_token_does_not_exempt_them() {
        let r = reached("127.0.0.1:3000", None);
        let own = ("origin", "http://127.0.0.1:3000");
        let sfn = "/sfn/reserve_number";
        assert!(check(&Method::POST, sfn, &headers(&[own, ("content-type", "application/json; charset=utf-8")]), &r).is_ok());
        let form = check(&Method::POST, sfn, &headers(&[own, ("content-type", "application/x-www-form-urlencoded")]), &r);
        assert_eq!(form.unwrap_err().status(), 415);
        assert_eq!(check(&Method::POST, sfn, &headers(&[own]), &r).unwrap_err().status(), 415);
        let bearer = [("authorization", "Bearer t"), ("cookie", "docnum_session=a"), ("content-type", "application/json")];
        assert_eq!(check(&Method::POST, sfn, &headers(&bearer), &r).unwrap_err().status(), 403);
    }

    #[test]
    fn cookies_get_secure_once() {
        let mut h = headers(&[("set-cookie", "docnum_session=a; HttpOnly; Path=/"), ("set-cookie", "b=1; Secure")]);
        secure_cookies(&mut h);
        let all: Vec<_> = h.get_all(header::SET_COOKIE).iter().map(|v| v.to_str().unwrap().to_string()).collect();
        assert_eq!(all, ["docnum_session=a; HttpOnly; Path=/; Secure", "b=1; Secure"]);
    }

    #[test]
    fn the_page_policy_names_the_nonce_and_forbids_framing() {
        let csp = page_csp("abc123", false);
        assert!(csp.contains("script-src 'self' 'nonce-abc123' 'wasm-unsafe-eval'"), "{csp}");
        assert!(csp.contains("frame-ancestors 'none'") && csp.contains("object-src 'none'"), "{csp}");
        assert!(!csp.contains("unsafe-inline"), "{csp}");
    }
}
