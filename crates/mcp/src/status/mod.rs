//! The daemon's live status page (protocol §5, "Status page"), on the HTTP front end behind the
//! same guard as MCP: `GET /status` (the page, one HTML file with its script and style, in the
//! binary; with `?ticket=` it trades a one-time ticket for the session cookie and a page that
//! moves on to the page's secret path, `/status/S`, the only place the cookie is sent or taken),
//! `GET /status/snapshot` (everything it shows, JSON), `GET /status/events` (server-sent
//! events: each event of the roots' logs as it is written, read by cursor, `changed` when
//! sessions or workspaces come and go, and, only while a stream is open, the servers' memory
//! every few seconds), and the POSTs `restart`, `cancel` and `stop`, which a cookie may send
//! only with its CSRF token and an allowed `Origin`. What it shows and does comes from the
//! daemon, through `Source`: this module knows no daemon.
//!
//! The page is one file (`page.html`, `include_str!`ed) served with a CSP nonce of its own per
//! response.

pub mod auth;

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use crate::events::EventLog;

/// What a redeemed ticket answers: the cookie is set, and the page moves on to its secret path.
fn move_on(base: &str) -> String {
    format!(
        "<!doctype html><meta http-equiv=\"refresh\" content=\"0;url={base}/\"><title>lspgate</title><a href=\"{base}/\">lspgate status</a>\n"
    )
}

/// How long a stream waits for a page that does not read before ending.
const STALLED: Duration = Duration::from_secs(30);

/// The least time between two `changed` messages of one stream.
const CHANGED_EVERY: Duration = Duration::from_secs(1);

/// The page: HTML, script and style in one file.
pub const PAGE: &str = include_str!("page.html");

/// How often an open stream is sent the servers' memory (nothing is sampled while none is).
pub const MEMORY_EVERY: Duration = Duration::from_secs(3);

/// A boxed future of the daemon's.
pub type BoxFut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the page shows and does: the daemon's side.
pub trait Source: Send + Sync + 'static {
    /// Everything the page shows, as JSON (protocol §5).
    fn snapshot(&self) -> BoxFut<'_, Value>;
    /// The event log of each root now: `(root, log)`, one per log.
    fn logs(&self) -> Vec<(String, Arc<EventLog>)>;
    /// Changes when sessions, workspaces or servers change in ways the logs do not say.
    fn pulse(&self) -> watch::Receiver<u64>;
    /// Every running server's resident memory now: `[{root, name, pid, rss_bytes}]`.
    fn memory(&self) -> Value;
    /// Restarts server `name` of `root`.
    fn restart(&self, root: String, name: String) -> BoxFut<'_, Result<Value, String>>;
    /// Cancels activity `id` of `root`.
    fn cancel(&self, root: String, id: String) -> BoxFut<'_, Result<Value, String>>;
    /// Stops the daemon (after answering).
    fn stop(&self);
    /// Turns true when the daemon stops: every page stream ends then, so no listener waits
    /// for a stream that never would.
    fn stopping(&self) -> watch::Receiver<bool>;
}

/// The page's keys and what it shows.
pub struct Page {
    pub keys: Arc<auth::Keys>,
    source: Arc<dyn Source>,
}

impl Page {
    pub fn new(keys: Arc<auth::Keys>, source: Arc<dyn Source>) -> Page {
        Page { keys, source }
    }
}

/// The page's routes: `/status` and below.
pub fn is_page_path(path: &str) -> bool {
    path == "/status" || path.starts_with("/status/")
}

