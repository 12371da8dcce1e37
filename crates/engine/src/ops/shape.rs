//! Answers shaped for an agent that reads the top of a list: workspace symbols ranked for the
//! asker, outlines in line order without function-local variables, and what a page of an outline
//! is. Pure functions over results; the operations in `ops/mod.rs` call them.
//!
//! Ranking of `workspace_symbols` (protocol §3): the exact name (case-sensitive, then not) first,
//! then names the query begins, then the rest (a name qualified by its container, as gopls
//! gives `Type.Method`, matched by its last part); within each of those, types and functions
//! before variables and other members. Variables local to a function come last of all, ranked the same
//! way among themselves: an agent asking for `Subject` wants the classes named like it before
//! the dozen `const subject = …` inside functions. Ties keep the shorter name first, then the
//! server's order.
//!
//! A local is a variable (or constant) that lives inside a function. Servers say so in
//! different ways:
//! - tsserver's `navto` names some kinds `local var`, `local function`, `local class`, and
//!   gives each item its container's kind: a variable in a function, method, constructor or
//!   accessor is local (`lsp::tsserver` marks it). A variable in an anonymous function has no
//!   named container, like a top-level one: it is local when its declaration is indented.
//! - pyright gives every symbol the dotted chain of the scopes around it as `containerName`
//!   (`Outer.method`), kinds included nowhere: a variable with a container is local when the
//!   nearest `def` or `class` above it at a smaller indentation is a `def` (a parameter sits on
//!   its function's own `def` line, or on a continuation line below it).
//! - clangd, gopls and rust-analyzer leave function locals out of workspace symbols.
//!
//! In an outline (`document_symbols`), where the server nests symbols, a local is a variable
//! (or constant, or value) whose parent is not a type or module: a function, a method, or a
//! variable holding a function (`const f = () => { const x … }`).

use super::types::Symbol;

/// How a name matches a query: 0 the exact name, 1 the exact name ignoring case, 2 a name the
/// query begins (ignoring case), 3 anything else the server matched. A name qualified by its
/// container (gopls's `Pot.Depth`, `unicode.Upper`) matches as its last part does when the
/// query names no container: asked for `Depth`, the method `Pot.Depth` is an exact name.
pub fn match_rank(query: &str, name: &str) -> u8 {
    let query = query.trim();
    let whole = name_rank(query, name);
    match name.rsplit_once('.') {
        Some((_, last)) if !last.is_empty() && !query.contains('.') => {
            whole.min(name_rank(query, last))
        }
        _ => whole,
    }
}

fn name_rank(query: &str, name: &str) -> u8 {
    if name == query {
        return 0;
    }
    let (q, n) = (query.to_lowercase(), name.to_lowercase());
    if n == q {
        1
    } else if n.starts_with(&q) {
        2
    } else {
        3
    }
}

/// Kinds that name a type, a function or a module: listed before variables and members.
fn is_definition(kind: &str) -> bool {
    matches!(
        kind,
        "class"
            | "interface"
            | "struct"
            | "enum"
            | "type_parameter"
            | "function"
            | "method"
            | "constructor"
            | "module"
            | "namespace"
            | "package"
    )
}

/// Kinds of a variable: what can be local to a function.
pub fn is_variable(kind: &str) -> bool {
    matches!(
        kind,
        "variable"
            | "constant"
            | "string"
            | "number"
            | "boolean"
            | "array"
            | "object"
            | "null"
            | "key"
    )
}

/// Where a workspace symbol goes in the list, smallest first: locals after everything else,
/// then by how its name matches, then types and functions before variables and members, then
/// shorter names first.
pub fn symbol_rank(query: &str, name: &str, kind: &str, local: bool) -> (bool, u8, u8, usize) {
    (
        local,
        match_rank(query, name),
        u8::from(!is_definition(kind)),
        name.chars().count(),
    )
}

/// Whether a Python variable at 0-based `line` of `text` is local to a function: the nearest
/// `def` or `class` above it at a smaller indentation (compound statements such as `if` or
/// `for` in between are looked through) is a `def`; on a `def` line itself, it is a parameter.
pub fn python_local(text: &str, line: usize) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    let Some(own) = lines.get(line) else {
        return false;
    };
    if starts_def(own.trim_start()) {
        return true;
    }
    let mut threshold = indent(own);
    for l in lines[..line].iter().rev() {
        let t = l.trim_start();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let i = indent(l);
        if i >= threshold {
            continue;
        }
        if starts_def(t) {
            return true;
        }
        if t.starts_with("class ") {
            return false;
        }
        if i == 0 {
            return false;
        }
        threshold = i;
    }
    false
}

