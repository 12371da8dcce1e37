//! The operations layer: one function per tool, shared by every front end. It resolves paths
//! and positions, routes a file to its server through the registry, holds the document for the
//! request, and turns `wire` answers into protocol-shaped results (docs/protocol.md).
//!
//! `Engine` is one session on a `Workspace`: its options and tool profile, its previews; it reaches
//! the workspace through `Deref`, and its `shutdown` stops the servers only when the workspace is
//! its own. Routing: a query goes to the first of the file's servers with the capability,
//! diagnostics are merged from all. A tool is a method here (or in the modules below); `tools`
//! declares it and dispatches to it.

pub mod activity;
mod diagnostics;
pub use diagnostics::merge_by;
pub mod durable;
pub mod edit;
mod files;
pub mod forward;
pub mod gates;
mod hints;
pub mod hook;
pub mod render;
pub mod session;
pub mod shape;
mod symbols;
pub mod tools;
pub mod types;
mod workspace;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::documents::{Lease, Snapshot};
use crate::error::{Code, ToolError};
use crate::lsp::Cap;
use crate::lsp::wire::{CallDirection, GotoKind, WireDiagnostic, WireLocation};
use crate::registry::{Registry, Server};
use crate::text;
use crate::workspace::{Languages, Root};
use types::*;

use files::FileCache;
pub(crate) use files::{read_in_root, text_in_root};
pub use workspace::Workspace;

/// Knobs of the operations layer.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Cap on a text reply, in characters.
    pub max_output: usize,
    /// How long `references`/`workspace_symbols` wait for indexing to finish.
    pub ready_timeout: Duration,
    /// How long a `diagnostics` call waits for fresh diagnostics.
    pub diagnostics_timeout: Duration,
    /// Where the edit journal lives (the root's folder in lspgate's data folder by default,
    /// `edits::journal::default_dir`).
    pub state_dir: PathBuf,
    /// Configured tasks (`[[task]]`).
    pub tasks: Vec<crate::gates::Task>,
    /// The tools this engine's sessions offer (`--tools`); calls outside it are refused.
    pub tools: tools::Profile,
    /// Heavy calls that may run at once on the root (`max_inflight`).
    pub max_inflight: usize,
    /// Whether answers are terse unless a call says otherwise (`LSPGATE_TERSE=1` in the
    /// session's environment).
    pub terse: bool,
    /// The session's whole environment, which its tasks run with (its client's, in the
    /// daemon); `None`: lspgate's own.
    pub env: Option<crate::workspace::env::SharedEnv>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            max_output: 20_000,
            ready_timeout: Duration::from_secs(15),
            diagnostics_timeout: Duration::from_secs(15),
            state_dir: PathBuf::from(".lspgate"),
            tasks: Vec::new(),
            tools: tools::Profile::all(),
            max_inflight: activity::MAX_INFLIGHT,
            terse: false,
            env: None,
        }
    }
}

/// The files a preview was computed from and their digests then (`None`: absent).
type Previewed = Vec<(PathBuf, Option<String>)>;

/// Files nobody opened that `diagnostics` (without a file) opens to check, at most.
const MAX_PUSHED_FILES: usize = 100;

/// Files a workspace walk looks at, at most.
pub(crate) const WALK_LIMIT: usize = crate::workspace::WALK_LIMIT;

/// One session's view of a workspace, and every tool as a method: what is the session's own
/// (its options and tool profile, its previews; overlays, progress and cancellation live in its
/// calls) beside what it borrows from the shared `Workspace` (reached through `Deref`).
pub struct Engine {
    ws: Arc<Workspace>,
    /// Whether the workspace is this session's alone (its servers stop with it).
    owns: bool,
    opts: EngineOptions,
    /// What each of this session's previews was computed from, by call.
    previews: std::sync::Mutex<HashMap<String, Previewed>>,
    /// The titles of the code actions this session was last shown, by file, lines and kind:
    /// an index applied later names the action that was shown at it.
    listed: std::sync::Mutex<HashMap<String, Vec<String>>>,
    /// This session was told what of the workspace's lspgate.toml waits for trust.
    told_waiting: std::sync::atomic::AtomicBool,
}

impl std::ops::Deref for Engine {
    type Target = Workspace;
    fn deref(&self) -> &Workspace {
        &self.ws
    }
}

impl Engine {
    /// A workspace and its one session (everything in one process).
    pub fn new(registry: Arc<Registry>, opts: EngineOptions) -> Engine {
        Engine::session_owning(Workspace::new(registry, opts.clone()), opts)
    }

    /// The one session of a workspace of its own: its `shutdown` stops the servers.
    pub fn session_owning(ws: Arc<Workspace>, opts: EngineOptions) -> Engine {
        Engine {
            owns: true,
            ..Engine::session(ws, opts)
        }
    }

    /// A new session on a shared workspace: its `shutdown` leaves the servers to the others.
    pub fn session(ws: Arc<Workspace>, opts: EngineOptions) -> Engine {
        Engine {
            ws,
            owns: false,
            opts,
            previews: std::sync::Mutex::default(),
            listed: std::sync::Mutex::default(),
            told_waiting: Default::default(),
        }
    }

