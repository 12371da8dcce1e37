//! What a client, or many, can hold of an HTTP listener (protocol §5): its own accept loop (hyper's
//! HTTP/1.1 connections, a header-read timeout that is also the keep-alive timeout, a cap on open
//! connections under the process's file-descriptor limit), and in front of rmcp a cap on MCP
//! sessions and on requests in flight per session. A connection past the cap takes the place of
//! the one idle longest (not in a request; one that never passed the guard first), so idle or
//! slow sockets cannot crowd out a client; when every connection is in a request the newcomer is
//! told `503` with `Retry-After`. Sessions past the cap get `503`, requests past a session's
//! in-flight cap `429`, both with `Retry-After`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::{Notify, watch};

/// Open connections a listener keeps, at most (and never more than a quarter of the process's
/// file-descriptor limit, `RLIMIT_NOFILE`). Past it a new connection takes the place of the one
/// idle longest; when all are in a request, it is answered `503` with `Retry-After: 1`.
/// `LSPGATE_HTTP_MAX_CONNECTIONS` overrides.
pub const MAX_CONNECTIONS: usize = 128;

/// MCP sessions a listener keeps at once (those being set up and 2026-07-28's one-request
/// sessions included). Past it, a POST without `Mcp-Session-Id` is answered `503` with
/// `Retry-After: 5`. `LSPGATE_HTTP_MAX_SESSIONS` overrides.
pub const MAX_SESSIONS: usize = 64;

/// Requests one MCP session has in flight (a POST until its response has been sent), at most:
/// `429` with `Retry-After: 1` past it.
pub const MAX_SESSION_INFLIGHT: usize = 32;

/// How long a connection has to send a request's line and headers, counted from when it opened
/// or its last response ended: a connection silent that long is closed, so this is the
/// keep-alive timeout too. `LSPGATE_HTTP_HEADER_TIMEOUT` (seconds) overrides.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// An MCP session that exchanged no message for this long is closed (rmcp's session
/// keep-alive); its memory goes with it.
pub const SESSION_IDLE: Duration = Duration::from_secs(300);

/// How long a finished response's events are kept for a client resuming its stream with
/// `Last-Event-ID` (rmcp keeps them 60 s by default: a fast client's finished calls would pile
/// up that long).
pub const RESUME_WINDOW: Duration = Duration::from_secs(10);

/// Connections take at most this share (1/N) of the file-descriptor limit: language servers,
/// the state database and the daemon's sockets need the rest.
const FD_SHARE: usize = 4;

/// Connections past the cap being answered `503` at once; more are closed unanswered.
const OVERFLOW: usize = 16;

/// `Retry-After` of a connection refused at the cap, and of a session refused at its cap.
const RETRY_CONNECTION: &str = "1";
const RETRY_SESSION: &str = "5";

/// The bounds of one listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_connections: usize,
    pub max_sessions: usize,
    pub max_session_inflight: usize,
    pub header_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: MAX_CONNECTIONS,
            max_sessions: MAX_SESSIONS,
            max_session_inflight: MAX_SESSION_INFLIGHT,
            header_timeout: HEADER_TIMEOUT,
        }
    }
}

impl Limits {
    /// The defaults, with the overrides `var` finds (the environment of the listener's client).
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Limits, String> {
        let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let count = |name: &str, default: usize| match set(name) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{name}={v}: expected a positive whole number")),
        };
        let header_timeout = match set("LSPGATE_HTTP_HEADER_TIMEOUT") {
            None => HEADER_TIMEOUT,
            Some(v) => v
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.05 && *s <= 3600.0)
                .map(Duration::from_secs_f64)
                .ok_or_else(|| {
                    format!("LSPGATE_HTTP_HEADER_TIMEOUT={v}: expected seconds (0.05 to 3600)")
                })?,
        };
        Ok(Limits {
            max_connections: count("LSPGATE_HTTP_MAX_CONNECTIONS", MAX_CONNECTIONS)?,
            max_sessions: count("LSPGATE_HTTP_MAX_SESSIONS", MAX_SESSIONS)?,
            max_session_inflight: MAX_SESSION_INFLIGHT,
            header_timeout,
        })
    }

    /// The connection cap within this process's file-descriptor limit.
    pub fn connections(&self) -> usize {
        self.max_connections.min((fd_limit() / FD_SHARE).max(4))
    }
}

