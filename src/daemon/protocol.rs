//! What a client and the daemon say before the connection carries MCP (or instead of it): one
//! JSON line each way. The client says who it is and what it wants; the daemon answers.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cli::context::Client;

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
    Mcp { client: Client, argv: Vec<String> },
    /// A command run for the client (a tool subcommand, `check`, `call`): the answer's body
    /// is what it printed and its exit code.
    Run { client: Client, argv: Vec<String> },
    /// An MCP listener over HTTP for the client's `serve --http` command line, kept while
    /// this connection stays open (the daemon closes it when the listener has stopped): the
    /// answer's body is a `Hosting`.
    Http {
        client: Client,
        argv: Vec<String>,
        /// A listener hosted again (its daemon died) keeps its address and token.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        keep: Option<Keep>,
    },
    /// The daemon's roots, sessions and servers.
    Status,
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

/// What a command run for a client printed, and its exit code.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
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
