//! How a browser gets into the status page (protocol §5, "Status page"): the daemon mints a
//! one-time ticket (`daemon status --web`, over its unix socket), `GET /status?ticket=…`
//! trades it for a session cookie (HttpOnly, SameSite=Strict, path `/status`) and a CSRF
//! token the page sends back in a header with every POST. Tickets live 60 s and are taken
//! once; cookies live 12 h. Only SHA-256 digests are kept, compared without early exit.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, header};
use sha2::{Digest, Sha256};

/// The session cookie's name.
pub const COOKIE: &str = "lspgate_status";
/// The header a page's POST carries its CSRF token in.
pub const CSRF_HEADER: &str = "x-lspgate-csrf";
/// How long a ticket may wait to be used.
pub const TICKET_LIFE: Duration = Duration::from_secs(60);
/// How long a cookie lets its browser in.
pub const COOKIE_LIFE: Duration = Duration::from_secs(12 * 3600);
/// Cookies kept at most (the oldest goes first): a page opened many times does not grow this.
const MAX_COOKIES: usize = 64;
/// Tickets waiting at most.
const MAX_TICKETS: usize = 64;

type Digest32 = [u8; 32];

fn digest(secret: &str) -> Digest32 {
    Sha256::digest(secret.as_bytes()).into()
}

/// 32 random bytes in hex.
pub fn random_secret() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness: {e}"))?;
    Ok(crate::text::hex(&bytes))
}

/// A browser session: its CSRF token and until when it holds.
#[derive(Clone)]
struct Session {
    csrf: String,
    until: Instant,
}

/// The tickets not yet taken and the cookies handed out, for every listener that serves the
/// page in this daemon.
#[derive(Default)]
pub struct Keys {
    tickets: Mutex<Vec<(Digest32, Instant)>>,
    cookies: Mutex<Vec<(Digest32, Session)>>,
    /// Where a browser's page lives, `/status/<random>`: the cookie is scoped to it, so it is
    /// sent nowhere else, not to another loopback port's `/status` either (cookies know no
    /// ports) nor to another daemon's page.
    base: std::sync::OnceLock<String>,
}

/// What a request's credentials are worth on the page's routes.
pub enum Pass {
    /// The bearer token (a script, not a browser): no CSRF check needed.
    Bearer,
    /// A valid cookie, with its session's CSRF token.
    Cookie { csrf: String },
}

impl Keys {
    /// The page's secret path for browsers (made once per daemon).
    pub fn base(&self) -> &str {
        self.base.get_or_init(|| {
            let secret = random_secret().unwrap_or_default();
            format!("/status/{}", secret.get(..24).unwrap_or("page"))
        })
    }

    /// Whether `path` is the page's secret path or below it.
    pub fn on_base(&self, path: &str) -> bool {
        let base = self.base();
        path == base || path.strip_prefix(base).is_some_and(|r| r.starts_with('/'))
    }

    /// A new ticket (its secret; only its digest is kept).
    pub fn mint(&self) -> Result<String, String> {
        let secret = random_secret()?;
        let now = Instant::now();
        if let Ok(mut t) = self.tickets.lock() {
            t.retain(|(_, until)| *until > now);
            if t.len() >= MAX_TICKETS {
                t.remove(0);
            }
            t.push((digest(&secret), now + TICKET_LIFE));
        }
        Ok(secret)
    }

    /// Whether `ticket` is valid now (not taken).
    pub fn ticket_valid(&self, ticket: &str) -> bool {
        let d = digest(ticket);
        let now = Instant::now();
        self.tickets.lock().is_ok_and(|t| {
            t.iter().fold(false, |found, (k, until)| {
                found | (same(k, &d) & (*until > now))
            })
        })
    }

    /// Takes `ticket` (once) and opens a session for it: `(cookie, csrf)`.
    pub fn redeem(&self, ticket: &str) -> Option<(String, String)> {
        let d = digest(ticket);
        let now = Instant::now();
        let taken = {
            let mut t = self.tickets.lock().ok()?;
            let at = t.iter().position(|(k, until)| same(k, &d) && *until > now);
            t.retain(|(_, until)| *until > now);
            match at {
                Some(_) => {
                    t.retain(|(k, _)| !same(k, &d));
                    true
                }
                None => false,
            }
        };
        if !taken {
            return None;
        }
        let cookie = random_secret().ok()?;
        let csrf = random_secret().ok()?;
        let mut c = self.cookies.lock().ok()?;
        c.retain(|(_, s)| s.until > now);
        if c.len() >= MAX_COOKIES {
            c.remove(0);
        }
        c.push((
            digest(&cookie),
            Session {
                csrf: csrf.clone(),
                until: now + COOKIE_LIFE,
            },
        ));
        Some((cookie, csrf))
    }

