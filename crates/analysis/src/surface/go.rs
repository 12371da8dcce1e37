//! Go's top-level declarations by the names they declare, as an importer sees them: a function
//! or method by its signature (its body is no importer's business; a method by its own name,
//! which is how callers mention it), a type or a variable by its whole text (in a group, each
//! spec apart), a constant group as a whole (`iota` ties its specs). The package clause names
//! nothing (a change there may change anything); imports are the file's own.

use std::collections::BTreeMap;

use super::{CodeLine, add, bracket_balance, code_lines};
use crate::lexer::Lang;

/// The names and their declarations' text (whitespace squashed).
pub(super) fn go(text: &str) -> Option<BTreeMap<String, String>> {
    // Each top-level statement's code and written text.
    let mut statements: Vec<(String, String)> = Vec::new();
    let mut depth = 0i32;
    for CodeLine {
        code,
        written,
        in_literal,
    } in code_lines(Lang::Go, text)
    {
        if code.trim().is_empty() && !in_literal {
            continue;
        }
        let top = !in_literal
            && depth == 0
            && !code.starts_with(char::is_whitespace)
            && !code.starts_with(['}', ')', ']']);
        if top || statements.is_empty() {
            statements.push(Default::default());
        }
        if let Some((c, w)) = statements.last_mut() {
            c.push_str(&code);
            c.push('\n');
            w.push_str(&written);
            w.push('\n');
        }
        depth = (depth + bracket_balance(&code)).max(0);
    }
    let mut out = BTreeMap::new();
    for (code, written) in &statements {
        let keyword: String = code
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        match keyword.as_str() {
            "import" => {}
            "func" => {
                let (name, end) = function(code);
                let signature = written.get(..end).unwrap_or(written);
                add(&mut out, name.into_iter().collect(), squash(signature));
            }
            "type" | "var" | "const" => {
                for (names, body) in specs(&keyword, code, written) {
                    add(&mut out, names, squash(&body));
                }
            }
            // The package clause, or what Go would not compile.
            _ => add(&mut out, Vec::new(), squash(written)),
        }
    }
    Some(out)
}

