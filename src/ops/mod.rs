//! The operations layer: one function per tool, shared by every front end. It resolves paths
//! and positions, picks and starts the server for a file, holds the document for the request,
//! and turns `wire` answers into SPEC-shaped results.

pub mod render;
pub mod tools;
pub mod types;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::OnceCell;
use url::Url;

use crate::documents::{Documents, Lease, Snapshot};
use crate::error::{Code, ToolError};
use crate::lsp::wire::{CallDirection, GotoKind, WireDiagnostic, WireLocation, WireSymbol};
use crate::lsp::{Cap, ClientOptions, LspClient};
use crate::text;
use crate::workspace::presets::{self, PRESETS, Preset, ServerSpec};
use crate::workspace::{Root, detect_language};
use types::*;

/// Knobs of the operations layer.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Cap on a text reply, in characters.
    pub max_output: usize,
    /// Most documents one server keeps open.
    pub open_documents: usize,
    /// How long `references`/`workspace_symbols` wait for indexing to finish.
    pub ready_timeout: Duration,
    /// How long a `diagnostics` call waits for fresh diagnostics.
    pub diagnostics_timeout: Duration,
    /// Bound on each request to a server.
    pub request_timeout: Duration,
    /// Install a missing preset server on first use.
    pub install: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            max_output: 20_000,
            open_documents: 200,
            ready_timeout: Duration::from_secs(15),
            diagnostics_timeout: Duration::from_secs(15),
            request_timeout: Duration::from_secs(30),
            install: false,
        }
    }
}

/// A running server and its open documents.
pub struct Server {
    pub name: String,
    pub docs: Documents,
}

impl Server {
    pub fn client(&self) -> &Arc<LspClient> {
        self.docs.client()
    }
}

enum Source {
    Spec(ServerSpec),
    /// A preset not found at start; installed on first use when allowed.
    Missing(&'static Preset),
}

struct Slot {
    source: tokio::sync::Mutex<Source>,
    languages: Vec<String>,
    name: String,
    cell: OnceCell<Result<Arc<Server>, ToolError>>,
}

/// The workspace's operations: every tool is a method here.
pub struct Engine {
    root: Root,
    slots: Vec<Slot>,
    opts: EngineOptions,
}

impl Engine {
    /// An engine serving the given servers, first match per language wins.
    pub fn new(root: Root, specs: Vec<ServerSpec>, opts: EngineOptions) -> Engine {
        let slots = specs
            .into_iter()
            .map(|s| Slot {
                name: s.spawn.name.clone(),
                languages: s.languages.clone(),
                source: tokio::sync::Mutex::new(Source::Spec(s)),
                cell: OnceCell::new(),
            })
            .collect();
        Engine { root, slots, opts }
    }

    /// An engine over the built-in presets: those found now, and (with `install`) the rest.
    pub fn with_presets(root: Root, opts: EngineOptions) -> Engine {
        let mut e = Engine::new(root, Vec::new(), opts);
        for p in PRESETS {
            let source = match presets::locate(p) {
                Some(exe) => Source::Spec(p.spec(&exe)),
                None => Source::Missing(p),
            };
            e.slots.push(Slot {
                name: p.name.to_string(),
                languages: p.languages.iter().map(|s| s.to_string()).collect(),
                source: tokio::sync::Mutex::new(source),
                cell: OnceCell::new(),
            });
        }
        e
    }

    pub fn root(&self) -> &Root {
        &self.root
    }

    pub fn options(&self) -> &EngineOptions {
        &self.opts
    }

    /// Starts every configured server now (used when one explicit command is served).
    pub async fn start_all(&self) -> Vec<Result<Arc<Server>, ToolError>> {
        let mut out = Vec::new();
        for slot in &self.slots {
            out.push(self.start(slot).await);
        }
        out
    }

    /// The servers running now.
    pub fn running(&self) -> Vec<Arc<Server>> {
        self.slots
            .iter()
            .filter_map(|s| s.cell.get().and_then(|r| r.as_ref().ok()).cloned())
            .collect()
    }