fn starts_def(t: &str) -> bool {
    t.starts_with("def ") || t.starts_with("async def ")
}

fn indent(line: &str) -> usize {
    line.chars().take_while(|c| c.is_whitespace()).count()
}

/// Whether a JavaScript/TypeScript declaration with no named container is inside a function:
/// top-level declarations start their line; an anonymous function's are indented.
pub fn script_local(line_text: &str) -> bool {
    indent(line_text) > 0
}

/// Kinds under which a variable is a member, not a local: types and modules.
fn holds_members(kind: &str) -> bool {
    matches!(
        kind,
        "class" | "interface" | "struct" | "enum" | "module" | "namespace" | "package" | "file"
    )
}

/// An outline as agents read it: every level ordered by line (then column), variables local to
/// functions left out unless `locals`, and nothing deeper than `depth` levels (1: the top
/// level only).
pub fn outline(mut symbols: Vec<Symbol>, locals: bool, depth: Option<usize>) -> Vec<Symbol> {
    fn shape(
        list: &mut Vec<Symbol>,
        parent: Option<&str>,
        locals: bool,
        level: usize,
        depth: Option<usize>,
    ) {
        if !locals && parent.is_some_and(|p| !holds_members(p)) {
            list.retain(|s| !is_variable(&s.kind));
        }
        list.sort_by_key(|s| (s.line, s.column));
        for s in list.iter_mut() {
            if depth.is_some_and(|d| level >= d) {
                s.children.clear();
                continue;
            }
            let kind = s.kind.clone();
            shape(&mut s.children, Some(&kind), locals, level + 1, depth);
        }
    }
    shape(&mut symbols, None, locals, 1, depth);
    symbols
}

/// How many symbols an outline holds, at every level.
pub fn count(symbols: &[Symbol]) -> usize {
    symbols.iter().map(|s| 1 + count(&s.children)).sum()
}

