//! `inlay_hints` (a page of a file's lines with the server's inlay hints inlined, and with
//! `classes` each identifier's semantic class), `hover`'s `hints`, and `type_hierarchy`. Servers
//! without hints of their own (pyright) get hints derived from what they do answer (`derive`).

mod derive;
pub(super) use lspgate_analysis::calls as scan;

use std::collections::BTreeMap;

use crate::documents::Lease;
use crate::error::{Code, ToolError};
use crate::lsp::Cap;
use crate::lsp::wire::{TypeDirection, WireDiagnostic, WirePos, WireRange, WireTypeItem};
use crate::registry::Server;

use super::types::*;
use super::{Engine, FileCache, position, positive, readiness};

/// Source lines an `inlay_hints` page covers unless `limit` says.
const PAGE_LINES: u32 = 200;
/// The deepest `type_hierarchy` walks.
const MAX_DEPTH: u32 = 10;

/// What annotating some lines made.
struct Annotated {
    lines: Vec<AnnotatedLine>,
    derived: Option<String>,
    classes_unavailable: Option<String>,
    /// Why some hints may be missing.
    unanswered: Option<String>,
}

impl Engine {
    pub async fn inlay_hints(&self, p: InlayHintsParams) -> Result<InlayHintsResult, ToolError> {
        let (server, lease, derived) = self.hinting(&p.file, p.source.as_deref()).await?;
        let lines = lease.snap.index.line_count() as u32;
        let limit = positive(p.limit, "limit")?.unwrap_or(PAGE_LINES);
        let first = match p.cursor.as_deref() {
            Some(c) => c.parse::<u32>().ok().filter(|l| *l >= 1).ok_or_else(|| {
                ToolError::invalid(format!("cursor `{c}` is not one this tool gave"))
            })?,
            None => positive(p.line, "line")?.unwrap_or(1),
        };
        if first > lines {
            return Err(ToolError::invalid(format!(
                "line {first} is past the end of the file ({lines} lines)"
            )));
        }
        let wanted = positive(p.end_line, "end_line")?
            .unwrap_or(lines)
            .min(lines);
        if wanted < first {
            return Err(ToolError::invalid(format!(
                "end_line {wanted} is before line {first}"
            )));
        }
        let last = wanted.min(first.saturating_add(limit - 1));
        let a = self
            .annotate(
                &server,
                &lease,
                derived,
                first,
                last,
                p.classes == Some(true),
            )
            .await?;
        Ok(InlayHintsResult {
            lines: a.lines,
            first_line: first,
            last_line: last,
            next_cursor: (last < wanted).then(|| (last + 1).to_string()),
            derived: a.derived,
            classes_unavailable: a.classes_unavailable,
            partial: a.unanswered.is_some(),
            reason: a.unanswered,
        })
    }

    /// The line of a hover with its hints inlined, if it has any.
    pub(super) async fn line_hints(
        &self,
        file: &str,
        source: Option<&str>,
        line: u32,
    ) -> Result<Option<String>, ToolError> {
        let (server, lease, derived) = self.hinting(file, source).await?;
        let a = self
            .annotate(&server, &lease, derived, line, line, false)
            .await?;
        Ok(a.lines.into_iter().find(|l| l.line == line).map(|l| l.text))
    }

    /// The server that gives a file's hints and the file held there: one with inlay hints, or
    /// for Python, one with hover and an outline to derive them from (`true`).
    async fn hinting(
        &self,
        file: &str,
        source: Option<&str>,
    ) -> Result<(std::sync::Arc<Server>, Lease, bool), ToolError> {
        match self
            .hold(file, source, Cap::InlayHints, "inlay_hints")
            .await
        {
            Ok((s, l)) => Ok((s, l, false)),
            Err(e) if e.code == Code::NotSupported => {
                let path = self.resolve(file)?;
                if self.languages().detect(&path) != "python" {
                    return Err(e);
                }
                let (s, l) = self.hold(file, source, Cap::Hover, "inlay_hints").await?;
                if !s.supports(Cap::DocumentSymbols) {
                    return Err(e);
                }
                Ok((s, l, true))
            }
            Err(e) => Err(e),
        }
    }