    /// Whether `cap` may be served: some running server has it, or a server not yet started
    /// could have it.
    pub fn may_support(&self, cap: Cap) -> bool {
        self.slots.iter().any(|s| match s.cell.get() {
            Some(Ok(server)) => server.client().supports(cap),
            Some(Err(_)) => false,
            None => true,
        })
    }

    pub async fn shutdown(&self) {
        for s in self.running() {
            s.client().shutdown().await;
        }
    }

    async fn start(&self, slot: &Slot) -> Result<Arc<Server>, ToolError> {
        slot.cell
            .get_or_init(|| async {
                let mut source = slot.source.lock().await;
                if let Source::Missing(p) = &*source {
                    if !self.opts.install {
                        return Err(missing(p, &slot.languages));
                    }
                    let preset: &'static Preset = p;
                    tracing::info!(
                        "installing {} into {}",
                        preset.name,
                        presets::data_dir().display()
                    );
                    let exe = tokio::task::spawn_blocking(move || presets::install(preset))
                        .await
                        .map_err(|e| ToolError::new(Code::NoServer, e.to_string()))?
                        .map_err(|e| {
                            ToolError::new(
                                Code::NoServer,
                                format!("installing {} failed: {e}", preset.name),
                            )
                            .with_data(
                                json!({"server": preset.name, "install": preset.install_hint()}),
                            )
                        })?;
                    *source = Source::Spec(preset.spec(&exe));
                }
                let Source::Spec(spec) = &*source else {
                    return Err(ToolError::new(Code::NoServer, "server unavailable"));
                };
                let opts = ClientOptions {
                    request_timeout: self.opts.request_timeout,
                    settings: spec.settings.clone(),
                    initialization: spec.initialization.clone(),
                    ready_marker: spec.ready_marker.clone(),
                    ..ClientOptions::default()
                };
                let client = LspClient::start(&spec.spawn, self.root.path(), opts)
                    .await
                    .map_err(|e| {
                        let mut err = ToolError::from(e);
                        err.code = Code::ServerFailed;
                        err.message = format!("{} could not start: {}", slot.name, err.message);
                        err
                    })?;
                Ok(Arc::new(Server {
                    name: slot.name.clone(),
                    docs: Documents::new(client, self.opts.open_documents),
                }))
            })
            .await
            .clone()
    }

