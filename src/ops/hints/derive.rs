//! Inlay hints for a Python server that has none of its own (pyright 1.1.414 answers
//! `textDocument/inlayHint` with "Unhandled method"), made from what it does answer: the
//! outline names every binding, hover gives the inferred type of each unannotated variable and
//! the return type of each unannotated `def`, and signature help at each call names the
//! parameters its positional arguments bind to.

use futures::future::join_all;

use crate::documents::Lease;
use crate::error::ToolError;
use crate::lsp::wire::{WirePos, WireSymbol};
use crate::registry::Server;

use super::scan;
use crate::ops::types::Hint;

/// A binding whose type is asked of hover.
struct Binding {
    /// Where its name ends (1-based line and column): a variable's hint goes here.
    end: (u32, u32),
    pos: WirePos,
    function: bool,
}

/// The hints of lines `first..=last`, each with its line.
pub(super) async fn hints(
    server: &Server,
    lease: &Lease,
    first: u32,
    last: u32,
) -> Result<Vec<(u32, Hint)>, ToolError> {
    let snap = &lease.snap;
    let uri = &snap.uri;
    let symbols = server
        .request(
            Some(lease),
            |c| async move { c.document_symbols(uri).await },
        )
        .await?;
    let mut bindings = Vec::new();
    let mut walk: Vec<&WireSymbol> = symbols.iter().collect();
    while let Some(s) = walk.pop() {
        walk.extend(s.children.iter());
        let function = matches!(s.kind, "function" | "method");
        if !function && !matches!(s.kind, "variable" | "constant") {
            continue;
        }
        let (line, _) = snap.from_wire(s.selection.start);
        if line < first || line > last {
            continue;
        }
        bindings.push(Binding {
            end: snap.from_wire(s.selection.end),
            pos: s.selection.start,
            function,
        });
    }
    let hovers = join_all(bindings.iter().map(|b| {
        let pos = b.pos;
        server.request(Some(lease), move |c| async move { c.hover(uri, pos).await })
    }))
    .await;
    let mut out = Vec::new();
    for (b, h) in bindings.iter().zip(hovers) {
        let Ok(Some(h)) = h else { continue };
        let code = code_of(&h.contents);
        if b.function {
            let Some(ty) = return_type(&code) else {
                continue;
            };
            if let Some((at, false)) = scan::def_params_end(&snap.text, b.end) {
                out.push((
                    at.0,
                    Hint {
                        column: at.1,
                        label: format!(" -> {ty}"),
                        kind: "type",
                    },
                ));
            }
        } else if let Some(ty) = variable_type(&code) {
            let rest: String = snap
                .line(b.end.0)
                .unwrap_or("")
                .chars()
                .skip(b.end.1 as usize - 1)
                .collect();
            let rest = rest.trim_start();
            let annotated = rest.starts_with(':') && !rest.starts_with(":=");
            if !annotated {
                out.push((
                    b.end.0,
                    Hint {
                        column: b.end.1,
                        label: format!(": {ty}"),
                        kind: "type",
                    },
                ));
            }
        }
    }
    // Parameter names at calls: one signature help per call with a positional argument.
    let sites: Vec<scan::CallSite> = scan::calls(&snap.text, first, last)
        .into_iter()
        .filter(|s| s.args.first().is_some_and(scan::Arg::positional))
        .collect();
    let helps = join_all(sites.iter().map(|s| {
        let pos = snap.to_wire(s.open.0, s.open.1);
        async move {
            let pos = pos.ok()?;
            server
                .request(Some(lease), move |c| async move {
                    c.signature_help(uri, pos).await
                })
                .await
                .ok()
        }
    }))
    .await;
    for (site, help) in sites.iter().zip(helps) {
        let Some(help) = help else { continue };
        let active = help.active_signature.unwrap_or(0) as usize;
        let Some(sig) = help
            .signatures
            .get(active)
            .or_else(|| help.signatures.first())
        else {
            continue;
        };
        let names = parameter_names(&sig.parameters);
        for (arg, name) in site.args.iter().take_while(|a| a.positional()).zip(names) {
            let Some(name) = name else { continue };
            if arg.text == name {
                continue;
            }
            out.push((
                arg.at.0,
                Hint {
                    column: arg.at.1,
                    label: format!("{name}="),
                    kind: "parameter",
                },
            ));
        }
    }
    Ok(out)
}

