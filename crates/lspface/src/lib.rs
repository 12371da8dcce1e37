//! lspgate as a language server (`lspgate lsp`): one client's LSP connection (an editor, a
//! harness's LSP client) served from the workspace's servers, the same instances every other
//! session of the root uses. The client sees one server (`caps`): requests are routed per
//! document as the tools route and forwarded as they are (`ops::forward`), positions converted
//! between the client's encoding and each server's (`positions`). The client's open documents
//! are its own (`docs`): a request is answered for its buffer (an overlay while it differs from
//! the disk), and diagnostics reach it only for the content it has (`diagnostics`). Requests
//! run concurrently, each cancellable by `$/cancelRequest`; `shutdown`/`exit` end this
//! connection only; a frame that cannot be read closes it, a message that is not JSON-RPC gets
//! its error.
//!
//! `Only` (`--language`, `--server`) narrows the servers fronted. The face's own requests to the
//! client (`workspace/applyEdit`) await its answer. A client's buffer never reaches another
//! client's answers or diagnostics (an overlay holds its document for the request it serves); a
//! client going away, or misbehaving, ends its connection only.

// Unit tests read their own temporary files directly.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

// The layers below, by the names every module here uses for them.
use lspgate_base::{text, watch};
use lspgate_core::{documents, edits, registry, workspace};
use lspgate_engine::{error, ops};
use lspgate_lsp as lsp;

mod aliases;
mod announce;
mod caps;
mod diagnostics;
mod docs;
mod known;
mod positions;
mod progress;
mod requests;
mod shape;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::lsp::framing::{FrameError, encode, read_frame};
use crate::ops::Engine;
use crate::registry::Server;
use crate::text::Encoding;

/// The largest message a client may send (a whole document in `didChange` included).
pub const MAX_FRAME: usize = 64 << 20;

/// How long the face waits for the client to answer a request of its own.
const ASK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// JSON-RPC and LSP error codes the face answers with.
mod code {
    pub(crate) const PARSE_ERROR: i64 = -32700;
    pub(crate) const INVALID_REQUEST: i64 = -32600;
    pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
    pub(crate) const INVALID_PARAMS: i64 = -32602;
    pub(crate) const INTERNAL: i64 = -32603;
    pub(crate) const SERVER_NOT_INITIALIZED: i64 = -32002;
    pub(crate) const REQUEST_FAILED: i64 = -32803;
    pub(crate) const REQUEST_CANCELLED: i64 = -32800;
}

/// The servers a client is fronted with (`--language`, `--server`; empty: all).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Only {
    /// Servers of these languages.
    #[serde(default)]
    pub languages: Vec<String>,
    /// Servers of these names (`builtin/pyright`, or `pyright` for any origin's).
    #[serde(default)]
    pub servers: Vec<String>,
}

impl Only {
    /// Whether `server` is among them.
    pub fn admits(&self, server: &Server) -> bool {
        self.named(&server.name)
            && (self.languages.is_empty() || self.languages.iter().any(|l| server.serves(l)))
    }

    /// Whether the server called `name`, serving `languages` (empty: every language), is among
    /// them: asked before it is started, so that no other is.
    pub fn admits_entry(&self, name: &str, languages: &[String]) -> bool {
        self.named(name)
            && (self.languages.is_empty()
                || languages.is_empty()
                || self.languages.iter().any(|l| languages.contains(l)))
    }

    fn named(&self, name: &str) -> bool {
        self.servers.is_empty()
            || self
                .servers
                .iter()
                .any(|n| name == n || name.rsplit('/').next() == Some(n.as_str()))
    }
}

