//! A language-server process and its JSON-RPC channel: spawn, read/write/stderr tasks, request
//! correlation, per-request timeouts, `$/cancelRequest` on drop, and shutdown.
//!
//! Stopping is `shutdown`, then `exit`, a bounded wait, then the kill of the process group. When
//! the stream closes, every pending request fails at once: nothing hangs.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot, watch};

use super::LspError;
use super::framing::{self, FrameError};

/// Largest message we accept from a server. Larger ones mean the server is broken.
pub const MAX_SERVER_FRAME: usize = 32 * 1024 * 1024;
const STDERR_TAIL_LINES: usize = 20;

/// What the server sent that is not a response to one of our requests.
#[derive(Debug)]
pub enum Inbound {
    Notification {
        method: String,
        params: Value,
    },
    Request {
        id: Value,
        method: String,
        params: Value,
    },
}

/// A response's `result`, as the server wrote it: a typed answer is parsed from it once, with
/// no JSON tree between.
type Reply = Result<Box<RawValue>, LspError>;
type PendingMap = HashMap<i64, oneshot::Sender<Reply>>;

/// How to start a server process.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Start from an empty environment (then `env` is the whole of it) rather than lspgate's.
    pub clear_env: bool,
}

/// The live channel to one server process.
pub struct Transport {
    name: String,
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: Arc<Mutex<PendingMap>>,
    next_id: AtomicI64,
    closed: Arc<AtomicBool>,
    /// Why the stream ended, once it has.
    ended: watch::Receiver<Option<String>>,
    /// Why lspgate itself killed the server, if it did (read by the reader when it ends).
    kill_reason: Arc<Mutex<Option<String>>>,
    /// Set when lspgate shuts the server down on purpose (not a crash).
    stopping: AtomicBool,
    /// Set once the group was killed after the stream ended: its id may be reused later, so
    /// it is never signalled again.
    group_gone: Arc<AtomicBool>,
    /// How many responses the server has sent.
    answered: Arc<std::sync::atomic::AtomicU64>,
    child: Mutex<Option<Child>>,
    pid: Option<u32>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
}

