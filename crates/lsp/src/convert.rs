//! The conversions between lsp-types and `wire` types: servers' answers (locations, symbols,
//! diagnostics, hovers, code actions, workspace edits) into `wire`, and request parameters out
//! of it. Used by the requests, the inbound messages and the diagnostics alike.

use lsp_types as lt;
use serde_json::{Value, json};
use url::Url;

use super::wire::*;

pub(super) fn wire_range_json(r: WireRange) -> Value {
    json!({"start": {"line": r.start.line, "character": r.start.character},
           "end": {"line": r.end.line, "character": r.end.character}})
}

pub(super) fn code_action(v: Value) -> WireCodeAction {
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

/// A `WorkspaceEdit` (either form) as file operations, in order. Public for the fuzz targets
/// (`fuzz/`), as `lsp::workspace_edit`.
pub fn workspace_edit(v: Value) -> Result<Vec<WireFileOp>, String> {
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

pub(super) fn text_pos(uri: &Url, pos: WirePos) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": pos.line, "character": pos.character}})
}

pub(super) fn range(r: lt::Range) -> WireRange {
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

pub(super) fn location(l: lt::Location) -> WireLocation {
    WireLocation {
        uri: l.uri,
        range: range(l.range),
    }
}

pub(super) fn convert_diag(d: lt::Diagnostic) -> WireDiagnostic {
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

pub(super) fn doc_symbol(s: lt::DocumentSymbol) -> WireSymbol {
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
pub(super) fn hover_text(c: Value) -> String {
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

pub(super) fn symbol_kind(k: lt::SymbolKind) -> &'static str {
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

pub(super) fn completion_kind(k: lt::CompletionItemKind) -> &'static str {
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
