//! The LSP layer: process transport, typed client and the neutral `wire` types it hands upward.
//! Architecture invariant: `lsp_types` is used only inside this module; callers see `wire` types.

// Unit tests read their own temporary files directly.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

// The layers below, by the names every module here uses for them.
use lspgate_base::{raw, text, watch};

mod annotations;
mod batch;
mod caps;
pub mod client;
mod convert;
mod diagnostics;
pub mod framing;
mod inbound;
mod quotes;
mod requests;
mod state;
pub mod transport;
mod tsserver;
pub mod view;
mod watched;
pub mod wire;

pub use annotations::MAX_TYPES;
pub use batch::WorkspaceReport;
pub use caps::{Cap, announces};
pub use client::{ClientOptions, Connect, Dialect, LspClient};
#[doc(hidden)]
pub use convert::workspace_edit;
pub use quotes::Inside;
pub use state::{EditSink, RawEditSink};
pub use transport::SpawnSpec;
pub use view::View;

use std::time::Duration;

/// Failures of talking to a language server.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LspError {
    #[error("could not start `{command}`: {reason}")]
    Spawn { command: String, reason: String },
    #[error("{method} got no answer within {}s", after.as_secs_f64())]
    Timeout { method: String, after: Duration },
    #[error("server stream closed: {reason}")]
    StreamClosed { reason: String, stderr: String },
    #[error("server error {code}: {message}")]
    Server { code: i64, message: String },
    #[error("unexpected answer from server: {0}")]
    Protocol(String),
}

/// LSP error code for a request the server dropped because the document changed.
pub const CONTENT_MODIFIED: i64 = -32801;
/// LSP error code for a request the server cancelled by itself.
pub const SERVER_CANCELLED: i64 = -32802;