    /// The session ends: a workspace of its own is stopped with it, a shared one is not.
    pub async fn shutdown(&self) {
        if self.owns {
            self.ws.shutdown().await;
        }
    }

    /// The workspace this session works on.
    pub fn shared(&self) -> &Arc<Workspace> {
        &self.ws
    }

    pub fn root(&self) -> &Root {
        self.registry.root()
    }

    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    pub fn languages(&self) -> &Languages {
        self.registry.detector()
    }

    /// The languages the workspace holds, from a walk on the blocking pool (the runtime's one
    /// thread keeps serving meanwhile).
    async fn scan_languages(&self) -> Vec<String> {
        let langs = self.registry.detector().clone();
        tokio::task::spawn_blocking(move || langs.scan(WALK_LIMIT).into_keys().collect())
            .await
            .unwrap_or_default()
    }

    pub fn options(&self) -> &EngineOptions {
        &self.opts
    }

    /// Whether `cap` may be served by some server of a language the workspace holds.
    pub fn may_support(&self, cap: Cap) -> bool {
        let present = self
            .present
            .get_or_init(|| self.languages().scan(WALK_LIMIT).into_keys().collect());
        self.registry.may_support(cap, present)
    }

    /// Starts, in the background, the servers for the languages the workspace holds.
    pub fn warm(self: &Arc<Self>) {
        let engine = self.clone();
        tokio::spawn(async move {
            let langs = engine.scan_languages().await;
            engine.registry.warm(langs);
        });
    }

    // ---- helpers ----

    fn resolve(&self, file: &str) -> Result<PathBuf, ToolError> {
        Ok(self.root().resolve(file)?)
    }

    async fn hold(
        &self,
        file: &str,
        source: Option<&str>,
        cap: Cap,
        tool: &str,
    ) -> Result<(Arc<Server>, Lease), ToolError> {
        let path = self.resolve(file)?;
        let language = self.languages().detect(&path);
        let server = self
            .registry
            .first_supporting(&path, &language, cap, tool)
            .await?;
        if source.is_some()
            && matches!(
                tool,
                "definition"
                    | "references"
                    | "rename"
                    | "inlay_hints"
                    | "completions"
                    | "call_hierarchy"
                    | "type_hierarchy"
            )
        {
            // Readiness first: preparing the server asks it questions, which wait while an
            // overlay is shown to it (the workspace-wide tools ask again, at once, after).
            self.workspace(&server).await;
        }
        let lease = server.docs.lease(&path, &language, source).await?;
        Ok((server, lease))
    }

    /// What `server` can answer of a workspace-wide question, after waiting (bounded) for it
    /// to be ready as its preset says.
    async fn workspace(&self, server: &Server) -> crate::registry::Scope {
        server
            .workspace_ready(self.opts.ready_timeout, self.languages())
            .await
    }

    /// Locations from the server, made into `Loc`s with code-point columns and source text.
    fn locs(&self, snap: &Snapshot, locations: Vec<WireLocation>) -> Vec<Loc> {
        let mut files = FileCache::new(self.root(), snap);
        locations
            .into_iter()
            .filter_map(|l| files.loc(&l.uri, l.range))
            .collect()
    }

    // ---- tools ----

