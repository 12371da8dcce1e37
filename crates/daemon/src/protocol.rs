//! What a client and the daemon say before the connection carries MCP (or instead of it): one
//! JSON line each way. The client says what it wants, in typed requests (the session it asks
//! for, resolved in its own process, then a tool call, an MCP session or an HTTP listener);
//! the daemon answers (`read_hello`, `answer`). Command lines are parsed and rendered by the
//! client alone.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::error::ToolError;
use crate::mcp::http::HttpArgs;
use crate::ops::session::SessionSpec;

/// lspgate's version: a daemon serves clients of its own version only.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The client's first line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Hello {
    pub version: String,
    #[serde(flatten)]
    pub request: Request,
}

/// What the client wants.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "request", rename_all = "snake_case")]
pub enum Request {
    /// An MCP session (`lspgate serve`): after the answer, the connection carries MCP.
    Mcp {
        session: SessionSpec,
        /// The largest MCP message, in bytes.
        max_frame: usize,
        /// Each request read is acknowledged (`mcp::stdio::TOOK`) before it is served: the
        /// relay sends one the daemon never read to the next daemon if this one dies.
        #[serde(default)]
        acks: bool,
    },
    /// A client of lspgate's language-server face (`lspgate lsp`): after the answer, the
    /// connection carries LSP.
    Lsp {
        session: SessionSpec,
        /// The servers to front (`--language`, `--server`).
        #[serde(default)]
        only: crate::lspface::Only,
        /// After the answer, the client's stdin and stdout come over the connection
        /// (`handoff`), and the connection only says when the session ended.
        #[serde(default)]
        handed: bool,
    },
    /// One tool call (a tool subcommand, `check`, `call`): after the answer, the daemon sends
    /// `CallLine`s, progress then the outcome. The call is dropped (cancelled) if the client
    /// goes away first.
    Call {
        session: SessionSpec,
        tool: String,
        args: Value,
    },
    /// A harness's hook (`lspgate hook`): answered, then one `CallLine`, `done` with the
    /// `HookVerdict` as its structured result (or `unopened`). Dropped if the client goes away.
    Hook {
        session: SessionSpec,
        ask: crate::ops::hook::HookAsk,
    },
    /// An MCP listener over HTTP for the client's `serve --http`, kept while this connection
    /// stays open (the daemon closes it when the listener has stopped): the answer's body is
    /// a `Hosting`. `http` is read with the session's environment (`LSPGATE_HTTP_*`,
    /// `LSPGATE_TOKEN`).
    Http {
        session: SessionSpec,
        http: HttpArgs,
        max_frame: usize,
        /// A listener hosted again (its daemon died) keeps its address and token.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        keep: Option<Keep>,
    },
    /// The daemon's roots, sessions and servers.
    Status,
    /// The status page's URL with a one-time ticket (`daemon status --web`): the answer's
    /// body is `{"url", "expires_in_secs"}`; the daemon listens for the page on first use.
    Web,
    /// What the status page shows (`daemon status` without `--json` renders it as tables).
    Snapshot,
    /// Stop the daemon: answered with the pids of the daemon and its servers (`Stopped`), then
    /// the daemon stops; until it is gone, every connection is answered `STOPPING`.
    Stop,
}

/// The error of an answer from a daemon that is stopping (its body: `{"pid": N}`): it is gone
/// once its lock is free.
pub const STOPPING: &str = "stopping";

/// The answer to `Stop`: what goes away.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Stopped {
    pub pid: u32,
    /// The servers' processes.
    #[serde(default)]
    pub servers: Vec<u32>,
}

/// The daemon's answer.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Answer {
    pub version: String,
    pub ok: bool,
    /// Why not, when not ok; `version` when the daemon is of another version (it then drains
    /// and exits, and the client starts one of its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub body: Value,
}

impl Answer {
    pub fn ok(body: Value) -> Answer {
        Answer {
            version: VERSION.into(),
            ok: true,
            error: None,
            body,
        }
    }

    pub fn refused(why: impl Into<String>) -> Answer {
        Answer {
            version: VERSION.into(),
            ok: false,
            error: Some(why.into()),
            body: Value::Null,
        }
    }
}

/// A line the daemon sends on a `Call` connection after its answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "snake_case")]
pub enum CallLine {
    /// A long call advanced (`check`: files done of total).
    Progress { done: usize, total: usize },
    /// The session could not be opened (its root, config or options): nothing ran.
    Unopened { error: ToolError },
    /// The call failed.
    Failed { error: ToolError },
    /// The call's answer: its structured result and its (capped) text.
    Done { structured: Value, text: String },
}

/// What a listener hosted again keeps: the address it had and its token.
#[derive(Clone, Serialize, Deserialize)]
pub struct Keep {
    pub addr: std::net::SocketAddr,
    pub token: String,
    /// Whether lspgate made the token (then its file is written again).
    pub generated: bool,
}

impl std::fmt::Debug for Keep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Keep {{ addr: {}, .. }}", self.addr)
    }
}

/// The daemon's answer to `Http`: where it listens, and the token.
#[derive(Clone, Serialize, Deserialize)]
pub struct Hosting {
    pub url: String,
    pub keep: Keep,
    /// What `serve` prints on stderr.
    pub announce: String,
}

/// The largest hello read: a hook's carries the written files' old contents (`cli::hook`
/// tells 8 MiB of them at most).
const MAX_HELLO: u64 = 64 << 20;

/// The client's hello line (bounded in time and size: no more than `MAX_HELLO` is read);
/// `None` when there is none to read, or (answered so) it is too long or not understood.
pub(crate) async fn read_hello(
    read: &mut BufReader<tokio::net::unix::OwnedReadHalf>,
    write: &mut tokio::net::unix::OwnedWriteHalf,
) -> Option<Hello> {
    let mut line = String::new();
    let mut bounded = read.take(MAX_HELLO + 1);
    let said = tokio::time::timeout(Duration::from_secs(10), bounded.read_line(&mut line)).await;
    match said {
        Ok(Ok(n)) if n as u64 > MAX_HELLO => {
            let why = format!("the request is over {} MiB", MAX_HELLO >> 20);
            let _ = answer(write, &Answer::refused(why)).await;
            return None;
        }
        Ok(Ok(n)) if n > 0 => {}
        _ => return None,
    }
    match serde_json::from_str(&line) {
        Ok(h) => Some(h),
        Err(e) => {
            let _ = answer(write, &Answer::refused(format!("bad hello: {e}"))).await;
            None
        }
    }
}

/// Writes one answer line.
pub(crate) async fn answer(
    write: &mut tokio::net::unix::OwnedWriteHalf,
    a: &Answer,
) -> std::io::Result<()> {
    line(write, a).await
}

/// Writes `value` as one JSON line.
pub(crate) async fn line(
    write: &mut tokio::net::unix::OwnedWriteHalf,
    value: &impl serde::Serialize,
) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(value).unwrap_or_default();
    line.push(b'\n');
    write.write_all(&line).await?;
    write.flush().await
}
