//! The typed LSP client: `initialize` handshake, capability checks, answers to the server's own
//! requests, diagnostics and `$/progress` tracking, and one method per request lspgate makes.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lsp_types as lt;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use url::Url;

use super::transport::{Inbound, SpawnSpec, Transport};
use super::wire::*;
use super::{CONTENT_MODIFIED, LspError, SERVER_CANCELLED};
use crate::text::Encoding;

/// Capabilities lspgate asks about, by what it would call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cap {
    Hover,
    Definition,
    Declaration,
    TypeDefinition,
    Implementation,
    References,
    DocumentSymbols,
    WorkspaceSymbols,
    SignatureHelp,
    Completion,
    CallHierarchy,
    PullDiagnostics,
    Rename,
    CodeActions,
    Formatting,
}

impl Cap {
    /// Every capability, in the order tools list them.
    pub const ALL: [Cap; 15] = [
        Cap::Hover,
        Cap::Definition,
        Cap::Declaration,
        Cap::TypeDefinition,
        Cap::Implementation,
        Cap::References,
        Cap::DocumentSymbols,
        Cap::WorkspaceSymbols,
        Cap::SignatureHelp,
        Cap::Completion,
        Cap::CallHierarchy,
        Cap::PullDiagnostics,
        Cap::Rename,
        Cap::CodeActions,
        Cap::Formatting,
    ];

    /// lspgate's name for it (config allowlists, `servers`).
    pub fn name(self) -> &'static str {
        match self {
            Cap::Hover => "hover",
            Cap::Definition => "definition",
            Cap::Declaration => "declaration",
            Cap::TypeDefinition => "type_definition",
            Cap::Implementation => "implementation",
            Cap::References => "references",
            Cap::DocumentSymbols => "document_symbols",
            Cap::WorkspaceSymbols => "workspace_symbols",
            Cap::SignatureHelp => "signature_help",
            Cap::Completion => "completions",
            Cap::CallHierarchy => "call_hierarchy",
            Cap::PullDiagnostics => "diagnostics",
            Cap::Rename => "rename",
            Cap::CodeActions => "code_actions",
            Cap::Formatting => "format",
        }
    }

    fn provider_key(self) -> &'static str {
        match self {
            Cap::Hover => "hoverProvider",
            Cap::Definition => "definitionProvider",
            Cap::Declaration => "declarationProvider",
            Cap::TypeDefinition => "typeDefinitionProvider",
            Cap::Implementation => "implementationProvider",
            Cap::References => "referencesProvider",
            Cap::DocumentSymbols => "documentSymbolProvider",
            Cap::WorkspaceSymbols => "workspaceSymbolProvider",
            Cap::SignatureHelp => "signatureHelpProvider",
            Cap::Completion => "completionProvider",
            Cap::CallHierarchy => "callHierarchyProvider",
            Cap::PullDiagnostics => "diagnosticProvider",
            Cap::Rename => "renameProvider",
            Cap::CodeActions => "codeActionProvider",
            Cap::Formatting => "documentFormattingProvider",
        }
    }

    fn method(self) -> &'static str {
        match self {
            Cap::Hover => "textDocument/hover",
            Cap::Definition => "textDocument/definition",
            Cap::Declaration => "textDocument/declaration",
            Cap::TypeDefinition => "textDocument/typeDefinition",
            Cap::Implementation => "textDocument/implementation",
            Cap::References => "textDocument/references",
            Cap::DocumentSymbols => "textDocument/documentSymbol",
            Cap::WorkspaceSymbols => "workspace/symbol",
            Cap::SignatureHelp => "textDocument/signatureHelp",
            Cap::Completion => "textDocument/completion",
            Cap::CallHierarchy => "textDocument/prepareCallHierarchy",
            Cap::PullDiagnostics => "textDocument/diagnostic",
            Cap::Rename => "textDocument/rename",
            Cap::CodeActions => "textDocument/codeAction",
            Cap::Formatting => "textDocument/formatting",
        }
    }
}

/// How to reach a server.
#[derive(Debug, Clone)]
pub enum Connect {
    /// Start a process and talk over its stdio.
    Spawn(SpawnSpec),
    /// Connect to a server already listening on `address` (host:port).
    Tcp { name: String, address: String },
}

/// Knobs of one client.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Bound on `initialize`.
    pub init_timeout: Duration,
    /// Bound on any other request.
    pub request_timeout: Duration,
    /// Bounds per request kind, by lspgate's capability name (`references`, `hover`, …).
    pub timeouts: HashMap<String, Duration>,
    /// Served on `workspace/configuration`, looked up by section.
    pub settings: Value,
    /// Sent as `initializationOptions`.
    pub initialization: Value,
    /// A text the server logs (`window/logMessage`) once its workspace is loaded, or the title
    /// of a `$/progress` that ends then; until it is seen, workspace-wide questions wait
    /// (bounded).
    pub ready_marker: Option<String>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            init_timeout: Duration::from_secs(60),
            request_timeout: Duration::from_secs(30),
            timeouts: HashMap::new(),
            settings: Value::Null,
            initialization: Value::Null,
            ready_marker: None,
        }
    }
}

#[derive(Debug, Clone)]
struct Published {
    version: Option<i32>,
    diags: Arc<Vec<WireDiagnostic>>,
    seq: u64,
}

#[derive(Default)]
struct State {
    diags: Mutex<HashMap<Url, Published>>,
    publish_seq: Mutex<u64>,
    /// Active `$/progress` tokens and their titles.
    progress: Mutex<HashMap<String, String>>,
    /// Dynamic registrations: id → method.
    registrations: Mutex<HashMap<String, String>>,
    /// When the server last sent anything.
    last_inbound: Mutex<Option<Instant>>,
    /// Whether the ready marker was logged (true when there is none).
    marker_seen: std::sync::atomic::AtomicBool,
    /// Whether the server has once been found settled: from then on only its progress counts,
    /// not the chatter its answers bring (else every call in its first seconds would wait).
    settled: std::sync::atomic::AtomicBool,
    /// Where `workspace/applyEdit` goes while lspgate runs a command that may send one.
    edit_sink: Mutex<Option<EditSink>>,
}

/// Receives the server's `workspace/applyEdit` requests: the edit, and where to say whether it
/// was applied.
pub type EditSink = mpsc::UnboundedSender<(Vec<WireFileOp>, tokio::sync::oneshot::Sender<bool>)>;