/// The page's router (to nest beside `/mcp`, or alone), behind the guard its caller layers.
pub fn routes(page: Arc<Page>) -> axum::Router {
    use axum::routing::{get, post};
    let mut router = axum::Router::new();
    // `/status` for scripts (the bearer token) and the ticket; the secret path for browsers.
    for at in ["/status".to_string(), page.keys.base().to_string()] {
        router = router
            .route(&at, get(page_or_ticket))
            .route(&format!("{at}/"), get(page_or_ticket))
            .route(&format!("{at}/snapshot"), get(snapshot))
            .route(&format!("{at}/events"), get(events))
            .route(&format!("{at}/restart"), post(restart))
            .route(&format!("{at}/cancel"), post(cancel))
            .route(&format!("{at}/stop"), post(stop));
    }
    router.with_state(page)
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    let mut r = Response::new(Body::from(text));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// `GET /status`: with a ticket, the cookie and a page that moves on to the secret path (so the
/// ticket leaves the address bar); else the page, carrying its session's CSRF token and the
/// path its requests go to.
async fn page_or_ticket(State(page): State<Arc<Page>>, request: Request) -> Response {
    // A link previewer's HEAD must not use the ticket up.
    if request.method() == axum::http::Method::HEAD {
        return plain(StatusCode::OK, "");
    }
    if let Some(ticket) = auth::ticket_of(request.uri().query()) {
        let Some((cookie, _)) = page.keys.redeem(&ticket) else {
            return plain(
                StatusCode::UNAUTHORIZED,
                "Unauthorized: this ticket was used or has expired; ask `lspgate daemon status --web` for another",
            );
        };
        // A page of our own that moves on to the secret path, not a redirect: a ticket link
        // followed from another site would make the redirected request cross-site, and the
        // browser would withhold the SameSite=Strict cookie just set.
        let base = page.keys.base();
        let mut r = Response::new(Body::from(move_on(base)));
        let h = r.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("default-src 'none'"),
        );
        if let Ok(v) = HeaderValue::from_str(&auth::set_cookie(&cookie, base)) {
            h.insert(header::SET_COOKIE, v);
        }
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        h.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
        return r;
    }
    let on_base = page.keys.on_base(request.uri().path());
    let csrf = match page.keys.cookie_pass(request.headers()) {
        Some(auth::Pass::Cookie { csrf }) if on_base => csrf,
        // The bearer token (a script): its POSTs carry it, and need no CSRF token.
        _ => String::new(),
    };
    // Where the page's own requests go: the path it was served on.
    let base = if on_base { page.keys.base() } else { "/status" };
    let Ok(nonce) = auth::random_secret() else {
        return plain(StatusCode::INTERNAL_SERVER_ERROR, "no randomness");
    };
    let html = PAGE
        .replace("{{CSRF}}", &csrf)
        .replace("{{NONCE}}", &nonce)
        .replace("{{BASE}}", base);
    let mut r = Response::new(Body::from(html));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    let csp = format!(
        "default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    );
    if let Ok(v) = HeaderValue::from_str(&csp) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    r
}

fn json_response(status: StatusCode, v: &Value) -> Response {
    let mut r = (status, serde_json::to_string(v).unwrap_or_default()).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

async fn snapshot(State(page): State<Arc<Page>>) -> Response {
    let snap = page.source.snapshot().await;
    json_response(StatusCode::OK, &snap)
}

/// A refusal: its status and why.
struct No(StatusCode, &'static str);

impl IntoResponse for No {
    fn into_response(self) -> Response {
        plain(self.0, self.1)
    }
}

/// A POST's check beyond the guard: with a cookie (a browser), the session's CSRF token in
/// `X-Lspgate-Csrf` and an `Origin` (which the guard has checked is allowed); with the bearer
/// token (a script), nothing more: a browser never sends it by itself.
fn post_ok(page: &Page, headers: &HeaderMap) -> Result<(), No> {
    if headers.contains_key(header::AUTHORIZATION) {
        return Ok(());
    }
    let Some(auth::Pass::Cookie { csrf }) = page.keys.cookie_pass(headers) else {
        return Err(No(StatusCode::UNAUTHORIZED, "Unauthorized"));
    };
    if !same_origin(headers) {
        return Err(No(
            StatusCode::FORBIDDEN,
            "Forbidden: a state-changing request must come from the page's own origin",
        ));
    }
    if !auth::csrf_ok(headers, &csrf) {
        tracing::info!("refused a status page POST: no or a wrong CSRF token");
        return Err(No(
            StatusCode::FORBIDDEN,
            "Forbidden: missing or wrong CSRF token",
        ));
    }
    Ok(())
}

/// Whether the request's `Origin` names the very host and port it was sent to (`Host`): the
/// page's own origin, not merely one the guard allows (another loopback port is same-site, so
/// it would carry the cookie).
fn same_origin(headers: &HeaderMap) -> bool {
    let get = |name| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    let (Some(origin), Some(host)) = (get(header::ORIGIN), get(header::HOST)) else {
        return false;
    };
    origin
        .split_once("://")
        .is_some_and(|(_, authority)| authority.eq_ignore_ascii_case(host.trim()))
}

/// A POST's JSON body (bounded) as an object, once `post_ok` passed.
async fn post_body(page: &Page, request: Request) -> Result<serde_json::Map<String, Value>, No> {
    post_ok(page, request.headers())?;
    let bytes = axum::body::to_bytes(request.into_body(), 64 << 10)
        .await
        .map_err(|_| No(StatusCode::PAYLOAD_TOO_LARGE, "body too large"))?;
    if bytes.is_empty() {
        return Ok(Default::default());
    }
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(No(StatusCode::BAD_REQUEST, "expected a JSON object")),
    }
}

fn field(m: &serde_json::Map<String, Value>, k: &str) -> Result<String, No> {
    m.get(k)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or(No(StatusCode::BAD_REQUEST, "missing a field"))
}

fn outcome(r: Result<Value, String>) -> Response {
    match r {
        Ok(v) => json_response(StatusCode::OK, &v),
        Err(e) => json_response(StatusCode::CONFLICT, &json!({"error": e})),
    }
}

async fn restart(State(page): State<Arc<Page>>, request: Request) -> Result<Response, No> {
    let body = post_body(&page, request).await?;
    let (root, name) = (field(&body, "root")?, field(&body, "server")?);
    tracing::info!(%root, server = %name, "restart asked on the status page");
    Ok(outcome(page.source.restart(root, name).await))
}

async fn cancel(State(page): State<Arc<Page>>, request: Request) -> Result<Response, No> {
    let body = post_body(&page, request).await?;
    let (root, id) = (field(&body, "root")?, field(&body, "id")?);
    Ok(outcome(page.source.cancel(root, id).await))
}

async fn stop(State(page): State<Arc<Page>>, request: Request) -> Result<Response, No> {
    post_body(&page, request).await?;
    tracing::info!("stop asked on the status page");
    page.source.stop();
    Ok(json_response(StatusCode::OK, &json!({"stopping": true})))
}

/// `GET /status/events`: the live feed, while the page has it open.
async fn events(State(page): State<Arc<Page>>) -> Response {
    let (tx, mut rx) = mpsc::channel::<SseEvent>(256);
    tokio::spawn(feed(page.source.clone(), tx));
    let stream =
        futures::stream::poll_fn(move |cx| rx.poll_recv(cx).map(|e| e.map(Ok::<_, Infallible>)));
    let mut r = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(20)))
        .into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// Resolves once `rx` says true (or its sender is gone).
async fn stopped(mut rx: watch::Receiver<bool>) {
    loop {
        let now = *rx.borrow_and_update();
        if now || rx.changed().await.is_err() {
            return;
        }
    }
}

/// One followed log: its root, the log, and the last seq sent.
struct Followed {
    root: String,
    /// Weak: a workspace that goes while the page is open takes its log with it.
    log: std::sync::Weak<EventLog>,
    cursor: i64,
}

/// Feeds one stream until its page goes away: every event of each log after the stream
/// began (read by cursor; the log's live feed only wakes this), `changed` on the daemon's
/// pulse, and the memory of the servers every `MEMORY_EVERY`.
async fn feed(source: Arc<dyn Source>, tx: mpsc::Sender<SseEvent>) {
    // One wake-up owed is enough: the stream reads every log by cursor when it wakes.
    let (wake_tx, mut wake) = mpsc::channel::<()>(1);
    let mut pulse = source.pulse();
    let stop = stopped(source.stopping());
    tokio::pin!(stop);
    let mut feed = Feed {
        source,
        tx,
        wake: wake_tx,
        followed: Vec::new(),
    };
    feed.follow_new();
    if !feed
        .send(SseEvent::default().event("hello").data("{}"))
        .await
    {
        return;
    }
    let mut memory = tokio::time::interval(MEMORY_EVERY);
    // `changed` at most once a `CHANGED_EVERY` (every tool call pulses; each `changed` has the
    // page take a snapshot): one sent at once after a quiet spell, the rest folded into one.
    let mut last_changed: Option<tokio::time::Instant> = None;
    let mut owed: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            () = feed.tx.closed() => return,
            () = &mut stop => return,
            Some(()) = wake.recv() => {
                while wake.try_recv().is_ok() {}
                if !feed.send_events().await {
                    return;
                }
            }
            changed = pulse.changed(), if owed.is_none() => {
                if changed.is_err() {
                    return;
                }
                let now = tokio::time::Instant::now();
                match last_changed {
                    Some(at) if now < at + CHANGED_EVERY => owed = Some(at + CHANGED_EVERY),
                    _ => {
                        last_changed = Some(now);
                        if !feed.changed().await {
                            return;
                        }
                    }
                }
            }
            () = tokio::time::sleep_until(owed.unwrap_or_else(tokio::time::Instant::now)), if owed.is_some() => {
                owed = None;
                last_changed = Some(tokio::time::Instant::now());
                if !feed.changed().await {
                    return;
                }
            }
            _ = memory.tick() => {
                let m = feed.source.memory();
                if !feed.send(SseEvent::default().event("memory").data(m.to_string())).await {
                    return;
                }
            }
        }
    }
}

