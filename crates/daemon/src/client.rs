//! The client end of the daemon: connecting (starting a daemon, detached, when none answers;
//! replacing one of another version; waiting out one that dies as it is reached), calling a
//! tool there, and `serve` as a thin session that relays MCP between the agent's stdio and the
//! daemon. When the daemon stops or dies under a session, the calls it had taken fail with
//! `server_failed`, those it never read go to a new daemon at once, and otherwise the session's
//! next request reconnects to a new daemon (started then, not before), replaying the client's
//! `initialize`. (`lsp_session` is `lspgate lsp`'s side.)
//! `daemon stop` and `daemon status`: a stopping daemon is said to be, and `stop` returns once
//! the daemon and its servers are gone.
//!
//! A daemon is started detached (`setsid`); one that exits without a socket found the lock held,
//! and another is started once the lock is free; one that closes without answering (a killed
//! daemon's last moments) is waited out. `serve` relays as `Request::Mcp` with acks: the daemon
//! acknowledges each request it reads (`mcp::stdio::TOOK`), so the relay knows which calls a dying
//! daemon took; `RESENDS` (three) daemons lost in a row fail the calls.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use super::paths;
use super::protocol::{Answer, CallLine, Hello, Request, STOPPING, Stopped, VERSION};
use crate::ops::session::SessionSpec;
use crate::procfs::alive;

/// How long a started daemon gets to open its socket.
const START_WAIT: Duration = Duration::from_secs(30);

/// A connection to a daemon, its answer read: the reader keeps whatever the daemon sent
/// after the answer line (a quick call's outcome may come in the same read).
pub(crate) struct Opened {
    pub read: BufReader<OwnedReadHalf>,
    pub write: OwnedWriteHalf,
    pub answer: Answer,
}

/// A connection to a daemon of this version that took `request`, and its answer.
pub(crate) async fn open(request: &Request) -> Result<Opened, String> {
    let dir = paths::runtime_dir()?;
    let socket = paths::socket(&dir);
    // Twice at most: a daemon of another version drains and leaves the socket to ours; one
    // in its last moments closes without a word.
    for _ in 0..4 {
        let mut stream = match UnixStream::connect(&socket).await {
            Ok(s) => s,
            Err(_) => start(&socket).await?,
        };
        let hello = Hello {
            version: VERSION.into(),
            request: request.clone(),
        };
        let mut line = serde_json::to_vec(&hello).map_err(|e| e.to_string())?;
        line.push(b'\n');
        let sent = stream.write_all(&line).await;
        let (read, write) = stream.into_split();
        let mut read = BufReader::new(read);
        let mut answer = String::new();
        let said = match sent {
            Ok(()) => read.read_line(&mut answer).await,
            Err(e) => Err(e),
        };
        if !matches!(said, Ok(n) if n > 0) {
            // Connected as it died (killed: its socket closes a moment after the sessions it
            // had): once it is gone, start another.
            tracing::info!("the daemon closed without answering; starting another once it is gone");
            if !gone(&[], START_WAIT).await {
                return Err(match said {
                    Err(e) => format!("daemon: {e}"),
                    Ok(_) => "the daemon closed without answering".into(),
                });
            }
            continue;
        }
        let answer: Answer = serde_json::from_str(&answer)
            .map_err(|e| format!("the daemon's answer is not understood ({e})"))?;
        if answer.error.as_deref() == Some("version") {
            tracing::info!(
                "the daemon is lspgate {}; starting one of {VERSION}",
                answer.version
            );
            continue;
        }
        if answer.error.as_deref() == Some(STOPPING) {
            // It keeps its socket until its servers are gone: once it is, start another.
            tracing::info!("the daemon is stopping; starting another once it is gone");
            if !gone(&[], START_WAIT).await {
                return Err(format!(
                    "the daemon was still stopping after {}s",
                    START_WAIT.as_secs()
                ));
            }
            continue;
        }
        return Ok(Opened {
            read,
            write,
            answer,
        });
    }
    Err("no daemon of this version could be started".into())
}

