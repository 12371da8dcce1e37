//! The per-user daemon (protocol §6): one lspgate per user and host that holds the language servers,
//! their watchers and journals, per workspace, for every session and command that attaches to
//! it over a unix socket in the user's runtime folder (0700 folder, 0600 socket, only the same
//! uid). Clients send typed requests (`protocol`): the session they ask for, resolved in their
//! own process, then an MCP session, one tool call or an HTTP listener. Each is a session of
//! its own on a shared `Workspace` (one per root, config, environment and settings); a tool
//! call sends back its progress and its result, which the client renders. Servers unused for
//! `--idle-servers` stop, the daemon exits after `--idle-exit` with no session and no server,
//! `--max-memory` stops the least recently used idle servers, and a daemon of another version
//! drains (answers the client `version`, lets its sessions end, exits) for the new one.
//! `client` is the other end: the thin `serve` relay and the tool caller; `http` hosts MCP
//! over HTTP for `serve --http` and `daemon --http`; `page` the status page's side here, and
//! `sessions` the connections it lists. SIGTERM and SIGINT stop it cleanly.
//!
//! A tending task (`tend`) stops idle servers, keeps memory under `--max-memory`, drops workspaces
//! nobody uses and ends the daemon when idle or drained. Every connection's peer uid is checked,
//! then its hello line read (`read_hello`). A client that goes away mid-call drops the call, which
//! cancels it. `stop` answers the pids of the daemon and its servers; the daemon keeps its socket
//! while it shuts down (answering `stopping`), removes it once its servers are down, and holds its
//! lock until the process exits. SIGTERM and SIGINT stop the listeners first, then the servers. A
//! session's overlays, previews and progress are its own (`Engine`), everything else of a root is
//! shared (`Workspace`); servers die with their daemon (the parent-death signal).

// Unit tests read their own temporary files directly.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

// The layers below, by the names every module here uses for them.
use lspgate_base::procfs;
use lspgate_core::{events, registry, workspace};
use lspgate_engine::{error, ops};
use lspgate_lsp as lsp;
use lspgate_lspface as lspface;
use lspgate_mcp as mcp;

pub mod client;
pub mod http;
pub mod lsp_session;
mod page;
pub mod paths;
pub mod protocol;
mod sessions;

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

use crate::mcp::http::HttpArgs;
use crate::ops::Workspace;
use crate::ops::session::{Provider, SessionSpec};
use protocol::{Answer, CallLine, Request, VERSION, answer, line, read_hello};

/// The daemon's lifecycle settings.
#[derive(Debug, Clone)]
pub struct Lifecycle {
    /// Servers unused this long stop.
    pub idle_servers: Duration,
    /// With no session and no server this long, the daemon exits.
    pub idle_exit: Duration,
    /// The servers' total resident memory is kept under this many bytes.
    pub max_memory: Option<u64>,
}

/// One shared workspace and how many sessions use it now.
struct Shared {
    ws: Arc<Workspace>,
    sessions: Arc<AtomicUsize>,
}

struct Daemon {
    life: Lifecycle,
    workspaces: Mutex<HashMap<String, Shared>>,
    /// Open MCP sessions and commands running, all workspaces together.
    sessions: AtomicUsize,
    /// A newer lspgate took over: no new connections, exit once the sessions end.
    draining: AtomicBool,
    /// When the daemon last had a session or a server.
    last_busy: Mutex<Instant>,
    stop: tokio::sync::Notify,
    started: Instant,
    /// The HTTP listeners it hosts.
    http: http::Hosted,
    /// The connections attached, as the status page lists them.
    conns: Arc<sessions::Connections>,
    /// The status page: its keys and its on-demand listener.
    web: page::PageHost,
}

impl Lifecycle {
    /// The settings given, else `LSPGATE_IDLE_SERVERS` (600 s), `LSPGATE_IDLE_EXIT` (1800 s)
    /// and `LSPGATE_MAX_MEMORY` (MiB; none) of the daemon's own environment.
    pub fn new(idle_servers: Option<u64>, idle_exit: Option<u64>, max_memory: Option<u64>) -> Self {
        let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse().ok());
        Lifecycle {
            idle_servers: Duration::from_secs(
                idle_servers
                    .or_else(|| env("LSPGATE_IDLE_SERVERS"))
                    .unwrap_or(600),
            ),
            idle_exit: Duration::from_secs(
                idle_exit
                    .or_else(|| env("LSPGATE_IDLE_EXIT"))
                    .unwrap_or(1800),
            ),
            max_memory: max_memory
                .or_else(|| env("LSPGATE_MAX_MEMORY"))
                .map(|mib: u64| mib << 20),
        }
    }
}

