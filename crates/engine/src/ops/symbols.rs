//! The symbol tools: `document_symbols` (the server's outline, or lspgate's own scan when no
//! server has one, shaped and paged) and `workspace_symbols` (every server's matches, ranked for
//! the asker; which variables are local told from the file's text where the server does not say).

use crate::documents::Snapshot;
use crate::error::{Code, ToolError};
use crate::lsp::Cap;
use crate::lsp::wire::WireSymbol;
use crate::text;

use super::types::*;
use super::{Engine, FileCache, cursor_start, paginate, positive, shape, text_in_root};

impl Engine {
    /// The outline of a file, shaped (`shape::outline`: line order at every level, function
    /// locals only when asked, `depth`) and paged (`shape::page`).
    pub async fn document_symbols(
        &self,
        p: DocumentSymbolsParams,
    ) -> Result<DocumentSymbolsResult, ToolError> {
        let depth = positive(p.depth, "depth")?.map(|d| d as usize);
        let limit = positive(p.limit, "limit")?.unwrap_or(300) as usize;
        let start = cursor_start(p.cursor.as_deref())?;
        let (symbols, source) = match self
            .hold(
                &p.file,
                p.source.as_deref(),
                Cap::DocumentSymbols,
                "document_symbols",
            )
            .await
        {
            Ok((server, lease)) => {
                let uri = &lease.snap.uri;
                let syms = server
                    .request(
                        Some(&lease),
                        |c| async move { c.document_symbols(uri).await },
                    )
                    .await?;
                let syms = syms.into_iter().map(|s| symbol(&lease.snap, s)).collect();
                (syms, SymbolSource::Server)
            }
            // No server can outline this file: lspgate's own scan, flagged as such.
            Err(e) if matches!(e.code, Code::NotSupported | Code::NoServer) => {
                let path = self.resolve(&p.file)?;
                let text = match p.source {
                    Some(s) => s,
                    None => text_in_root(self.root(), &path)?.ok_or_else(|| {
                        ToolError::new(Code::FileNotFound, format!("no file `{}`", p.file))
                    })?,
                };
                (fallback_symbols(&text), SymbolSource::Fallback)
            }
            Err(e) => return Err(e),
        };
        let symbols = shape::outline(symbols, p.locals.unwrap_or(false), depth);
        let total = shape::count(&symbols);
        let end = start.saturating_add(limit);
        Ok(DocumentSymbolsResult {
            symbols: shape::page(symbols, start, limit),
            total,
            source,
            next_cursor: (end < total).then(|| end.to_string()),
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
        // Every server at once: each waits for its own readiness.
        let query = p.query.as_str();
        let answers = futures::future::join_all(servers.iter().map(|server| async move {
            let scope = self.workspace(server).await;
            let projects = scope.projects.as_slice();
            let found = server
                .request(None, |c| async move {
                    c.workspace_symbols_in(query, projects).await
                })
                .await;
            (server, scope.partial, found)
        }))
        .await;
        // Ranked for the asker (see `shape`): each symbol with its (match, kind) rank.
        let mut all = Vec::new();
        let mut reasons = Vec::new();
        for (server, partial, found) in answers {
            reasons.extend(partial);
            let mut files = FileCache::empty(self.root(), server.client().encoding());
            for s in found? {
                if let Some(kind) = &p.kind
                    && !s.kind.eq_ignore_ascii_case(kind)
                {
                    continue;
                }
                let local = s.local || self.local_by_text(&mut files, &s);
                if let Some(loc) = files.loc(&s.location.uri, s.location.range) {
                    let rank = shape::symbol_rank(query, &s.name, s.kind, local);
                    all.push((
                        rank,
                        WorkspaceSymbol {
                            name: s.name,
                            kind: s.kind.to_string(),
                            container: s.container,
                            loc,
                        },
                    ));
                }
            }
        }
        // Stable: equal ranks keep the servers' order.
        all.sort_by_key(|(rank, _)| *rank);
        let all = all.into_iter().map(|(_, s)| s).collect();
        let (page, total, next_cursor) = paginate(all, p.limit, p.cursor.as_deref(), 100)?;
        let (partial, reason) = (
            !reasons.is_empty(),
            (!reasons.is_empty()).then(|| reasons.join("; ")),
        );
        Ok(WorkspaceSymbolsResult {
            symbols: page,
            total,
            source: SymbolSource::Server,
            next_cursor,
            partial,
            reason,
        })
    }

    /// Whether a workspace symbol the server did not mark local is a variable local to a
    /// function, from its file's text (see `shape`): Python by its enclosing `def`,
    /// JavaScript/TypeScript without a named container by its indentation.
    fn local_by_text(
        &self,
        files: &mut FileCache,
        s: &crate::lsp::wire::WireWorkspaceSymbol,
    ) -> bool {
        if !shape::is_variable(s.kind) {
            return false;
        }
        let Ok(path) = s.location.uri.to_file_path() else {
            return false;
        };
        let line = s.location.range.start.line as usize;
        match self.languages().detect(&path).as_str() {
            "python" if s.container.is_some() => files
                .text(&s.location.uri)
                .is_some_and(|(text, _)| shape::python_local(text, line)),
            "javascript" | "typescript" | "javascriptreact" | "typescriptreact"
                if s.container.is_none() =>
            {
                files
                    .text(&s.location.uri)
                    .and_then(|(text, index)| index.line(text, line))
                    .is_some_and(shape::script_local)
            }
            _ => false,
        }
    }
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

/// A text scan for definitions, for servers without document symbols (flagged `fallback`).
fn fallback_symbols(text: &str) -> Vec<Symbol> {
    let index = text::LineIndex::new(text);
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
    for n in 0..index.line_count() {
        let Some(line) = index.line(text, n) else {
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
