//! The HTTP front end's gate (protocol §5), a tower layer in front of everything the listener
//! serves: a request's `Host` must name this machine as its clients reach it (loopback names,
//! plus what `--http-host` adds; any IP literal too when `--http-public`), its `Origin`, when a
//! browser sent one, must be a loopback origin or one `--http-origin` allows (403 otherwise),
//! and it must carry the bearer token (401 with `WWW-Authenticate: Bearer` otherwise), compared
//! in constant time. A CORS preflight from an allowed origin is answered here and reaches
//! nothing else; responses to an allowed origin carry its CORS headers. On a listener that
//! serves the status page, its routes (`/status…`) take the page's session cookie, or on
//! `GET /status` a one-time ticket, in place of the token (`status::auth`).
//!
//! Every request passes Host, Origin and credentials in that order, 404s included; a listener is on
//! loopback unless `--http-public`, and has a token either way. On the status page a cookie is
//! never enough for a state-changing request (its CSRF header and the page's own `Origin` too), and
//! the bearer token never goes in a URL.

use std::net::IpAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use sha2::{Digest, Sha256};

/// A browser origin: scheme, host and port (`None`: any port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `Origin: null` (sandboxed frames, `file:` pages).
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: Option<u16>,
    },
}

impl Origin {
    /// Parses an `Origin` header value or an allowlist entry (`https://ide.example:8443`,
    /// `http://box:*` for any port, `null`). A missing port is the scheme's default.
    pub fn parse(text: &str) -> Option<Origin> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("null") {
            return Some(Origin::Null);
        }
        let (scheme, rest) = text.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.is_empty() || rest.contains(['/', '?', '#', '@']) {
            return None;
        }
        let (host, port) = if let Some(h) = rest.strip_suffix(":*") {
            (h, None)
        } else {
            let (host, port) = split_port(rest)?;
            let port = match (port, scheme.as_str()) {
                (Some(p), _) => Some(p),
                (None, "http") => Some(80),
                (None, "https") => Some(443),
                (None, _) => None,
            };
            (host, port)
        };
        let host = normalize_host(host);
        if host.is_empty() {
            return None;
        }
        Some(Origin::Tuple { scheme, host, port })
    }

    /// Whether this (allowlist) origin admits `other` (a request's).
    fn admits(&self, other: &Origin) -> bool {
        match (self, other) {
            (Origin::Null, Origin::Null) => true,
            (
                Origin::Tuple { scheme, host, port },
                Origin::Tuple {
                    scheme: s,
                    host: h,
                    port: p,
                },
            ) => scheme == s && host == h && (port.is_none() || port == p),
            _ => false,
        }
    }
}

/// `host[:port]` split; brackets of an IPv6 literal kept in the host. `None` when the port is
/// not a number.
fn split_port(authority: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let end = rest.find(']')?;
        let after = &rest[end + 1..];
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p.parse().ok()?),
            None if after.is_empty() => None,
            None => return None,
        };
        return Some((&authority[..end + 2], port));
    }
    match authority.rsplit_once(':') {
        Some((h, p)) => Some((h, Some(p.parse().ok()?))),
        None => Some((authority, None)),
    }
}

/// Lowercase, without IPv6 brackets or a trailing dot.
fn normalize_host(host: &str) -> String {
    let h = host.trim().trim_start_matches('[').trim_end_matches(']');
    h.strip_suffix('.').unwrap_or(h).to_ascii_lowercase()
}

/// `localhost` or a loopback IP literal.
fn is_loopback_host(host: &str) -> bool {
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Why a request is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: StatusCode,
    pub message: &'static str,
    /// The `WWW-Authenticate` challenge of a 401.
    pub challenge: Option<&'static str>,
}

impl Refusal {
    fn forbidden(message: &'static str) -> Refusal {
        Refusal {
            status: StatusCode::FORBIDDEN,
            message,
            challenge: None,
        }
    }

    fn unauthorized(message: &'static str, challenge: &'static str) -> Refusal {
        Refusal {
            status: StatusCode::UNAUTHORIZED,
            message,
            challenge: Some(challenge),
        }
    }
}

/// Who may talk to the listener.
pub struct Guard {
    /// SHA-256 of the token: both sides of the comparison have one length, whatever was sent.
    token: [u8; 32],
    /// Any IP literal is a host of ours (`--http-public`: clients reach the machine by address).
    public: bool,
    /// Host names besides the loopback ones (`--http-host`), normalized.
    hosts: Vec<String>,
    /// Origins besides the loopback ones (`--http-origin`).
    origins: Vec<Origin>,
    /// The status page's tickets and cookies, when this listener serves the page: its routes
    /// (`/status…`) take a session cookie (or, `GET /status` only, a one-time ticket) in place
    /// of the bearer token.
    page: Option<Arc<super::status::auth::Keys>>,
}