/// One page's stream as `feed` keeps it: where it sends, and the logs it follows.
struct Feed {
    source: Arc<dyn Source>,
    tx: mpsc::Sender<SseEvent>,
    /// Woken (one wake-up owed at most) when a followed log has news.
    wake: mpsc::Sender<()>,
    followed: Vec<Followed>,
}

impl Feed {
    /// Follows the source's logs not followed yet (and forgets those gone), from what each
    /// has written now.
    fn follow_new(&mut self) {
        for (root, log) in self.source.logs() {
            self.followed.retain(|f| f.log.strong_count() > 0);
            if self
                .followed
                .iter()
                .any(|f| std::ptr::eq(f.log.as_ptr(), Arc::as_ptr(&log)))
            {
                continue;
            }
            // Not a sender of the page's stream: the stream ends when `feed` does, and the
            // follower with it (its wake-up's receiver is `feed`'s).
            tokio::spawn(wake_on_news(log.follow(), self.wake.clone()));
            self.followed.push(Followed {
                root,
                cursor: log.written(),
                log: Arc::downgrade(&log),
            });
        }
    }

    /// Sends `e` (`send_to`).
    async fn send(&self, e: SseEvent) -> bool {
        send_to(&self.tx, e).await
    }

    /// Sends every event each followed log has after its cursor; false once the page is gone.
    async fn send_events(&mut self) -> bool {
        for f in &mut self.followed {
            let Some(log) = f.log.upgrade() else {
                continue;
            };
            loop {
                let Ok(page) = log.read(f.cursor, 200, Vec::new()).await else {
                    break;
                };
                for e in page.events {
                    f.cursor = f.cursor.max(e.seq);
                    let data = json!({"root": f.root, "seq": e.seq, "time": e.time, "kind": e.kind, "data": e.data});
                    if !send_to(
                        &self.tx,
                        SseEvent::default().event("event").data(data.to_string()),
                    )
                    .await
                    {
                        return false;
                    }
                }
                f.cursor = f.cursor.max(page.next);
                if !page.more {
                    break;
                }
            }
        }
        true
    }

