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
const START_WAIT: Duration = Duration::from_secs(10);

/// A connection to a daemon of this version that took `request`, and its answer.
async fn open(request: &Request) -> Result<(UnixStream, Answer), String> {
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
/// its socket.
async fn start(socket: &std::path::Path) -> Result<UnixStream, String> {
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
    // Reaped in the background: it exits at once if another daemon won the race.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    let deadline = tokio::time::Instant::now() + START_WAIT;
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
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
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
    match connect_only(Request::Stop).await {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
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
/// daemon can be had at all (the caller serves in-process instead).
pub async fn serve(argv: Vec<String>, max_frame: usize) -> Result<i32, String> {
    let mut link = match link(&argv).await {
        Ok(l) => l,
        // A command line or config the daemon refuses is the user's error, not a reason to
        // fall back.
        Err(e) if !e.starts_with("daemon:") && !e.contains("daemon") => {
            eprintln!("{e}");
            return Ok(2);
        }
        Err(e) => return Err(e),
    };
    let (input, output) = crate::mcp::stdio::client_io();
    let mut input = BufReader::with_capacity(64 * 1024, input).lines();
    let mut out = output;
    // The client's `initialize` and `initialized`, replayed to a new daemon.
    let mut init: Option<Value> = None;
    let mut initialized: Option<String> = None;
    // Requests of the client not answered yet: id → method.
    let mut inflight: HashMap<String, String> = HashMap::new();
    // The id of a replayed `initialize`, whose answer the client must not see.
    let mut replayed: Option<Value> = None;
    let _ = max_frame;
    loop {
        tokio::select! {
            line = input.next_line() => {
                let Ok(Some(line)) = line else {
                    // The client is gone: so is the session.
                    let _ = link.write.shutdown().await;
                    return Ok(0);
                };
                if let Ok(msg) = serde_json::from_str::<Value>(&line) {
                    match (msg.get("id"), msg.get("method").and_then(Value::as_str)) {
                        (Some(id), Some(method)) => {
                            inflight.insert(id.to_string(), method.to_string());
                            if method == "initialize" {
                                init = Some(msg.clone());
                            }
                        }
                        (None, Some("notifications/initialized")) => {
                            initialized = Some(line.clone());
                        }
                        _ => {}
                    }
                }
                if send(&mut link.write, &line).await.is_err() {
                    link = reconnect(&argv, &mut out, &mut inflight, &init, &initialized, &mut replayed).await?;
                }
            }
            line = link.read.next_line() => {
                match line {
                    Ok(Some(line)) => {
                        if let Ok(msg) = serde_json::from_str::<Value>(&line)
                            && msg.get("method").is_none()
                            && let Some(id) = msg.get("id")
                        {
                            if replayed.as_ref() == Some(id) {
                                replayed = None;
                                if let Some(n) = &initialized {
                                    let _ = send(&mut link.write, n).await;
                                }
                                continue;
                            }
                            inflight.remove(&id.to_string());
                        }
                        if send(&mut out, &line).await.is_err() {
                            return Ok(0);
                        }
                    }
                    _ => {
                        link = reconnect(&argv, &mut out, &mut inflight, &init, &initialized, &mut replayed).await?;
                    }
                }
            }
        }
    }
}

/// The daemon went away: fails the calls in flight (`server_failed`), connects to a new one
/// and replays the client's `initialize` there.
async fn reconnect(
    argv: &[String],
    out: &mut (impl AsyncWrite + Unpin),
    inflight: &mut HashMap<String, String>,
    init: &Option<Value>,
    initialized: &Option<String>,
    replayed: &mut Option<Value>,
) -> Result<Link, String> {
    tracing::warn!("the daemon went away; reconnecting");
    for (id, method) in inflight.drain() {
        let id: Value = serde_json::from_str(&id).unwrap_or(Value::Null);
        let reply = if method == "tools/call" {
            let message =
                "the lspgate daemon stopped during this call; it was restarted, call again";
            json!({"jsonrpc": "2.0", "id": id, "result": {
                "content": [{"type": "text", "text": format!("server_failed: {message}")}],
                "isError": true,
                "structuredContent": {"error": {"code": "server_failed", "message": message}},
            }})
        } else {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "the lspgate daemon stopped; call again"}})
        };
        let _ = send(out, &reply.to_string()).await;
    }
    let mut link = link(argv).await?;
    if let Some(init) = init {
        let mut again = init.clone();
        let id = json!("lspgate-reconnect");
        again["id"] = id.clone();
        *replayed = Some(id);
        send(&mut link.write, &again.to_string())
            .await
            .map_err(|e| e.to_string())?;
    } else if let Some(n) = initialized {
        let _ = send(&mut link.write, n).await;
    }
    Ok(link)
}

async fn send(w: &mut (impl AsyncWrite + Unpin), line: &str) -> std::io::Result<()> {
    w.write_all(line.as_bytes()).await?;
    w.write_all(b"\n").await?;
    w.flush().await
}