/// The daemon's own MCP listener over HTTP (`lspgate daemon --http`): for this session.
#[derive(Debug, Clone)]
pub struct OwnHttp {
    pub session: SessionSpec,
    pub http: HttpArgs,
}

/// Runs the daemon until it is stopped, drained or idle long enough.
pub async fn run(life: Lifecycle, own_http: Option<OwnHttp>) -> i32 {
    let (listener, socket) = match bind(own_http.is_some()).await {
        Ok(Some(bound)) => bound,
        Ok(None) => return 0,
        Err(e) => {
            eprintln!("lspgate daemon: {e}");
            return 2;
        }
    };
    tracing::info!(socket = %socket.display(), pid = std::process::id(), "lspgate {VERSION} daemon started");
    let daemon = Arc::new(Daemon {
        life,
        workspaces: Mutex::default(),
        sessions: AtomicUsize::new(0),
        draining: AtomicBool::new(false),
        last_busy: Mutex::new(Instant::now()),
        stop: tokio::sync::Notify::new(),
        started: Instant::now(),
        http: http::Hosted::default(),
        conns: Arc::default(),
        web: page::PageHost::default(),
    });
    if let Some(own) = own_http {
        match http::own(&daemon, own).await {
            Ok(own) => {
                tokio::spawn(own.serve(daemon.clone()));
            }
            Err(e) => {
                eprintln!("lspgate daemon: {e}");
                let _ = std::fs::remove_file(&socket);
                return 2;
            }
        }
    }
    tokio::spawn(tend(daemon.clone()));
    serve(&daemon, &listener, &socket).await;
    stop(&daemon, &listener).await;
    // Leave the socket to a newer daemon if one took it over. The lock goes with the process.
    if !daemon.draining.load(Ordering::Acquire) {
        let _ = std::fs::remove_file(&socket);
    }
    tracing::info!("lspgate daemon stopped");
    0
}

/// Takes the daemon's lock (held until the process is gone) and binds its socket (0600).
/// `None` when another daemon of this version holds the lock (an error when this one was to
/// serve HTTP: the user asked for a listener that will not be).
async fn bind(wants_http: bool) -> Result<Option<(UnixListener, std::path::PathBuf)>, String> {
    let dir = paths::runtime_dir()?;
    // One daemon per version: a second one exits at once.
    let lock_path = paths::lock(&dir, VERSION);
    let lock = match paths::try_lock(&lock_path) {
        Ok(Some(f)) => f,
        Ok(None) if wants_http => {
            return Err(format!(
                "a daemon of lspgate {VERSION} is already running; `lspgate serve --http ADDR` has it serve HTTP, or stop it first (`lspgate daemon stop`)"
            ));
        }
        Ok(None) => {
            tracing::info!("a daemon of lspgate {VERSION} is already running");
            return Ok(None);
        }
        Err(e) => return Err(format!("{}: {e}", lock_path.display())),
    };
    // Held until the process is gone (the kernel lets it go at exit), not only until this
    // function returns: `daemon stop` waits for it, and a new daemon takes it.
    std::mem::forget(lock);
    let socket = paths::socket(&dir);
    // A socket nobody answers on is a leftover of a daemon that died.
    if socket.exists() && UnixStream::connect(&socket).await.is_err() {
        let _ = std::fs::remove_file(&socket);
    }
    let listener = UnixListener::bind(&socket).map_err(|e| format!("{}: {e}", socket.display()))?;
    let _ = std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600));
    Ok(Some((listener, socket)))
}

/// Takes connections until the daemon is told to stop (a `stop`, idleness, a drain) or gets
/// SIGTERM or SIGINT.
async fn serve(daemon: &Arc<Daemon>, listener: &UnixListener, socket: &std::path::Path) {
    let signal = terminated();
    tokio::pin!(signal);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    if daemon.draining.load(Ordering::Acquire) {
                        continue;
                    }
                    tokio::spawn(connection(daemon.clone(), stream, socket.to_path_buf()));
                }
                Err(e) => tracing::warn!("accept: {e}"),
            },
            () = daemon.stop.notified() => return,
            () = &mut signal => {
                tracing::info!("stopping on a signal");
                return;
            }
        }
    }
}