    /// The server for a file's language, started if needed.
    pub async fn server_for(&self, path: &Path) -> Result<Arc<Server>, ToolError> {
        let language = detect_language(path);
        let mut first_err = None;
        for slot in self
            .slots
            .iter()
            .filter(|s| s.languages.is_empty() || s.languages.iter().any(|l| l == language))
        {
            match self.start(slot).await {
                Ok(s) => return Ok(s),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        Err(first_err.unwrap_or_else(|| {
            let known: Vec<_> = PRESETS.iter().map(|p| p.name).collect();
            ToolError::new(
                Code::NoServer,
                format!(
                    "no language server serves {language} files ({})",
                    self.root.relative(path)
                ),
            )
            .with_data(json!({"language": language, "known_servers": known}))
        }))
    }

    // ---- helpers ----

    fn resolve(&self, file: &str) -> Result<PathBuf, ToolError> {
        self.root.resolve(file)
    }

    async fn hold(
        &self,
        file: &str,
        source: Option<&str>,
        cap: Cap,
        tool: &str,
    ) -> Result<(Arc<Server>, Lease), ToolError> {
        let path = self.resolve(file)?;
        let server = self.server_for(&path).await?;
        require(&server, cap, tool)?;
        let lease = server.docs.lease(&path, source).await?;
        if let Err(busy) = server.client().wait_loaded(self.opts.ready_timeout).await {
            tracing::warn!(server = %server.name, "answering before the server is loaded: {:?}", busy.titles);
        }
        Ok((server, lease))
    }

    /// Locations from the server, made into `Loc`s with code-point columns and source text.
    fn locs(&self, snap: &Snapshot, locations: Vec<WireLocation>) -> Vec<Loc> {
        let mut files = FileCache::new(snap);
        locations
            .into_iter()
            .filter_map(|l| files.loc(&self.root, &l.uri, l.range))
            .collect()
    }

    // ---- tools ----

    pub async fn hover(&self, p: PositionParams) -> Result<HoverResult, ToolError> {
        let (server, lease) = self
            .hold(&p.file, p.source.as_deref(), Cap::Hover, "hover")
            .await?;
        let pos = position(&lease.snap, &p)?;
        let h = server.client().hover(&lease.snap.uri, pos).await?;
        Ok(match h {
            Some(h) => HoverResult {
                contents: h.contents,
                range: h.range.map(|r| {
                    let (line, column, end_line, end_column) = lease.snap.range(r);
                    Range {
                        line,
                        column,
                        end_line,
                        end_column,
                    }
                }),
            },
            None => HoverResult {
                contents: String::new(),
                range: None,
            },
        })
    }

    pub async fn definition(&self, p: DefinitionParams) -> Result<LocationsResult, ToolError> {
        let (kind, cap) = match p.kind.unwrap_or(GotoKindParam::Definition) {
            GotoKindParam::Definition => (GotoKind::Definition, Cap::Definition),
            GotoKindParam::Declaration => (GotoKind::Declaration, Cap::Declaration),
            GotoKindParam::TypeDefinition => (GotoKind::TypeDefinition, Cap::TypeDefinition),
            GotoKindParam::Implementation => (GotoKind::Implementation, Cap::Implementation),
        };
        let (server, lease) = self
            .hold(&p.at.file, p.at.source.as_deref(), cap, "definition")
            .await?;
        let pos = position(&lease.snap, &p.at)?;
        let locs = server.client().goto(kind, &lease.snap.uri, pos).await?;
        Ok(LocationsResult {
            locations: self.locs(&lease.snap, locs),
        })
    }

    pub async fn references(&self, p: ReferencesParams) -> Result<ReferencesResult, ToolError> {
        let (server, lease) = self
            .hold(
                &p.at.file,
                p.at.source.as_deref(),
                Cap::References,
                "references",
            )
            .await?;
        let pos = position(&lease.snap, &p.at)?;
        let ready = server.client().wait_idle(self.opts.ready_timeout).await;
        let raw = server
            .client()
            .references(&lease.snap.uri, pos, p.include_declaration.unwrap_or(true))
            .await?;
        let mut locs = self.locs(&lease.snap, raw);
        locs.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
        locs.dedup();
        let (page, total, next_cursor) = paginate(locs, p.limit, p.cursor.as_deref(), 200)?;
        let (partial, reason) = readiness(ready);
        Ok(ReferencesResult {
            locations: page,
            total,
            next_cursor,
            partial,
            reason,
        })
    }

    pub async fn document_symbols(
        &self,
        p: FileParams,
    ) -> Result<DocumentSymbolsResult, ToolError> {
        let path = self.resolve(&p.file)?;
        let server = self.server_for(&path).await?;
        let lease = server.docs.lease(&path, p.source.as_deref()).await?;
        if !server.client().supports(Cap::DocumentSymbols) {
            return Ok(DocumentSymbolsResult {
                symbols: fallback_symbols(&lease.snap),
                source: SymbolSource::Fallback,
            });
        }
        let syms = server.client().document_symbols(&lease.snap.uri).await?;
        Ok(DocumentSymbolsResult {
            symbols: syms.into_iter().map(|s| symbol(&lease.snap, s)).collect(),
            source: SymbolSource::Server,
        })
    }

    pub async fn workspace_symbols(
        &self,
        p: WorkspaceSymbolsParams,
    ) -> Result<WorkspaceSymbolsResult, ToolError> {
        let servers = self.servers_with(Cap::WorkspaceSymbols).await;
        if servers.is_empty() {
            return Err(ToolError::new(
                Code::NotSupported,
                "no running language server offers workspace symbols",
            ));
        }
        let mut all = Vec::new();
        let mut busy = Ok(());
        for server in servers {
            self.ensure_project(&server).await;
            let ready = server.client().wait_idle(self.opts.ready_timeout).await;
            if busy.is_ok() {
                busy = ready;
            }
            let found = server.client().workspace_symbols(&p.query).await?;
            let mut files = FileCache::empty(server.client().encoding());
            for s in found {
                if let Some(kind) = &p.kind
                    && !s.kind.eq_ignore_ascii_case(kind)
                {
                    continue;
                }
                if let Some(loc) = files.loc(&self.root, &s.location.uri, s.location.range) {
                    all.push(WorkspaceSymbol {
                        name: s.name,
                        kind: s.kind.to_string(),
                        container: s.container,
                        loc,
                    });
                }
            }
        }
        let (page, total, next_cursor) = paginate(all, p.limit, p.cursor.as_deref(), 100)?;
        let (partial, reason) = readiness(busy);
        Ok(WorkspaceSymbolsResult {
            symbols: page,
            total,
            source: SymbolSource::Server,
            next_cursor,
            partial,
            reason,
        })
    }

    /// Some servers (tsserver) know no project until a file is open: open one of theirs.
    async fn ensure_project(&self, server: &Server) {
        if server.docs.open_count() > 0 {
            return;
        }
        let slot = self.slots.iter().find(|s| s.name == server.name);
        let langs: Vec<String> = slot.map(|s| s.languages.clone()).unwrap_or_default();
        let file = workspace_files(self.root.path()).into_iter().find(|p| {
            let l = detect_language(p);
            l != "plaintext" && (langs.is_empty() || langs.iter().any(|x| x == l))
        });
        if let Some(file) = file
            && let Ok(lease) = server.docs.lease(&file, None).await
        {
            drop(lease);
            let _ = server.client().wait_loaded(self.opts.ready_timeout).await;
        }
    }

    /// Running servers with `cap`; when none runs yet, starts those for the workspace's
    /// languages that could.
    async fn servers_with(&self, cap: Cap) -> Vec<Arc<Server>> {
        let running: Vec<_> = self
            .running()
            .into_iter()
            .filter(|s| s.client().supports(cap))
            .collect();
        if !running.is_empty() {
            return running;
        }
        let langs = workspace_languages(self.root.path());
        let mut out = Vec::new();
        for slot in &self.slots {
            if (slot.languages.is_empty()
                || slot.languages.iter().any(|l| langs.contains(l.as_str())))
                && let Ok(s) = self.start(slot).await
                && s.client().supports(cap)
                && !out.iter().any(|o: &Arc<Server>| o.name == s.name)
            {
                out.push(s);
            }
        }
        out
    }

    pub async fn signature_help(
        &self,
        p: PositionParams,
    ) -> Result<SignatureHelpResult, ToolError> {
        let (server, lease) = self
            .hold(
                &p.file,
                p.source.as_deref(),
                Cap::SignatureHelp,
                "signature_help",
            )
            .await?;
        let pos = position(&lease.snap, &p)?;
        let h = server.client().signature_help(&lease.snap.uri, pos).await?;
        Ok(SignatureHelpResult {
            signatures: h
                .signatures
                .into_iter()
                .map(|s| Signature {
                    label: s.label,
                    parameters: s.parameters,
                    active_parameter: s.active_parameter,
                })
                .collect(),
        })
    }

    pub async fn completions(&self, p: CompletionsParams) -> Result<CompletionsResult, ToolError> {
        let (server, lease) = self
            .hold(
                &p.at.file,
                p.at.source.as_deref(),
                Cap::Completion,
                "completions",
            )
            .await?;
        let pos = position(&lease.snap, &p.at)?;
        let c = server.client().completions(&lease.snap.uri, pos).await?;
        let limit = positive(p.limit, "limit")?.unwrap_or(20) as usize;
        let total = c.items.len();
        Ok(CompletionsResult {
            items: c
                .items
                .into_iter()
                .take(limit)
                .map(|i| CompletionItem {
                    label: i.label,
                    kind: i.kind.unwrap_or("unknown").to_string(),
                    detail: i.detail,
                })
                .collect(),
            total,
        })
    }

    pub async fn call_hierarchy(
        &self,
        p: CallHierarchyParams,
    ) -> Result<CallHierarchyResult, ToolError> {
        let (server, lease) = self
            .hold(
                &p.at.file,
                p.at.source.as_deref(),
                Cap::CallHierarchy,
                "call_hierarchy",
            )
            .await?;
        let pos = position(&lease.snap, &p.at)?;
        let dir = match p.direction {
            Direction::Incoming => CallDirection::Incoming,
            Direction::Outgoing => CallDirection::Outgoing,
        };
        let calls = server
            .client()
            .call_hierarchy(&lease.snap.uri, pos, dir)
            .await?;
        let mut files = FileCache::new(&lease.snap);
        let calls = calls
            .into_iter()
            .filter_map(|c| {
                let loc = files.loc(&self.root, &c.location.uri, c.location.range)?;
                let call_sites = c
                    .call_sites
                    .into_iter()
                    .filter_map(|r| files.loc(&self.root, &c.sites_uri, r))
                    .collect();
                Some(Call {
                    name: c.name,
                    kind: c.kind.to_string(),
                    loc,
                    call_sites,
                })
            })
            .collect();
        Ok(CallHierarchyResult { calls })
    }

    pub async fn diagnostics(&self, p: DiagnosticsParams) -> Result<DiagnosticsResult, ToolError> {
        let mut out = DiagnosticsResult {
            files: Vec::new(),
            partial: false,
            reason: None,
        };
        if let Some(file) = &p.file {
            let path = self.resolve(file)?;
            let server = self.server_for(&path).await?;
            let lease = server.docs.lease(&path, p.source.as_deref()).await?;
            let d = server
                .docs
                .diagnostics(&lease, self.opts.diagnostics_timeout)
                .await?;
            if !d.fresh {
                out.partial = true;
                out.reason = Some(format!(
                    "{} sent no diagnostics for this version of the file within {}s",
                    server.name,
                    self.opts.diagnostics_timeout.as_secs()
                ));
            }
            out.files.push(FileDiagnostics {
                file: self.root.relative(&lease.snap.path),
                diagnostics: diags(&lease.snap, d.diagnostics),
            });
            return Ok(out);
        }
        // Every open document, freshened, plus whatever else the servers reported on.
        let mut by_file: BTreeMap<String, Vec<Diag>> = BTreeMap::new();
        for server in self.running() {
            for path in server.docs.open_paths() {
                let Ok(lease) = server.docs.lease(&path, None).await else {
                    continue;
                };
                let d = server
                    .docs
                    .diagnostics(&lease, self.opts.diagnostics_timeout)
                    .await?;
                if !d.fresh {
                    out.partial = true;
                    out.reason = Some(format!("{} was slow to report on some files", server.name));
                }
                by_file
                    .entry(self.root.relative(&path))
                    .or_default()
                    .extend(diags(&lease.snap, d.diagnostics));
            }
            let open: Vec<PathBuf> = server.docs.open_paths();
            for uri in server.client().pushed_uris() {
                let Ok(path) = uri.to_file_path() else {
                    continue;
                };
                if open.contains(&path) || !path.starts_with(self.root.path()) {
                    continue;
                }
                let d = server.client().latest_pushed(&uri);
                if d.is_empty() {
                    continue;
                }
                let mut files = FileCache::empty(server.client().encoding());
                let list = d
                    .into_iter()
                    .filter_map(|w| diag_via(&mut files, &self.root, &uri, w))
                    .collect::<Vec<_>>();
                by_file
                    .entry(self.root.relative(&path))
                    .or_default()
                    .extend(list);
            }
        }
        out.files = by_file
            .into_iter()
            .map(|(file, diagnostics)| FileDiagnostics { file, diagnostics })
            .collect();
        Ok(out)
    }
}

fn missing(p: &Preset, languages: &[String]) -> ToolError {
    ToolError::new(
        Code::NoServer,
        format!(
            "{} is not installed (serves {}); install it with `{}` or run with --install",
            p.command,
            languages.join(", "),
            p.install_hint()
        ),
    )
    .with_data(json!({"server": p.name, "command": p.command, "install": p.install_hint()}))
}

fn require(server: &Server, cap: Cap, tool: &str) -> Result<(), ToolError> {
    if server.client().supports(cap) {
        Ok(())
    } else {
        Err(ToolError::new(
            Code::NotSupported,
            format!("{} does not support {tool} ({cap:?})", server.name),
        )
        .with_data(json!({"server": server.name, "tool": tool})))
    }
}

fn readiness(r: Result<(), crate::lsp::wire::Busy>) -> (bool, Option<String>) {
    match r {
        Ok(()) => (false, None),
        Err(b) => (
            true,
            Some(format!(
                "the server was still busy ({}) when the wait ran out; results may be incomplete",
                b.titles.join(", ")
            )),
        ),
    }
}

fn positive(n: Option<Num>, what: &str) -> Result<Option<u32>, ToolError> {
    match n {
        None => Ok(None),
        Some(Num(v)) if v >= 1 && v <= u32::MAX as i64 => Ok(Some(v as u32)),
        Some(Num(v)) => Err(ToolError::invalid(format!(
            "`{what}` must be 1 or more, got {v}"
        ))),
    }
}

/// The agent's position (column or symbol) as the server's.
fn position(snap: &Snapshot, p: &PositionParams) -> Result<crate::lsp::wire::WirePos, ToolError> {
    let line = positive(Some(p.line), "line")?.unwrap_or(1);
    let column = match (&p.column, &p.symbol) {
        (Some(c), _) => positive(Some(*c), "column")?.unwrap_or(1),
        (None, Some(sym)) => {
            let occurrence = positive(p.occurrence, "occurrence")?.unwrap_or(1);
            let Some(text) = snap.line(line) else {
                return Err(ToolError::invalid(format!(
                    "line {line} is past the end of the file ({} lines)",
                    snap.index.line_count()
                )));
            };
            text::find_symbol(text, sym, occurrence).ok_or_else(|| {
                ToolError::new(
                    Code::SymbolNotFound,
                    format!(
                        "`{sym}` (occurrence {occurrence}) is not on line {line}, which reads: {}",
                        text.trim()
                    ),
                )
                .with_data(json!({"symbol": sym, "line": line, "line_text": text}))
            })?
        }
        (None, None) => return Err(ToolError::invalid("give `column` or `symbol`")),
    };
    snap.to_wire(line, column)
}

fn paginate<T>(
    items: Vec<T>,
    limit: Option<Num>,
    cursor: Option<&str>,
    default_limit: u32,
) -> Result<(Vec<T>, usize, Option<String>), ToolError> {
    let limit = positive(limit, "limit")?.unwrap_or(default_limit) as usize;
    let start = match cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .map_err(|_| ToolError::invalid(format!("cursor `{c}` is not one this tool gave")))?,
    };
    let total = items.len();
    let page: Vec<T> = items.into_iter().skip(start).take(limit).collect();
    let end = start + page.len();
    let next = (end < total).then(|| end.to_string());
    Ok((page, total, next))
}

fn symbol(snap: &Snapshot, s: WireSymbol) -> Symbol {
    let (line, column) = snap.from_wire(s.selection.start);
    let (_, _, end_line, _) = snap.range(s.range);
    Symbol {
        name: s.name,
        kind: s.kind.to_string(),
        line,
        column,
        end_line,
        detail: s.detail,
        children: s.children.into_iter().map(|c| symbol(snap, c)).collect(),
    }
}

fn diags(snap: &Snapshot, list: Vec<WireDiagnostic>) -> Vec<Diag> {
    list.into_iter()
        .map(|d| {
            let (line, column, end_line, end_column) = snap.range(d.range);
            Diag {
                severity: d.severity,
                line,
                column,
                end_line,
                end_column,
                code: d.code,
                source: d.source,
                message: d.message,
            }
        })
        .collect()
}

fn diag_via(files: &mut FileCache, root: &Root, uri: &Url, d: WireDiagnostic) -> Option<Diag> {
    let loc = files.loc(root, uri, d.range)?;
    Some(Diag {
        severity: d.severity,
        line: loc.line,
        column: loc.column,
        end_line: loc.end_line,
        end_column: loc.end_column,
        code: d.code,
        source: d.source,
        message: d.message,
    })
}

/// A text scan for definitions, for servers without document symbols (flagged `fallback`).
fn fallback_symbols(snap: &Snapshot) -> Vec<Symbol> {
    const KEYWORDS: &[(&str, &str)] = &[
        ("def ", "function"),
        ("async def ", "function"),
        ("class ", "class"),
        ("function ", "function"),
        ("async function ", "function"),
        ("export function ", "function"),
        ("export class ", "class"),
        ("interface ", "interface"),
        ("export interface ", "interface"),
        ("fn ", "function"),
        ("pub fn ", "function"),
        ("struct ", "struct"),
        ("pub struct ", "struct"),
        ("enum ", "enum"),
        ("func ", "function"),
        ("proc ", "function"),
    ];
    let mut out = Vec::new();
    for n in 0..snap.index.line_count() {
        let Some(line) = snap.index.line(&snap.text, n) else {
            continue;
        };
        let trimmed = line.trim_start();
        for (kw, kind) in KEYWORDS {
            if let Some(rest) = trimmed.strip_prefix(kw) {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
                    .collect();
                if name.is_empty() {
                    continue;
                }
                let column = (line.chars().count() - trimmed.chars().count() + kw.chars().count())
                    as u32
                    + 1;
                out.push(Symbol {
                    name,
                    kind: kind.to_string(),
                    line: n as u32 + 1,
                    column,
                    end_line: n as u32 + 1,
                    detail: None,
                    children: Vec::new(),
                });
                break;
            }
        }
    }
    out
}

/// Languages present in the workspace.
fn workspace_languages(root: &Path) -> std::collections::HashSet<&'static str> {
    workspace_files(root)
        .iter()
        .map(|p| crate::workspace::language_of(p, ""))
        .collect()
}

/// Files of the workspace, skipping hidden folders, `node_modules` and `target` (bounded walk,
/// sorted so the choice of a representative file is stable).
fn workspace_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries.into_iter().rev() {
            if out.len() >= 5000 {
                return out;
            }
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if name.starts_with('.') || name == "node_modules" || name == "target" {
                continue;
            }
            if p.is_dir() {
                if depth < 8 {
                    stack.push((p, depth + 1));
                }
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Reads each file a result mentions once, to give code-point columns and source lines.
struct FileCache<'a> {
    snap: Option<&'a Snapshot>,
    encoding: text::Encoding,
    files: HashMap<Url, Option<(String, text::LineIndex)>>,
}

impl<'a> FileCache<'a> {
    fn new(snap: &'a Snapshot) -> Self {
        FileCache {
            snap: Some(snap),
            encoding: snap.encoding,
            files: HashMap::new(),
        }
    }

    fn empty(encoding: text::Encoding) -> Self {
        FileCache {
            snap: None,
            encoding,
            files: HashMap::new(),
        }
    }

    fn loc(&mut self, root: &Root, uri: &Url, r: crate::lsp::wire::WireRange) -> Option<Loc> {
        let path = uri.to_file_path().ok()?;
        let file = root.relative(&path);
        if let Some(snap) = self.snap.filter(|s| s.uri == *uri) {
            let (line, column, end_line, end_column) = snap.range(r);
            let text = snap.line(line).unwrap_or("").trim().to_string();
            return Some(Loc {
                file,
                line,
                column,
                end_line,
                end_column,
                text,
            });
        }
        let encoding = self.encoding;
        let entry = self.files.entry(uri.clone()).or_insert_with(|| {
            let text = std::fs::read(&path).ok()?;
            let text = String::from_utf8_lossy(&text).into_owned();
            let index = text::LineIndex::new(&text);
            Some((text, index))
        });
        match entry {
            Some((text, index)) => {
                let (line, column) =
                    text::from_wire(text, index, r.start.line, r.start.character, encoding);
                let (end_line, end_column) =
                    text::from_wire(text, index, r.end.line, r.end.character, encoding);
                let src = index
                    .line(text, r.start.line as usize)
                    .unwrap_or("")
                    .trim()
                    .to_string();
                Some(Loc {
                    file,
                    line,
                    column,
                    end_line,
                    end_column,
                    text: src,
                })
            }
            None => Some(Loc {
                file,
                line: r.start.line + 1,
                column: r.start.character + 1,
                end_line: r.end.line + 1,
                end_column: r.end.character + 1,
                text: String::new(),
            }),
        }
    }
}
