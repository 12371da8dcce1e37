//! The typed LSP client: `initialize` handshake, capability checks, document synchronization and
//! readiness (`$/progress`, ready markers). The requests lspgate makes are in `requests`, the
//! server's own messages are served by `inbound` into the `state` both share, the diagnostics
//! it pushed are in `diagnostics`.
//!
//! `initialize` announces only the client capabilities lspgate really handles, and offers the
//! UTF-8, UTF-32 and UTF-16 position encodings. Capability checks cover static and dynamic
//! registrations (`caps`).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::time::Instant;
use url::Url;

use super::transport::{SpawnSpec, Transport};
use super::wire::*;
use super::{CONTENT_MODIFIED, LspError, SERVER_CANCELLED};
use crate::text::Encoding;

use super::caps::Cap;
use super::inbound::{Inbox, serve_inbound};
use super::state::{RawEditSink, State};

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
    /// What lspgate speaks to the server beyond plain LSP.
    pub dialect: Dialect,
    /// The files whose text the server's diagnostics may quote (the workspace root's; see
    /// `quotes`).
    pub inside: super::Inside,
}

/// What lspgate speaks to a server beyond plain LSP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// Plain LSP: diagnostics pulled (`textDocument/diagnostic`) where the server offers it,
    /// else the push for the document's version.
    #[default]
    Lsp,
    /// typescript-language-server, whose `typescript.tsserverRequest` command reaches tsserver
    /// itself: diagnostics from tsserver's own requests (its pushes are not versioned and do not
    /// come when a file's diagnostics stay empty, so waiting for one after a change could never
    /// end), workspace symbols searched project by project (its `workspace/symbol` searches only
    /// the project of the file it saw last), projects reloaded from disk.
    Tsserver,
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
            dialect: Dialect::Lsp,
            inside: super::Inside::anywhere(),
        }
    }
}

/// While a server is this young, silence is part of being ready: it may not have announced its
/// indexing yet.
const STARTUP_WINDOW: Duration = Duration::from_secs(5);
/// How long a young server must be quiet before it counts as settled.
const STARTUP_QUIET: Duration = Duration::from_millis(200);

