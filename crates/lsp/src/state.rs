//! What a client and the task serving its server's own messages (`inbound`) share: the pushed
//! diagnostics, progress, registrations and file watchers the server announced, and where its
//! `workspace/applyEdit` requests go.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Instant;
use url::Url;

use super::watched::FileWatcher;
use super::wire::{WireDiagnostic, WireFileOp};

/// What a server last pushed for a document: its version, its diagnostics, and the push's
/// number (counted per client).
#[derive(Debug, Clone)]
pub(super) struct Published {
    pub(super) version: Option<i32>,
    pub(super) diags: Arc<Vec<WireDiagnostic>>,
    pub(super) seq: u64,
}

/// What the server announced of itself, written as its messages come and read by the client.
#[derive(Default)]
pub(super) struct State {
    pub(super) diags: Mutex<HashMap<Url, Published>>,
    pub(super) publish_seq: Mutex<u64>,
    /// Active `$/progress` tokens and their titles.
    pub(super) progress: Mutex<HashMap<String, String>>,
    /// How many `$/progress` begins the server has sent.
    pub(super) begun: AtomicU64,
    /// Dynamic registrations: id → method.
    pub(super) registrations: Mutex<HashMap<String, String>>,
    /// File watchers registered (`workspace/didChangeWatchedFiles`), by registration id.
    pub(super) watchers: Mutex<HashMap<String, Vec<FileWatcher>>>,
    /// When the server last sent anything.
    pub(super) last_inbound: Mutex<Option<Instant>>,
    /// The refresh requests it sent (`workspace/diagnostic/refresh`, …), by method, for
    /// whoever fronts it to clients of their own (`LspClient::refreshes`).
    pub(super) refreshes: std::sync::OnceLock<tokio::sync::broadcast::Sender<String>>,
    /// The server's `window/logMessage` and `window/showMessage` (method, params), for whoever
    /// fronts it to clients of their own (`LspClient::messages`).
    pub(super) messages:
        std::sync::OnceLock<tokio::sync::broadcast::Sender<(String, serde_json::Value)>>,
    /// Whether the ready marker was logged (true when there is none).
    pub(super) marker_seen: AtomicBool,
    /// Whether the server has once been found settled: from then on only its progress counts,
    /// not the chatter its answers bring (else every call in its first seconds would wait).
    pub(super) settled: AtomicBool,
    /// Where `workspace/applyEdit` goes while lspgate runs a command that may send one.
    pub(super) edit_sink: Mutex<Option<EditSink>>,
    /// Where it goes, as sent, while a command of a client of lspgate's own runs (`forward_run`).
    pub(super) raw_edit_sink: Mutex<Option<RawEditSink>>,
    /// `$/progress` tokens lspgate handed out, and where their values go (`batch`).
    pub(super) partials: Mutex<HashMap<String, mpsc::UnboundedSender<(String, Value)>>>,
    /// The server registered pull diagnostics with `workspaceDiagnostics: true`.
    pub(super) workspace_diagnostics: AtomicBool,
    /// This process's one workspace diagnostics pass was claimed (`batch`).
    pub(super) workspace_pass: AtomicBool,
    /// The server's view (its overlays), once its documents are attached (`LspClient::attach`).
    pub(super) view: std::sync::OnceLock<Arc<super::View>>,
}

/// Receives the server's `workspace/applyEdit` requests: the edit, and where to say whether it
/// was applied.
pub type EditSink = mpsc::UnboundedSender<(Vec<WireFileOp>, tokio::sync::oneshot::Sender<bool>)>;

/// Receives the server's `workspace/applyEdit` requests as sent (their params), and where to
/// send the answer (`ApplyWorkspaceEditResult`).
pub type RawEditSink = mpsc::UnboundedSender<(Value, tokio::sync::oneshot::Sender<Value>)>;
