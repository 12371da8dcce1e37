//! MCP over HTTP in the daemon (protocol §5, §6), so HTTP clients share the daemon's warm servers
//! with stdio sessions and CLI commands. `lspgate serve --http ADDR` asks the daemon (over its
//! socket) to listen at ADDR for the serve command's root, config and environment; the listener
//! lives exactly as long as that connection: when `serve` ends (SIGTERM, SIGINT, or killed) the
//! daemon stops the listener gracefully, and when the daemon dies `serve` has a new one listen
//! again at the same address with the same token. `lspgate daemon --http ADDR` listens for the
//! daemon's own `--root` (or folder) until the daemon stops. Each HTTP session is an `Engine`
//! session on the shared workspace, like a stdio session.
//!
//! `serve --http` sends `Request::Http` (its session, `--http` options and frame limit, the options
//! read with the session's environment); the daemon binds before starting any server and answers
//! the URL and token (`Hosting`); a new daemon is asked with `Keep` (same address, same token). A
//! listener counts as a session of the daemon and of its workspace, and `status` lists it. `daemon
//! --http` refuses to start beside a running daemon.

use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use super::protocol::{Answer, Hosting, Keep, Request};
use super::{Daemon, OwnHttp, answer, client, terminated};
use crate::mcp::http::{self, HttpArgs, Listener, Token};
use crate::ops::Engine;
use crate::ops::session::{Provider, SessionSpec};

/// The listeners a daemon hosts, for `status` and for stopping them with the daemon.
pub(super) struct Hosted {
    listeners: Mutex<Vec<Entry>>,
    next: AtomicU64,
    stop: tokio::sync::watch::Sender<bool>,
}

struct Entry {
    id: u64,
    url: String,
    root: PathBuf,
    sessions: Arc<AtomicUsize>,
    /// `serve` (while a serve command holds it) or `daemon` (the daemon's own).
    held_by: &'static str,
}

impl Default for Hosted {
    fn default() -> Hosted {
        Hosted {
            listeners: Mutex::default(),
            next: AtomicU64::new(0),
            stop: tokio::sync::watch::channel(false).0,
        }
    }
}

impl Hosted {
    pub(super) fn status(&self) -> Value {
        let listeners = self.listeners.lock();
        let list: Vec<Value> = listeners
            .iter()
            .flat_map(|l| l.iter())
            .map(|e| {
                json!({
                    "url": e.url,
                    "root": e.root,
                    "sessions": e.sessions.load(Ordering::Acquire),
                    "held_by": e.held_by,
                })
            })
            .collect();
        Value::Array(list)
    }

    /// Turns true when the daemon stops its listeners (the status page's too).
    pub(super) fn stopping(&self) -> tokio::sync::watch::Receiver<bool> {
        self.stop.subscribe()
    }