/// While a server is this young, silence is part of being ready: it may not have announced its
/// indexing yet.
const STARTUP_WINDOW: Duration = Duration::from_secs(5);
/// How long a young server must be quiet before it counts as settled.
const STARTUP_QUIET: Duration = Duration::from_millis(200);

/// One initialized language server.
pub struct LspClient {
    transport: Arc<Transport>,
    caps: Value,
    encoding: Encoding,
    server_version: Option<String>,
    opts: ClientOptions,
    state: Arc<State>,
    diag_tx: watch::Sender<u64>,
    progress_tx: watch::Sender<u64>,
    started: Instant,
}

impl LspClient {
    /// Spawns the server in `root` and completes the `initialize` handshake.
    pub async fn start(
        connect: &Connect,
        root: &Path,
        opts: ClientOptions,
    ) -> Result<Arc<LspClient>, LspError> {
        let (transport, inbound) = match connect {
            Connect::Spawn(spec) => Transport::spawn(spec, root)?,
            Connect::Tcp { name, address } => Transport::connect(name, address).await?,
        };
        let root_uri = Url::from_directory_path(root)
            .map_err(|_| LspError::Protocol(format!("root {} is not absolute", root.display())))?;
        let state = Arc::new(State::default());
        state.marker_seen.store(
            opts.ready_marker.is_none(),
            std::sync::atomic::Ordering::SeqCst,
        );
        let (diag_tx, _) = watch::channel(0u64);
        let (progress_tx, _) = watch::channel(0u64);
        tokio::spawn(serve_inbound(
            inbound,
            Inbox {
                transport: transport.clone(),
                state: state.clone(),
                diag_tx: diag_tx.clone(),
                progress_tx: progress_tx.clone(),
                settings: opts.settings.clone(),
                root_uri: root_uri.clone(),
                ready_marker: opts.ready_marker.clone(),
            },
        ));
        let params = initialize_params(&root_uri, root, &opts.initialization);
        let init = transport
            .request("initialize", params, opts.init_timeout)
            .await;
        let result = match init {
            Ok(r) => r,
            Err(e) => {
                transport.kill_group();
                return Err(with_stderr(e, &transport));
            }
        };
        let caps = result.get("capabilities").cloned().unwrap_or(Value::Null);
        let encoding = caps
            .get("positionEncoding")
            .and_then(Value::as_str)
            .and_then(Encoding::from_lsp)
            .unwrap_or(Encoding::Utf16);
        let server_version = result
            .get("serverInfo")
            .map(|i| {
                let name = i.get("name").and_then(Value::as_str).unwrap_or("");
                match i.get("version").and_then(Value::as_str) {
                    Some(v) => format!("{name} {v}"),
                    None => name.to_string(),
                }
            })
            .filter(|s| !s.is_empty());
        transport.notify("initialized", json!({}));
        tracing::info!(server = %transport.name(), ?encoding, "initialized");
        Ok(Arc::new(LspClient {
            transport,
            caps,
            encoding,
            server_version,
            opts,
            state,
            diag_tx,
            progress_tx,
            started: Instant::now(),
        }))
    }

    pub fn name(&self) -> &str {
        self.transport.name()
    }

    pub fn pid(&self) -> Option<u32> {
        self.transport.pid()
    }