/// Stops the listeners, then every workspace's activities and servers (each bounded). The
/// socket stays meanwhile: whoever connects is told the daemon is stopping (`status` says so;
/// a session or command waits until it is gone, then starts another), so no client takes it
/// for gone while its servers still run.
async fn stop(daemon: &Arc<Daemon>, listener: &UnixListener) {
    let shutdown = async {
        daemon.http.stop_all().await;
        let all: Vec<Arc<Workspace>> = daemon
            .workspaces
            .lock()
            .map(|w| w.values().map(|s| s.ws.clone()).collect())
            .unwrap_or_default();
        futures::future::join_all(all.iter().map(|ws| ws.shutdown())).await;
    };
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => return,
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    tokio::spawn(stopping(stream));
                }
            }
        }
    }
}

/// Answers a connection made while the daemon stops: `stopping`, with its pid.
async fn stopping(stream: UnixStream) {
    let me = rustix::process::getuid().as_raw();
    if !stream.peer_cred().is_ok_and(|c| c.uid() == me) {
        return;
    }
    let (read, mut write) = stream.into_split();
    let mut line = String::new();
    let mut read = BufReader::new(read);
    let said = tokio::time::timeout(Duration::from_secs(10), read.read_line(&mut line)).await;
    if !matches!(said, Ok(Ok(n)) if n > 0) {
        return;
    }
    let mut a = Answer::refused(protocol::STOPPING);
    a.body = json!({"pid": std::process::id()});
    let _ = answer(&mut write, &a).await;
}

/// Serves one connection: checks who it is, reads its hello, does what it asks.
async fn connection(daemon: Arc<Daemon>, stream: UnixStream, socket: std::path::PathBuf) {
    if !of_this_user(&stream) {
        return;
    }
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    let Some(hello) = read_hello(&mut read, &mut write).await else {
        return;
    };
    if hello.version != VERSION {
        // A newer (or older) lspgate: it gets a daemon of its own version; this one drains.
        tracing::info!(
            theirs = %hello.version,
            "a client of another version: leaving the socket to its daemon and draining"
        );
        daemon.draining.store(true, Ordering::Release);
        let _ = std::fs::remove_file(&socket);
        let mut a = Answer::refused("version");
        a.body = json!({"version": VERSION});
        let _ = answer(&mut write, &a).await;
        return;
    }
    answer_request(daemon, hello.request, read, write).await;
}

/// Whether the peer of `stream` is this daemon's user (a warning says why not).
fn of_this_user(stream: &UnixStream) -> bool {
    let me = rustix::process::getuid().as_raw();
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == me => true,
        Ok(cred) => {
            tracing::warn!(uid = cred.uid(), "refused a connection from another user");
            false
        }
        Err(e) => {
            tracing::warn!("refused a connection whose peer is unknown: {e}");
            false
        }
    }
}

/// Does what a connection's hello asks (`request`), answering on `write`.
async fn answer_request(
    daemon: Arc<Daemon>,
    request: Request,
    read: BufReader<tokio::net::unix::OwnedReadHalf>,
    mut write: tokio::net::unix::OwnedWriteHalf,
) {
    match request {
        Request::Status => {
            let _ = answer(&mut write, &Answer::ok(daemon.status())).await;
        }
        Request::Snapshot => {
            let _ = answer(&mut write, &Answer::ok(page::snapshot(&daemon).await)).await;
        }
        Request::Web => {
            let _ = answer(&mut write, &page::web(&daemon).await).await;
        }
        Request::Http {
            session,
            http,
            max_frame,
            keep,
        } => {
            http::host(daemon, session, http, max_frame, keep, read, write).await;
        }
        Request::Stop => {
            // What `daemon stop` waits to see gone: this process and its servers'.
            let _ = answer(&mut write, &Answer::ok(daemon.pids())).await;
            daemon.stop.notify_one();
        }
        Request::Call {
            session,
            tool,
            args,
        } => {
            let attached = daemon.conns.attach("cli", &session.root);
            attached.called(&tool);
            daemon.sessions.fetch_add(1, Ordering::AcqRel);
            daemon
                .call(session, Work::Tool { tool, args }, read, write)
                .await;
            daemon.sessions.fetch_sub(1, Ordering::AcqRel);
            daemon.touch();
        }
        Request::Hook { session, ask } => {
            let attached = daemon.conns.attach("cli", &session.root);
            attached.called("hook");
            daemon.sessions.fetch_add(1, Ordering::AcqRel);
            daemon.call(session, Work::Hook(ask), read, write).await;
            daemon.sessions.fetch_sub(1, Ordering::AcqRel);
            daemon.touch();
        }
        Request::Lsp {
            session,
            only,
            handed,
        } => {
            let attached = daemon.conns.attach("lsp", &session.root);
            let observer: crate::lspface::Observer = attached.observer();
            let engine = |p: Provider| async move { session.engine(Some(&p)).map(Arc::new) };
            let serve = move |e, read, write| async move {
                if handed {
                    lsp_session::serve(e, read, write, only, observer).await;
                } else {
                    crate::lspface::serve_observed(e, read, write, only, Some(observer)).await;
                }
            };
            daemon.connected(engine, read, write, serve).await;
        }
        Request::Mcp {
            session,
            max_frame,
            acks,
        } => {
            let attached = daemon.conns.attach("mcp-stdio", &session.root);
            let observer = attached.observer();
            let engine = |p: Provider| async move { session.agent_engine(Some(&p)).await };
            let serve = |e, read, write| async move {
                let served =
                    crate::mcp::serve_observed(e, read, write, max_frame, Some(observer), acks);
                if let Err(e) = served.await {
                    tracing::debug!("MCP session ended: {e:#}");
                }
            };
            daemon.connected(engine, read, write, serve).await;
        }
    }
}