/// The soft `RLIMIT_NOFILE`.
fn fd_limit() -> usize {
    // Unlimited is `None`; the call cannot fail for this process's own limit.
    match rustix::process::getrlimit(rustix::process::Resource::Nofile).current {
        None => usize::MAX,
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A plain-text refusal with `Retry-After`.
fn refusal(status: StatusCode, retry_after: &'static str, message: String) -> Response {
    let mut response = Response::new(Body::from(message));
    *response.status_mut() = status;
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(header::RETRY_AFTER, HeaderValue::from_static(retry_after));
    response
}

/// A response body holding `H` until it has been sent (or dropped with its connection).
struct Held<H> {
    body: Body,
    _held: H,
}

impl<H: Unpin> hyper::body::Body for Held<H> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// `response` with `held` kept until its body has gone out.
pub(super) fn hold<H: Send + Unpin + 'static>(response: Response, held: H) -> Response {
    response.map(|body| Body::new(Held { body, _held: held }))
}

/// The open connections of a listener.
#[derive(Default)]
struct Table {
    conns: Mutex<HashMap<u64, Conn>>,
    next: AtomicU64,
}

struct Conn {
    /// Requests of this connection being answered.
    busy: usize,
    /// A request of it passed the guard.
    proven: bool,
    /// Since when it has no request.
    idle_since: Instant,
    /// Tells the connection to close (once its request in flight, if any, is answered).
    evict: Arc<Notify>,
}

enum Admitted {
    Open(u64, Arc<Notify>),
    Full,
}

impl Table {
    /// A place for a new connection: free, or the one of the connection idle longest (one
    /// that never passed the guard first), which is told to close.
    fn admit(&self, cap: usize) -> Admitted {
        let mut conns = lock(&self.conns);
        if conns.len() >= cap && !Self::evict_in(&mut conns) {
            return Admitted::Full;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let evict = Arc::new(Notify::new());
        conns.insert(
            id,
            Conn {
                busy: 0,
                proven: false,
                idle_since: Instant::now(),
                evict: evict.clone(),
            },
        );
        Admitted::Open(id, evict)
    }

    /// Closes the connection idle longest; false when every one is in a request.
    fn evict_one(&self) -> bool {
        Self::evict_in(&mut lock(&self.conns))
    }

    fn evict_in(conns: &mut HashMap<u64, Conn>) -> bool {
        let victim = conns
            .iter()
            .filter(|(_, c)| c.busy == 0)
            .min_by_key(|(_, c)| (c.proven, c.idle_since))
            .map(|(id, _)| *id);
        match victim.and_then(|id| conns.remove(&id)) {
            Some(c) => {
                c.evict.notify_one();
                true
            }
            None => false,
        }
    }

    fn enter(self: &Arc<Self>, id: u64) -> Busy {
        if let Some(c) = lock(&self.conns).get_mut(&id) {
            c.busy += 1;
        }
        Busy(self.clone(), id)
    }

    fn prove(&self, id: u64) {
        if let Some(c) = lock(&self.conns).get_mut(&id) {
            c.proven = true;
        }
    }

    fn remove(&self, id: u64) {
        lock(&self.conns).remove(&id);
    }

    fn len(&self) -> usize {
        lock(&self.conns).len()
    }
}

/// A request of a connection, from its head to the end of its response.
struct Busy(Arc<Table>, u64);

impl Drop for Busy {
    fn drop(&mut self) {
        if let Some(c) = lock(&self.0.conns).get_mut(&self.1) {
            c.busy = c.busy.saturating_sub(1);
            c.idle_since = Instant::now();
        }
    }
}

/// A connection answered `503` past the cap, counted while it lives.
struct Overflow(Arc<AtomicUsize>);

impl Drop for Overflow {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Serves `app` on `tcp` until `closing` turns true, then takes no more connections and asks
/// each open one to close once its request in flight is answered; returns when all have.
pub(super) async fn run(
    tcp: tokio::net::TcpListener,
    app: axum::Router,
    limits: Limits,
    mut closing: watch::Receiver<bool>,
) {
    let cap = limits.connections();
    let table = Arc::new(Table::default());
    let overflow = Arc::new(AtomicUsize::new(0));
    let mut conns = tokio::task::JoinSet::new();
    let mut warned = false;
    loop {
        let accepted = tokio::select! {
            a = tcp.accept() => a,
            Some(_) = conns.join_next() => continue,
            _ = closing.wait_for(|c| *c) => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors: an idle connection gives its own back. Other errors are
                // the connection's (reset before it was accepted).
                let out_of_fds = matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE));
                tracing::debug!("accepting an HTTP connection: {e}");
                if out_of_fds && !table.evict_one() {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                continue;
            }
        };
        // Small answers go out at once (Nagle's delay would hold each one for the client's ACK).
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY: {e}");
        }
        match table.admit(cap) {
            Admitted::Open(id, evict) => {
                if table.len() >= cap && !warned {
                    warned = true;
                    tracing::info!(
                        "{cap} HTTP connections open, the most this listener keeps: new ones take the place of the idle longest"
                    );
                }
                let conn = serve_conn(
                    stream,
                    app.clone(),
                    table.clone(),
                    id,
                    evict,
                    limits.header_timeout,
                    closing.clone(),
                );
                conns.spawn(conn);
            }
            Admitted::Full => {
                let counted = overflow
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                        (n < OVERFLOW).then_some(n + 1)
                    })
                    .is_ok();
                tracing::debug!("{cap} HTTP connections open, all in a request: 503");
                if counted {
                    let held = Overflow(overflow.clone());
                    let timeout = limits.header_timeout;
                    conns.spawn(async move {
                        let _held = held;
                        refuse_conn(stream, cap, timeout).await;
                    });
                }
            }
        }
    }
    drop(tcp);
    while conns.join_next().await.is_some() {}
}