    /// Lines `first..=last` of the leased file with their hints (and classes when asked).
    async fn annotate(
        &self,
        server: &Server,
        lease: &Lease,
        derived: bool,
        first: u32,
        last: u32,
        classes: bool,
    ) -> Result<Annotated, ToolError> {
        let snap = &lease.snap;
        let uri = &snap.uri;
        let mut unanswered = 0;
        let hints: Vec<(u32, Hint)> = if derived {
            let d = derive::hints(server, lease, first, last).await?;
            unanswered = d.failed;
            d.hints
        } else {
            let range = WireRange {
                start: WirePos {
                    line: first - 1,
                    character: 0,
                },
                end: WirePos {
                    line: last,
                    character: 0,
                },
            };
            let raw = server
                .request(
                    Some(lease),
                    |c| async move { c.inlay_hints(uri, range).await },
                )
                .await?;
            raw.into_iter()
                .filter_map(|h| {
                    let (line, column) = snap.from_wire(h.pos);
                    (line >= first && line <= last).then(|| {
                        // Read as code: `total: number`, `f(width: 2)`, not an editor's padding.
                        let trimmed = h.label.trim_start();
                        let label = if h.kind == crate::lsp::wire::HintKind::Parameter
                            || trimmed.starts_with(':')
                        {
                            trimmed.to_string()
                        } else {
                            h.label
                        };
                        (
                            line,
                            Hint {
                                column,
                                label,
                                kind: h.kind.name(),
                            },
                        )
                    })
                })
                .collect()
        };
        let mut by_line: BTreeMap<u32, (Vec<Hint>, Vec<Class>)> = BTreeMap::new();
        for (line, h) in hints {
            by_line.entry(line).or_default().0.push(h);
        }
        let mut classes_unavailable = None;
        if classes {
            if server.supports(Cap::SemanticTokens) {
                let deprecated = self.deprecated_ranges(server, lease).await;
                for (line, c) in self
                    .classes(server, lease, first, last, &deprecated)
                    .await?
                {
                    by_line.entry(line).or_default().1.push(c);
                }
            } else {
                classes_unavailable = Some(format!("{} serves no semantic tokens", server.name));
            }
        }
        let lines = by_line
            .into_iter()
            .map(|(line, (mut hints, classes))| {
                hints.sort_by_key(|h| h.column);
                AnnotatedLine {
                    line,
                    text: inline(snap.line(line).unwrap_or(""), &hints),
                    hints,
                    classes,
                }
            })
            .collect();
        Ok(Annotated {
            lines,
            derived: derived.then(|| format!("{}'s outline and hovers", server.name)),
            classes_unavailable,
            unanswered: (unanswered > 0).then(|| {
                format!(
                    "{} did not answer {unanswered} of the hovers hints are made from",
                    server.name
                )
            }),
        })
    }

    /// The semantic classes of lines `first..=last`, `deprecated` added where a diagnostic of
    /// the file says so (TypeScript's legend has no such modifier: tsserver's 6385/6387).
    async fn classes(
        &self,
        server: &Server,
        lease: &Lease,
        first: u32,
        last: u32,
        deprecated: &[(u32, u32, u32, u32)],
    ) -> Result<Vec<(u32, Class)>, ToolError> {
        let snap = &lease.snap;
        let uri = &snap.uri;
        let tokens = server
            .request(Some(lease), |c| async move {
                c.semantic_tokens(uri, first - 1, last - 1).await
            })
            .await?
            .unwrap_or_default();
        Ok(tokens
            .into_iter()
            .filter_map(|t| {
                let (line, column) = snap.from_wire(WirePos {
                    line: t.line,
                    character: t.start,
                });
                let (_, end) = snap.from_wire(WirePos {
                    line: t.line,
                    character: t.start.saturating_add(t.length),
                });
                let text = snap.line(line)?;
                let name: String = text
                    .chars()
                    .skip(column as usize - 1)
                    .take(end.saturating_sub(column) as usize)
                    .collect();
                let mut modifiers = t.modifiers;
                let covered = deprecated
                    .iter()
                    .any(|&(l, c, el, ec)| (l, c) <= (line, column) && (line, end) <= (el, ec));
                if covered && !modifiers.iter().any(|m| m == "deprecated") {
                    modifiers.push("deprecated".into());
                }
                Some((
                    line,
                    Class {
                        column,
                        name,
                        kind: t.kind,
                        modifiers,
                    },
                ))
            })
            .collect())
    }