    /// The session a request's cookie opens, if any.
    fn session(&self, headers: &HeaderMap) -> Option<Session> {
        let given = cookie(headers)?;
        let d = digest(&given);
        let now = Instant::now();
        let c = self.cookies.lock().ok()?;
        let mut found = None;
        for (k, s) in c.iter() {
            if same(k, &d) && s.until > now {
                found = Some(s.clone());
            }
        }
        found
    }

    /// A cookie's pass (the bearer token is the guard's to check).
    pub fn cookie_pass(&self, headers: &HeaderMap) -> Option<Pass> {
        self.session(headers).map(|s| Pass::Cookie { csrf: s.csrf })
    }

    /// Whether a request carries a ticket that is valid now (`GET /status?ticket=…`).
    pub fn ticket_in(&self, query: Option<&str>) -> bool {
        ticket_of(query).is_some_and(|t| self.ticket_valid(&t))
    }
}

/// The `ticket` parameter of a query string.
pub fn ticket_of(query: Option<&str>) -> Option<String> {
    query?
        .split('&')
        .find_map(|kv| kv.strip_prefix("ticket="))
        .filter(|t| !t.is_empty() && t.len() <= 128)
        .map(str::to_string)
}

/// The value of lspgate's cookie in a request's `Cookie` headers.
fn cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|kv| {
            let (k, v) = kv.trim().split_once('=')?;
            (k == COOKIE).then(|| v.trim().to_string())
        })
}

/// Whether a POST carries its session's CSRF token, compared without early exit.
pub fn csrf_ok(headers: &HeaderMap, csrf: &str) -> bool {
    let mut all = headers.get_all(CSRF_HEADER).iter();
    match (all.next(), all.next()) {
        (Some(v), None) => same(&digest(csrf), &digest_bytes(v.as_bytes())),
        _ => false,
    }
}

fn digest_bytes(b: &[u8]) -> Digest32 {
    Sha256::digest(b).into()
}

fn same(a: &Digest32, b: &Digest32) -> bool {
    crate::text::same_bytes(a, b)
}

/// The `Set-Cookie` value for a new session.
pub fn set_cookie(secret: &str, path: &str) -> String {
    format!(
        "{COOKIE}={secret}; Path={path}; HttpOnly; SameSite=Strict; Max-Age={}",
        COOKIE_LIFE.as_secs()
    )
}

/// The sessions' CSRF tokens by cookie, for tests.
#[cfg(test)]
fn count(keys: &Keys) -> usize {
    keys.cookies.lock().map(|c| c.len()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn a_ticket_opens_one_session_once() {
        let keys = Keys::default();
        let t = keys.mint().unwrap();
        assert!(keys.ticket_valid(&t));
        assert!(!keys.ticket_valid("nope"));
        let (cookie, csrf) = keys.redeem(&t).expect("first use");
        assert!(keys.redeem(&t).is_none(), "a ticket is taken once");
        assert!(!keys.ticket_valid(&t));
        assert_eq!(count(&keys), 1);
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("a=b; {COOKIE}={cookie}")).unwrap(),
        );
        match keys.cookie_pass(&h) {
            Some(Pass::Cookie { csrf: c }) => assert_eq!(c, csrf),
            _ => panic!("the cookie passes"),
        }
        h.insert(CSRF_HEADER, HeaderValue::from_str(&csrf).unwrap());
        assert!(csrf_ok(&h, &csrf));
        h.insert(CSRF_HEADER, HeaderValue::from_static("wrong"));
        assert!(!csrf_ok(&h, &csrf));
        let mut other = HeaderMap::new();
        other.insert(
            header::COOKIE,
            HeaderValue::from_static("lspgate_status=forged"),
        );
        assert!(keys.cookie_pass(&other).is_none());
    }

    #[test]
    fn tickets_come_from_the_query() {
        assert_eq!(ticket_of(Some("x=1&ticket=ab")), Some("ab".into()));
        assert_eq!(ticket_of(Some("ticket=")), None);
        assert_eq!(ticket_of(None), None);
    }
}