/// One connection, served until it closes, is evicted (closed once its request in flight is
/// answered) or the listener stops.
async fn serve_conn(
    stream: tokio::net::TcpStream,
    app: axum::Router,
    table: Arc<Table>,
    id: u64,
    evict: Arc<Notify>,
    header_timeout: Duration,
    mut closing: watch::Receiver<bool>,
) {
    let tower = hyper_util::service::TowerToHyperService::new(app);
    let service = {
        let table = table.clone();
        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let preflight = request.method() == Method::OPTIONS;
            let busy = table.enter(id);
            let answer = hyper::service::Service::call(&tower, request);
            let table = table.clone();
            async move {
                let response = match answer.await {
                    Ok(r) => r,
                    Err(never) => match never {},
                };
                // The guard let it through: this connection is a client's, not a squatter's.
                if !preflight
                    && !matches!(
                        response.status(),
                        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN
                    )
                {
                    table.prove(id);
                }
                Ok::<_, Infallible>(hold(response, busy))
            }
        })
    };
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .keep_alive(true);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    let mut shutting = false;
    loop {
        tokio::select! {
            r = conn.as_mut() => {
                if let Err(e) = r {
                    tracing::debug!("HTTP connection: {e}");
                }
                break;
            }
            () = evict.notified(), if !shutting => {
                conn.as_mut().graceful_shutdown();
                shutting = true;
            }
            _ = closing.wait_for(|c| *c), if !shutting => {
                conn.as_mut().graceful_shutdown();
                shutting = true;
            }
        }
    }
    table.remove(id);
}

