//! Inlay hints for a Python server that has none of its own (pyright 1.1.414 answers
//! `textDocument/inlayHint` with "Unhandled method"), made from what it does answer: the
//! outline names every binding, hover gives the inferred type of each unannotated variable and
//! the return type of each unannotated `def`, and hover on each callee gives the parameters
//! its positional arguments bind to.

use futures::stream::{self, StreamExt};

use crate::documents::{Lease, Snapshot};
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

/// What was derived: the hints, each with its line, and how many questions went unanswered.
pub(super) struct Derived {
    pub hints: Vec<(u32, Hint)>,
    pub failed: usize,
}

/// Questions in flight at once (the server answers them in turn; this only saves the waits).
const IN_FLIGHT: usize = 16;

/// The hints of lines `first..=last`, each with its line.
pub(super) async fn hints(
    server: &Server,
    lease: &Lease,
    first: u32,
    last: u32,
) -> Result<Derived, ToolError> {
    let snap = &lease.snap;
    let uri = &snap.uri;
    let text = scan::Text::new(&snap.text);
    let symbols = server
        .request(
            Some(lease),
            |c| async move { c.document_symbols(uri).await },
        )
        .await?;
    let bindings = bindings(snap, &symbols, first, last);
    let sites = call_sites(snap, &text, first, last);
    let asked: Vec<WirePos> = bindings
        .iter()
        .map(|b| b.pos)
        .chain(sites.iter().map(|(_, p)| *p))
        .collect();
    let hovers = hover_all(server, lease, asked).await;
    let failed = hovers.iter().filter(|h| h.is_none()).count();
    let (of_bindings, of_calls) = hovers.split_at(bindings.len());
    let mut out = Vec::new();
    for (b, h) in bindings.iter().zip(of_bindings) {
        let Some(code) = h.as_deref().map(code_of) else {
            continue;
        };
        out.extend(type_hint(snap, &text, b, &code));
    }
    // Parameter names at calls, from the callee's signature.
    for ((site, _), h) in sites.iter().zip(of_calls) {
        let Some(labels) = h.as_deref().map(code_of).and_then(|c| parameters(&c)) else {
            continue;
        };
        out.extend(parameter_hints(site, &labels));
    }
    out.retain(|(line, _)| *line >= first && *line <= last);
    Ok(Derived { hints: out, failed })
}

/// The functions, methods, variables and constants of the outline `symbols` (at any depth)
/// named on lines `first..=last`.
fn bindings(snap: &Snapshot, symbols: &[WireSymbol], first: u32, last: u32) -> Vec<Binding> {
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
    bindings
}

/// The calls on lines `first..=last` with a positional argument, and where each callee's name
/// ends.
fn call_sites(
    snap: &Snapshot,
    text: &scan::Text,
    first: u32,
    last: u32,
) -> Vec<(scan::CallSite, WirePos)> {
    scan::calls(text, first, last)
        .into_iter()
        .filter(|s| s.args.first().is_some_and(scan::Arg::positional))
        .filter_map(|s| {
            let paren = text.index(s.open)?.checked_sub(1)?;
            let name_end = (0..paren).rev().find(|i| !text.chars[*i].is_whitespace())?;
            let (line, col) = text.pos(name_end);
            let pos = snap.to_wire(line, col).ok()?;
            Some((s, pos))
        })
        .collect()
}

/// The hover at each of `asked`, in order, `IN_FLIGHT` at a time: its contents (empty for no
/// hover), or `None` where the question failed.
async fn hover_all(server: &Server, lease: &Lease, asked: Vec<WirePos>) -> Vec<Option<String>> {
    let uri = &lease.snap.uri;
    // Hover only: pyright's signature help took 0.5 s a call on Django's query.py, its hover
    // 27 ms, and hover on a callee gives the same parameters.
    stream::iter(asked)
        .map(|pos| async move {
            server
                .request(Some(lease), move |c| async move { c.hover(uri, pos).await })
                .await
                .ok()
                .map(|h| h.map(|h| h.contents).unwrap_or_default())
        })
        .buffered(IN_FLIGHT)
        .collect()
        .await
}

/// The type hint of binding `b` whose hover's code is `code`: a function's return type after
/// its parameters, or an unannotated variable's type after its name.
fn type_hint(snap: &Snapshot, text: &scan::Text, b: &Binding, code: &str) -> Option<(u32, Hint)> {
    if b.function {
        let ty = return_type(code)?;
        let name_end = text.index(b.end)?;
        let Some((end, false)) = scan::def_params_end(&text.code, name_end) else {
            return None;
        };
        let (line, column) = text.pos(end);
        return Some((
            line,
            Hint {
                column,
                label: format!(" -> {ty}"),
                kind: "type",
            },
        ));
    }
    let ty = variable_type(code)?;
    let rest: String = snap
        .line(b.end.0)
        .unwrap_or("")
        .chars()
        .skip(b.end.1 as usize - 1)
        .collect();
    let rest = rest.trim_start();
    let annotated = rest.starts_with(':') && !rest.starts_with(":=");
    (!annotated).then(|| {
        (
            b.end.0,
            Hint {
                column: b.end.1,
                label: format!(": {ty}"),
                kind: "type",
            },
        )
    })
}