impl Guard {
    pub fn new(token: &str, public: bool, hosts: &[String], origins: &[Origin]) -> Guard {
        Guard {
            token: Sha256::digest(token.as_bytes()).into(),
            public,
            hosts: hosts.iter().map(|h| normalize_host(h)).collect(),
            origins: origins.to_vec(),
            page: None,
        }
    }

    /// This guard also lets a status page's cookie (or one-time ticket) in on its routes.
    pub fn with_page(mut self, keys: Arc<super::status::auth::Keys>) -> Guard {
        self.page = Some(keys);
        self
    }

    /// Whether a request without `Authorization` gets into the status page: its cookie, or a
    /// ticket valid now on `/status` itself (which the page's handler then takes).
    fn page_ok(&self, headers: &HeaderMap, uri: &axum::http::Uri) -> bool {
        let Some(keys) = &self.page else {
            return false;
        };
        let path = uri.path();
        if !super::status::is_page_path(path) || headers.contains_key(header::AUTHORIZATION) {
            return false;
        }
        // The cookie on the page's secret path only (where its `Path` has a browser send it).
        (keys.on_base(path) && keys.cookie_pass(headers).is_some())
            || (path == "/status" && keys.ticket_in(uri.query()))
    }

    /// Whether the request's `Host` (or, without one, its URI's authority) is one of ours.
    fn host_ok(&self, headers: &HeaderMap, uri: &axum::http::Uri) -> Result<(), Refusal> {
        let mut hosts = headers.get_all(header::HOST).iter();
        let authority = match (hosts.next(), hosts.next()) {
            (Some(h), None) => h
                .to_str()
                .map_err(|_| Refusal::forbidden("Forbidden: the Host header is not text"))?
                .to_string(),
            (Some(_), Some(_)) => {
                return Err(Refusal::forbidden("Forbidden: several Host headers"));
            }
            (None, _) => match uri.authority() {
                Some(a) => a.to_string(),
                None => return Err(Refusal::forbidden("Forbidden: no Host header")),
            },
        };
        let Some((host, _)) = split_port(authority.trim()) else {
            return Err(Refusal::forbidden("Forbidden: a malformed Host header"));
        };
        let host = normalize_host(host);
        let ok = is_loopback_host(&host)
            || (self.public && host.parse::<IpAddr>().is_ok())
            || self.hosts.contains(&host);
        if ok {
            Ok(())
        } else {
            Err(Refusal::forbidden(
                "Forbidden: this Host is not served here (DNS rebinding?); see --http-host",
            ))
        }
    }

    /// The request's `Origin` when it is allowed, `None` when it sent none.
    fn origin_ok<'h>(&self, headers: &'h HeaderMap) -> Result<Option<&'h HeaderValue>, Refusal> {
        let mut all = headers.get_all(header::ORIGIN).iter();
        let value = match (all.next(), all.next()) {
            (None, _) => return Ok(None),
            (Some(v), None) => v,
            (Some(_), Some(_)) => return Err(Refusal::forbidden("Forbidden: several Origins")),
        };
        let origin = value
            .to_str()
            .ok()
            .and_then(Origin::parse)
            .ok_or(Refusal::forbidden("Forbidden: a malformed Origin header"))?;
        let loopback = matches!(&origin, Origin::Tuple { scheme, host, .. }
            if (scheme == "http" || scheme == "https") && is_loopback_host(host));
        if loopback || self.origins.iter().any(|o| o.admits(&origin)) {
            Ok(Some(value))
        } else {
            Err(Refusal::forbidden(
                "Forbidden: this Origin may not use lspgate; see --http-origin",
            ))
        }
    }

    /// Whether the request carries the token, compared in constant time.
    fn token_ok(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        const MISSING: &str = "Bearer realm=\"lspgate\"";
        const WRONG: &str = "Bearer realm=\"lspgate\", error=\"invalid_token\"";
        let mut all = headers.get_all(header::AUTHORIZATION).iter();
        let value = match (all.next(), all.next()) {
            (None, _) => {
                return Err(Refusal::unauthorized(
                    "Unauthorized: send the bearer token (Authorization: Bearer TOKEN)",
                    MISSING,
                ));
            }
            (Some(v), None) => v,
            (Some(_), Some(_)) => {
                return Err(Refusal::unauthorized(
                    "Unauthorized: several Authorization headers",
                    WRONG,
                ));
            }
        };
        let given = value
            .as_bytes()
            .split_at_checked(7)
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case(b"bearer "))
            .map(|(_, token)| token.trim_ascii());
        let Some(given) = given else {
            return Err(Refusal::unauthorized(
                "Unauthorized: the Authorization scheme must be Bearer",
                MISSING,
            ));
        };
        let digest: [u8; 32] = Sha256::digest(given).into();
        if same(&digest, &self.token) {
            Ok(())
        } else {
            Err(Refusal::unauthorized(
                "Unauthorized: wrong bearer token",
                WRONG,
            ))
        }
    }

    /// Host, then Origin, then the token: the allowed origin (for CORS) or why not.
    pub fn check<'h>(
        &self,
        headers: &'h HeaderMap,
        uri: &axum::http::Uri,
    ) -> Result<Option<&'h HeaderValue>, Refusal> {
        self.host_ok(headers, uri)?;
        let origin = self.origin_ok(headers)?;
        if !self.page_ok(headers, uri) {
            self.token_ok(headers)?;
        }
        Ok(origin)
    }
}