/// One page of an outline: the symbols at positions `start..start + limit` in line order
/// (parents before their children, counted at every level). A page that begins inside a
/// symbol repeats that symbol's ancestors, without their other children, so that every symbol
/// keeps its place in the tree; they are not counted again.
pub fn page(symbols: Vec<Symbol>, start: usize, limit: usize) -> Vec<Symbol> {
    fn walk(list: Vec<Symbol>, start: usize, end: usize, at: &mut usize) -> Vec<Symbol> {
        let mut out = Vec::new();
        for mut s in list {
            if *at >= end {
                break;
            }
            let index = *at;
            *at += 1;
            let children = std::mem::take(&mut s.children);
            let kept = walk(children, start, end, at);
            if index >= start || !kept.is_empty() {
                s.children = kept;
                out.push(s);
            }
        }
        out
    }
    let mut at = 0;
    walk(symbols, start, start.saturating_add(limit), &mut at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &str, kind: &str, line: u32, children: Vec<Symbol>) -> Symbol {
        Symbol {
            name: name.into(),
            kind: kind.into(),
            line,
            column: 1,
            end_line: line,
            detail: None,
            children,
        }
    }

    fn names(list: &[Symbol]) -> Vec<String> {
        let mut out = Vec::new();
        fn walk(list: &[Symbol], depth: usize, out: &mut Vec<String>) {
            for s in list {
                out.push(format!("{}{}", "-".repeat(depth), s.name));
                walk(&s.children, depth + 1, out);
            }
        }
        walk(list, 0, &mut out);
        out
    }

    #[test]
    fn exact_then_case_then_prefix_then_rest() {
        assert_eq!(match_rank("QuerySet", "QuerySet"), 0);
        assert_eq!(match_rank("QuerySet", "queryset"), 1);
        assert_eq!(match_rank("QuerySet", "QuerySetMixin"), 2);
        assert_eq!(match_rank("QuerySet", "querysets"), 2);
        assert_eq!(match_rank("QuerySet", "_get_queryset"), 3);
        // gopls qualifies a method by its type and a standard library name by its package.
        assert_eq!(match_rank("Depth", "Pot.Depth"), 0);
        assert_eq!(match_rank("Depth", "childInfo.depth"), 1);
        assert_eq!(match_rank("Depth", "Pot.DepthOf"), 2);
        assert_eq!(match_rank("Depth", "depthToShift"), 2);
        assert_eq!(match_rank("Pot.Depth", "Pot.Depth"), 0);
        assert_eq!(match_rank("Pot.Depth", "Jar.Depth"), 3);
        assert_eq!(match_rank("Depth", "Pot."), 3);
        let mut found = [
            ("subject", "constant", true),
            ("SubjectLike", "interface", false),
            ("Subject", "variable", false),
            ("subject", "property", false),
            ("Subject", "class", false),
            ("AnonymousSubject", "class", false),
            ("AsyncSubject", "variable", false),
        ];
        found.sort_by_key(|(n, k, l)| symbol_rank("Subject", n, k, *l));
        let order: Vec<String> = found.iter().map(|(n, k, _)| format!("{n} {k}")).collect();
        assert_eq!(
            order,
            [
                "Subject class",
                "Subject variable",
                "subject property",
                "SubjectLike interface",
                "AnonymousSubject class",
                "AsyncSubject variable",
                "subject constant",
            ]
        );
    }

    #[test]
    fn python_locals_are_found_by_their_enclosing_def() {
        let src = "\
X = 1
class A:
    y = 2
    def m(self, p,
          q):
        z = 3
        if z:
            for w in q:
                pass
        return z

def f():
    v = 1
";
        // X (module), y (class attribute): not local.
        assert!(!python_local(src, 0));
        assert!(!python_local(src, 2));
        // p on the def line, q on its continuation line, z and w in the body, v in f.
        assert!(python_local(src, 3));
        assert!(python_local(src, 4));
        assert!(python_local(src, 5));
        assert!(python_local(src, 7));
        assert!(python_local(src, 12));
        assert!(!python_local(src, 99));
    }

    #[test]
    fn outlines_are_in_line_order_without_locals() {
        let tree = vec![
            sym(
                "f",
                "function",
                20,
                vec![sym("local", "variable", 21, vec![])],
            ),
            sym(
                "A",
                "class",
                1,
                vec![
                    sym(
                        "m",
                        "method",
                        5,
                        vec![
                            sym("x", "variable", 6, vec![]),
                            sym("inner", "function", 7, vec![]),
                        ],
                    ),
                    sym("attr", "variable", 3, vec![]),
                    sym("late", "variable", 9, vec![]),
                ],
            ),
            sym(
                "handler",
                "constant",
                30,
                vec![sym("y", "constant", 31, vec![])],
            ),
        ];
        let shaped = outline(tree.clone(), false, None);
        assert_eq!(
            names(&shaped),
            ["A", "-attr", "-m", "--inner", "-late", "f", "handler"]
        );
        let all = outline(tree.clone(), true, None);
        assert_eq!(count(&all), 10);
        assert_eq!(names(&all)[..5], ["A", "-attr", "-m", "--x", "--inner"]);
        let top = outline(tree, false, Some(1));
        assert_eq!(names(&top), ["A", "f", "handler"]);
    }

    #[test]
    fn a_page_counts_every_level_and_repeats_ancestors() {
        let tree = outline(
            vec![
                sym(
                    "A",
                    "class",
                    1,
                    vec![
                        sym("a1", "method", 2, vec![]),
                        sym("a2", "method", 3, vec![sym("in", "function", 4, vec![])]),
                        sym("a3", "method", 5, vec![]),
                    ],
                ),
                sym("B", "class", 10, vec![sym("b1", "method", 11, vec![])]),
            ],
            false,
            None,
        );
        assert_eq!(count(&tree), 7);
        assert_eq!(names(&page(tree.clone(), 0, 3)), ["A", "-a1", "-a2"]);
        // Starts inside A (at `in`): A and a2 come along to place it.
        assert_eq!(
            names(&page(tree.clone(), 3, 3)),
            ["A", "-a2", "--in", "-a3", "B"]
        );
        assert_eq!(names(&page(tree.clone(), 6, 3)), ["B", "-b1"]);
        assert!(page(tree, 7, 3).is_empty());
    }
}