/// The parameter-name hints of a call `site` whose callee has the parameters `labels`: one
/// per positional argument that is not already spelled as its parameter's name.
fn parameter_hints(site: &scan::CallSite, labels: &[String]) -> Vec<(u32, Hint)> {
    let names = parameter_names(labels);
    let mut out = Vec::new();
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
    out
}

/// The code of a hover: its first fenced block (what follows is documentation).
fn code_of(contents: &str) -> String {
    let mut lines = contents
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("```"));
    if lines.next().is_none() {
        return contents.to_string();
    }
    lines
        .take_while(|l| !l.trim_start().starts_with("```"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The parameter list of the `def` or `class` a hover's code names, as its labels.
fn parameters(code: &str) -> Option<Vec<String>> {
    let text = scan::Text::new(code);
    let open = signature_open(code, &text)?;
    scan::parts(&text, open)
}

/// The index of the `(` opening the parameters of the `def NAME` or `class NAME` in `code`.
fn signature_open(code: &str, text: &scan::Text) -> Option<usize> {
    let chars = &text.code;
    let at = ["def ", "class "]
        .iter()
        .filter_map(|k| code.find(k).map(|b| code[..b].chars().count() + k.len()))
        .min()?;
    let mut i = at;
    while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
        i += 1;
    }
    if chars.get(i) == Some(&'[') {
        i = scan::closing(chars, i)? + 1;
    }
    (chars.get(i) == Some(&'(')).then_some(i)
}

/// `(variable) x: list[int]` → `list[int]`; a variable holding a function (`def q(…)`) is not
/// hinted.
fn variable_type(code: &str) -> Option<String> {
    let rest = ["(variable) ", "(constant) "]
        .iter()
        .find_map(|p| code.trim_start().strip_prefix(p))?;
    if rest.starts_with("def ") {
        return None;
    }
    let (_, ty) = rest.split_once(": ")?;
    type_text(ty)
}

/// `(function) def f(…) -> int` → `int`: what follows the parameter list's `)`.
fn return_type(code: &str) -> Option<String> {
    let code = code.trim_start();
    if !(code.starts_with("(function) ") || code.starts_with("(method) ")) {
        return None;
    }
    let text = scan::Text::new(code);
    let open = signature_open(code, &text)?;
    let close = scan::closing(&text.code, open)?;
    let rest: String = text.chars[close + 1..].iter().collect();
    type_text(rest.trim_start().strip_prefix("->")?)
}

/// A type as Python spells it: pyright's scoped names (`Self@Box`, `T@f`) lose their scope;
/// `Unknown` (nothing inferred) is no hint.
fn type_text(ty: &str) -> Option<String> {
    let ty = ty.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(ty.len());
    let mut chars = ty.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '@' && out.ends_with(|p: char| p.is_alphanumeric() || p == '_') {
            while chars
                .next_if(|n| n.is_alphanumeric() || *n == '_')
                .is_some()
            {}
            continue;
        }
        out.push(c);
    }
    (!out.is_empty() && out != "Unknown" && !out.contains("Unknown")).then_some(out)
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
            "```python\n(function) def compute(\n    values: int,\n    scale: int = 2\n) -> int\n```\n---\nDouble it.\n\nReturns x * 2.",
        );
        assert_eq!(return_type(&f).as_deref(), Some("int"));
        assert_eq!(variable_type(&f), None);
        assert_eq!(return_type(&var), None);
        assert_eq!(variable_type("(parameter) values: Unknown"), None);
        assert_eq!(variable_type("(variable) size: Unknown"), None);
        assert_eq!(
            variable_type("(variable) def q(t: Unknown) -> Unknown"),
            None
        );
        let m = code_of("(method) def grow(\n    self: Self@Box,\n    by: int\n) -> Self@Box");
        assert_eq!(return_type(&m).as_deref(), Some("Self"));
        // A callable return type is read whole, and one of unknowns is no hint.
        let c = "(function) def outer() -> ((t: int) -> int)";
        assert_eq!(return_type(c).as_deref(), Some("((t: int) -> int)"));
        assert_eq!(
            return_type("(function) def o() -> ((t: Unknown) -> Unknown)"),
            None
        );
        let g = "(function) def h[T](v: T@h, s: str = \")\") -> T@h";
        assert_eq!(return_type(g).as_deref(), Some("T"));
        assert_eq!(
            type_text("dict[str, Self@A]").as_deref(),
            Some("dict[str, Self]")
        );
        assert_eq!(type_text("a@b.c").as_deref(), Some("a.c"));
    }

    #[test]
    fn a_callees_hover_gives_its_parameters() {
        let class =
            code_of("```python\nclass Box(\n    size: int,\n    label: str = \"x, y\"\n)\n```");
        assert_eq!(
            parameters(&class),
            Some(vec![
                "size: int".to_string(),
                "label: str = \"x, y\"".to_string()
            ])
        );
        let sum = "(function) def sum(\n    iterable: Iterable[int],\n    /,\n    start: int = 0\n) -> int";
        let labels = parameters(sum).expect("parameters");
        assert_eq!(parameter_names(&labels), vec![None, Some("start".into())]);
        assert_eq!(parameters("(variable) f: int"), None);
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