/// One client's connection.
pub(crate) struct Face {
    engine: Arc<Engine>,
    only: Only,
    /// Told the method of each request served (the daemon's list of connections).
    observer: Option<Observer>,
    out: mpsc::UnboundedSender<Value>,
    docs: docs::Docs,
    /// The client's encoding (negotiated in `initialize`).
    encoding: Mutex<Encoding>,
    initialized: AtomicBool,
    /// Whether the client announced `window.workDoneProgress` (it is shown waits then).
    work_done_progress: AtomicBool,
    /// The client's name for the root, when it is not the real one (`aliases`).
    aliases: std::sync::OnceLock<aliases::Aliases>,
    /// The provider keys the client takes registrations for (`announce`).
    dynamic: std::sync::OnceLock<Vec<&'static str>>,
    /// The languages whose first document the client opened (their servers started).
    languages: Mutex<std::collections::HashSet<String>>,
    /// What the client was warned of (each once).
    warned: Mutex<std::collections::HashSet<String>>,
    /// What the client can take (from its `initialize`): answers are shaped for it.
    shape: std::sync::OnceLock<shape::Shape>,
    shut_down: AtomicBool,
    /// Requests running: the client's id → the task answering it.
    inflight: Mutex<HashMap<String, tokio::task::AbortHandle>>,
    /// Ends the diagnostics pump with the connection.
    closed: tokio::sync::watch::Sender<bool>,
    /// The diagnostics the client was last told, per document.
    sent: Mutex<HashMap<String, Value>>,
    /// The face's own requests to the client (`workspace/applyEdit`) awaiting its answer.
    pending: Mutex<HashMap<String, tokio::sync::oneshot::Sender<Value>>>,
    next_id: std::sync::atomic::AtomicU64,
}

impl Face {
    fn send(&self, message: Value) {
        let _ = self.out.send(message);
    }

    fn respond(&self, id: Value, result: Result<Value, (i64, String)>) {
        self.send(match result {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
        });
    }

    fn notify(&self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends the client a request and waits (bounded) for its answer: the result, or `None`
    /// when it answered an error, did not answer in time, or is gone.
    async fn ask(&self, method: &str, params: Value) -> Option<Value> {
        let id = format!("lspgate-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = tokio::sync::oneshot::channel();
        if let Ok(mut p) = self.pending.lock() {
            p.insert(Value::from(id.clone()).to_string(), tx);
        }
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = tokio::time::timeout(ASK_TIMEOUT, rx).await;
        if let Ok(mut p) = self.pending.lock() {
            p.remove(&Value::from(id).to_string());
        }
        answer.ok()?.ok()?.get("result").cloned()
    }

    fn aliases(&self) -> aliases::Aliases {
        self.aliases.get().cloned().unwrap_or_default()
    }

    fn shape(&self) -> shape::Shape {
        self.shape.get().cloned().unwrap_or_default()
    }

    fn encoding(&self) -> Encoding {
        self.encoding.lock().map(|e| *e).unwrap_or_default()
    }
}

/// What a connection tells of each request it serves: its method.
pub type Observer = Arc<dyn Fn(&str) + Send + Sync>;

/// Serves one client on `input`/`output` until it exits, closes its end, or sends a frame
/// that cannot be read. The engine is this connection's session on the root's workspace.
pub async fn serve<R, W>(engine: Arc<Engine>, input: R, output: W, only: Only)
where
    R: AsyncBufRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_observed(engine, input, output, only, None).await
}

/// `serve`, telling `observer` (when given) the method of each request served.
pub async fn serve_observed<R, W>(
    engine: Arc<Engine>,
    input: R,
    output: W,
    only: Only,
    observer: Option<Observer>,
) where
    R: AsyncBufRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out, rx) = mpsc::unbounded_channel();
    let closed = tokio::sync::watch::channel(false).0;
    let writer = tokio::spawn(write_all(output, rx, closed.subscribe()));
    let face = Arc::new(Face {
        engine: engine.clone(),
        only,
        observer,
        out,
        docs: docs::Docs::default(),
        encoding: Mutex::new(Encoding::Utf16),
        initialized: AtomicBool::new(false),
        work_done_progress: AtomicBool::new(false),
        shape: std::sync::OnceLock::new(),
        dynamic: std::sync::OnceLock::new(),
        aliases: std::sync::OnceLock::new(),
        languages: Mutex::default(),
        warned: Mutex::default(),
        shut_down: AtomicBool::new(false),
        inflight: Mutex::default(),
        closed,
        sent: Mutex::default(),
        pending: Mutex::default(),
        next_id: std::sync::atomic::AtomicU64::new(1),
    });
    read_all(&face, input).await;
    face.closed.send_replace(true);
    if let Ok(mut inflight) = face.inflight.lock() {
        for (_, task) in inflight.drain() {
            task.abort();
        }
    }
    drop(face);
    let _ = writer.await;
    engine.shutdown().await;
}