/// `STARTUP_QUIET`, or `LSPGATE_STARTUP_QUIET_MS` (tests make it long, so a call held to it by
/// mistake cannot pass for a quick one).
fn startup_quiet() -> Duration {
    static QUIET: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *QUIET.get_or_init(|| {
        std::env::var("LSPGATE_STARTUP_QUIET_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(STARTUP_QUIET, Duration::from_millis)
    })
}

/// One initialized language server.
pub struct LspClient {
    pub(super) transport: Arc<Transport>,
    pub(super) caps: Value,
    pub(super) encoding: Encoding,
    pub(super) server_version: Option<String>,
    pub(super) opts: ClientOptions,
    pub(super) state: Arc<State>,
    pub(super) diag_tx: watch::Sender<u64>,
    pub(super) progress_tx: watch::Sender<u64>,
    pub(super) started: Instant,
    /// The server's root folder.
    pub(super) root: std::path::PathBuf,
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
        // Without a trailing slash, as editors send it: typescript-language-server tells a
        // workspace's files by `folder + "/"` and, with `folder/`, matched none (so tsserver
        // put loose files in one inferred project per folder instead of one per workspace).
        let root_uri = Url::from_file_path(root)
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
                inside: opts.inside.clone(),
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
                match i.get("version").and_then(Value::as_str).map(short_version) {
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
            root: root.to_path_buf(),
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

    /// Whether `typeHierarchyProvider` stands for clangd's own extension (clangd before 17:
    /// `textDocument/typeHierarchy` with direction and resolve), not the standard requests.
    pub fn legacy_type_hierarchy(&self) -> bool {
        let Some(v) = self.server_version() else {
            return false;
        };
        let major = v
            .split(|c: char| !c.is_ascii_digit())
            .find(|p| !p.is_empty())
            .and_then(|p| p.parse::<u32>().ok());
        v.contains("clangd") && major.is_some_and(|m| m < 17)
    }

    /// The raw capabilities the server announced.
    pub fn capabilities(&self) -> &Value {
        &self.caps
    }

    /// Whether the server serves `cap`, statically or through a dynamic registration.
    pub fn supports(&self, cap: Cap) -> bool {
        if cap == Cap::PullDiagnostics && self.opts.dialect == Dialect::Tsserver {
            return true;
        }
        if cap == Cap::InlayHints {
            return self.has_inlay_hints();
        }
        super::announces(&self.caps, cap.provider_key()) || self.registered(cap.method())
    }

    pub(super) fn registered(&self, method: &str) -> bool {
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

    /// Puts this process under its server's view (see `View`): from now on its requests wait
    /// for other tasks' overlays, and pushes computed on an overlay are dropped. Done once the
    /// process is initialized, by the documents it serves.
    pub fn attach(&self, view: &Arc<super::View>) {
        let _ = self.state.view.set(view.clone());
    }

    /// Sends `method` with `params` as given and hands back the server's answer as sent (a
    /// request lspgate forwards for a client of its own, `lspgate lsp`), bounded as any
    /// request of its kind and retried on `ContentModified` as they are.
    pub async fn forward(&self, method: &str, params: Value) -> Result<Value, LspError> {
        self.call(method, params).await
    }

    /// `forward` for a request that may have the server send `workspace/applyEdit` back (a
    /// command a client of lspgate's own runs): those go to `sink` while it runs.
    pub async fn forward_run(
        &self,
        method: &str,
        params: Value,
        sink: RawEditSink,
    ) -> Result<Value, LspError> {
        if let Ok(mut s) = self.state.raw_edit_sink.lock() {
            *s = Some(sink);
        }
        let r = self.call(method, params).await;
        if let Ok(mut s) = self.state.raw_edit_sink.lock() {
            *s = None;
        }
        r
    }

    pub(super) async fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
    ) -> Result<T, LspError> {
        self.call_with(method, params, self.timeout_for(method))
            .await
    }

    /// The bound for an LSP method: its kind's configured timeout, else the default.
    pub(super) fn timeout_for(&self, method: &str) -> Duration {
        let kind = match method {
            "callHierarchy/incomingCalls" | "callHierarchy/outgoingCalls" => Some("call_hierarchy"),
            "typeHierarchy/supertypes"
            | "typeHierarchy/subtypes"
            | "textDocument/typeHierarchy" => Some("type_hierarchy"),
            "clangd/inlayHints" => Some("inlay_hints"),
            "textDocument/semanticTokens/range" => Some("semantic_tokens"),
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
    pub(super) async fn call_with<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<T, LspError> {
        // No request of anyone else is in flight while an overlay is in place.
        let _view = match self.state.view.get() {
            Some(view) => Some(view.shared().await),
            None => None,
        };
        let mut attempt = 0;
        loop {
            let r = self
                .transport
                .request_raw(method, params.clone(), timeout)
                .await;
            match r {
                Err(LspError::Server { code, .. })
                    if (code == CONTENT_MODIFIED || code == SERVER_CANCELLED) && attempt < 3 =>
                {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(50 * attempt)).await;
                }
                Err(e) => return Err(e),
                Ok(raw) => {
                    return serde_json::from_str(raw.get())
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

    /// How many pieces of work (`$/progress` begins) the server has announced so far.
    pub fn progress_begun(&self) -> u64 {
        self.state.begun.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Waits (at most `timeout`) until the server announces work beyond the first `seen`
    /// (`progress_begun`); whether it did.
    pub async fn wait_begun(&self, seen: u64, timeout: Duration) -> bool {
        let mut rx = self.progress_tx.subscribe();
        let wait = async {
            loop {
                rx.borrow_and_update();
                if self.progress_begun() > seen || !self.is_alive() {
                    return;
                }
                if rx.changed().await.is_err() {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(timeout, wait).await;
        self.progress_begun() > seen
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
                    last.unwrap_or(self.started).max(self.started) + startup_quiet()
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
}

impl Drop for LspClient {
    fn drop(&mut self) {
        self.transport.kill_group();
    }
}

/// A server's `serverInfo.version` as people read it: gopls sends its whole build information
/// as JSON there (2 KB: Go version, every dependency with its checksum), of which its
/// `Version` is kept.
fn short_version(v: &str) -> &str {
    if !v.starts_with('{') {
        return v;
    }
    #[derive(serde::Deserialize)]
    struct Build<'a> {
        #[serde(rename = "Version", borrow)]
        version: Option<&'a str>,
    }
    match serde_json::from_str::<Build>(v) {
        Ok(Build {
            version: Some(short),
        }) => short,
        _ => v,
    }
}

fn with_stderr(e: LspError, t: &Transport) -> LspError {
    match e {
        LspError::StreamClosed { reason, .. } => LspError::StreamClosed {
            reason,
            stderr: t.stderr_tail(),
        },
        other => other,
    }
}

/// LSP 3.17's semantic token types and modifiers, every one of which lspgate reads (as words).
const TOKEN_TYPES: [&str; 23] = [
    "namespace",
    "type",
    "class",
    "enum",
    "interface",
    "struct",
    "typeParameter",
    "parameter",
    "variable",
    "property",
    "enumMember",
    "event",
    "function",
    "method",
    "macro",
    "keyword",
    "modifier",
    "comment",
    "string",
    "number",
    "regexp",
    "operator",
    "decorator",
];
const TOKEN_MODIFIERS: [&str; 10] = [
    "declaration",
    "definition",
    "readonly",
    "static",
    "deprecated",
    "abstract",
    "async",
    "modification",
    "documentation",
    "defaultLibrary",
];

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
                    "completionItem": {"snippetSupport": true, "documentationFormat": ["markdown", "plaintext"]},
                    "completionItemKind": {"valueSet": completion_kinds}
                },
                "callHierarchy": {"dynamicRegistration": false},
                "typeHierarchy": {"dynamicRegistration": false},
                "inlayHint": {"dynamicRegistration": false},
                "semanticTokens": {
                    "dynamicRegistration": false,
                    "requests": {"range": true, "full": true},
                    "tokenTypes": TOKEN_TYPES,
                    "tokenModifiers": TOKEN_MODIFIERS,
                    "formats": ["relative"],
                    "multilineTokenSupport": false,
                    "overlappingTokenSupport": false
                },
                "publishDiagnostics": {
                    "versionSupport": true,
                    "relatedInformation": false,
                    "tagSupport": {"valueSet": [1, 2]},
                    "codeDescriptionSupport": true,
                    "dataSupport": true
                },
                "diagnostic": {"dynamicRegistration": true, "relatedDocumentSupport": false}
            }
        }
    });
    if !init_options.is_null() {
        params["initializationOptions"] = init_options.clone();
    }
    params
}

#[cfg(test)]
mod tests {
    use super::short_version;

    #[test]
    fn a_version_sent_as_build_information_is_its_version() {
        let gopls = r#"{"GoVersion":"go1.26.8","Path":"golang.org/x/tools/gopls","Main":{"Path":"golang.org/x/tools/gopls","Version":"v0.23.0"},"Deps":[{"Path":"golang.org/x/mod","Version":"v0.37.0"}],"Version":"v0.23.0"}"#;
        assert_eq!(short_version(gopls), "v0.23.0");
        assert_eq!(short_version("1.1.414"), "1.1.414");
        assert_eq!(short_version("{not json"), "{not json");
    }
}