    pub fn is_alive(&self) -> bool {
        !self.transport.is_closed()
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    pub fn server_version(&self) -> Option<&str> {
        self.server_version.as_deref()
    }

    /// The commands the server offers to `workspace/executeCommand`.
    pub fn commands(&self) -> Vec<String> {
        self.caps
            .get("executeCommandProvider")
            .and_then(|p| p.get("commands"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|c| c.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The raw capabilities the server announced.
    pub fn capabilities(&self) -> &Value {
        &self.caps
    }

    /// Whether the server serves `cap`, statically or through a dynamic registration.
    pub fn supports(&self, cap: Cap) -> bool {
        let static_on = !matches!(
            self.caps.get(cap.provider_key()),
            None | Some(Value::Null) | Some(Value::Bool(false))
        );
        static_on || self.registered(cap.method())
    }

    fn registered(&self, method: &str) -> bool {
        self.state
            .registrations
            .lock()
            .map(|r| r.values().any(|m| m == method))
            .unwrap_or(false)
    }

    pub async fn shutdown(&self) {
        self.transport.shutdown(Duration::from_secs(2)).await;
    }

    /// Resolves when the server's stream has ended (crash, exit, or shutdown), with the reason.
    pub async fn wait_closed(&self) -> String {
        self.transport.wait_closed().await
    }

    /// How many requests the server has answered (0: it never served anything).
    pub fn answered(&self) -> u64 {
        self.transport.answered()
    }

    /// Whether lspgate is stopping this server on purpose.
    pub fn is_stopping(&self) -> bool {
        self.transport.is_stopping()
    }

    /// Kills the server for a reason of lspgate's; the stream then ends with that reason.
    pub fn kill_because(&self, reason: String) {
        self.transport.kill_because(reason);
    }

    /// The last lines the server wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        self.transport.stderr_tail()
    }

    async fn call<T: DeserializeOwned>(&self, method: &str, params: Value) -> Result<T, LspError> {
        self.call_with(method, params, self.timeout_for(method))
            .await
    }

    /// The bound for an LSP method: its kind's configured timeout, else the default.
    fn timeout_for(&self, method: &str) -> Duration {
        let kind = match method {
            "callHierarchy/incomingCalls" | "callHierarchy/outgoingCalls" => Some("call_hierarchy"),
            _ => Cap::ALL
                .iter()
                .find(|c| c.method() == method)
                .map(|c| c.name()),
        };
        kind.and_then(|k| self.opts.timeouts.get(k).copied())
            .unwrap_or(self.opts.request_timeout)
    }

    /// A request, retried (bounded) when the server says the content changed under it or it
    /// cancelled the request on its own.
    async fn call_with<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<T, LspError> {
        let mut attempt = 0;
        loop {
            let r = self
                .transport
                .request(method, params.clone(), timeout)
                .await;
            match r {
                Err(LspError::Server { code, .. })
                    if (code == CONTENT_MODIFIED || code == SERVER_CANCELLED) && attempt < 3 =>
                {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(50 * attempt)).await;
                }
                Err(e) => return Err(e),
                Ok(v) => {
                    return serde_json::from_value(v)
                        .map_err(|e| LspError::Protocol(format!("{method}: {e}")));
                }
            }
        }
    }

    // ---- document synchronization ----

    pub fn did_open(&self, uri: &Url, language_id: &str, version: i32, text: &str) {
        self.transport.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language_id, "version": version, "text": text}}),
        );
    }

    /// Sends the whole new text (valid whatever sync kind the server chose).
    pub fn did_change(&self, uri: &Url, version: i32, text: &str) {
        self.transport.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    pub fn did_save(&self, uri: &Url, text: &str) {
        let sync = self.caps.get("textDocumentSync");
        let save = sync.and_then(|s| s.get("save"));
        let wants = match save {
            Some(Value::Bool(b)) => *b,
            Some(Value::Object(_)) => true,
            _ => false,
        };
        if !wants {
            return;
        }
        let include = save
            .and_then(|s| s.get("includeText"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let mut params = json!({"textDocument": {"uri": uri}});
        if include {
            params["text"] = Value::String(text.to_string());
        }
        self.transport.notify("textDocument/didSave", params);
    }

    pub fn did_close(&self, uri: &Url) {
        self.transport.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        );
    }

    // ---- diagnostics ----

    /// The publish counter; record it before a change, then wait for a publish after it.
    pub fn publish_seq(&self) -> u64 {
        self.state.publish_seq.lock().map(|s| *s).unwrap_or(0)
    }

    /// Pull diagnostics for one document.
    pub async fn pull_diagnostics(&self, uri: &Url) -> Result<Vec<WireDiagnostic>, LspError> {
        let report: lt::DocumentDiagnosticReportResult = self
            .call(
                "textDocument/diagnostic",
                json!({"textDocument": {"uri": uri}}),
            )
            .await?;
        let items = match report {
            lt::DocumentDiagnosticReportResult::Report(lt::DocumentDiagnosticReport::Full(f)) => {
                f.full_document_diagnostic_report.items
            }
            lt::DocumentDiagnosticReportResult::Report(
                lt::DocumentDiagnosticReport::Unchanged(_),
            ) => Vec::new(),
            lt::DocumentDiagnosticReportResult::Partial(_) => Vec::new(),
        };
        Ok(items.into_iter().map(convert_diag).collect())
    }

    /// Waits for the pushed diagnostics of `uri` at `version` (or, for servers that send no
    /// version, the first publish after `after_seq` followed by `quiet` without another one).
    /// Returns the diagnostics and whether they are known to be fresh.
    pub async fn wait_pushed(
        &self,
        uri: &Url,
        version: i32,
        after_seq: u64,
        timeout: Duration,
        quiet: Duration,
    ) -> (Vec<WireDiagnostic>, bool) {
        let deadline = Instant::now() + timeout;
        let mut rx = self.diag_tx.subscribe();
        loop {
            rx.borrow_and_update();
            let current = self.published(uri);
            if let Some(p) = &current {
                match p.version {
                    Some(v) if v >= version => return ((*p.diags).clone(), true),
                    None if p.seq > after_seq => {
                        return self.settle(uri, p.clone(), deadline, quiet, &mut rx).await;
                    }
                    _ => {}
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero()
                || tokio::time::timeout(left, rx.changed()).await.is_err()
                || !self.is_alive()
            {
                let diags = current.map(|p| (*p.diags).clone()).unwrap_or_default();
                return (diags, false);
            }
        }
    }

    async fn settle(
        &self,
        uri: &Url,
        mut last: Published,
        deadline: Instant,
        quiet: Duration,
        rx: &mut watch::Receiver<u64>,
    ) -> (Vec<WireDiagnostic>, bool) {
        loop {
            let left = deadline
                .saturating_duration_since(Instant::now())
                .min(quiet);
            if left.is_zero() || tokio::time::timeout(left, rx.changed()).await.is_err() {
                return ((*last.diags).clone(), true);
            }
            if let Some(p) = self.published(uri) {
                last = p;
            }
        }
    }

    /// The latest diagnostics the server pushed for `uri`, if any.
    pub fn latest_pushed(&self, uri: &Url) -> Vec<WireDiagnostic> {
        self.published(uri)
            .map(|p| (*p.diags).clone())
            .unwrap_or_default()
    }

    /// Every document the server has pushed diagnostics for.
    pub fn pushed_uris(&self) -> Vec<Url> {
        self.state
            .diags
            .lock()
            .map(|d| d.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn published(&self, uri: &Url) -> Option<Published> {
        self.state.diags.lock().ok()?.get(uri).cloned()
    }

    // ---- readiness ----

    /// Titles of the server's work in progress (indexing, analysis); empty when idle.
    pub fn busy(&self) -> Busy {
        let mut titles: Vec<String> = self
            .state
            .progress
            .lock()
            .map(|p| p.values().cloned().collect())
            .unwrap_or_default();
        if !self
            .state
            .marker_seen
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            titles.push("loading the workspace".into());
        }
        Busy { titles }
    }

    /// Waits (at most `timeout`) until a server with a ready marker has shown it: answers
    /// computed before the workspace is loaded are wrong, not just slow.
    pub async fn wait_loaded(&self, timeout: Duration) -> Result<(), Busy> {
        let mut rx = self.progress_tx.subscribe();
        let marker = || {
            self.state
                .marker_seen
                .load(std::sync::atomic::Ordering::SeqCst)
        };
        let wait = async {
            loop {
                rx.borrow_and_update();
                if marker() || !self.is_alive() {
                    return;
                }
                if rx.changed().await.is_err() {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(timeout, wait).await;
        if marker() {
            Ok(())
        } else {
            Err(Busy {
                titles: vec!["loading the workspace".into()],
            })
        }
    }

    /// Waits until the server is ready for workspace-wide questions, at most `timeout`: no
    /// `$/progress` active and, while the server is young, a short silence (servers often
    /// announce their indexing only after a few messages). Returns what is still running when
    /// the bound is hit.
    pub async fn wait_idle(&self, timeout: Duration) -> Result<(), Busy> {
        let deadline = Instant::now() + timeout;
        let mut rx = self.progress_tx.subscribe();
        loop {
            rx.borrow_and_update();
            let busy = self.busy();
            let now = Instant::now();
            let left = deadline.saturating_duration_since(now);
            if busy.titles.is_empty() {
                let last = self.state.last_inbound.lock().ok().and_then(|l| *l);
                let young = !self
                    .state
                    .settled
                    .load(std::sync::atomic::Ordering::Acquire)
                    && now.duration_since(self.started) < STARTUP_WINDOW;
                let settle_at = if young {
                    last.unwrap_or(self.started).max(self.started) + STARTUP_QUIET
                } else {
                    now
                };
                if settle_at <= now {
                    self.state
                        .settled
                        .store(true, std::sync::atomic::Ordering::Release);
                    return Ok(());
                }
                if left.is_zero() {
                    return Err(Busy {
                        titles: vec!["starting up".into()],
                    });
                }
                let _ = tokio::time::timeout((settle_at - now).min(left), rx.changed()).await;
                continue;
            }
            if left.is_zero() || tokio::time::timeout(left, rx.changed()).await.is_err() {
                return Err(busy);
            }
        }
    }

    // ---- requests ----

    pub async fn hover(&self, uri: &Url, pos: WirePos) -> Result<Option<WireHover>, LspError> {
        // Read by hand: lsp-types' untagged `HoverContents` costs more than the rest of the call.
        let h: Value = self.call("textDocument/hover", text_pos(uri, pos)).await?;
        let Value::Object(mut h) = h else {
            return Ok(None);
        };
        let contents = h.remove("contents").map(hover_text).unwrap_or_default();
        let range = h
            .remove("range")
            .and_then(|r| serde_json::from_value::<lt::Range>(r).ok())
            .map(range);
        Ok(Some(WireHover { contents, range }).filter(|h| !h.contents.trim().is_empty()))
    }

    pub async fn goto(
        &self,
        kind: GotoKind,
        uri: &Url,
        pos: WirePos,
    ) -> Result<Vec<WireLocation>, LspError> {
        let method = match kind {
            GotoKind::Definition => "textDocument/definition",
            GotoKind::Declaration => "textDocument/declaration",
            GotoKind::TypeDefinition => "textDocument/typeDefinition",
            GotoKind::Implementation => "textDocument/implementation",
        };
        let r: Option<lt::GotoDefinitionResponse> = self.call(method, text_pos(uri, pos)).await?;
        Ok(match r {
            None => Vec::new(),
            Some(lt::GotoDefinitionResponse::Scalar(l)) => vec![location(l)],
            Some(lt::GotoDefinitionResponse::Array(ls)) => ls.into_iter().map(location).collect(),
            Some(lt::GotoDefinitionResponse::Link(links)) => links
                .into_iter()
                .map(|l| WireLocation {
                    uri: l.target_uri,
                    range: range(l.target_selection_range),
                })
                .collect(),
        })
    }

    pub async fn references(
        &self,
        uri: &Url,
        pos: WirePos,
        include_declaration: bool,
    ) -> Result<Vec<WireLocation>, LspError> {
        let mut params = text_pos(uri, pos);
        params["context"] = json!({"includeDeclaration": include_declaration});
        let r: Option<Vec<lt::Location>> = self.call("textDocument/references", params).await?;
        Ok(r.unwrap_or_default().into_iter().map(location).collect())
    }

    pub async fn document_symbols(&self, uri: &Url) -> Result<Vec<WireSymbol>, LspError> {
        let r: Option<lt::DocumentSymbolResponse> = self
            .call(
                "textDocument/documentSymbol",
                json!({"textDocument": {"uri": uri}}),
            )
            .await?;
        Ok(match r {
            None => Vec::new(),
            Some(lt::DocumentSymbolResponse::Nested(s)) => s.into_iter().map(doc_symbol).collect(),
            Some(lt::DocumentSymbolResponse::Flat(s)) => s
                .into_iter()
                .map(|s| WireSymbol {
                    name: s.name,
                    kind: symbol_kind(s.kind),
                    detail: s.container_name,
                    range: range(s.location.range),
                    selection: range(s.location.range),
                    children: Vec::new(),
                })
                .collect(),
        })
    }

    pub async fn workspace_symbols(
        &self,
        query: &str,
    ) -> Result<Vec<WireWorkspaceSymbol>, LspError> {
        let r: Option<lt::WorkspaceSymbolResponse> = self
            .call("workspace/symbol", json!({"query": query}))
            .await?;
        Ok(match r {
            None => Vec::new(),
            Some(lt::WorkspaceSymbolResponse::Flat(s)) => s
                .into_iter()
                .map(|s| WireWorkspaceSymbol {
                    name: s.name,
                    kind: symbol_kind(s.kind),
                    container: s.container_name,
                    location: location(s.location),
                })
                .collect(),
            Some(lt::WorkspaceSymbolResponse::Nested(s)) => s
                .into_iter()
                .map(|s| WireWorkspaceSymbol {
                    name: s.name,
                    kind: symbol_kind(s.kind),
                    container: s.container_name,
                    location: match s.location {
                        lt::OneOf::Left(l) => location(l),
                        lt::OneOf::Right(w) => WireLocation {
                            uri: w.uri,
                            range: WireRange::default(),
                        },
                    },
                })
                .collect(),
        })
    }

    pub async fn signature_help(
        &self,
        uri: &Url,
        pos: WirePos,
    ) -> Result<WireSignatures, LspError> {
        let r: Option<lt::SignatureHelp> = self
            .call("textDocument/signatureHelp", text_pos(uri, pos))
            .await?;
        let Some(h) = r else {
            return Ok(WireSignatures {
                signatures: Vec::new(),
                active_signature: None,
            });
        };
        let signatures = h
            .signatures
            .into_iter()
            .map(|s| {
                let parameters = s
                    .parameters
                    .unwrap_or_default()
                    .into_iter()
                    .map(|p| match p.label {
                        lt::ParameterLabel::Simple(s) => s,
                        lt::ParameterLabel::LabelOffsets([a, b]) => s
                            .label
                            .encode_utf16()
                            .skip(a as usize)
                            .take(b.saturating_sub(a) as usize)
                            .collect::<Vec<u16>>()
                            .pipe(|u| String::from_utf16_lossy(&u)),
                    })
                    .collect();
                WireSignature {
                    label: s.label,
                    parameters,
                    active_parameter: s.active_parameter.or(h.active_parameter),
                }
            })
            .collect();
        Ok(WireSignatures {
            signatures,
            active_signature: h.active_signature,
        })
    }

    pub async fn completions(&self, uri: &Url, pos: WirePos) -> Result<WireCompletions, LspError> {
        let r: Option<lt::CompletionResponse> = self
            .call("textDocument/completion", text_pos(uri, pos))
            .await?;
        let (items, incomplete) = match r {
            None => (Vec::new(), false),
            Some(lt::CompletionResponse::Array(a)) => (a, false),
            Some(lt::CompletionResponse::List(l)) => (l.items, l.is_incomplete),
        };
        let mut items: Vec<lt::CompletionItem> = items;
        items.sort_by(|a, b| {
            a.sort_text
                .as_deref()
                .unwrap_or(&a.label)
                .cmp(b.sort_text.as_deref().unwrap_or(&b.label))
        });
        Ok(WireCompletions {
            items: items
                .into_iter()
                .map(|i| WireCompletion {
                    label: i.label,
                    kind: i.kind.map(completion_kind),
                    detail: i.detail,
                })
                .collect(),
            incomplete,
        })
    }

    pub async fn call_hierarchy(
        &self,
        uri: &Url,
        pos: WirePos,
        direction: CallDirection,
    ) -> Result<Vec<WireCall>, LspError> {
        let items: Option<Vec<lt::CallHierarchyItem>> = self
            .call("textDocument/prepareCallHierarchy", text_pos(uri, pos))
            .await?;
        let mut out = Vec::new();
        for item in items.unwrap_or_default() {
            let origin = item.uri.clone();
            let item =
                serde_json::to_value(&item).map_err(|e| LspError::Protocol(e.to_string()))?;
            match direction {
                CallDirection::Incoming => {
                    let calls: Option<Vec<lt::CallHierarchyIncomingCall>> = self
                        .call("callHierarchy/incomingCalls", json!({"item": item}))
                        .await?;
                    for c in calls.unwrap_or_default() {
                        out.push(WireCall {
                            name: c.from.name,
                            kind: symbol_kind(c.from.kind),
                            sites_uri: c.from.uri.clone(),
                            location: WireLocation {
                                uri: c.from.uri,
                                range: range(c.from.selection_range),
                            },
                            call_sites: c.from_ranges.into_iter().map(range).collect(),
                        });
                    }
                }
                CallDirection::Outgoing => {
                    let calls: Option<Vec<lt::CallHierarchyOutgoingCall>> = self
                        .call("callHierarchy/outgoingCalls", json!({"item": item}))
                        .await?;
                    for c in calls.unwrap_or_default() {
                        out.push(WireCall {
                            name: c.to.name,
                            kind: symbol_kind(c.to.kind),
                            location: WireLocation {
                                uri: c.to.uri,
                                range: range(c.to.selection_range),
                            },
                            sites_uri: origin.clone(),
                            call_sites: c.from_ranges.into_iter().map(range).collect(),
                        });
                    }
                }
            }
        }
        Ok(out)
    }
}

impl LspClient {
    /// `textDocument/rename`: the edit, or `None` when the server renames nothing.
    pub async fn rename(
        &self,
        uri: &Url,
        pos: WirePos,
        new_name: &str,
    ) -> Result<Option<Vec<WireFileOp>>, LspError> {
        let mut params = text_pos(uri, pos);
        params["newName"] = Value::String(new_name.to_string());
        let r: Option<Value> = self.call("textDocument/rename", params).await?;
        r.map(workspace_edit)
            .transpose()
            .map_err(LspError::Protocol)
    }

    /// `textDocument/codeAction` over a range, with the diagnostics there as context.
    pub async fn code_actions(
        &self,
        uri: &Url,
        range: WireRange,
        diagnostics: Vec<Value>,
        only: Option<Vec<String>>,
    ) -> Result<Vec<WireCodeAction>, LspError> {
        let mut context = json!({"diagnostics": diagnostics, "triggerKind": 1});
        if let Some(only) = only {
            context["only"] = json!(only);
        }
        let params = json!({
            "textDocument": {"uri": uri},
            "range": wire_range_json(range),
            "context": context,
        });
        let r: Option<Vec<Value>> = self.call("textDocument/codeAction", params).await?;
        Ok(r.unwrap_or_default().into_iter().map(code_action).collect())
    }

    /// Fills in a code action's edit (`codeAction/resolve`) when it has none and the server
    /// can resolve.
    pub async fn resolve_code_action(
        &self,
        action: WireCodeAction,
    ) -> Result<WireCodeAction, LspError> {
        let is_command = action.raw.get("command").is_some_and(Value::is_string);
        let resolvable = self
            .caps
            .get("codeActionProvider")
            .and_then(|p| p.get("resolveProvider"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if is_command || action.raw.get("edit").is_some() || !resolvable {
            return Ok(action);
        }
        let r: Value = self.call("codeAction/resolve", action.raw.clone()).await?;
        Ok(code_action(r))
    }

    /// The edit of a code action, if it carries one.
    pub fn code_action_edit(action: &WireCodeAction) -> Result<Option<Vec<WireFileOp>>, LspError> {
        if action.raw.get("command").is_some_and(Value::is_string) {
            return Ok(None);
        }
        action
            .raw
            .get("edit")
            .cloned()
            .map(workspace_edit)
            .transpose()
            .map_err(LspError::Protocol)
    }

    /// The command of a code action (or a bare command), if any: name and arguments.
    pub fn code_action_command(action: &WireCodeAction) -> Option<(String, Vec<Value>)> {
        let cmd = if action.raw.get("command").is_some_and(Value::is_string) {
            &action.raw
        } else {
            action.raw.get("command")?
        };
        let name = cmd.get("command")?.as_str()?.to_string();
        let args = cmd
            .get("arguments")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Some((name, args))
    }

    /// `workspace/executeCommand`, with the server's `workspace/applyEdit` requests sent to
    /// `sink` meanwhile.
    pub async fn execute_command(
        &self,
        command: &str,
        arguments: Vec<Value>,
        sink: Option<EditSink>,
    ) -> Result<Value, LspError> {
        if let Ok(mut s) = self.state.edit_sink.lock() {
            *s = sink;
        }
        let r: Result<Option<Value>, LspError> = self
            .call(
                "workspace/executeCommand",
                json!({"command": command, "arguments": arguments}),
            )
            .await;
        if let Ok(mut s) = self.state.edit_sink.lock() {
            *s = None;
        }
        Ok(r?.unwrap_or(Value::Null))
    }

    /// `textDocument/formatting` of a whole document.
    pub async fn formatting(
        &self,
        uri: &Url,
        tab_size: u32,
        insert_spaces: bool,
    ) -> Result<Vec<(WireRange, String)>, LspError> {
        let params = json!({
            "textDocument": {"uri": uri},
            "options": {"tabSize": tab_size, "insertSpaces": insert_spaces,
                        "trimTrailingWhitespace": true, "insertFinalNewline": true},
        });
        let r: Option<Vec<lt::TextEdit>> = self.call("textDocument/formatting", params).await?;
        Ok(r.unwrap_or_default()
            .into_iter()
            .map(|e| (range(e.range), e.new_text))
            .collect())
    }

    /// Tells the server files changed on disk (`created`, `changed` or `deleted`), as a file
    /// watcher would: servers keep files they have not opened in memory too.
    pub fn did_change_watched_files(&self, changes: &[(Url, &str)]) {
        if changes.is_empty() {
            return;
        }
        let list: Vec<Value> = changes
            .iter()
            .map(|(uri, kind)| {
                let t = match *kind {
                    "created" => 1,
                    "deleted" => 3,
                    _ => 2,
                };
                json!({"uri": uri, "type": t})
            })
            .collect();
        self.transport
            .notify("workspace/didChangeWatchedFiles", json!({"changes": list}));
    }

    /// Tells the server files were created, renamed or deleted, when it asked to know.
    pub fn did_change_files(&self, ops: &[WireFileOp]) {
        let wants = |k: &str| {
            self.caps
                .get("workspace")
                .and_then(|w| w.get("fileOperations"))
                .and_then(|f| f.get(k))
                .is_some()
        };
        let mut created = Vec::new();
        let mut renamed = Vec::new();
        let mut deleted = Vec::new();
        for op in ops {
            match op {
                WireFileOp::Create { uri, .. } => created.push(json!({"uri": uri})),
                WireFileOp::Rename { old, new, .. } => {
                    renamed.push(json!({"oldUri": old, "newUri": new}))
                }
                WireFileOp::Delete { uri, .. } => deleted.push(json!({"uri": uri})),
                WireFileOp::Edit { .. } => {}
            }
        }
        if !created.is_empty() && wants("didCreate") {
            self.transport
                .notify("workspace/didCreateFiles", json!({"files": created}));
        }
        if !renamed.is_empty() && wants("didRename") {
            self.transport
                .notify("workspace/didRenameFiles", json!({"files": renamed}));
        }
        if !deleted.is_empty() && wants("didDelete") {
            self.transport
                .notify("workspace/didDeleteFiles", json!({"files": deleted}));
        }
    }
}

fn wire_range_json(r: WireRange) -> Value {
    json!({"start": {"line": r.start.line, "character": r.start.character},
           "end": {"line": r.end.line, "character": r.end.character}})
}

fn code_action(v: Value) -> WireCodeAction {
    let fixes = v
        .get("diagnostics")
        .and_then(Value::as_array)
        .map(|d| {
            d.iter()
                .filter_map(|x| x.get("message").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    WireCodeAction {
        title: v
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        kind: v.get("kind").and_then(Value::as_str).map(str::to_string),
        preferred: v
            .get("isPreferred")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        fixes,
        disabled: v
            .get("disabled")
            .and_then(|d| d.get("reason"))
            .and_then(Value::as_str)
            .map(str::to_string),
        raw: v,
    }
}

/// A `WorkspaceEdit` (either form) as file operations, in order.
fn workspace_edit(v: Value) -> Result<Vec<WireFileOp>, String> {
    let edit: lt::WorkspaceEdit =
        serde_json::from_value(v).map_err(|e| format!("bad WorkspaceEdit: {e}"))?;
    let mut ops = Vec::new();
    let text_edits = |edits: Vec<lt::OneOf<lt::TextEdit, lt::AnnotatedTextEdit>>| {
        edits
            .into_iter()
            .map(|e| match e {
                lt::OneOf::Left(t) => (range(t.range), t.new_text),
                lt::OneOf::Right(a) => (range(a.text_edit.range), a.text_edit.new_text),
            })
            .collect::<Vec<_>>()
    };
    if let Some(dc) = edit.document_changes {
        let list = match dc {
            lt::DocumentChanges::Edits(e) => e
                .into_iter()
                .map(lt::DocumentChangeOperation::Edit)
                .collect(),
            lt::DocumentChanges::Operations(o) => o,
        };
        for op in list {
            ops.push(match op {
                lt::DocumentChangeOperation::Edit(e) => WireFileOp::Edit {
                    uri: e.text_document.uri,
                    version: e.text_document.version,
                    edits: text_edits(e.edits),
                },
                lt::DocumentChangeOperation::Op(lt::ResourceOp::Create(c)) => WireFileOp::Create {
                    uri: c.uri,
                    overwrite: c
                        .options
                        .as_ref()
                        .and_then(|o| o.overwrite)
                        .unwrap_or(false),
                    ignore_if_exists: c
                        .options
                        .as_ref()
                        .and_then(|o| o.ignore_if_exists)
                        .unwrap_or(false),
                },
                lt::DocumentChangeOperation::Op(lt::ResourceOp::Rename(r)) => WireFileOp::Rename {
                    old: r.old_uri,
                    new: r.new_uri,
                    overwrite: r
                        .options
                        .as_ref()
                        .and_then(|o| o.overwrite)
                        .unwrap_or(false),
                    ignore_if_exists: r
                        .options
                        .as_ref()
                        .and_then(|o| o.ignore_if_exists)
                        .unwrap_or(false),
                },
                lt::DocumentChangeOperation::Op(lt::ResourceOp::Delete(d)) => WireFileOp::Delete {
                    uri: d.uri,
                    ignore_if_not_exists: d
                        .options
                        .as_ref()
                        .and_then(|o| o.ignore_if_not_exists)
                        .unwrap_or(false),
                },
            });
        }
    } else if let Some(changes) = edit.changes {
        let mut files: Vec<_> = changes.into_iter().collect();
        files.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
        for (uri, edits) in files {
            ops.push(WireFileOp::Edit {
                uri,
                version: None,
                edits: edits
                    .into_iter()
                    .map(|t| (range(t.range), t.new_text))
                    .collect(),
            });
        }
    }
    Ok(ops)
}

impl Drop for LspClient {
    fn drop(&mut self) {
        self.transport.kill_group();
    }
}

trait Pipe: Sized {
    fn pipe<R>(self, f: impl FnOnce(Self) -> R) -> R {
        f(self)
    }
}
impl<T> Pipe for T {}

fn with_stderr(e: LspError, t: &Transport) -> LspError {
    match e {
        LspError::StreamClosed { reason, .. } => LspError::StreamClosed {
            reason,
            stderr: t.stderr_tail(),
        },
        other => other,
    }
}

fn initialize_params(root_uri: &Url, root: &Path, init_options: &Value) -> Value {
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into());
    let symbol_kinds: Vec<u32> = (1..=26).collect();
    let completion_kinds: Vec<u32> = (1..=25).collect();
    let mut params = json!({
        "processId": std::process::id(),
        "clientInfo": {"name": "lspgate", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": root_uri,
        "rootPath": root,
        "workspaceFolders": [{"uri": root_uri, "name": name}],
        "capabilities": {
            "general": {"positionEncodings": ["utf-8", "utf-32", "utf-16"]},
            "workspace": {
                "configuration": true,
                "workspaceFolders": true,
                "applyEdit": true,
                "workspaceEdit": {"documentChanges": true, "resourceOperations": ["create", "rename", "delete"]},
                "symbol": {"dynamicRegistration": false, "symbolKind": {"valueSet": symbol_kinds}},
                "didChangeConfiguration": {"dynamicRegistration": true},
                "didChangeWatchedFiles": {"dynamicRegistration": true},
                "fileOperations": {"didCreate": true, "didRename": true, "didDelete": true},
                "diagnostics": {"refreshSupport": false}
            },
            "window": {"workDoneProgress": true, "showMessage": {}},
            "textDocument": {
                "synchronization": {"dynamicRegistration": false, "didSave": true, "willSave": false},
                "hover": {"contentFormat": ["markdown", "plaintext"]},
                "definition": {"linkSupport": true},
                "declaration": {"linkSupport": true},
                "typeDefinition": {"linkSupport": true},
                "implementation": {"linkSupport": true},
                "references": {},
                "documentSymbol": {
                    "hierarchicalDocumentSymbolSupport": true,
                    "symbolKind": {"valueSet": symbol_kinds}
                },
                "signatureHelp": {
                    "signatureInformation": {
                        "documentationFormat": ["markdown", "plaintext"],
                        "parameterInformation": {"labelOffsetSupport": true},
                        "activeParameterSupport": true
                    }
                },
                "completion": {
                    "completionItem": {"snippetSupport": false, "documentationFormat": ["markdown", "plaintext"]},
                    "completionItemKind": {"valueSet": completion_kinds}
                },
                "callHierarchy": {"dynamicRegistration": false},
                "publishDiagnostics": {"versionSupport": true, "relatedInformation": false},
                "diagnostic": {"dynamicRegistration": true, "relatedDocumentSupport": false}
            }
        }
    });
    if !init_options.is_null() {
        params["initializationOptions"] = init_options.clone();
    }
    params
}

/// What the task that serves a server's own messages needs.
struct Inbox {
    transport: Arc<Transport>,
    state: Arc<State>,
    diag_tx: watch::Sender<u64>,
    progress_tx: watch::Sender<u64>,
    settings: Value,
    root_uri: Url,
    ready_marker: Option<String>,
}

async fn serve_inbound(mut inbound: mpsc::UnboundedReceiver<Inbound>, inbox: Inbox) {
    let Inbox {
        transport,
        state,
        diag_tx,
        progress_tx,
        settings,
        root_uri,
        ready_marker,
    } = inbox;
    while let Some(msg) = inbound.recv().await {
        if let Ok(mut l) = state.last_inbound.lock() {
            *l = Some(Instant::now());
        }
        if tracing::enabled!(tracing::Level::TRACE) {
            tracing::trace!(server = %transport.name(), "inbound {msg:?}");
        }
        match msg {
            Inbound::Notification { method, params } => match method.as_str() {
                "textDocument/publishDiagnostics" => {
                    let Ok(p) = serde_json::from_value::<lt::PublishDiagnosticsParams>(params)
                    else {
                        tracing::debug!("bad publishDiagnostics");
                        continue;
                    };
                    let seq = match state.publish_seq.lock() {
                        Ok(mut s) => {
                            *s += 1;
                            *s
                        }
                        Err(_) => continue,
                    };
                    let published = Published {
                        version: p.version,
                        diags: Arc::new(p.diagnostics.into_iter().map(convert_diag).collect()),
                        seq,
                    };
                    if let Ok(mut d) = state.diags.lock() {
                        d.insert(p.uri, published);
                    }
                    diag_tx.send_replace(seq);
                }
                "$/progress" => {
                    let token = match params.get("token") {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => continue,
                    };
                    let value = params.get("value");
                    let kind = value.and_then(|v| v.get("kind")).and_then(Value::as_str);
                    if let Ok(mut p) = state.progress.lock() {
                        match kind {
                            Some("begin") => {
                                let title = value
                                    .and_then(|v| v.get("title"))
                                    .and_then(Value::as_str)
                                    .unwrap_or("working")
                                    .to_string();
                                p.insert(token, title);
                            }
                            Some("end") => {
                                let title = p.remove(&token);
                                if let (Some(t), Some(m)) = (title, ready_marker.as_deref())
                                    && t.contains(m)
                                {
                                    state
                                        .marker_seen
                                        .store(true, std::sync::atomic::Ordering::SeqCst);
                                }
                            }
                            _ => {}
                        }
                    }
                    progress_tx.send_modify(|n| *n += 1);
                }
                "window/logMessage" | "window/showMessage" => {
                    let text = params.get("message").and_then(Value::as_str).unwrap_or("");
                    if ready_marker.as_deref().is_some_and(|m| text.contains(m)) {
                        state
                            .marker_seen
                            .store(true, std::sync::atomic::Ordering::SeqCst);
                        progress_tx.send_modify(|n| *n += 1);
                    }
                    tracing::debug!(server = %transport.name(), "{method}: {text}");
                }
                _ => {}
            },
            Inbound::Request { id, method, params } if method == "workspace/applyEdit" => {
                let sink = state.edit_sink.lock().ok().and_then(|s| s.clone());
                let ops = params.get("edit").cloned().map(workspace_edit);
                match (sink, ops) {
                    (Some(sink), Some(Ok(ops))) => {
                        let (tx, rx) = tokio::sync::oneshot::channel();
                        if sink.send((ops, tx)).is_err() {
                            transport.respond(id, Ok(json!({"applied": false, "failureReason": "lspgate is not applying edits now"})));
                            continue;
                        }
                        let t = transport.clone();
                        tokio::spawn(async move {
                            let applied = rx.await.unwrap_or(false);
                            t.respond(id, Ok(json!({"applied": applied})));
                        });
                    }
                    (_, Some(Err(e))) => {
                        transport.respond(id, Ok(json!({"applied": false, "failureReason": e})))
                    }
                    _ => transport.respond(
                        id,
                        Ok(json!({
                            "applied": false,
                            "failureReason": "lspgate applies edits only through its edit tools"
                        })),
                    ),
                }
            }
            Inbound::Request { id, method, params } => {
                let reply = answer_server_request(&method, &params, &state, &settings, &root_uri);
                transport.respond(id, reply);
            }
        }
    }
}

fn answer_server_request(
    method: &str,
    params: &Value,
    state: &State,
    settings: &Value,
    root_uri: &Url,
) -> Result<Value, (i64, String)> {
    match method {
        "workspace/configuration" => {
            let items = params
                .get("items")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let answers: Vec<Value> = items
                .iter()
                .map(|item| match item.get("section").and_then(Value::as_str) {
                    Some(section) => section
                        .split('.')
                        .try_fold(settings, |v, k| v.get(k))
                        .cloned()
                        .unwrap_or(Value::Null),
                    None => settings.clone(),
                })
                .collect();
            Ok(Value::Array(answers))
        }
        "window/workDoneProgress/create" => Ok(Value::Null),
        "client/registerCapability" => {
            if let (Some(regs), Ok(mut r)) = (
                params.get("registrations").and_then(Value::as_array),
                state.registrations.lock(),
            ) {
                for reg in regs {
                    if let (Some(id), Some(m)) = (
                        reg.get("id").and_then(Value::as_str),
                        reg.get("method").and_then(Value::as_str),
                    ) {
                        r.insert(id.to_string(), m.to_string());
                    }
                }
            }
            Ok(Value::Null)
        }
        "client/unregisterCapability" => {
            let list = params
                .get("unregisterations")
                .or_else(|| params.get("unregistrations"))
                .and_then(Value::as_array);
            if let (Some(list), Ok(mut r)) = (list, state.registrations.lock()) {
                for u in list {
                    if let Some(id) = u.get("id").and_then(Value::as_str) {
                        r.remove(id);
                    }
                }
            }
            Ok(Value::Null)
        }
        "workspace/applyEdit" => Ok(json!({
            "applied": false,
            "failureReason": "lspgate applies edits only through its edit tools"
        })),
        "window/showMessageRequest" => Ok(Value::Null),
        "window/showDocument" => Ok(json!({"success": false})),
        "workspace/workspaceFolders" => Ok(json!([{"uri": root_uri, "name": "root"}])),
        "workspace/diagnostic/refresh"
        | "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/inlineValue/refresh"
        | "workspace/codeLens/refresh" => Ok(Value::Null),
        _ => Err((-32601, format!("lspgate does not handle {method}"))),
    }
}

fn text_pos(uri: &Url, pos: WirePos) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": pos.line, "character": pos.character}})
}

fn range(r: lt::Range) -> WireRange {
    WireRange {
        start: WirePos {
            line: r.start.line,
            character: r.start.character,
        },
        end: WirePos {
            line: r.end.line,
            character: r.end.character,
        },
    }
}

fn location(l: lt::Location) -> WireLocation {
    WireLocation {
        uri: l.uri,
        range: range(l.range),
    }
}

fn convert_diag(d: lt::Diagnostic) -> WireDiagnostic {
    let raw = serde_json::to_value(&d).unwrap_or(Value::Null);
    WireDiagnostic {
        raw,
        range: range(d.range),
        severity: match d.severity {
            Some(lt::DiagnosticSeverity::WARNING) => Severity::Warning,
            Some(lt::DiagnosticSeverity::INFORMATION) => Severity::Info,
            Some(lt::DiagnosticSeverity::HINT) => Severity::Hint,
            _ => Severity::Error,
        },
        code: d.code.map(|c| match c {
            lt::NumberOrString::Number(n) => n.to_string(),
            lt::NumberOrString::String(s) => s,
        }),
        source: d.source,
        message: d.message,
    }
}

fn doc_symbol(s: lt::DocumentSymbol) -> WireSymbol {
    WireSymbol {
        name: s.name,
        kind: symbol_kind(s.kind),
        detail: s.detail.filter(|d| !d.is_empty()),
        range: range(s.range),
        selection: range(s.selection_range),
        children: s
            .children
            .unwrap_or_default()
            .into_iter()
            .map(doc_symbol)
            .collect(),
    }
}

/// Hover contents as text: a `MarkupContent`, a `MarkedString` (plain or with a language), or
/// an array of those.
fn hover_text(c: Value) -> String {
    match c {
        Value::String(s) => s,
        Value::Array(items) => items
            .into_iter()
            .map(hover_text)
            .collect::<Vec<_>>()
            .join("\n\n"),
        Value::Object(mut o) => {
            let value = match o.remove("value") {
                Some(Value::String(v)) => v,
                _ => String::new(),
            };
            match o.get("language").and_then(Value::as_str) {
                Some(language) => format!("```{language}\n{value}\n```"),
                None => value,
            }
        }
        _ => String::new(),
    }
}

fn symbol_kind(k: lt::SymbolKind) -> &'static str {
    const NAMES: [&str; 26] = [
        "file",
        "module",
        "namespace",
        "package",
        "class",
        "method",
        "property",
        "field",
        "constructor",
        "enum",
        "interface",
        "function",
        "variable",
        "constant",
        "string",
        "number",
        "boolean",
        "array",
        "object",
        "key",
        "null",
        "enum_member",
        "struct",
        "event",
        "operator",
        "type_parameter",
    ];
    let n: i32 = serde_json::to_value(k)
        .ok()
        .and_then(|v| v.as_i64())
        .unwrap_or(0) as i32;
    NAMES
        .get((n - 1).max(0) as usize)
        .copied()
        .filter(|_| n >= 1)
        .unwrap_or("unknown")
}

fn completion_kind(k: lt::CompletionItemKind) -> &'static str {
    const NAMES: [&str; 25] = [
        "text",
        "method",
        "function",
        "constructor",
        "field",
        "variable",
        "class",
        "interface",
        "module",
        "property",
        "unit",
        "value",
        "enum",
        "keyword",
        "snippet",
        "color",
        "file",
        "reference",
        "folder",
        "enum_member",
        "constant",
        "struct",
        "event",
        "operator",
        "type_parameter",
    ];
    let n = serde_json::to_value(k)
        .ok()
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    if n >= 1 {
        NAMES.get(n as usize - 1).copied().unwrap_or("unknown")
    } else {
        "unknown"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hover_contents_of_every_shape() {
        assert_eq!(hover_text(json!("plain")), "plain");
        assert_eq!(
            hover_text(json!({"kind": "markdown", "value": "**b**"})),
            "**b**"
        );
        assert_eq!(
            hover_text(json!({"language": "python", "value": "x: int"})),
            "```python\nx: int\n```"
        );
        assert_eq!(
            hover_text(json!(["a", {"language": "c", "value": "int x"}])),
            "a\n\n```c\nint x\n```"
        );
        assert_eq!(hover_text(json!(null)), "");
    }
}