/// A connection past the cap: its first request answered `503`, then closed.
async fn refuse_conn(stream: tokio::net::TcpStream, cap: usize, header_timeout: Duration) {
    let service = hyper::service::service_fn(move |_: hyper::Request<Incoming>| async move {
        let mut r = refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            RETRY_CONNECTION,
            format!(
                "Service Unavailable: {cap} connections are open on this listener and all are in a request; retry shortly"
            ),
        );
        r.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        Ok::<_, Infallible>(r)
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .keep_alive(false);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    let _ = tokio::time::timeout(header_timeout + Duration::from_secs(5), conn).await;
}

tokio::task_local! {
    /// The session place a request without `Mcp-Session-Id` claimed, for the session rmcp makes
    /// while answering it (the factory runs in the request's task).
    static CLAIMED: RefCell<Option<Slot>>;
}

/// One MCP session counted in the listener's sessions while it lives.
pub(super) struct Slot(Arc<AtomicUsize>);

impl Slot {
    /// The place the request being answered claimed, or one counted now (a session made outside
    /// a request: none is, today).
    pub(super) fn claimed_or_new(sessions: &Arc<AtomicUsize>) -> Slot {
        CLAIMED
            .try_with(|c| c.borrow_mut().take())
            .ok()
            .flatten()
            .unwrap_or_else(|| {
                sessions.fetch_add(1, Ordering::AcqRel);
                Slot(sessions.clone())
            })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The session and per-session request caps of a listener.
pub(super) struct Admission {
    sessions: Arc<AtomicUsize>,
    max_sessions: usize,
    max_inflight: usize,
    /// Requests in flight per session id (as the client sent it).
    inflight: Mutex<HashMap<String, usize>>,
}

impl Admission {
    pub(super) fn new(sessions: Arc<AtomicUsize>, limits: &Limits) -> Admission {
        Admission {
            sessions,
            max_sessions: limits.max_sessions,
            max_inflight: limits.max_session_inflight,
            inflight: Mutex::default(),
        }
    }

    fn enter(self: &Arc<Self>, session: &str) -> Option<Entered> {
        let mut inflight = lock(&self.inflight);
        let n = inflight.entry(session.to_string()).or_default();
        if *n >= self.max_inflight {
            return None;
        }
        *n += 1;
        Some(Entered(self.clone(), session.to_string()))
    }
}

/// A request of a session in flight.
struct Entered(Arc<Admission>, String);

impl Drop for Entered {
    fn drop(&mut self) {
        let mut inflight = lock(&self.0.inflight);
        if let Some(n) = inflight.get_mut(&self.1) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                inflight.remove(&self.1);
            }
        }
    }
}

/// The layer's function, behind the guard: a POST without `Mcp-Session-Id` (an `initialize`,
/// or a 2026-07-28 request, each of which makes a session) claims a session place or is
/// answered `503`; a POST of a session counts against its requests in flight or is answered
/// `429`.
pub(super) async fn admit(
    State(a): State<Arc<Admission>>,
    request: Request,
    next: Next,
) -> Response {
    // The status page's POSTs are no MCP session (and must work when MCP is at its cap).
    if request.method() != Method::POST || crate::status::is_page_path(request.uri().path()) {
        return next.run(request).await;
    }
    let session = request
        .headers()
        .get("mcp-session-id")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    match session {
        None => {
            let claimed = a
                .sessions
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                    (n < a.max_sessions).then_some(n + 1)
                })
                .is_ok();
            if !claimed {
                tracing::debug!(
                    "{} MCP sessions open, the most this listener keeps: 503",
                    a.max_sessions
                );
                return refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    RETRY_SESSION,
                    format!(
                        "Service Unavailable: {} MCP sessions are open on this listener, the most it keeps; end one (DELETE /mcp with its Mcp-Session-Id) or retry later",
                        a.max_sessions
                    ),
                );
            }
            let slot = Slot(a.sessions.clone());
            // Unclaimed by a session (a malformed request), the place is given back here.
            CLAIMED
                .scope(RefCell::new(Some(slot)), next.run(request))
                .await
        }
        Some(id) => {
            let Some(entered) = a.enter(&id) else {
                return refusal(
                    StatusCode::TOO_MANY_REQUESTS,
                    RETRY_CONNECTION,
                    format!(
                        "Too Many Requests: this session has {} requests in flight, the most lspgate runs at once for one session; retry once one is answered",
                        a.max_inflight
                    ),
                );
            };
            hold(next.run(request).await, entered)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_default_and_come_from_the_environment() {
        let none = |_: &str| None;
        assert_eq!(Limits::from_env(none).unwrap(), Limits::default());
        let env = |k: &str| match k {
            "LSPGATE_HTTP_MAX_CONNECTIONS" => Some("7".to_string()),
            "LSPGATE_HTTP_MAX_SESSIONS" => Some(" 3 ".to_string()),
            "LSPGATE_HTTP_HEADER_TIMEOUT" => Some("0.5".to_string()),
            _ => None,
        };
        let l = Limits::from_env(env).unwrap();
        assert_eq!(
            (l.max_connections, l.max_sessions, l.header_timeout),
            (7, 3, Duration::from_millis(500))
        );
        assert_eq!(l.connections(), 7.min(fd_limit() / FD_SHARE).max(4));
        for (k, v) in [
            ("LSPGATE_HTTP_MAX_CONNECTIONS", "0"),
            ("LSPGATE_HTTP_MAX_SESSIONS", "many"),
            ("LSPGATE_HTTP_HEADER_TIMEOUT", "-1"),
            ("LSPGATE_HTTP_HEADER_TIMEOUT", "inf"),
        ] {
            let e = Limits::from_env(|n: &str| (n == k).then(|| v.to_string())).unwrap_err();
            assert!(e.contains(k), "{e}");
        }
    }

    #[test]
    fn a_full_table_evicts_the_idle_longest_unproven_first_and_never_a_busy_one() {
        let t = Arc::new(Table::default());
        let Admitted::Open(a, a_evict) = t.admit(2) else {
            panic!("room")
        };
        let Admitted::Open(b, _) = t.admit(2) else {
            panic!("room")
        };
        // `a` is a client's (it passed the guard), `b` an idle squatter: `b` goes first.
        t.prove(a);
        let Admitted::Open(c, _) = t.admit(2) else {
            panic!("evicts")
        };
        assert!(!lock(&t.conns).contains_key(&b));
        // `c` is in a request: `a`, though proven, is the only idle one.
        let busy = t.enter(c);
        let Admitted::Open(d, _) = t.admit(2) else {
            panic!("evicts")
        };
        assert!(!lock(&t.conns).contains_key(&a));
        let waited = a_evict.notified();
        tokio::pin!(waited);
        assert!(
            futures::FutureExt::now_or_never(waited).is_some(),
            "told to close"
        );
        let _busy_d = t.enter(d);
        assert!(matches!(t.admit(2), Admitted::Full), "all in a request");
        drop(busy);
        assert!(matches!(t.admit(2), Admitted::Open(..)));
        assert!(lock(&t.conns).contains_key(&d));
    }
}