    /// Follows any new log, and tells the page something changed; false once it is gone.
    async fn changed(&mut self) -> bool {
        self.follow_new();
        self.send(SseEvent::default().event("changed").data("{}"))
            .await
    }
}

/// Sends `e` to a page's stream; false once the page is gone, or has stopped reading for
/// `STALLED` (its stream ends, and its connection with it).
async fn send_to(tx: &mpsc::Sender<SseEvent>, e: SseEvent) -> bool {
    matches!(tokio::time::timeout(STALLED, tx.send(e)).await, Ok(Ok(())))
}

/// Wakes `wake` each time the log followed by `live` has news (or lagged behind it), until the
/// log or the wake-up's receiver goes.
async fn wake_on_news(
    mut live: tokio::sync::broadcast::Receiver<Arc<crate::events::Event>>,
    wake: mpsc::Sender<()>,
) {
    loop {
        tokio::select! {
            r = live.recv() => match r {
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    if let Err(mpsc::error::TrySendError::Closed(())) = wake.try_send(()) {
                        return;
                    }
                }
                Err(_) => return,
            },
            () = wake.closed() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn a_posts_origin_must_be_the_pages_own() {
        let ok = headers(&[
            ("host", "127.0.0.1:4000"),
            ("origin", "http://127.0.0.1:4000"),
        ]);
        assert!(same_origin(&ok));
        let other_port = headers(&[
            ("host", "127.0.0.1:4000"),
            ("origin", "http://127.0.0.1:4001"),
        ]);
        assert!(!same_origin(&other_port));
        assert!(!same_origin(&headers(&[("host", "127.0.0.1:4000")])));
        assert!(!same_origin(&headers(&[
            ("host", "127.0.0.1:4000"),
            ("origin", "null")
        ])));
        assert!(is_page_path("/status") && is_page_path("/status/events"));
        assert!(!is_page_path("/statusx") && !is_page_path("/mcp"));
    }
}