/// Equal 32-byte digests, in time that does not depend on where they differ.
fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    crate::text::same_bytes(a, b)
}

const ALLOW_METHODS: &str = "GET, POST, DELETE";
const ALLOW_HEADERS: &str =
    "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID";
const EXPOSE_HEADERS: &str = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate";

fn cors(response: &mut Response, origin: &HeaderValue) {
    let h = response.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    h.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSE_HEADERS),
    );
    h.append(header::VARY, HeaderValue::from_static("Origin"));
}

fn refused(r: &Refusal) -> Response {
    let mut response = Response::new(Body::from(r.message));
    *response.status_mut() = r.status;
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    if let Some(c) = r.challenge {
        h.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(c));
    }
    response
}

/// The layer's function (`axum::middleware::from_fn_with_state`): every request passes here.
pub async fn gate(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    // A browser's preflight carries no credentials: an allowed origin on one of our hosts is
    // told what it may send, and nothing else happens.
    if request.method() == Method::OPTIONS
        && headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
        && headers.contains_key(header::ORIGIN)
    {
        let origin = guard
            .host_ok(headers, request.uri())
            .and_then(|()| guard.origin_ok(headers));
        return match origin {
            Ok(Some(origin)) => {
                let mut response = Response::new(Body::empty());
                *response.status_mut() = StatusCode::NO_CONTENT;
                cors(&mut response, origin);
                let h = response.headers_mut();
                h.insert(
                    header::ACCESS_CONTROL_ALLOW_METHODS,
                    HeaderValue::from_static(ALLOW_METHODS),
                );
                h.insert(
                    header::ACCESS_CONTROL_ALLOW_HEADERS,
                    HeaderValue::from_static(ALLOW_HEADERS),
                );
                h.insert(
                    header::ACCESS_CONTROL_MAX_AGE,
                    HeaderValue::from_static("600"),
                );
                response
            }
            Ok(None) => refused(&Refusal::forbidden("Forbidden")),
            Err(r) => {
                tracing::info!(status = %r.status, "refused a preflight: {}", r.message);
                refused(&r)
            }
        };
    }
    match guard.check(headers, request.uri()) {
        Ok(origin) => {
            let origin = origin.cloned();
            let mut response = next.run(request).await;
            if let Some(o) = origin {
                cors(&mut response, &o);
            }
            response
        }
        Err(r) => {
            tracing::info!(status = %r.status, method = %request.method(), "refused a request: {}", r.message);
            let mut response = refused(&r);
            // A browser may read why an allowed origin was refused (a wrong token).
            if r.status == StatusCode::UNAUTHORIZED
                && let Ok(Some(o)) = guard.origin_ok(headers)
            {
                cors(&mut response, o);
            }
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    const TOKEN: &str = "0123456789abcdef0123456789abcdef";

    fn loopback() -> Guard {
        Guard::new(TOKEN, false, &[], &[])
    }

    fn status(g: &Guard, pairs: &[(&str, &str)]) -> Option<StatusCode> {
        let uri: axum::http::Uri = "/mcp".parse().unwrap();
        g.check(&headers(pairs), &uri).err().map(|r| r.status)
    }

    const AUTH: (&str, &str) = ("authorization", "Bearer 0123456789abcdef0123456789abcdef");

    #[test]
    fn loopback_hosts_with_the_token_pass() {
        let g = loopback();
        for host in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST",
            "[::1]:9",
            "127.1.2.3",
            "localhost.",
        ] {
            assert_eq!(status(&g, &[("host", host), AUTH]), None, "{host}");
        }
    }

    #[test]
    fn foreign_hosts_are_forbidden_even_with_the_token() {
        let g = loopback();
        for host in [
            "evil.example:8080",
            "10.0.0.5:8080",
            "localhost.evil.example",
            "[::2]:80",
            "127.0.0.1:notaport",
        ] {
            assert_eq!(
                status(&g, &[("host", host), AUTH]),
                Some(StatusCode::FORBIDDEN),
                "{host}"
            );
        }
        assert_eq!(
            status(&g, &[("host", "127.0.0.1"), ("host", "evil.example"), AUTH]),
            Some(StatusCode::FORBIDDEN)
        );
    }

    #[test]
    fn public_listeners_take_ip_literals_and_named_hosts() {
        let g = Guard::new(TOKEN, true, &["Box.Example".into()], &[]);
        assert_eq!(status(&g, &[("host", "10.0.0.5:8080"), AUTH]), None);
        assert_eq!(status(&g, &[("host", "[fd00::1]:8080"), AUTH]), None);
        assert_eq!(status(&g, &[("host", "box.example:8080"), AUTH]), None);
        assert_eq!(
            status(&g, &[("host", "rebind.evil.example:8080"), AUTH]),
            Some(StatusCode::FORBIDDEN)
        );
    }

    #[test]
    fn origins_loopback_or_listed() {
        let listed = Origin::parse("https://ide.example").unwrap();
        let any_port = Origin::parse("http://box.example:*").unwrap();
        let g = Guard::new(TOKEN, false, &[], &[listed, any_port]);
        let h = ("host", "127.0.0.1:8080");
        for ok in [
            "http://localhost:6274",
            "http://127.0.0.1",
            "https://[::1]:3000",
            "https://ide.example",
            "https://ide.example:443",
            "http://box.example:1234",
        ] {
            assert_eq!(status(&g, &[h, ("origin", ok), AUTH]), None, "{ok}");
        }
        for bad in [
            "https://evil.example",
            "https://ide.example:8443",
            "http://ide.example",
            "null",
            "file://",
            "not an origin",
            "chrome-extension://localhost",
        ] {
            assert_eq!(
                status(&g, &[h, ("origin", bad), AUTH]),
                Some(StatusCode::FORBIDDEN),
                "{bad}"
            );
        }
        // No Origin (a program, not a browser): fine.
        assert_eq!(status(&g, &[h, AUTH]), None);
    }

    #[test]
    fn the_token_is_required_and_compared_whole() {
        let g = loopback();
        let h = ("host", "127.0.0.1:8080");
        let refusal = |pairs: &[(&str, &str)]| {
            let uri: axum::http::Uri = "/mcp".parse().unwrap();
            g.check(&headers(pairs), &uri).unwrap_err()
        };
        let none = refusal(&[h]);
        assert_eq!(none.status, StatusCode::UNAUTHORIZED);
        assert_eq!(none.challenge, Some("Bearer realm=\"lspgate\""));
        for wrong in [
            "Bearer 0123456789abcdef0123456789abcdeX",
            "Bearer 0123456789abcdef0123456789abcde",
            "Bearer 0123456789abcdef0123456789abcdef0",
            "Bearer ",
            "Basic 0123456789abcdef0123456789abcdef",
            "0123456789abcdef0123456789abcdef",
        ] {
            let r = refusal(&[h, ("authorization", wrong)]);
            assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{wrong}");
            assert!(r.challenge.unwrap().starts_with("Bearer"), "{wrong}");
        }
        assert_eq!(
            status(
                &g,
                &[
                    h,
                    ("authorization", "bearer 0123456789abcdef0123456789abcdef")
                ]
            ),
            None
        );
        assert_eq!(
            status(&g, &[h, AUTH, AUTH]),
            Some(StatusCode::UNAUTHORIZED),
            "two Authorization headers"
        );
    }

    #[test]
    fn digests_compare_equal_only_when_equal() {
        let a = [7u8; 32];
        let mut b = a;
        assert!(same(&a, &b));
        b[31] ^= 1;
        assert!(!same(&a, &b));
        b = a;
        b[0] ^= 0x80;
        assert!(!same(&a, &b));
    }
}