impl Daemon {
    /// A connection that carries a session (MCP or LSP) once answered: its engine made on the
    /// shared workspace (refused with the reason if it cannot be), then served, counted as a
    /// session of the daemon and of its workspace for as long as it lasts.
    async fn connected<E, EF, S, SF>(
        self: &Arc<Self>,
        engine: E,
        read: BufReader<tokio::net::unix::OwnedReadHalf>,
        mut write: tokio::net::unix::OwnedWriteHalf,
        serve: S,
    ) where
        E: FnOnce(Provider) -> EF,
        EF: Future<Output = Result<Arc<crate::ops::Engine>, crate::error::ToolError>>,
        S: FnOnce(
            Arc<crate::ops::Engine>,
            BufReader<tokio::net::unix::OwnedReadHalf>,
            tokio::net::unix::OwnedWriteHalf,
        ) -> SF,
        SF: Future<Output = ()>,
    {
        let used = Arc::new(Mutex::new(None::<Arc<AtomicUsize>>));
        let engine = match engine(self.provider(used.clone())).await {
            Ok(e) => e,
            Err(e) => {
                let _ = answer(&mut write, &Answer::refused(e.to_string())).await;
                return;
            }
        };
        if answer(&mut write, &Answer::ok(Value::Null)).await.is_err() {
            return;
        }
        let counter = used.lock().ok().and_then(|u| u.clone());
        self.sessions.fetch_add(1, Ordering::AcqRel);
        if let Some(c) = &counter {
            c.fetch_add(1, Ordering::AcqRel);
        }
        serve(engine, read, write).await;
        if let Some(c) = &counter {
            c.fetch_sub(1, Ordering::AcqRel);
        }
        self.sessions.fetch_sub(1, Ordering::AcqRel);
        self.touch();
    }
}

/// What a call connection runs: a tool, or a harness's hook.
enum Work {
    Tool { tool: String, args: Value },
    Hook(crate::ops::hook::HookAsk),
}

impl Work {
    fn name(&self) -> &str {
        match self {
            Work::Tool { tool, .. } => tool,
            Work::Hook(_) => "hook",
        }
    }
}

/// Resolves on SIGINT or SIGTERM: how the daemon, and every front end of lspgate, is asked
/// to stop.
pub async fn terminated() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

impl Daemon {
    /// Hands out the shared workspace for a key (made on first use), noting in `used` the
    /// session counter of the one handed out.
    fn provider(self: &Arc<Self>, used: Arc<Mutex<Option<Arc<AtomicUsize>>>>) -> Provider {
        let daemon = self.clone();
        Arc::new(move |key: &str, make: &mut dyn FnMut() -> Arc<Workspace>| {
            let Ok(mut map) = daemon.workspaces.lock() else {
                return make();
            };
            let shared = map.entry(key.to_string()).or_insert_with(|| {
                tracing::info!("new workspace {key}");
                daemon.conns.bump();
                Shared {
                    ws: make(),
                    sessions: Arc::default(),
                }
            });
            if let Ok(mut u) = used.lock() {
                *u = Some(shared.sessions.clone());
            }
            shared.ws.clone()
        })
    }

