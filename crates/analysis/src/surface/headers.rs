//! What a top-level Python function declares, apart from what its body makes of it: its
//! header (its decorators, and its `def` up to the colon that opens its body, comments left
//! out). When an edit changed a function's hover but not its header, only its body changed
//! what is inferred of it: its importers are then checked behind the hook's answer, not
//! within it (`hook::after`).

use std::collections::{BTreeMap, BTreeSet};

use super::{CodeLine, code_lines, python_names};
use crate::imports::Family;
use crate::lexer::Lang;

/// Whether every one of `names` is a top-level function (Python; defined once) with the same
/// header in `old` and `new`. False for anything else: another family, a name that is no
/// function in both, one defined twice, no names.
pub fn headers_unchanged(family: Family, old: &str, new: &str, names: &BTreeSet<String>) -> bool {
    if family != Family::Python || names.is_empty() {
        return false;
    }
    let (before, after) = (python_headers(old), python_headers(new));
    names.iter().all(|n| {
        matches!(
            (before.get(n), after.get(n)),
            (Some(Some(a)), Some(Some(b))) if a == b
        )
    })
}

/// Each top-level function's header by name (`None`: defined twice, or bound by another
/// top-level statement too).
fn python_headers(text: &str) -> BTreeMap<String, Option<String>> {
    let mut out: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut decorators = String::new();
    // Within a decorator's brackets.
    let mut in_decorator = false;
    // The function whose header is being read: its name, its header so far, its depth.
    let mut open: Option<(String, String, i32)> = None;
    let mut depth = 0i32;
    for line in code_lines(Lang::Python, text) {
        let balance = super::bracket_balance(&line.code);
        if let Some((name, header, d)) = open.take() {
            open = extend(&mut out, &line, name, header, d);
            depth = (depth + balance).max(0);
            continue;
        }
        if in_decorator {
            decorators.push_str(&line.written);
            decorators.push('\n');
            depth = (depth + balance).max(0);
            in_decorator = depth > 0;
            continue;
        }
        let top = !line.in_literal
            && depth == 0
            && !line.code.trim().is_empty()
            && !line.code.starts_with(char::is_whitespace)
            && !line.code.starts_with([')', ']', '}']);
        depth = (depth + balance).max(0);
        if !top {
            continue;
        }
        if line.code.starts_with('@') {
            decorators.push_str(&line.written);
            decorators.push('\n');
            in_decorator = depth > 0;
            continue;
        }
        let above = std::mem::take(&mut decorators);
        let t = line.code.trim_start_matches("async ");
        if !t.starts_with("def ") {
            // A name bound by another statement too (`f = wrap(f)`): its header is not all
            // it declares.
            for n in python_names(&line.written) {
                out.insert(n, None);
            }
            continue;
        }
        let Some(name) = python_names(&line.written).into_iter().next() else {
            continue;
        };
        open = extend(&mut out, &line, name, above, 0);
    }
    out
}

/// `line` added to the header of `name` read so far (`header`, its brackets `depth` deep at
/// the line's start): the header kept when it ends on this line, else what is still open.
fn extend(
    out: &mut BTreeMap<String, Option<String>>,
    line: &CodeLine,
    name: String,
    mut header: String,
    depth: i32,
) -> Option<(String, String, i32)> {
    match header_end(&line.code, depth) {
        Ok(end) => {
            header.push_str(line.written.get(..end).unwrap_or(&line.written));
            add(out, name, header);
            None
        }
        Err(d) => {
            header.push_str(&line.written);
            header.push('\n');
            Some((name, header, d))
        }
    }
}

/// Where the header ends in a line of code (literals and comments blanked), its brackets
/// `depth` deep at its start: just after the first colon outside brackets; else the depth at
/// its end.
fn header_end(code: &str, mut depth: i32) -> Result<usize, i32> {
    for (i, b) in code.bytes().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = (depth - 1).max(0),
            b':' if depth == 0 => return Ok(i + 1),
            _ => {}
        }
    }
    Err(depth)
}

/// A header for `name`; a second definition makes it unknown.
fn add(out: &mut BTreeMap<String, Option<String>>, name: String, header: String) {
    out.entry(name)
        .and_modify(|h| *h = None)
        .or_insert(Some(header));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    const OLD: &str = r#"import os

@register.filter(
    is_safe=True,
)
def capfirst(x, sep=":"):  # the first letter
    """Capitalize the first letter of a string."""
    return x[0].upper() + x[1:]


def join(a: dict[str, int],
         b: "Callable[[int], str]" = lambda y: y) -> str: return str(a)


def twice(x): return x
def twice(x, y): return x
"#;

    #[test]
    fn a_body_edit_keeps_the_header_and_a_signature_edit_does_not() {
        let all = names(&["capfirst", "join"]);
        // The body, a docstring, a comment: the headers stand.
        let body = OLD
            .replace(
                "return x[0].upper() + x[1:]",
                "return x[0].upper() + x[1:] + suffix",
            )
            .replace("the first letter", "first")
            .replace("Capitalize", "Upper-case")
            .replace("return str(a)", "return repr(a)");
        assert!(headers_unchanged(Family::Python, OLD, &body, &all));
        // A parameter, a default inside a string, a decorator's argument, a return type, async.
        for changed in [
            OLD.replace("def capfirst(x, sep", "def capfirst(x, y, sep"),
            OLD.replace("sep=\":\"", "sep=\";\""),
            OLD.replace("is_safe=True", "is_safe=False"),
            OLD.replace("-> str:", "-> bytes:"),
            OLD.replace("def join", "async def join"),
        ] {
            assert!(
                !headers_unchanged(Family::Python, OLD, &changed, &all),
                "{changed}"
            );
        }
    }

    #[test]
    fn what_is_no_single_function_is_never_unchanged() {
        // Defined twice, a class, a value, a name gone, no names, another family.
        for n in ["twice", "os", "nothing"] {
            assert!(
                !headers_unchanged(Family::Python, OLD, OLD, &names(&[n])),
                "{n}"
            );
        }
        let gone = OLD.replace("def join", "def joined");
        assert!(!headers_unchanged(
            Family::Python,
            OLD,
            &gone,
            &names(&["join"])
        ));
        assert!(!headers_unchanged(Family::Python, OLD, OLD, &names(&[])));
        assert!(!headers_unchanged(
            Family::Script,
            OLD,
            OLD,
            &names(&["capfirst"])
        ));
        let class = "class A:\n    x = 1\n";
        assert!(!headers_unchanged(
            Family::Python,
            class,
            class,
            &names(&["A"])
        ));
        // Rebound after its definition, or before it.
        for wrapped in [
            "def f(x):\n    return x\n\nf = wrap(f)\n",
            "f = None\n\ndef f(x):\n    return x\n",
        ] {
            assert!(
                !headers_unchanged(Family::Python, wrapped, wrapped, &names(&["f"])),
                "{wrapped}"
            );
        }
    }
}