/// The code of a hover, fences dropped.
fn code_of(contents: &str) -> String {
    contents
        .lines()
        .filter(|l| !l.trim_start().starts_with("```"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `(variable) x: list[int]` → `list[int]`.
fn variable_type(code: &str) -> Option<String> {
    let rest = ["(variable) ", "(constant) "]
        .iter()
        .find_map(|p| code.trim_start().strip_prefix(p))?;
    let (_, ty) = rest.split_once(": ")?;
    type_text(ty)
}

/// `(function) def f(…) -> int` → `int`.
fn return_type(code: &str) -> Option<String> {
    let code = code.trim_start();
    if !(code.starts_with("(function) ") || code.starts_with("(method) ")) {
        return None;
    }
    let (_, ty) = code.rsplit_once(") -> ")?;
    type_text(ty)
}

/// A type as Python spells it: pyright's `Self@Box` is `Self`; `Unknown` (nothing inferred)
/// is no hint.
fn type_text(ty: &str) -> Option<String> {
    let ty = ty.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(ty.len());
    let mut rest = ty.as_str();
    while let Some(i) = rest.find("Self@") {
        out.push_str(&rest[..i + 4]);
        rest = rest[i + 5..].trim_start_matches(|c: char| c.is_alphanumeric() || c == '_');
    }
    out.push_str(rest);
    (!out.is_empty() && out != "Unknown").then_some(out)
}

/// The keyword name of each positional parameter in order; `None` for one that has no usable
/// keyword (positional-only: before `/`, or `__x`); ends at `*` or `*args`.
fn parameter_names(labels: &[String]) -> Vec<Option<String>> {
    let slash = labels.iter().position(|l| l.trim() == "/");
    let mut out = Vec::new();
    for (i, label) in labels.iter().enumerate() {
        let l = label.trim();
        if l == "/" {
            continue;
        }
        if l.starts_with('*') {
            break;
        }
        let name = l.split([':', '=']).next().unwrap_or("").trim().to_string();
        let positional_only = slash.is_some_and(|s| i < s) || name.starts_with("__");
        out.push((!positional_only && !name.is_empty()).then_some(name));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_read_from_pyright_hovers() {
        let var = code_of("```python\n(variable) x: list[int]\n```");
        assert_eq!(variable_type(&var).as_deref(), Some("list[int]"));
        let f = code_of(
            "```python\n(function) def compute(\n    values: Unknown,\n    scale: int = 2\n) -> int\n```",
        );
        assert_eq!(return_type(&f).as_deref(), Some("int"));
        assert_eq!(variable_type(&f), None);
        assert_eq!(return_type(&var), None);
        assert_eq!(variable_type("(parameter) values: Unknown"), None);
        assert_eq!(variable_type("(variable) size: Unknown"), None);
        let m = code_of("(method) def grow(\n    self: Self@Box,\n    by: int\n) -> Self@Box");
        assert_eq!(return_type(&m).as_deref(), Some("Self"));
        assert_eq!(
            type_text("dict[str, Self@A]").as_deref(),
            Some("dict[str, Self]")
        );
    }

    #[test]
    fn parameter_names_skip_positional_only_and_stop_at_star() {
        let labels: Vec<String> = ["a: int", "/", "b: str = 'x'", "*args", "c"]
            .map(String::from)
            .to_vec();
        assert_eq!(parameter_names(&labels), vec![None, Some("b".into())]);
        let labels: Vec<String> = ["values: Unknown", "scale: int = 2"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            parameter_names(&labels),
            vec![Some("values".into()), Some("scale".into())]
        );
    }
}
