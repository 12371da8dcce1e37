//! The client end of the daemon: connecting (starting a daemon, detached, when none answers;
//! replacing one of another version), running a command there, and `serve` as a thin session
//! that relays MCP between the agent's stdio and the daemon. When the daemon dies under a
//! session, the calls in flight fail with `server_failed` and the session reconnects to a new
//! daemon by itself, replaying the client's `initialize`.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use super::paths;
use super::protocol::{Answer, Hello, Ran, Request, VERSION};
use crate::cli::context::Client;

/// How long a started daemon gets to open its socket.
const START_WAIT: Duration = Duration::from_secs(30);

/// A connection to a daemon of this version that took `request`, and its answer.
pub(super) async fn open(request: &Request) -> Result<(UnixStream, Answer), String> {
    let dir = paths::runtime_dir()?;
    let socket = paths::socket(&dir);
    // Twice at most: a daemon of another version drains and leaves the socket to ours.
    for _ in 0..3 {
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
        stream
            .write_all(&line)
            .await
            .map_err(|e| format!("daemon: {e}"))?;
        let (read, write) = stream.into_split();
        let mut read = BufReader::new(read);
        let mut answer = String::new();
        read.read_line(&mut answer)
            .await
            .map_err(|e| format!("daemon: {e}"))?;
        let answer: Answer = serde_json::from_str(&answer)
            .map_err(|e| format!("the daemon's answer is not understood ({e})"))?;
        if answer.error.as_deref() == Some("version") {
            tracing::info!(
                "the daemon is lspgate {}; starting one of {VERSION}",
                answer.version
            );
            continue;
        }
        let stream = read
            .into_inner()
            .reunite(write)
            .map_err(|e| format!("daemon: {e}"))?;
        return Ok((stream, answer));
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
    let log = paths::log_file();
    if let Some(dir) = log.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("daemon")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log);
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setsid is async-signal-safe; between fork and exec the child calls nothing
        // else. It leaves the session's process group, so it outlives the agent's session.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
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

/// Runs this command line in the daemon: what it printed and its exit code.
pub async fn run(argv: Vec<String>) -> Result<Ran, String> {
    let request = Request::Run {
        client: Client::this_process(),
        argv,
    };
    let (_stream, answer) = open(&request).await?;
    if !answer.ok {
        return Err(answer.error.unwrap_or_default());
    }
    serde_json::from_value(answer.body).map_err(|e| format!("the daemon's answer: {e}"))
}

/// `lspgate daemon status`.
pub async fn status() -> i32 {
    match connect_only(Request::Status).await {
        Ok(a) => {
            let text = serde_json::to_string_pretty(&a.body).unwrap_or_default();
            crate::cli::output::stdout(&format!("{text}\n"));
            0
        }
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
}

/// `lspgate daemon stop`.
pub async fn stop() -> i32 {
    if let Err(e) = connect_only(Request::Stop).await {
        eprintln!("{e}");
        return 1;
    }
    // Returns once the daemon is gone (its servers stopped, its lock released), so that what
    // runs next starts a new one.
    let Ok(dir) = paths::runtime_dir() else {
        return 0;
    };
    let lock = paths::lock(&dir, VERSION);
    let deadline = tokio::time::Instant::now() + START_WAIT;
    while tokio::time::Instant::now() < deadline {
        if paths::lock_is_free(&lock) {
            return 0;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!(
        "the daemon was told to stop and is still stopping after {}s",
        START_WAIT.as_secs()
    );
    1
}

/// Asks the running daemon (never starts one).
async fn connect_only(request: Request) -> Result<Answer, String> {
    let dir = paths::runtime_dir()?;
    let socket = paths::socket(&dir);
    let mut stream = UnixStream::connect(&socket)
        .await
        .map_err(|_| "no daemon is running".to_string())?;
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
    let a: Answer = serde_json::from_str(&answer).map_err(|e| e.to_string())?;
    match a.error.as_deref() {
        Some("version") => Err(format!(
            "the running daemon is lspgate {}; it drains and exits",
            a.version
        )),
        Some(e) => Err(e.to_string()),
        None => Ok(a),
    }
}

/// The MCP connection to the daemon, with what the relay needs to know of it.
struct Link {
    read: tokio::io::Lines<BufReader<OwnedReadHalf>>,
    write: OwnedWriteHalf,
}

async fn link(argv: &[String]) -> Result<Link, String> {
    let request = Request::Mcp {
        client: Client::this_process(),
        argv: argv.to_vec(),
    };
    let (stream, answer) = open(&request).await?;
    if !answer.ok {
        return Err(answer.error.unwrap_or_default());
    }
    let (read, write) = stream.into_split();
    Ok(Link {
        read: BufReader::new(read).lines(),
        write,
    })
}

/// `lspgate serve` as a thin session: relays MCP between stdio and the daemon. Err when no
/// daemon can be had at first (the caller serves in-process instead); once relaying, it never
/// falls back: while no daemon answers, each request fails (`server_failed`) and the next one
/// tries again.
pub async fn serve(argv: Vec<String>, max_frame: usize) -> Result<i32, String> {
    let _ = max_frame;
    let first = match link(&argv).await {
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
                Some(l) => l.read.next_line().await,
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
                if link.is_none() {
                    link = s.reconnect(&argv, &mut out).await;
                }
                let sent = match link.as_mut() {
                    Some(l) => send(&mut l.write, &line).await.is_ok(),
                    None => false,
                };
                if !sent {
                    // No daemon now: this request fails; the next one tries again.
                    link = None;
                    s.fail_inflight(&mut out).await;
                    let _ = request;
                }
            }
            line = from_daemon => {
                match line {
                    Ok(Some(line)) => {
                        if s.swallow(&line) {
                            continue;
                        }
                        if send(&mut out, &line).await.is_err() {
                            return Ok(0);
                        }
                    }
                    _ => {
                        tracing::warn!("the daemon went away; reconnecting");
                        s.fail_inflight(&mut out).await;
                        link = s.reconnect(&argv, &mut out).await;
                    }
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
                self.inflight.insert(id.to_string(), method.to_string());
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

    /// Notes a line from the daemon; true when the client must not see it (the answer to a
    /// replayed `initialize`).
    fn swallow(&mut self, line: &str) -> bool {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            return false;
        };
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
        self.inflight.remove(&id.to_string());
        false
    }

    /// Fails every call in flight: the daemon that had them is gone.
    async fn fail_inflight(&mut self, out: &mut (impl AsyncWrite + Unpin)) {
        for (id, method) in self.inflight.drain() {
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

    /// A new daemon, with the client's `initialize` replayed there; `None` when none answers.
    async fn reconnect(
        &mut self,
        argv: &[String],
        out: &mut (impl AsyncWrite + Unpin),
    ) -> Option<Link> {
        let mut link = match link(argv).await {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!("no daemon: {e}");
                self.fail_inflight(out).await;
                return None;
            }
        };
        if let Some(init) = &self.init {
            let mut again = init.clone();
            let id = json!("lspgate-reconnect");
            again["id"] = id.clone();
            self.replayed = Some(id);
            if send(&mut link.write, &again.to_string()).await.is_err() {
                return None;
            }
        }
        // `initialized` right behind it: the daemon's session serves nothing before it.
        if let Some(n) = &self.initialized
            && send(&mut link.write, n).await.is_err()
        {
            return None;
        }
        Some(link)
    }
}

async fn send(w: &mut (impl AsyncWrite + Unpin), line: &str) -> std::io::Result<()> {
    w.write_all(line.as_bytes()).await?;
    w.write_all(b"\n").await?;
    w.flush().await
}