/// A function declaration's name (a method's own) and where its signature ends: at the `{`
/// that opens its body (one after `interface` or `struct` opens a type), else the end.
fn function(code: &str) -> (Option<String>, usize) {
    let bytes = code.as_bytes();
    let mut i = code.find("func").map_or(0, |f| f + 4);
    let skip_space = |i: &mut usize| {
        while bytes.get(*i).is_some_and(u8::is_ascii_whitespace) {
            *i += 1;
        }
    };
    skip_space(&mut i);
    if bytes.get(i) == Some(&b'(') {
        i = closing(bytes, i).map_or(bytes.len(), |c| c + 1);
        skip_space(&mut i);
    }
    let start = i;
    while bytes
        .get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c >= 0x80)
    {
        i += 1;
    }
    let name = (i > start).then(|| code[start..i].to_string());
    let mut depth = 0i32;
    while let Some(&c) = bytes.get(i) {
        match c {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'{' if depth <= 0 => {
                let before = code[..i].trim_end();
                if before.ends_with("interface") || before.ends_with("struct") {
                    i = closing(bytes, i).unwrap_or(bytes.len());
                } else {
                    return (name, i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    (name, code.len())
}

/// The index of the bracket closing the one at `open`.
fn closing(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in bytes.iter().enumerate().skip(open) {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The specs of a `type`, `var` or `const` declaration: each one's names and text; a
/// constant group's names all with the group's text.
fn specs(keyword: &str, code: &str, written: &str) -> Vec<(Vec<String>, String)> {
    let after = code.trim_start()[keyword.len()..].trim_start();
    if !after.starts_with('(') {
        return vec![(names(keyword, after), written.to_string())];
    }
    let mut out: Vec<(Vec<String>, String)> = Vec::new();
    let mut depth = 0i32;
    for (i, (c, w)) in code.lines().zip(written.lines()).enumerate() {
        let t = c.trim();
        if i == 0 {
            // `var (` and, rarely, a first spec on the same line.
            let rest = t[keyword.len()..]
                .trim_start()
                .trim_start_matches('(')
                .trim();
            if !rest.is_empty() && rest != ")" {
                out.push((names(keyword, rest), format!("{w}\n")));
            }
            continue;
        }
        // A spec starts with its name (a literal's continuation is blanked: it cannot).
        if depth == 0 && t.starts_with(|c: char| c.is_alphabetic() || c == '_') {
            out.push((names(keyword, t), String::new()));
        }
        if let Some((_, body)) = out.last_mut() {
            body.push_str(w);
            body.push('\n');
        }
        depth = (depth + bracket_balance(c)).max(0);
    }
    if keyword == "const" {
        let all = out.iter().flat_map(|(n, _)| n.clone()).collect();
        return vec![(all, written.to_string())];
    }
    out
}

/// The names a spec declares: a type's one; a variable's or constant's, comma-separated.
fn names(keyword: &str, spec: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = spec.trim_start();
    loop {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        out.push(rest[..end].to_string());
        rest = rest[end..].trim_start();
        match rest.strip_prefix(',') {
            Some(r) if keyword != "type" => rest = r.trim_start(),
            _ => break,
        }
    }
    out
}

fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::super::changed_names;
    use crate::imports::Family;
    use std::collections::BTreeSet;

    fn changed(old: &str, new: &str) -> Option<BTreeSet<String>> {
        changed_names(Family::Go, old, new)
    }

    const FILE: &str = "package m\n\nimport (\n\t\"fmt\"\n)\n\n// Total adds.\nfunc Total(x int) int {\n\treturn x\n}\n\nfunc (c *Command) Name() string { return c.name }\n\nfunc Wrap(f func() interface{ M() }) interface{ N() } {\n\treturn nil\n}\n\ntype Command struct {\n\tname string\n}\n\nvar (\n\tA, B = 1, `raw\n{`\n\tC int\n)\n\nconst (\n\tX = iota\n\tY\n)\n\nvar s = fmt.Sprint(1)\n";

    fn edit(from: &str, to: &str) -> String {
        assert!(FILE.contains(from), "{from}");
        FILE.replacen(from, to, 1)
    }

    fn set(names: &[&str]) -> Option<BTreeSet<String>> {
        Some(names.iter().map(|n| n.to_string()).collect())
    }

    #[test]
    fn go_declarations_are_named_by_what_importers_see() {
        // Bodies, comments, formatting and imports: nothing an importer sees.
        assert_eq!(
            changed(FILE, &edit("return x\n", "return x + 1\n")),
            set(&[])
        );
        assert_eq!(
            changed(FILE, &edit("// Total adds.", "// Total sums.")),
            set(&[])
        );
        assert_eq!(
            changed(FILE, &edit("return c.name", "return  c.name + \"\"")),
            set(&[])
        );
        assert_eq!(
            changed(FILE, &edit("\t\"fmt\"\n", "\t\"fmt\"\n\t\"os\"\n")),
            set(&[])
        );
        assert_eq!(
            changed(FILE, &edit("return nil", "return Wrap(nil)")),
            set(&[])
        );
        // Signatures.
        assert_eq!(
            changed(FILE, &edit("Total(x int) int", "Total(x int) string")),
            set(&["Total"])
        );
        assert_eq!(
            changed(FILE, &edit("Name() string", "Name(full bool) string")),
            set(&["Name"])
        );
        assert_eq!(
            changed(FILE, &edit("interface{ N() }", "interface{ N(); O() }")),
            set(&["Wrap"])
        );
        // Types, variables (a raw string spanning lines), constant groups.
        assert_eq!(
            changed(FILE, &edit("\tname string\n", "\tname []byte\n")),
            set(&["Command"])
        );
        assert_eq!(
            changed(FILE, &edit("`raw\n{`", "`raw\n}`")),
            set(&["A", "B"])
        );
        assert_eq!(changed(FILE, &edit("\tC int\n", "\tC uint\n")), set(&["C"]));
        assert_eq!(
            changed(FILE, &edit("\tY\n", "\tY\n\tZ\n")),
            set(&["X", "Y", "Z"])
        );
        // A new function; the package clause (anything may change).
        assert_eq!(
            changed(FILE, &format!("{FILE}\nfunc New() {{}}\n")),
            set(&["New"])
        );
        assert_eq!(changed(FILE, &edit("package m", "package n")), None);
    }
}