    /// Stops every listener and waits (bounded) until they have.
    pub(super) async fn stop_all(&self) {
        self.stop.send_replace(true);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        while self.listeners.lock().is_ok_and(|l| !l.is_empty())
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The engine and the bound listener for a `serve --http` (or `daemon --http`): its options
/// read with the session's environment.
async fn start(
    session: &SessionSpec,
    args: &HttpArgs,
    max_frame: usize,
    keep: Option<Keep>,
    provider: &Provider,
) -> Result<(Arc<Engine>, Listener), String> {
    let var = |name: &str| session.var(name);
    let mut config = args.config(max_frame, var)?.ok_or("no --http address")?;
    if let Some(k) = &keep {
        config.addr = k.addr;
    }
    let token = Token::choose(keep.map(|k| (k.token, k.generated)), var)?;
    // Bound before any server starts: a taken port fails at once.
    let listener = http::bind(&config, token).await?;
    let engine = session
        .agent_engine(Some(provider))
        .await
        .map_err(|e| e.to_string())?;
    Ok((engine, listener))
}

impl Daemon {
    /// Serves `listener` until `until` resolves or the daemon stops; counted as a session of
    /// the daemon and of its workspace (so neither goes idle under it).
    async fn serve_listener(
        self: &Arc<Self>,
        engine: Arc<Engine>,
        listener: Listener,
        max_frame: usize,
        workspace_sessions: Option<Arc<AtomicUsize>>,
        held_by: &'static str,
        until: impl Future<Output = ()>,
    ) {
        self.sessions.fetch_add(1, Ordering::AcqRel);
        if let Some(c) = &workspace_sessions {
            c.fetch_add(1, Ordering::AcqRel);
        }
        let id = self.http.next.fetch_add(1, Ordering::AcqRel);
        if let Ok(mut l) = self.http.listeners.lock() {
            l.push(Entry {
                id,
                url: listener.url(),
                root: engine.root().path().to_path_buf(),
                sessions: listener.sessions(),
                held_by,
            });
        }
        let mut stopping = self.http.stop.subscribe();
        let stop = async move {
            tokio::select! {
                () = until => {}
                _ = stopping.wait_for(|s| *s) => {}
            }
        };
        // Each HTTP session listed among the daemon's connections while it lasts.
        let conns = self.conns.clone();
        let root = engine.root().path().to_path_buf();
        let sessions = http::sessions_of(engine, max_frame);
        let listed = move || {
            let attached = Arc::new(conns.attach("mcp-http", &root));
            let observer = attached.observer();
            sessions().observed(observer).holding(attached)
        };
        listener.serve(listed, stop).await;
        if let Ok(mut l) = self.http.listeners.lock() {
            l.retain(|e| e.id != id);
        }
        if let Some(c) = &workspace_sessions {
            c.fetch_sub(1, Ordering::AcqRel);
        }
        self.sessions.fetch_sub(1, Ordering::AcqRel);
        self.touch();
    }
}

/// A `serve --http` connection: listens for it, answers where, serves until the connection
/// ends, then closes it (so `serve` knows the port is free).
pub(super) async fn host(
    daemon: Arc<Daemon>,
    session: SessionSpec,
    args: HttpArgs,
    max_frame: usize,
    keep: Option<Keep>,
    mut read: BufReader<OwnedReadHalf>,
    mut write: OwnedWriteHalf,
) {
    let used = Arc::new(Mutex::new(None::<Arc<AtomicUsize>>));
    let provider = daemon.provider(used.clone());
    let (engine, listener) = match start(&session, &args, max_frame, keep, &provider).await {
        Ok(s) => s,
        Err(e) => {
            let _ = answer(&mut write, &Answer::refused(e)).await;
            return;
        }
    };
    let hosting = Hosting {
        url: listener.url(),
        keep: Keep {
            addr: listener.addr(),
            token: listener.token().secret().to_string(),
            generated: listener.token().generated,
        },
        announce: listener.announce(engine.root().path()),
    };
    let body = serde_json::to_value(&hosting).unwrap_or(Value::Null);
    if answer(&mut write, &Answer::ok(body)).await.is_err() {
        return;
    }
    // The owner says nothing more: end of stream (or an error) is its end.
    let owner_gone = async move {
        let mut buf = [0u8; 256];
        while let Ok(n) = read.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    };
    let workspace_sessions = used.lock().ok().and_then(|u| u.clone());
    daemon
        .serve_listener(
            engine,
            listener,
            max_frame,
            workspace_sessions,
            "serve",
            owner_gone,
        )
        .await;
    let _ = write.shutdown().await;
}

/// `lspgate daemon --http`: binds the daemon's own listener (for its `--root` and
/// environment) before it takes connections.
pub(super) async fn own(daemon: &Arc<Daemon>, own: OwnHttp) -> Result<Own, String> {
    let used = Arc::new(Mutex::new(None::<Arc<AtomicUsize>>));
    let provider = daemon.provider(used.clone());
    let max_frame = crate::mcp::stdio::DEFAULT_MAX_FRAME;
    let (engine, listener) = start(&own.session, &own.http, max_frame, None, &provider).await?;
    Ok(Own {
        engine,
        listener,
        max_frame,
        workspace_sessions: used.lock().ok().and_then(|u| u.clone()),
    })
}

/// The daemon's own listener, bound.
pub(super) struct Own {
    engine: Arc<Engine>,
    listener: Listener,
    max_frame: usize,
    workspace_sessions: Option<Arc<AtomicUsize>>,
}

impl Own {
    /// Serves until the daemon stops.
    pub(super) async fn serve(self, daemon: Arc<Daemon>) {
        eprint!("{}", self.listener.announce(self.engine.root().path()));
        let listener = self.listener.with_page(daemon.page());
        daemon
            .serve_listener(
                self.engine,
                listener,
                self.max_frame,
                self.workspace_sessions,
                "daemon",
                std::future::pending(),
            )
            .await;
    }
}

/// `lspgate serve --http` attached to the daemon: has it listen, prints where, and holds the
/// listener until SIGTERM or SIGINT; if the daemon dies, a new one listens again at the same
/// address with the same token. Err when no daemon can be had at first (the caller serves
/// from this process instead).
pub async fn serve(session: SessionSpec, args: HttpArgs, max_frame: usize) -> Result<i32, String> {
    let mut keep: Option<Keep> = None;
    let signal = terminated();
    tokio::pin!(signal);
    let mut backoff = Duration::from_millis(100);
    loop {
        let request = Request::Http {
            session: session.clone(),
            http: args.clone(),
            max_frame,
            keep: keep.clone(),
        };
        let opened = tokio::select! {
            o = client::open(&request) => o,
            () = &mut signal => return Ok(0),
        };
        let client::Opened {
            mut read,
            mut write,
            answer,
        } = match opened {
            Ok(x) => x,
            Err(e) if keep.is_none() => return Err(e),
            Err(e) => {
                tracing::warn!(
                    "no daemon to listen at {}: {e}; trying again",
                    keep.as_ref()
                        .map(|k| k.addr.to_string())
                        .unwrap_or_default()
                );
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    () = &mut signal => return Ok(0),
                }
                backoff = (backoff * 2).min(Duration::from_secs(5));
                continue;
            }
        };
        if !answer.ok {
            let why = answer.error.unwrap_or_default();
            if keep.is_none() {
                // The user's command line, config or address: not a reason to fall back.
                eprintln!("{why}");
                return Ok(2);
            }
            tracing::warn!("the new daemon could not listen again: {why}; trying again");
            tokio::select! {
                () = tokio::time::sleep(backoff) => {}
                () = &mut signal => return Ok(0),
            }
            backoff = (backoff * 2).min(Duration::from_secs(5));
            continue;
        }
        let hosting: Hosting = serde_json::from_value(answer.body)
            .map_err(|e| format!("the daemon's answer is not understood ({e})"))?;
        if keep.is_none() {
            eprint!("{}", hosting.announce);
        } else {
            tracing::warn!("listening again at {} (a new daemon)", hosting.url);
        }
        keep = Some(hosting.keep);
        backoff = Duration::from_millis(100);
        let mut line = String::new();
        tokio::select! {
            // The daemon never writes again: this ends only when it closes (it died).
            _ = read.read_line(&mut line) => {
                tracing::warn!("the daemon went away; listening again through a new one");
            }
            () = &mut signal => {
                // The daemon stops the listener and closes the connection once it has.
                let _ = write.shutdown().await;
                let _ = tokio::time::timeout(Duration::from_secs(15), read.read_line(&mut line)).await;
                return Ok(0);
            }
        }
    }
}