    pub async fn hover(&self, p: HoverParams) -> Result<HoverResult, ToolError> {
        let (server, lease) = self
            .hold(&p.at.file, p.at.source.as_deref(), Cap::Hover, "hover")
            .await?;
        let pos = position(&lease.snap, &p.at)?;
        let uri = &lease.snap.uri;
        let h = server
            .request(Some(&lease), |c| async move { c.hover(uri, pos).await })
            .await?;
        let mut out = match h {
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
                hints: None,
            },
            None => HoverResult {
                contents: String::new(),
                range: None,
                hints: None,
            },
        };
        if p.hints == Some(true) {
            // The hover's lease is let go first: the hints may come from the same document.
            let line = pos.line + 1;
            drop(lease);
            // The hover stands without them: a server without hints (or failing to give them)
            // leaves `hints` out.
            out.hints = match self
                .line_hints(&p.at.file, p.at.source.as_deref(), line)
                .await
            {
                Ok(h) => h,
                Err(e) => {
                    tracing::debug!(error = %e, "no hints for the hover's line");
                    None
                }
            };
        }
        Ok(out)
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
        let uri = &lease.snap.uri;
        let scope = self.workspace(&server).await;
        let locs = server
            .request(
                Some(&lease),
                |c| async move { c.goto(kind, uri, pos).await },
            )
            .await?;
        let (partial, reason) = readiness(scope);
        Ok(LocationsResult {
            locations: self.locs(&lease.snap, locs),
            partial,
            reason,
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
        let ready = self.workspace(&server).await;
        let uri = &lease.snap.uri;
        let decl = p.include_declaration.unwrap_or(true);
        let raw = server
            .request(Some(&lease), |c| async move {
                c.references(uri, pos, decl).await
            })
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

    /// The servers with `cap` for every language the workspace holds (one file each, from a
    /// walk made once), started if they were not: a workspace-wide question must reach every
    /// server that knows part of the answer, not only those some earlier call started.
    async fn servers_with(&self, cap: Cap) -> Vec<Arc<Server>> {
        let samples = self
            .samples
            .get_or_init(|| async {
                let langs = self.registry.detector().clone();
                tokio::task::spawn_blocking(move || langs.samples(WALK_LIMIT))
                    .await
                    .unwrap_or_default()
            })
            .await;
        let started = futures::future::join_all(
            samples
                .iter()
                .map(|(language, file)| self.registry.started_for(file, language)),
        )
        .await;
        let mut out: Vec<Arc<Server>> = Vec::new();
        for s in started.into_iter().flatten() {
            if s.supports(cap) && !out.iter().any(|o| Arc::ptr_eq(o, &s)) {
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
        let uri = &lease.snap.uri;
        let h = server
            .request(
                Some(&lease),
                |c| async move { c.signature_help(uri, pos).await },
            )
            .await?;
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
        let uri = &lease.snap.uri;
        // Completions offer symbols to import from anywhere in the workspace.
        let (partial, reason) = readiness(self.workspace(&server).await);
        let c = server
            .request(
                Some(&lease),
                |c| async move { c.completions(uri, pos).await },
            )
            .await?;
        let limit = positive(p.limit, "limit")?.unwrap_or(20) as usize;
        let total = c.items.len();
        Ok(CompletionsResult {
            partial,
            reason,
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
        let uri = &lease.snap.uri;
        let (partial, reason) = readiness(self.workspace(&server).await);
        let calls = server
            .request(Some(&lease), |c| async move {
                c.call_hierarchy(uri, pos, dir).await
            })
            .await?;
        let mut files = FileCache::new(self.root(), &lease.snap);
        let calls = calls
            .into_iter()
            .filter_map(|c| {
                let loc = files.loc(&c.location.uri, c.location.range)?;
                let call_sites = c
                    .call_sites
                    .into_iter()
                    .filter_map(|r| files.loc(&c.sites_uri, r))
                    .collect();
                Some(Call {
                    name: c.name,
                    kind: c.kind.to_string(),
                    loc,
                    call_sites,
                })
            })
            .collect();
        let (calls, total, next_cursor) = paginate(calls, p.limit, p.cursor.as_deref(), 100)?;
        Ok(CallHierarchyResult {
            calls,
            total,
            next_cursor,
            partial,
            reason,
        })
    }

    pub async fn servers(&self, _p: ServersParams) -> Result<ServersResult, ToolError> {
        Ok(ServersResult {
            servers: self.registry.statuses(),
            watcher: self.registry.watch_status().map(|w| w.to_string()),
        })
    }

    pub async fn restart_server(&self, p: RestartServerParams) -> Result<ServersResult, ToolError> {
        Ok(ServersResult {
            servers: self.registry.restart(&p.name).await?,
            watcher: self.registry.watch_status().map(|w| w.to_string()),
        })
    }
}

/// An answer's `partial` and `reason` from what its server could answer.
fn readiness(scope: crate::registry::Scope) -> (bool, Option<String>) {
    (scope.partial.is_some(), scope.partial)
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
    Ok(snap.to_wire(line, column)?)
}

/// Where a page starts: 0, or the `next_cursor` a previous page gave.
fn cursor_start(cursor: Option<&str>) -> Result<usize, ToolError> {
    match cursor {
        None => Ok(0),
        Some(c) => c
            .parse::<usize>()
            .map_err(|_| ToolError::invalid(format!("cursor `{c}` is not one this tool gave"))),
    }
}

/// One page of `items`: `limit` (or `default_limit`) from the cursor on, the total, and the
/// cursor of the next page when there is one.
pub(crate) fn paginate<T>(
    items: Vec<T>,
    limit: Option<Num>,
    cursor: Option<&str>,
    default_limit: u32,
) -> Result<(Vec<T>, usize, Option<String>), ToolError> {
    let limit = positive(limit, "limit")?.unwrap_or(default_limit) as usize;
    let start = cursor_start(cursor)?;
    let total = items.len();
    let page: Vec<T> = items.into_iter().skip(start).take(limit).collect();
    let end = start + page.len();
    let next = (end < total).then(|| end.to_string());
    Ok((page, total, next))
}

fn diags(snap: &Snapshot, list: Vec<WireDiagnostic>) -> Vec<Diag> {
    list.into_iter()
        .map(|d| {
            let at = snap.range(d.range);
            diag_at(d, at)
        })
        .collect()
}

/// A server's diagnostic as a `Diag` at `(line, column, end_line, end_column)`, its range
/// converted for the agent.
fn diag_at(d: WireDiagnostic, (line, column, end_line, end_column): (u32, u32, u32, u32)) -> Diag {
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
}

/// Adds `list` (diagnostics of `file`) to `out`, leaving out what is already there (two
/// servers reporting the same finding).
fn add_unique(out: &mut Vec<FileDiag>, file: &str, list: Vec<Diag>) {
    for diag in list {
        let fd = FileDiag {
            file: file.to_string(),
            diag,
        };
        if !out.contains(&fd) {
            out.push(fd);
        }
    }
}