    /// Serves a `Call`: answers, opens the session, runs the call while sending its
    /// progress, then its outcome. A client that goes away first takes the call with it (it
    /// is dropped, as an MCP cancellation drops one).
    async fn call(
        self: &Arc<Self>,
        session: SessionSpec,
        work: Work,
        mut read: BufReader<tokio::net::unix::OwnedReadHalf>,
        mut write: tokio::net::unix::OwnedWriteHalf,
    ) {
        if answer(&mut write, &Answer::ok(Value::Null)).await.is_err() {
            return;
        }
        let provider = self.provider(Arc::default());
        let engine = match session.engine(Some(&provider)) {
            Ok(e) => e,
            Err(error) => {
                let _ = line(&mut write, &CallLine::Unopened { error }).await;
                return;
            }
        };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let progress = move |done: usize, total: usize| {
            let _ = tx.send(CallLine::Progress { done, total });
        };
        let what = work.name().to_string();
        let call = async {
            match work {
                Work::Tool { tool, args } => {
                    crate::ops::tools::call_with_progress(&engine, &tool, args, &progress).await
                }
                Work::Hook(ask) => Ok(crate::ops::tools::ToolOutput {
                    structured: serde_json::to_value(engine.hook(ask).await).unwrap_or_default(),
                    text: String::new(),
                }),
            }
        };
        tokio::pin!(call);
        let mut buf = [0u8; 64];
        let outcome = loop {
            tokio::select! {
                r = &mut call => break Some(r),
                Some(p) = rx.recv() => {
                    let _ = line(&mut write, &p).await;
                }
                n = read.read(&mut buf) => {
                    if matches!(n, Ok(0) | Err(_)) {
                        tracing::debug!("the client of a `{what}` call went away: dropping it");
                        break None;
                    }
                }
            }
        };
        engine.shutdown().await;
        let last = match outcome {
            None => return,
            Some(Ok(out)) => CallLine::Done {
                structured: out.structured,
                text: out.text,
            },
            Some(Err(error)) => CallLine::Failed { error },
        };
        let _ = line(&mut write, &last).await;
    }

    /// `{"pid": the daemon's, "servers": [every running server's]}`.
    fn pids(&self) -> Value {
        let servers: Vec<u32> = self
            .workspaces
            .lock()
            .map(|w| {
                w.values()
                    .flat_map(|s| s.ws.registry().statuses())
                    .filter_map(|st| st.pid)
                    .collect()
            })
            .unwrap_or_default();
        json!({"pid": std::process::id(), "servers": servers})
    }

    fn touch(&self) {
        if let Ok(mut t) = self.last_busy.lock() {
            *t = Instant::now();
        }
    }

    /// Roots, sessions, servers (pid, state, resident memory).
    fn status(&self) -> Value {
        let workspaces = self.workspaces.lock();
        let all: Vec<&Shared> = workspaces.iter().flat_map(|map| map.values()).collect();
        let roots: Vec<Value> = all
            .iter()
            .map(|s| {
                let registry = s.ws.registry();
                // What sets it apart from the other workspaces of its root: the variables its
                // servers read whose values differ (names only: values may be secrets).
                let mut differs: Vec<&String> = all
                    .iter()
                    .map(|o| o.ws.registry())
                    .filter(|o| o.root().path() == registry.root().path())
                    .flat_map(|o| {
                        let (mine, theirs) = (registry.identity(), o.identity());
                        mine.keys()
                            .chain(theirs.keys())
                            .filter(|k| mine.get(*k) != theirs.get(*k))
                            .collect::<Vec<_>>()
                    })
                    .collect();
                differs.sort();
                differs.dedup();
                let servers: Vec<Value> = registry
                    .statuses()
                    .into_iter()
                    .filter(|st| st.pid.is_some())
                    .map(|st| {
                        let rss = st.pid.map(tree_rss).unwrap_or(0);
                        json!({"name": st.name, "root": st.root, "pid": st.pid, "state": st.state, "rss_mib": rss >> 20})
                    })
                    .collect();
                json!({
                    "root": registry.root().path(),
                    "sessions": s.sessions.load(Ordering::Acquire),
                    "servers": servers,
                    "env_differs": differs,
                })
            })
            .collect();
        json!({
            "version": VERSION,
            "pid": std::process::id(),
            "uptime_secs": self.started.elapsed().as_secs(),
            "sessions": self.sessions.load(Ordering::Acquire),
            "roots": roots,
            "http": self.http.status(),
        })
    }
}