    /// Where the file's diagnostics say something is deprecated (tag 2, or tsserver's codes).
    async fn deprecated_ranges(&self, server: &Server, lease: &Lease) -> Vec<(u32, u32, u32, u32)> {
        let Ok(d) = self.file_diagnostics(server, lease).await else {
            return Vec::new();
        };
        d.diagnostics
            .iter()
            .filter(|d| says_deprecated(d))
            .map(|d| lease.snap.range(d.range))
            .collect()
    }

    pub async fn type_hierarchy(
        &self,
        p: TypeHierarchyParams,
    ) -> Result<TypeHierarchyResult, ToolError> {
        let (server, lease) = self
            .hold(
                &p.at.file,
                p.at.source.as_deref(),
                Cap::TypeHierarchy,
                "type_hierarchy",
            )
            .await?;
        let pos = position(&lease.snap, &p.at)?;
        let depth = positive(p.depth, "depth")?.unwrap_or(3).min(MAX_DEPTH);
        let direction = match p.direction {
            TypeDirectionParam::Supertypes => TypeDirection::Supertypes,
            TypeDirectionParam::Subtypes => TypeDirection::Subtypes,
        };
        let (mut partial, mut reason) = readiness(self.workspace(&server).await);
        let uri = &lease.snap.uri;
        let (items, cut) = server
            .request(Some(&lease), |c| async move {
                c.type_hierarchy(uri, pos, direction, depth).await
            })
            .await?;
        let mut files = FileCache::new(self.root(), &lease.snap);
        let types: Vec<TypeNode> = items
            .into_iter()
            .filter_map(|i| node(&mut files, i))
            .collect();
        let total = types.iter().map(|t| count(&t.types)).sum();
        if cut && !partial {
            partial = true;
            reason = Some(format!(
                "the walk stopped early: {} types at most, or a level {} did not give",
                crate::lsp::MAX_TYPES,
                server.name
            ));
        }
        Ok(TypeHierarchyResult {
            types,
            direction: p.direction,
            total,
            partial,
            reason,
        })
    }
}

/// Whether a diagnostic says its range is deprecated.
fn says_deprecated(d: &WireDiagnostic) -> bool {
    let tagged = d
        .raw
        .get("tags")
        .and_then(|t| t.as_array())
        .is_some_and(|t| t.iter().any(|v| v.as_u64() == Some(2)));
    tagged || matches!(d.code.as_deref(), Some("6385" | "6387"))
}

fn node(files: &mut FileCache<'_>, i: WireTypeItem) -> Option<TypeNode> {
    let loc = files.loc(&i.location.uri, i.location.range)?;
    Some(TypeNode {
        name: i.name,
        kind: i.kind.to_string(),
        file: loc.file,
        at: [loc.line, loc.column],
        detail: i.detail,
        types: i.next.into_iter().filter_map(|n| node(files, n)).collect(),
    })
}

fn count(types: &[TypeNode]) -> usize {
    types.iter().map(|t| 1 + count(&t.types)).sum()
}

/// `text` with each hint's label put at its column (1-based code points; hints in column
/// order).
fn inline(text: &str, hints: &[Hint]) -> String {
    let mut out = String::with_capacity(text.len() + hints.len() * 8);
    let mut next = hints.iter().peekable();
    for (i, ch) in text.chars().enumerate() {
        while let Some(h) = next.next_if(|h| h.column as usize <= i + 1) {
            out.push_str(&h.label);
        }
        out.push(ch);
    }
    for h in next {
        out.push_str(&h.label);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_are_inlined_at_their_columns() {
        let hints = [
            Hint {
                column: 12,
                label: ": number".into(),
                kind: "type",
            },
            Hint {
                column: 17,
                label: "width: ".into(),
                kind: "parameter",
            },
            Hint {
                column: 24,
                label: " -> int".into(),
                kind: "type",
            },
        ];
        assert_eq!(
            inline("const total = f(2, 3)", &hints[..2]),
            "const total: number = f(width: 2, 3)"
        );
        // A hint past the end of the line goes at its end.
        assert_eq!(inline("def f(x)", &hints[2..]), "def f(x) -> int");
    }
}