/// Starts a daemon, detached (its own session, its log under the data folder), and waits for
/// its socket. A daemon that exits without opening it found another holding the lock: one
/// stopping (`daemon stop`, a drain) holds it until it is gone, so another is started until
/// one opens the socket or the wait is over.
async fn start(socket: &std::path::Path) -> Result<UnixStream, String> {
    // Daemons started at most, one after another, while waiting.
    const SPAWNS: usize = 5;
    let lock = socket
        .parent()
        .map(|dir| paths::lock(dir, super::protocol::VERSION));
    let deadline = tokio::time::Instant::now() + START_WAIT;
    let mut exited = spawn_daemon()?;
    let mut spawns = 1;
    loop {
        if let Ok(s) = UnixStream::connect(socket).await {
            return Ok(s);
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(format!(
                "the daemon did not open {} within {}s (see {})",
                socket.display(),
                START_WAIT.as_secs(),
                paths::log_file().display()
            ));
        }
        // The one started is gone without a socket, and whoever held the lock let it go.
        if exited.load(std::sync::atomic::Ordering::Acquire)
            && spawns < SPAWNS
            && lock.as_deref().is_some_and(paths::lock_is_free)
        {
            tracing::debug!("the daemon started found another one stopping; starting again");
            exited = spawn_daemon()?;
            spawns += 1;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Spawns `lspgate daemon`, detached; the flag is set once that process has exited.
fn spawn_daemon() -> Result<std::sync::Arc<std::sync::atomic::AtomicBool>, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find lspgate itself: {e}"))?;
    let log = paths::open_log()?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("daemon")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log);
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: between fork and exec the child only calls setsid, which is
        // async-signal-safe. It leaves the session's process group, so it outlives the agent's
        // session.
        unsafe {
            cmd.pre_exec(|| {
                let _ = rustix::process::setsid();
                Ok(())
            });
        }
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start the daemon: {e}"))?;
    let exited = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = exited.clone();
    // Reaped in the background: it exits at once if another daemon holds the lock.
    std::thread::spawn(move || {
        let _ = child.wait();
        flag.store(true, std::sync::atomic::Ordering::Release);
    });
    Ok(exited)
}

/// Calls `tool` in the daemon for `session`, passing its progress to `progress`: the call's
/// last line (`Done`, `Failed` or `Unopened`). Err when no daemon could be had or it went
/// away during the call.
pub async fn call(
    session: SessionSpec,
    tool: &str,
    args: Value,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<CallLine, String> {
    let request = Request::Call {
        session,
        tool: tool.to_string(),
        args,
    };
    run(&request, progress).await
}

/// A harness's hook in the daemon (`Request::Hook`): its outcome, `done` with the verdict.
pub async fn hook(
    session: SessionSpec,
    ask: crate::ops::hook::HookAsk,
) -> Result<CallLine, String> {
    run(&Request::Hook { session, ask }, &|_, _| {}).await
}

/// Sends a call-like `request` and reads its lines: progress to `progress`, then the outcome.
async fn run(
    request: &Request,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<CallLine, String> {
    let Opened {
        read,
        write: _write,
        answer,
    } = open(request).await?;
    if !answer.ok {
        return Err(answer.error.unwrap_or_default());
    }
    let mut lines = read.lines();
    loop {
        let line = lines
            .next_line()
            .await
            .map_err(|e| format!("daemon: {e}"))?
            .ok_or("the daemon went away during the call")?;
        match serde_json::from_str(&line) {
            Ok(CallLine::Progress { done, total }) => progress(done, total),
            Ok(last) => return Ok(last),
            Err(e) => return Err(format!("the daemon's answer is not understood ({e})")),
        }
    }
}

/// The running daemon's status (`daemon status`), as JSON; one that is stopping is said to
/// be, never taken for none. Err: why there is none to ask.
pub async fn status() -> Result<Value, String> {
    match connect_only(Request::Status).await? {
        Some(a) if a.ok => Ok(a.body),
        Some(a) if a.error.as_deref() == Some(STOPPING) => {
            Ok(json!({"version": a.version, "pid": a.body.get("pid"), "state": STOPPING}))
        }
        Some(a) => Err(refusal(&a)),
        None if !lock_free() => Err(format!(
            "a daemon of lspgate {VERSION} holds its lock but does not answer on its socket: it is starting or stopping"
        )),
        None => Err("no daemon is running".into()),
    }
}

/// What the status page shows (`daemon status` as a table): the daemon's snapshot.
pub async fn snapshot() -> Result<Value, String> {
    match connect_only(Request::Snapshot).await? {
        Some(a) if a.ok => Ok(a.body),
        Some(a) if a.error.as_deref() == Some(STOPPING) => {
            Ok(json!({"version": a.version, "pid": a.body.get("pid"), "state": STOPPING}))
        }
        Some(a) => Err(refusal(&a)),
        None => Err("no daemon is running".into()),
    }
}

/// `lspgate daemon status --web`: the status page's URL with a one-time ticket, from the
/// running daemon or one started for it.
pub async fn web() -> Result<String, String> {
    let opened = open(&Request::Web).await?;
    if !opened.answer.ok {
        return Err(refusal(&opened.answer));
    }
    opened.answer.body["url"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| "the daemon's answer has no url".to_string())
}

/// `lspgate daemon stop`: returns once the daemon and its servers are gone (so that what runs
/// next starts a new daemon), with what to say; Err: why it was not stopped.
pub async fn stop() -> Result<String, String> {
    let deadline = tokio::time::Instant::now() + START_WAIT;
    let mut waited = false;
    let stopped = loop {
        match connect_only(Request::Stop).await? {
            Some(a) if a.ok => {
                break serde_json::from_value::<Stopped>(a.body).unwrap_or_default();
            }
            // Told to stop already (another `stop`, a signal, idleness): waited for all the same.
            Some(a) if a.error.as_deref() == Some(STOPPING) => {
                let pid = a.body.get("pid").and_then(Value::as_u64);
                break Stopped {
                    pid: pid.and_then(|p| u32::try_from(p).ok()).unwrap_or(0),
                    servers: Vec::new(),
                };
            }
            Some(a) => return Err(refusal(&a)),
            None if lock_free() && waited => return Ok("the lspgate daemon is gone".into()),
            None if lock_free() => return Err("no daemon is running".into()),
            // One that holds the lock without a socket: starting, or in its last moments.
            None if tokio::time::Instant::now() < deadline => {
                waited = true;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            None => {
                return Err(format!(
                    "a daemon of lspgate {VERSION} holds its lock but has not answered on its socket for {}s; it was not stopped",
                    START_WAIT.as_secs()
                ));
            }
        }
    };
    let mut pids = stopped.servers.clone();
    pids.extend((stopped.pid != 0).then_some(stopped.pid));
    if !gone(&pids, START_WAIT).await {
        return Err(format!(
            "the daemon (pid {}) was told to stop and is still stopping after {}s",
            stopped.pid,
            START_WAIT.as_secs()
        ));
    }
    let n = stopped.servers.len();
    Ok(format!(
        "stopped the lspgate daemon (pid {}) and its {n} server{}",
        stopped.pid,
        if n == 1 { "" } else { "s" }
    ))
}

/// Whether no daemon of this version holds the lock (none runs, or the last one is gone).
fn lock_free() -> bool {
    paths::runtime_dir().is_ok_and(|dir| paths::lock_is_free(&paths::lock(&dir, VERSION)))
}

/// Waits (at most `bound`) until the daemon's lock is free and processes `pids` have exited;
/// whether they have.
async fn gone(pids: &[u32], bound: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + bound;
    loop {
        if lock_free() && !pids.iter().any(|p| alive(*p)) {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Why the daemon refused.
fn refusal(a: &Answer) -> String {
    match a.error.as_deref() {
        Some("version") => format!(
            "the running daemon is lspgate {}; it drains and exits",
            a.version
        ),
        Some(e) => e.to_string(),
        None => "the daemon's answer is not understood".into(),
    }
}

/// Asks the running daemon (never starts one): its answer, or `None` when nothing answers on
/// the socket.
async fn connect_only(request: Request) -> Result<Option<Answer>, String> {
    let dir = paths::runtime_dir()?;
    let socket = paths::socket(&dir);
    let Ok(mut stream) = UnixStream::connect(&socket).await else {
        return Ok(None);
    };
    let mut line = serde_json::to_vec(&Hello {
        version: VERSION.into(),
        request,
    })
    .map_err(|e| e.to_string())?;
    line.push(b'\n');
    stream.write_all(&line).await.map_err(|e| e.to_string())?;
    let mut read = BufReader::new(stream);
    let mut answer = String::new();
    read.read_line(&mut answer)
        .await
        .map_err(|e| e.to_string())?;
    if answer.is_empty() {
        // It closed without a word: its last moments.
        return Ok(None);
    }
    serde_json::from_str(&answer)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// The MCP connection to the daemon, with what the relay needs to know of it.
struct Link {
    /// The daemon's lines, read by a task of their own as they come (so the daemon is never
    /// kept waiting on its output while the relay writes to it: it acknowledges a request on
    /// its output before it reads the next); closed when the daemon closes.
    read: tokio::sync::mpsc::UnboundedReceiver<String>,
    write: OwnedWriteHalf,
}

async fn link(request: &Request) -> Result<Link, String> {
    let Opened {
        read,
        write,
        answer,
    } = open(request).await?;
    if !answer.ok {
        return Err(answer.error.unwrap_or_default());
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut lines = read.lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Ok(Link { read: rx, write })
}

/// Daemons lost in a row, each before it took the requests sent to it, before they fail.
const RESENDS: usize = 3;

/// `lspgate serve` as a thin session: relays MCP between stdio and the daemon. Err when no
/// daemon can be had at first (the caller serves in-process instead); once relaying, it never
/// falls back. The daemon acknowledges each request it reads (`TOOK`): when it dies (or stops),
/// the calls it took fail (`server_failed`: it may have done part of them), and those it never
/// read are sent to a new daemon at once, the session replayed there first; with nothing left
/// to answer, a new daemon is started at the session's next request only (so that a `daemon
/// stop` stops). While no daemon can be had, each request fails and the next one tries again.
pub async fn serve(session: SessionSpec, max_frame: usize) -> Result<i32, String> {
    let mcp = Request::Mcp {
        session,
        max_frame,
        acks: true,
    };
    let first = match link(&mcp).await {
        Ok(l) => l,
        // A command line or config the daemon refuses is the user's error, not a reason to
        // fall back.
        Err(e) if !e.contains("daemon") => {
            eprintln!("{e}");
            return Ok(2);
        }
        Err(e) => return Err(e),
    };
    let mut link = Some(first);
    let (input, output) = crate::mcp::stdio::client_io();
    let mut input = BufReader::with_capacity(64 * 1024, input).lines();
    let mut out = output;
    let mut s = Relay::default();
    loop {
        let from_daemon = async {
            match link.as_mut() {
                Some(l) => l.read.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            line = input.next_line() => {
                let Ok(Some(line)) = line else {
                    // The client is gone: so is the session.
                    if let Some(l) = link.as_mut() {
                        let _ = l.write.shutdown().await;
                    }
                    return Ok(0);
                };
                let request = s.note_client_line(&line);
                let Some(l) = link.as_mut() else {
                    if request {
                        // The daemon is needed again: a new one, the session replayed there
                        // and this request sent.
                        link = s.reconnect(&mcp, &mut out).await;
                    }
                    // Else a notification or a reply for a daemon that is gone: its session
                    // went with it (`initialized` is kept, for the next one).
                    continue;
                };
                if send(&mut l.write, &line).await.is_err() {
                    link = s.lost(&mcp, &mut out).await;
                }
            }
            line = from_daemon => {
                match line {
                    Some(line) => {
                        if s.swallow(&line) {
                            continue;
                        }
                        if send(&mut out, &line).await.is_err() {
                            return Ok(0);
                        }
                    }
                    None => link = s.lost(&mcp, &mut out).await,
                }
            }
        }
    }
}

/// What the relay knows of the MCP session it carries.
#[derive(Default)]
struct Relay {
    /// The client's `initialize` and `initialized`, replayed to a new daemon.
    init: Option<Value>,
    initialized: Option<String>,
    /// Requests of the client not answered yet: id → method.
    inflight: HashMap<String, String>,
    /// Requests of the client no daemon has said it took (`TOOK`), in order, with their
    /// lines: sent again to a new daemon when theirs is lost.
    untaken: std::collections::VecDeque<(String, String)>,
    /// Daemons lost in a row with requests untaken.
    lost: usize,
    /// The id of a replayed `initialize`, whose answer the client must not see.
    replayed: Option<Value>,
}

impl Relay {
    /// Notes a line from the client; returns whether it is a request.
    fn note_client_line(&mut self, line: &str) -> bool {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            return false;
        };
        match (msg.get("id"), msg.get("method").and_then(Value::as_str)) {
            (Some(id), Some(method)) => {
                let id = id.to_string();
                self.inflight.insert(id.clone(), method.to_string());
                self.untaken.push_back((id, line.to_string()));
                if method == "initialize" {
                    self.init = Some(msg.clone());
                }
                true
            }
            (None, Some("notifications/initialized")) => {
                self.initialized = Some(line.to_string());
                false
            }
            _ => false,
        }
    }

    /// Notes a line from the daemon; true when the client must not see it (the daemon's
    /// `TOOK`, the answer to a replayed `initialize`).
    fn swallow(&mut self, line: &str) -> bool {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            return false;
        };
        if msg.get("method").and_then(Value::as_str) == Some(crate::mcp::stdio::TOOK) {
            if let Some(id) = msg.pointer("/params/id") {
                self.taken(&id.to_string());
                self.lost = 0;
            }
            return true;
        }
        if msg.get("method").is_some() {
            return false;
        }
        let Some(id) = msg.get("id") else {
            return false;
        };
        if self.replayed.as_ref() == Some(id) {
            self.replayed = None;
            return true;
        }
        let id = id.to_string();
        // Answered (the guard answers some without taking them).
        self.taken(&id);
        self.lost = 0;
        self.inflight.remove(&id);
        false
    }

    /// Request `id` is the daemon's now (the daemon takes them in order: the first, mostly).
    fn taken(&mut self, id: &str) {
        if let Some(i) = self.untaken.iter().position(|(u, _)| u == id) {
            self.untaken.remove(i);
        }
    }

    /// The daemon is gone (stopped or died): the calls it took fail, and those it never read
    /// go to a new daemon, unless daemons were lost `RESENDS` times in a row before taking
    /// them (then they fail too). The new daemon's link, if one was needed and had.
    async fn lost(
        &mut self,
        request: &Request,
        out: &mut (impl AsyncWrite + Unpin),
    ) -> Option<Link> {
        let untaken: std::collections::HashSet<&String> =
            self.untaken.iter().map(|(id, _)| id).collect();
        let taken: Vec<(String, String)> = self
            .inflight
            .iter()
            .filter(|(id, _)| !untaken.contains(id))
            .map(|(id, m)| (id.clone(), m.clone()))
            .collect();
        for (id, _) in &taken {
            self.inflight.remove(id);
        }
        fail(out, taken).await;
        if self.untaken.is_empty() {
            tracing::warn!("the daemon went away; a new one at the next request");
            return None;
        }
        tracing::warn!(
            "the daemon went away before it took {} request(s): sending them to a new one",
            self.untaken.len()
        );
        self.reconnect(request, out).await
    }

    /// Fails every call in flight: no daemon will answer them.
    async fn fail_inflight(&mut self, out: &mut (impl AsyncWrite + Unpin)) {
        self.untaken.clear();
        let all: Vec<(String, String)> = self.inflight.drain().collect();
        fail(out, all).await;
    }

    /// A new daemon, with the client's `initialize` replayed there and the requests no daemon
    /// took sent again; `None` (every call in flight failed) when none answers.
    async fn reconnect(
        &mut self,
        request: &Request,
        out: &mut (impl AsyncWrite + Unpin),
    ) -> Option<Link> {
        loop {
            self.lost += 1;
            if self.lost > RESENDS {
                tracing::warn!("{RESENDS} daemons went away in a row before taking a request");
                self.fail_inflight(out).await;
                return None;
            }
            let mut link = match link(request).await {
                Ok(l) => l,
                Err(e) => {
                    tracing::warn!("no daemon: {e}");
                    self.fail_inflight(out).await;
                    return None;
                }
            };
            if self.replay(&mut link).await.is_ok() {
                return Some(link);
            }
        }
    }

    /// Sends a new daemon the session so far: the client's `initialize` (unless it is among
    /// the requests sent again), `initialized`, then the requests no daemon took.
    async fn replay(&mut self, link: &mut Link) -> std::io::Result<()> {
        let init_id = self
            .init
            .as_ref()
            .and_then(|i| i.get("id"))
            .map(Value::to_string);
        let init_untaken = self
            .untaken
            .iter()
            .any(|(id, _)| Some(id) == init_id.as_ref());
        if let Some(init) = self.init.as_ref().filter(|_| !init_untaken) {
            let mut again = init.clone();
            let id = json!("lspgate-reconnect");
            again["id"] = id.clone();
            self.replayed = Some(id);
            send(&mut link.write, &again.to_string()).await?;
        }
        // `initialized` right behind it: the daemon's session serves nothing before it.
        if let Some(n) = &self.initialized {
            send(&mut link.write, n).await?;
        }
        for (_, line) in &self.untaken {
            send(&mut link.write, line).await?;
        }
        Ok(())
    }
}

/// Answers each of `calls` (id, method) with the failure of a daemon gone under it.
async fn fail(out: &mut (impl AsyncWrite + Unpin), calls: Vec<(String, String)>) {
    for (id, method) in calls {
        let id: Value = serde_json::from_str(&id).unwrap_or(Value::Null);
        let message = "the lspgate daemon stopped during this call; call again";
        let reply = if method == "tools/call" {
            json!({"jsonrpc": "2.0", "id": id, "result": {
                "content": [{"type": "text", "text": format!("server_failed: {message}")}],
                "isError": true,
                "structuredContent": {"error": {"code": "server_failed", "message": message}},
            }})
        } else {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": message}})
        };
        let _ = send(out, &reply.to_string()).await;
    }
}

async fn send(w: &mut (impl AsyncWrite + Unpin), line: &str) -> std::io::Result<()> {
    w.write_all(line.as_bytes()).await?;
    w.write_all(b"\n").await?;
    w.flush().await
}