/// Every few seconds: stops idle servers, keeps the servers' memory under the cap, drops
/// workspaces nobody uses, and ends the daemon when it has been idle long enough (or drained).
async fn tend(daemon: Arc<Daemon>) {
    let tick = (daemon.life.idle_servers / 4)
        .min(daemon.life.idle_exit / 4)
        .clamp(Duration::from_millis(200), Duration::from_secs(10));
    loop {
        tokio::time::sleep(tick).await;
        let shared: Vec<(Arc<Workspace>, usize)> = daemon
            .workspaces
            .lock()
            .map(|w| {
                w.values()
                    .map(|s| (s.ws.clone(), s.sessions.load(Ordering::Acquire)))
                    .collect()
            })
            .unwrap_or_default();
        let mut servers = 0;
        for (ws, _) in &shared {
            for name in ws.registry().stop_idle(daemon.life.idle_servers) {
                tracing::info!(server = %name, root = %ws.registry().root().path().display(), "stopped: unused for {}s", daemon.life.idle_servers.as_secs());
            }
            servers += ws.registry().running().len();
        }
        if let Some(cap) = daemon.life.max_memory {
            keep_under(cap, &shared);
        }
        // A workspace with no session, no server and no background activity goes (its watcher
        // with it); running activities keep the daemon too.
        if let Ok(mut map) = daemon.workspaces.lock() {
            let before = map.len();
            map.retain(|_, s| {
                s.sessions.load(Ordering::Acquire) > 0
                    || !s.ws.registry().running().is_empty()
                    || s.ws.busy()
            });
            if map.len() != before {
                daemon.conns.bump();
            }
        }
        let busy = shared.iter().any(|(ws, _)| ws.busy());
        let sessions = daemon.sessions.load(Ordering::Acquire);
        if sessions > 0 || servers > 0 || busy {
            daemon.touch();
        }
        let idle = daemon
            .last_busy
            .lock()
            .map(|t| t.elapsed())
            .unwrap_or_default();
        let drained = daemon.draining.load(Ordering::Acquire) && sessions == 0;
        if drained || (sessions == 0 && servers == 0 && !busy && idle >= daemon.life.idle_exit) {
            tracing::info!(drained, "exiting: no session and no server");
            daemon.stop.notify_one();
            return;
        }
    }
}

/// Stops the least recently used servers, not in use for a second at least, until their
/// total resident memory is under `cap`.
fn keep_under(cap: u64, shared: &[(Arc<Workspace>, usize)]) {
    let mut all: Vec<(Arc<Workspace>, Arc<crate::registry::Server>, u64)> = shared
        .iter()
        .flat_map(|(ws, _)| {
            ws.registry()
                .running()
                .into_iter()
                .map(move |s| (ws.clone(), s))
        })
        .map(|(ws, s)| {
            let rss = s.client().pid().map(tree_rss).unwrap_or(0);
            (ws, s, rss)
        })
        .collect();
    let mut total: u64 = all.iter().map(|(_, _, r)| r).sum();
    if total <= cap {
        return;
    }
    all.sort_by_key(|(_, s, _)| std::cmp::Reverse(s.idle_for()));
    for (ws, s, rss) in all {
        if total <= cap {
            break;
        }
        if s.idle_for() < Duration::from_secs(1) {
            continue;
        }
        let target = Arc::as_ptr(&s);
        let stopped = ws
            .registry()
            .stop_where(|x| std::ptr::eq(x as *const _, target));
        for name in stopped {
            tracing::warn!(
                server = %name,
                "stopped to keep servers under --max-memory {} MiB (they used {} MiB)",
                cap >> 20,
                total >> 20
            );
        }
        total = total.saturating_sub(rss);
    }
}

/// Resident memory of a process and every process below it, in bytes.
fn tree_rss(pid: u32) -> u64 {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for p in crate::procfs::pids() {
        if let Some(s) = crate::procfs::stat(p) {
            children.entry(s.ppid).or_default().push(p);
        }
    }
    let mut total = 0;
    let mut stack = vec![pid];
    while let Some(p) = stack.pop() {
        total += crate::procfs::resident_bytes(p).unwrap_or(0);
        stack.extend(children.get(&p).into_iter().flatten());
    }
    total
}