/// Writes each message as a frame, in order, until the connection is closed (what was queued
/// by then still goes out) or the client stops reading.
async fn write_all<W: AsyncWrite + Unpin>(
    mut output: W,
    mut rx: mpsc::UnboundedReceiver<Value>,
    mut closed: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        let ended = async {
            let _ = closed.wait_for(|c| *c).await;
        };
        let message = match tokio::select! {
            m = rx.recv() => Some(m),
            () = ended => None,
        } {
            Some(m) => m,
            None => {
                // Work still finishing (a diagnostics refresh) sends nothing more.
                rx.close();
                rx.recv().await
            }
        };
        let Some(message) = message else {
            break;
        };
        let Ok(body) = serde_json::to_vec(&message) else {
            continue;
        };
        if output.write_all(&encode(&body)).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
}

/// Reads and dispatches the client's messages until it is done.
async fn read_all<R: AsyncBufRead + Unpin>(face: &Arc<Face>, mut input: R) {
    loop {
        let body = match read_frame(&mut input, MAX_FRAME).await {
            Ok(b) => b,
            Err(FrameError::Eof) => return,
            Err(e) => {
                tracing::warn!(
                    "an LSP client sent a frame that cannot be read ({e}): closing its connection"
                );
                return;
            }
        };
        let message: Value = match serde_json::from_slice(&body) {
            Ok(m) => m,
            Err(e) => {
                face.respond(
                    Value::Null,
                    Err((code::PARSE_ERROR, format!("not JSON: {e}"))),
                );
                continue;
            }
        };
        if !dispatch(face, message) {
            return;
        }
    }
}

/// Handles one message; false when the connection is to end (`exit`).
fn dispatch(face: &Arc<Face>, message: Value) -> bool {
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    let id = message.get("id").cloned();
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    match (method, id) {
        (Some(method), Some(id)) => request(face, id, method, params),
        (Some(method), None) => return notification(face, &method, params),
        // The client's answer to a request of the face's.
        (None, Some(id)) => {
            let waiting = face
                .pending
                .lock()
                .ok()
                .and_then(|mut p| p.remove(&id.to_string()));
            if let Some(tx) = waiting {
                let _ = tx.send(message);
            }
        }
        (None, None) => face.respond(
            Value::Null,
            Err((
                code::INVALID_REQUEST,
                "neither a request, a notification nor a response".into(),
            )),
        ),
    }
    true
}

fn request(face: &Arc<Face>, id: Value, method: String, params: Value) {
    if method == "shutdown" {
        face.shut_down.store(true, Ordering::Release);
        face.respond(id, Ok(Value::Null));
        return;
    }
    if method != "initialize" && !face.initialized.load(Ordering::Acquire) {
        face.respond(
            id,
            Err((code::SERVER_NOT_INITIALIZED, "initialize first".into())),
        );
        return;
    }
    if face.shut_down.load(Ordering::Acquire) {
        face.respond(
            id,
            Err((
                code::INVALID_REQUEST,
                "the client asked to shut down".into(),
            )),
        );
        return;
    }
    if let Some(o) = &face.observer {
        o(method.as_ref());
    }
    let key = id.to_string();
    let task_face = face.clone();
    let task_id = id.clone();
    let task = tokio::spawn(async move {
        let answer = requests::answer(&task_face, &method, params).await;
        if let Ok(mut inflight) = task_face.inflight.lock() {
            inflight.remove(&task_id.to_string());
        }
        task_face.respond(task_id, answer);
    });
    if let Ok(mut inflight) = face.inflight.lock()
        && !task.is_finished()
    {
        inflight.insert(key, task.abort_handle());
    }
}

/// Handles a notification; false on `exit`.
fn notification(face: &Arc<Face>, method: &str, params: Value) -> bool {
    match method {
        "exit" => return false,
        "initialized" => {
            tokio::spawn(diagnostics::pump(face.clone()));
        }
        "$/cancelRequest" => {
            let Some(id) = params.get("id") else {
                return true;
            };
            let task = face
                .inflight
                .lock()
                .ok()
                .and_then(|mut i| i.remove(&id.to_string()));
            if let Some(task) = task {
                task.abort();
                face.respond(
                    id.clone(),
                    Err((code::REQUEST_CANCELLED, "cancelled".into())),
                );
            }
        }
        "textDocument/didOpen"
        | "textDocument/didChange"
        | "textDocument/didClose"
        | "textDocument/didSave" => docs::changed(face, method, &params),
        // lspgate's watcher sees every change on disk, whoever made it; configuration is
        // lspgate's own.
        "workspace/didChangeWatchedFiles" | "workspace/didChangeConfiguration" => {}
        other => tracing::debug!("LSP client notification {other} ignored"),
    }
    true
}