impl Transport {
    /// Starts the process in `root` and the tasks that serve its pipes. Messages that are not
    /// responses arrive on the returned receiver, in order.
    pub fn spawn(
        spec: &SpawnSpec,
        root: &Path,
    ) -> Result<(Arc<Transport>, mpsc::UnboundedReceiver<Inbound>), LspError> {
        let mut cmd = Command::new(&spec.command);
        if spec.clear_env {
            cmd.env_clear();
        }
        cmd.args(&spec.args)
            .current_dir(root)
            .envs(spec.env.iter().cloned())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        cmd.process_group(0);
        #[cfg(target_os = "linux")]
        // SAFETY: the hook makes one system call (prctl, async-signal-safe, no allocation); it
        // only asks the kernel to SIGKILL the server when lspgate dies, so no server outlives
        // it even after a SIGKILL. A failure is ignored, as before.
        unsafe {
            cmd.pre_exec(|| {
                let kill = Some(rustix::process::Signal::KILL);
                let _ = rustix::process::set_parent_process_death_signal(kill);
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|e| LspError::Spawn {
            command: spec.command.clone(),
            reason: e.to_string(),
        })?;
        let pid = child.id();
        if let (Some(pid), Ok(mut g)) = (pid, GROUPS.lock()) {
            g.push(pid);
        }
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(LspError::Spawn {
                command: spec.command.clone(),
                reason: "pipes unavailable".into(),
            });
        };
        Ok(Transport::start(
            spec.name.clone(),
            stdout,
            stdin,
            Some(stderr),
            Some(child),
            pid,
        ))
    }

    /// Connects to a server already listening on `address` (host:port).
    pub async fn connect(
        name: &str,
        address: &str,
    ) -> Result<(Arc<Transport>, mpsc::UnboundedReceiver<Inbound>), LspError> {
        let stream =
            tokio::net::TcpStream::connect(address)
                .await
                .map_err(|e| LspError::Spawn {
                    command: format!("tcp://{address}"),
                    reason: e.to_string(),
                })?;
        let _ = stream.set_nodelay(true);
        let (read, write) = stream.into_split();
        Ok(Transport::start(
            name.to_string(),
            read,
            write,
            None,
            None,
            None,
        ))
    }

    /// The tasks that serve a server's channel, whatever it runs over.
    fn start<R, W>(
        name: String,
        stdout: R,
        stdin: W,
        stderr: Option<tokio::process::ChildStderr>,
        child: Option<Child>,
        pid: Option<u32>,
    ) -> (Arc<Transport>, mpsc::UnboundedReceiver<Inbound>)
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let (out_tx, out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let (in_tx, in_rx) = mpsc::unbounded_channel();
        let pending: Arc<Mutex<PendingMap>> = Arc::default();
        let closed = Arc::new(AtomicBool::new(false));
        let (ended_tx, ended) = watch::channel(None);
        let kill_reason: Arc<Mutex<Option<String>>> = Arc::default();
        let stderr_tail: Arc<Mutex<VecDeque<String>>> = Arc::default();
        tokio::spawn(write_frames(name.clone(), stdin, out_rx));
        if let Some(stderr) = stderr {
            tokio::spawn(keep_stderr(name.clone(), stderr, stderr_tail.clone()));
        }
        let group_gone = Arc::new(AtomicBool::new(false));
        let answered: Arc<std::sync::atomic::AtomicU64> = Arc::default();
        let reader = Reader {
            name: name.clone(),
            pending: pending.clone(),
            closed: closed.clone(),
            tail: stderr_tail.clone(),
            kill_reason: kill_reason.clone(),
            group_gone: group_gone.clone(),
            answered: answered.clone(),
            pid,
            ended: ended_tx,
            inbound: in_tx,
        };
        tokio::spawn(reader.run(stdout));
        (
            Arc::new(Transport {
                name,
                out: out_tx,
                pending,
                next_id: AtomicI64::new(1),
                closed,
                ended,
                kill_reason,
                stopping: AtomicBool::new(false),
                group_gone,
                answered,
                child: Mutex::new(child),
                pid,
                stderr_tail,
            }),
            in_rx,
        )
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Resolves when the stream has ended, with the reason.
    pub async fn wait_closed(&self) -> String {
        let mut rx = self.ended.clone();
        loop {
            if let Some(why) = rx.borrow_and_update().clone() {
                return why;
            }
            if rx.changed().await.is_err() {
                return "server stream dropped".into();
            }
        }
    }

    /// How many responses the server has sent.
    pub fn answered(&self) -> u64 {
        self.answered.load(Ordering::Relaxed)
    }

    /// Whether lspgate is shutting this server down on purpose.
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Kills the server for a reason of lspgate's (e.g. over its memory cap); the stream then
    /// ends with that reason.
    pub fn kill_because(&self, reason: String) {
        if let Ok(mut k) = self.kill_reason.lock() {
            *k = Some(reason);
        }
        self.kill_group();
    }

    /// The last lines the server wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        tail_text(&self.stderr_tail)
    }

    fn send_value(&self, v: &Value) {
        if let Ok(body) = serde_json::to_vec(v) {
            let _ = self.out.send(framing::encode(&body));
        }
    }

    pub fn notify(&self, method: &str, params: Value) {
        tracing::trace!(server = %self.name, method, "notify");
        self.send_value(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    pub fn respond(&self, id: Value, result: Result<Value, (i64, String)>) {
        let msg = match result {
            Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
            Err((code, message)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
        };
        self.send_value(&msg);
    }

    /// Sends a request and waits for its answer, at most `timeout`. The request is queued
    /// before this future is first polled; if the future is dropped or times out, the server
    /// gets `$/cancelRequest`.
    pub fn request(
        self: &Arc<Self>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> impl Future<Output = Result<Value, LspError>> + Send + 'static {
        let method_name = method.to_string();
        let raw = self.request_raw(method, params, timeout);
        async move {
            let raw = raw.await?;
            serde_json::from_str(raw.get())
                .map_err(|e| LspError::Protocol(format!("{method_name}: {e}")))
        }
    }

    /// `request`, its answer as the server wrote it (for a caller that parses it into its type).
    pub fn request_raw(
        self: &Arc<Self>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> impl Future<Output = Reply> + Send + 'static {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let queued = if self.is_closed() {
            Err(LspError::StreamClosed {
                reason: "server is not running".into(),
                stderr: self.stderr_tail(),
            })
        } else {
            if let Ok(mut p) = self.pending.lock() {
                p.insert(id, tx);
            }
            tracing::trace!(server = %self.name, id, method, "request");
            crate::raw::record(|| json!({"server": self.name, "method": method, "params": params}));
            self.send_value(
                &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
            );
            Ok(())
        };
        let mut guard = CancelGuard {
            transport: self.clone(),
            id,
            armed: queued.is_ok(),
        };
        let method = method.to_string();
        async move {
            queued?;
            let out = match tokio::time::timeout(timeout, rx).await {
                Ok(Ok(reply)) => {
                    guard.armed = false;
                    reply
                }
                Ok(Err(_)) => {
                    guard.armed = false;
                    Err(LspError::StreamClosed {
                        reason: "server closed its output".into(),
                        stderr: guard.transport.stderr_tail(),
                    })
                }
                Err(_) => Err(LspError::Timeout {
                    method,
                    after: timeout,
                }),
            };
            drop(guard);
            out
        }
    }

    /// `shutdown`, `exit`, a bounded wait, then kill of the whole process group.
    pub async fn shutdown(self: &Arc<Self>, grace: Duration) {
        self.stopping.store(true, Ordering::SeqCst);
        if !self.is_closed() {
            let _ = self.request("shutdown", Value::Null, grace).await;
            self.notify("exit", Value::Null);
        }
        let child = self.child.lock().ok().and_then(|mut c| c.take());
        if let Some(mut child) = child
            && tokio::time::timeout(grace, child.wait()).await.is_err()
        {
            let _ = child.start_kill();
        }
        self.kill_group();
    }

    /// Kills the server's process group (the server and anything it spawned).
    pub fn kill_group(&self) {
        if self.group_gone.load(Ordering::SeqCst) {
            return;
        }
        kill_pgid(self.pid);
    }
}

impl Drop for Transport {
    fn drop(&mut self) {
        self.kill_group();
        if let (Some(pid), Ok(mut g)) = (self.pid, GROUPS.lock()) {
            g.retain(|p| *p != pid);
        }
    }
}

/// The writer task of server `name`'s channel: it alone owns `stdin`, so frames never
/// interleave; it flushes when no frame waits, and stops at the first failed write.
async fn write_frames<W>(name: String, mut stdin: W, mut frames: mpsc::UnboundedReceiver<Vec<u8>>)
where
    W: tokio::io::AsyncWrite + Unpin,
{
    while let Some(frame) = frames.recv().await {
        if let Err(e) = stdin.write_all(&frame).await {
            tracing::debug!(server = %name, "write to server failed: {e}");
            break;
        }
        if frames.is_empty() && stdin.flush().await.is_err() {
            break;
        }
    }
}

/// The stderr task of server `name`: each line logged, and the last `STDERR_TAIL_LINES` kept
/// in `tail` for error messages.
async fn keep_stderr(
    name: String,
    stderr: tokio::process::ChildStderr,
    tail: Arc<Mutex<VecDeque<String>>>,
) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(server = %name, "stderr: {line}");
        if let Ok(mut t) = tail.lock() {
            if t.len() == STDERR_TAIL_LINES {
                t.pop_front();
            }
            t.push_back(line);
        }
    }
}

/// The reader task of a channel, with what it shares with its `Transport`: responses complete
/// pending requests here; everything else goes to the client (`inbound`).
struct Reader {
    name: String,
    pending: Arc<Mutex<PendingMap>>,
    closed: Arc<AtomicBool>,
    tail: Arc<Mutex<VecDeque<String>>>,
    kill_reason: Arc<Mutex<Option<String>>>,
    group_gone: Arc<AtomicBool>,
    answered: Arc<std::sync::atomic::AtomicU64>,
    pid: Option<u32>,
    ended: watch::Sender<Option<String>>,
    inbound: mpsc::UnboundedSender<Inbound>,
}

impl Reader {
    /// Reads the server's messages from `stdout` until its stream ends or it sends what is not
    /// a message, routing each (`dispatch`); then ends the channel (`end`).
    async fn run<R>(self, stdout: R)
    where
        R: tokio::io::AsyncRead + Unpin,
    {
        let mut reader = BufReader::with_capacity(64 * 1024, stdout);
        let why = loop {
            match framing::read_frame(&mut reader, MAX_SERVER_FRAME).await {
                Ok(body) => match parse_message(&body) {
                    Ok(Some(msg)) => {
                        if dispatch(msg, &self.pending, &self.inbound) {
                            self.answered.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Ok(None) => {}
                    Err(e) => break format!("server sent invalid JSON: {e}"),
                },
                Err(FrameError::Eof) => break "server closed its output".to_string(),
                Err(e) => break format!("server sent a bad frame: {e}"),
            }
        };
        self.end(why);
    }

    /// Ends the channel for `why` (or the reason lspgate killed the server for): kills what is
    /// left of the process group, marks it closed, and fails every pending request.
    fn end(self, why: String) {
        // A server that sends garbage or an oversized message is not trusted further; and
        // whatever is left of its group goes now, while its id is still its own.
        kill_pgid(self.pid);
        self.group_gone.store(true, Ordering::SeqCst);
        if let (Some(pid), Ok(mut g)) = (self.pid, GROUPS.lock()) {
            g.retain(|p| *p != pid);
        }
        let why = self
            .kill_reason
            .lock()
            .ok()
            .and_then(|k| k.clone())
            .unwrap_or(why);
        tracing::info!(server = %self.name, "stream ended: {why}");
        self.closed.store(true, Ordering::SeqCst);
        self.ended.send_replace(Some(why.clone()));
        let tail = tail_text(&self.tail);
        let drained: Vec<_> = match self.pending.lock() {
            Ok(mut p) => p.drain().map(|(_, tx)| tx).collect(),
            Err(_) => Vec::new(),
        };
        for tx in drained {
            let _ = tx.send(Err(LspError::StreamClosed {
                reason: why.clone(),
                stderr: tail.clone(),
            }));
        }
    }
}

/// Process groups of the servers alive now, killed by `kill_all_servers` (panic hook, signals).
static GROUPS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn kill_pgid(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(group) = pid.and_then(|p| rustix::process::Pid::from_raw(p.try_into().ok()?)) {
        // A group we created (the server was spawned as its leader); an error (already gone)
        // is ignored.
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
}

/// Kills every server process group lspgate started. Safe to call from a panic hook.
pub fn kill_all_servers() {
    let groups: Vec<u32> = match GROUPS.try_lock() {
        Ok(g) => g.clone(),
        Err(_) => return,
    };
    for pid in groups {
        kill_pgid(Some(pid));
    }
}

struct CancelGuard {
    transport: Arc<Transport>,
    id: i64,
    armed: bool,
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let was_pending = self
            .transport
            .pending
            .lock()
            .map(|mut p| p.remove(&self.id).is_some())
            .unwrap_or(false);
        if was_pending && !self.transport.is_closed() {
            self.transport
                .notify("$/cancelRequest", json!({"id": self.id}));
        }
    }
}

/// A message from the server, its parts as sent: `result` kept raw for the typed parse of its
/// request; `method` and `id` as any JSON (a malformed one is ignored, not fatal).
#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    method: Option<Value>,
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Option<Value>,
}

/// Parses a frame's body into a message: `None` when it is not JSON (or not an object).
fn parse_message(body: &[u8]) -> Result<Option<Message>, serde_json::Error> {
    // Only an object is a message (a derived struct would also take an array, by position).
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
            Ok(_) => {
                tracing::debug!("server sent a non-object message");
                Ok(None)
            }
            Err(e) => Err(e),
        };
    }
    match serde_json::from_slice::<Message>(body) {
        Ok(m) => Ok(Some(m)),
        // An object serde refuses as it stands (a key given twice): ignored.
        Err(e) if e.classify() == serde_json::error::Category::Data => {
            tracing::debug!("server sent a message that cannot be read: {e}");
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Routes one message; returns whether it was a response to one of our requests.
fn dispatch(
    msg: Message,
    pending: &Mutex<PendingMap>,
    inbound: &mpsc::UnboundedSender<Inbound>,
) -> bool {
    let method = msg.method.and_then(|m| match m {
        Value::String(s) => Some(s),
        _ => None,
    });
    // `"id": null` is no id (as an absent one was before).
    let id = msg.id.filter(|id| !id.is_null());
    match (method, id) {
        (Some(method), Some(id)) => {
            let params = msg.params.unwrap_or(Value::Null);
            let _ = inbound.send(Inbound::Request { id, method, params });
            false
        }
        (Some(method), None) => {
            let params = msg.params.unwrap_or(Value::Null);
            let _ = inbound.send(Inbound::Notification { method, params });
            false
        }
        (None, Some(id)) => {
            let Some(id) = id.as_i64() else { return false };
            let tx = pending.lock().ok().and_then(|mut p| p.remove(&id));
            let Some(tx) = tx else { return false };
            let reply = if let Some(err) = msg.error.filter(|e| !e.is_null()) {
                Err(LspError::Server {
                    code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: err
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                })
            } else {
                tracing::trace!(id, "response {:?}", msg.result.as_ref().map(|r| r.get()));
                Ok(msg.result.unwrap_or_else(null))
            };
            let _ = tx.send(reply);
            true
        }
        (None, None) => {
            tracing::debug!("server sent a message with neither id nor method");
            false
        }
    }
}

/// A raw `null` (an absent or null `result`).
fn null() -> Box<RawValue> {
    RawValue::NULL.to_owned()
}

fn tail_text(tail: &Mutex<VecDeque<String>>) -> String {
    tail.lock()
        .map(|t| t.iter().cloned().collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(body: &str) -> (bool, Option<Reply>, Option<Inbound>) {
        let pending: Mutex<PendingMap> = Mutex::default();
        let (tx, mut rx) = oneshot::channel();
        pending.lock().unwrap().insert(7, tx);
        let (inbound, mut heard) = mpsc::unbounded_channel();
        let answered = match parse_message(body.as_bytes()).unwrap() {
            Some(msg) => dispatch(msg, &pending, &inbound),
            None => false,
        };
        (answered, rx.try_recv().ok(), heard.try_recv().ok())
    }

    #[test]
    fn a_result_reaches_its_request_as_the_server_wrote_it() {
        let (answered, reply, _) = route(r#"{"jsonrpc":"2.0","id":7,"result":[{"a": 1}]}"#);
        assert!(answered);
        assert_eq!(reply.unwrap().unwrap().get(), r#"[{"a": 1}]"#);
        // No result, or `"error": null` beside one: the result (null when absent).
        let (_, reply, _) = route(r#"{"id":7}"#);
        assert_eq!(reply.unwrap().unwrap().get(), "null");
        let (_, reply, _) = route(r#"{"id":7,"result":2,"error":null}"#);
        assert_eq!(reply.unwrap().unwrap().get(), "2");
        let (_, reply, _) = route(r#"{"id":7,"error":{"code":-32801,"message":"m"}}"#);
        assert!(matches!(
            reply.unwrap(),
            Err(LspError::Server { code: -32801, .. })
        ));
    }

    #[test]
    fn what_is_not_a_message_is_ignored_and_what_is_not_json_is_an_error() {
        for body in ["[1, 2]", "[null, 7, null, 5]", " 3", r#"{"id":7,"id":8}"#] {
            let (answered, reply, heard) = route(body);
            assert!(!answered && reply.is_none() && heard.is_none(), "{body}");
        }
        // A method that is no string: neither a request nor a notification.
        let (answered, _, heard) = route(r#"{"method":5,"params":{}}"#);
        assert!(!answered && heard.is_none());
        assert!(parse_message(b"{\"id\": 7,").is_err());
        assert!(parse_message(b"not json").is_err());
        let (_, _, heard) = route(r#"{"method":"window/logMessage","params":{"message":"m"}}"#);
        assert!(
            matches!(heard, Some(Inbound::Notification { method, .. }) if method == "window/logMessage")
        );
    }
}
