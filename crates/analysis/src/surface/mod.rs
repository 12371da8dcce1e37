//! Which top-level names an edit changed: each text cut into its top-level statements (Python:
//! a line at indentation 0 with its decorators and continuation lines; JavaScript and
//! TypeScript: a statement at brace depth 0), each named by what it defines, compared with
//! comments, docstrings and blank lines left out (code read through `lexer`). A file that
//! imports the written one can only be affected through a name it mentions. `None` when a change lies in a statement that defines no name (a
//! module-level `if`, a call): then anything may be.

mod go;
mod headers;

use std::collections::{BTreeMap, BTreeSet};

use crate::imports::Family;
use crate::lexer::Lang;
use go::go;
pub use headers::headers_unchanged;

/// The names whose top-level definitions differ between `old` and `new`; `None`: cannot tell.
pub fn changed_names(family: Family, old: &str, new: &str) -> Option<BTreeSet<String>> {
    let cut = |t: &str| match family {
        Family::Python => python(t),
        Family::Script => script(t),
        Family::Go => go(t),
        Family::C => None,
    };
    let (before, after) = (cut(old)?, cut(new)?);
    let mut changed = BTreeSet::new();
    for name in before.keys().chain(after.keys()) {
        if before.get(name) != after.get(name) {
            // Unnamed, or what a star import takes: anything may change.
            if name.is_empty() || name == "__all__" {
                return None;
            }
            changed.insert(name.clone());
        }
    }
    Some(changed)
}

/// What a top-level name is, as far as its importers can see it through its hover: a function
/// or a value shows its type there (a decorated function, with its decorators: what they make
/// of it follows from its type); a type (a class, an interface) does not show its members.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A function or a value whose hover (and decorators) say all an importer sees.
    Typed,
    /// Anything else.
    Opaque,
}

/// Where a top-level name is defined and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Def {
    pub kind: Kind,
    /// 1-based line and code-point column of the name.
    pub line: u32,
    pub column: u32,
    /// The decorator lines above it (Python).
    pub decorators: String,
}

/// Each top-level name's (first) definition.
pub fn definitions(family: Family, text: &str) -> BTreeMap<String, Def> {
    let mut out = BTreeMap::new();
    let mut decorators = String::new();
    let Some(lang) = family.lang() else {
        return out;
    };
    // Lines inside a literal (a docstring at indentation 0) or only a comment define nothing.
    let lexed = crate::lexer::lex(lang, text);
    for (i, (line, code)) in text.lines().zip(lexed.masked.lines()).enumerate() {
        if code.starts_with(char::is_whitespace) || code.trim().is_empty() {
            continue;
        }
        let (names, kind) = match family {
            Family::Python => {
                if line.starts_with('@') {
                    decorators.push_str(line.trim_end());
                    decorators.push('\n');
                    continue;
                }
                let t = line.trim_start_matches("async ");
                if t.starts_with("import ") || t.starts_with("from ") {
                    decorators.clear();
                    continue;
                }
                // A class, or a type made by a call (`Point = NamedTuple(…)`): its hover does
                // not show its members.
                let made_type = t.starts_with(char::is_uppercase)
                    && t.split_once('=').is_some_and(|(_, r)| r.contains('('));
                let kind = if t.starts_with("class ") || made_type {
                    Kind::Opaque
                } else {
                    Kind::Typed
                };
                (python_names(line), kind)
            }
            Family::Script => {
                if line.starts_with("import ") || line.starts_with("export {") {
                    continue;
                }
                let t = line
                    .trim_start_matches("export ")
                    .trim_start_matches("declare ")
                    .trim_start_matches("async ");
                let typed = t.starts_with("function")
                    || t.starts_with("const ")
                    || t.starts_with("let ")
                    || t.starts_with("var ");
                (
                    script_names(line),
                    if typed { Kind::Typed } else { Kind::Opaque },
                )
            }
            // No hovers compared: every importer mentioning a changed name is asked.
            Family::C | Family::Go => continue,
        };
        let above = std::mem::take(&mut decorators);
        for n in names {
            let Some(byte) = find_word(line, &n) else {
                continue;
            };
            let column = line[..byte].chars().count() as u32 + 1;
            // Defined twice (overloads, a redefinition): one hover does not show it.
            out.entry(n)
                .and_modify(|d: &mut Def| d.kind = Kind::Opaque)
                .or_insert(Def {
                    kind,
                    line: i as u32 + 1,
                    column,
                    decorators: above.clone(),
                });
        }
    }
    out
}

/// The byte offset of `word` in `line` as a whole word.
fn find_word(line: &str, word: &str) -> Option<usize> {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    line.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = line[..i].chars().next_back();
        let after = line[i + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// `names` and, to a fixpoint, every other top-level name of `text` whose definition mentions
/// one of them (`def load() -> Config` when `Config` changed): what an importer may reach the
/// change through.
pub fn reaching(family: Family, text: &str, names: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = names.clone();
    let blocks = match family {
        Family::Python => python(text),
        Family::Script => script(text),
        Family::Go => go(text),
        Family::C => None,
    };
    let Some(blocks) = blocks else {
        return out;
    };
    loop {
        let before = out.len();
        for (name, body) in &blocks {
            if !name.is_empty() && !out.contains(name) && mentions(body, &out) {
                out.insert(name.clone());
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

/// Whether `text` holds one of `names` as a whole word.
pub fn mentions(text: &str, names: &BTreeSet<String>) -> bool {
    mention_count(text, names) > 0
}

/// How many times `text` holds one of `names` as a whole word.
pub fn mention_count(text: &str, names: &BTreeSet<String>) -> usize {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|w| names.contains(*w))
        .count()
}

/// How many more brackets a line of code opens than it closes (literals and comments
/// blanked: `lexer::Lexed::masked`).
fn bracket_balance(code: &str) -> i32 {
    code.bytes()
        .map(|b| match b {
            b'(' | b'[' | b'{' => 1,
            b')' | b']' | b'}' => -1,
            _ => 0,
        })
        .sum()
}

/// A line as the statement cutters read it.
struct CodeLine {
    /// Its code: literals and comments blanked, trailing blanks left out.
    code: String,
    /// The line as written, less its comments and trailing blanks.
    written: String,
    /// Whether it begins inside a literal (a multi-line string's or template's continuation).
    in_literal: bool,
}

/// A text's lines as the statement cutters read them. Python statements that are a string
/// alone at bracket depth 0 (docstrings) are left out: they document, they define nothing.
fn code_lines(lang: Lang, text: &str) -> Vec<CodeLine> {
    let lexed = crate::lexer::lex(lang, text);
    let mut starts = vec![0];
    starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    let line_of = |offset: usize| starts.partition_point(|&s| s <= offset).saturating_sub(1);
    let span = |l: usize| -> (usize, usize) {
        let end = starts.get(l + 1).map_or(text.len(), |n| n - 1);
        (starts[l], end)
    };
    let mut in_literal = vec![false; starts.len()];
    for r in &lexed.strings {
        for l in line_of(r.start) + 1..=line_of(r.end.saturating_sub(1)) {
            if let Some(x) = in_literal.get_mut(l) {
                *x = true;
            }
        }
    }
    let (masked, bare) = (&lexed.masked, &lexed.uncommented);
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut skip_to: Option<usize> = None;
    let mut strings = lexed.strings.iter().peekable();
    for (l, &start) in starts.iter().enumerate() {
        if skip_to.is_some_and(|s| l <= s) {
            continue;
        }
        let (_, end) = span(l);
        while strings.peek().is_some_and(|r| r.start < start) {
            strings.next();
        }
        // A statement that is a string alone: the line's code starts with it, and nothing but
        // blanks follows its end.
        if depth == 0
            && lang == Lang::Python
            && let Some(r) = strings.peek()
            && r.start < end
            && masked[start..r.start].trim().is_empty()
        {
            let last = line_of(r.end.saturating_sub(1));
            let (_, last_end) = span(last);
            if masked[r.end.min(last_end)..last_end].trim().is_empty() {
                skip_to = Some(last);
                continue;
            }
        }
        let code = masked[start..end].trim_end().to_string();
        depth = (depth + bracket_balance(&code)).max(0);
        out.push(CodeLine {
            written: bare[start..end].trim_end().to_string(),
            code,
            in_literal: in_literal[l],
        });
    }
    out
}

/// Python's top-level statements by the names they define ("" for none), their text joined.
fn python(text: &str) -> Option<BTreeMap<String, String>> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut current: Option<(Vec<String>, String)> = None;
    let mut decorators = String::new();
    let mut depth: i32 = 0;
    for CodeLine {
        code,
        written: line,
        in_literal,
    } in code_lines(Lang::Python, text)
    {
        if code.trim().is_empty() && !in_literal {
            continue;
        }
        let top = !in_literal
            && depth == 0
            && !code.starts_with(char::is_whitespace)
            && !code.starts_with([')', ']', '}']);
        if top {
            if code.starts_with('@') {
                decorators.push_str(&line);
                decorators.push('\n');
                continue;
            }
            if let Some((names, body)) = current.take() {
                add(&mut out, names, body);
            }
            let mut body = std::mem::take(&mut decorators);
            body.push_str(&line);
            body.push('\n');
            current = Some((python_names(&line), body));
        } else if let Some((_, body)) = current.as_mut() {
            body.push_str(&line);
            body.push('\n');
        }
        depth = (depth + bracket_balance(&code)).max(0);
    }
    if let Some((names, body)) = current.take() {
        add(&mut out, names, body);
    }
    Some(out)
}

/// The names a top-level Python statement defines.
fn python_names(line: &str) -> Vec<String> {
    let word = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let t = line.trim_start_matches("async ");
    if let Some(rest) = t.strip_prefix("def ").or_else(|| t.strip_prefix("class ")) {
        return vec![word(rest.trim_start())];
    }
    if t.starts_with("import ") || t.starts_with("from ") {
        let list = match t.split_once(" import ") {
            Some((_, l)) => l,
            None => t.strip_prefix("import ").unwrap_or(""),
        };
        return list
            .replace(['(', ')', '\\'], " ")
            .split(',')
            .filter_map(|n| n.split_whitespace().last().map(str::to_string))
            .filter(|n| n != "*")
            .collect();
    }
    // `A = …`, `A: T = …`, `A, B = …`, `A += …`; not `A = B = …` (its other names are not
    // told apart: unnamed, so anything may change).
    if plain_assignments(t) > 1 {
        return Vec::new();
    }
    let head = t.split(['=', ':']).next().unwrap_or("");
    if t.contains('=') || t.contains(':') {
        let names: Vec<String> = head
            .split(',')
            .map(|n| {
                n.trim()
                    .trim_end_matches(['+', '-', '*', '/', '|', '&'])
                    .trim()
            })
            .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_alphanumeric() || c == '_'))
            .map(str::to_string)
            .collect();
        let keyword = matches!(
            head.split_whitespace().next(),
            Some("if" | "elif" | "else" | "for" | "while" | "with" | "try" | "except" | "finally")
        );
        if !names.is_empty() && !keyword {
            return names;
        }
    }
    Vec::new()
}

/// Whether a `const`/`let`/`var` line declares more than one name (a comma outside brackets
/// and strings).
fn top_level_comma(line: &str) -> bool {
    let t = line
        .trim_start_matches("export ")
        .trim_start_matches("declare ");
    if !(t.starts_with("const ") || t.starts_with("let ") || t.starts_with("var ")) {
        return false;
    }
    let mut depth = 0;
    let mut quote: Option<char> = None;
    for c in t.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'' | '`') => quote = Some(c),
            (None, '(' | '[' | '{' | '<') => depth += 1,
            (None, ')' | ']' | '}' | '>') => depth -= 1,
            (None, ',') if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// How many `=` of a line assign (not `==`, `<=`, `>=`, `!=`, `+=` …).
fn plain_assignments(line: &str) -> usize {
    let b = line.as_bytes();
    (0..b.len())
        .filter(|&i| {
            b[i] == b'='
                && b.get(i + 1).is_none_or(|c| *c != b'=')
                && !(i > 0 && b"=<>!+-*/%&|^:@".contains(&b[i - 1]))
        })
        .count()
}

/// Adds a statement's text under each name it defines ("" when none).
fn add(out: &mut BTreeMap<String, String>, names: Vec<String>, body: String) {
    if names.is_empty() {
        out.entry(String::new()).or_default().push_str(&body);
    }
    for n in names {
        out.entry(n).or_default().push_str(&body);
    }
}

/// JavaScript and TypeScript top-level statements by the names they define.
fn script(text: &str) -> Option<BTreeMap<String, String>> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut current: Option<(Vec<String>, String)> = None;
    let mut depth: i32 = 0;
    for CodeLine {
        code,
        written: line,
        in_literal,
    } in code_lines(Lang::Script, text)
    {
        if code.trim().is_empty() && !in_literal {
            continue;
        }
        let top = !in_literal
            && depth == 0
            && !code.starts_with(char::is_whitespace)
            && !code.starts_with(['}', ')', ']', '.']);
        if top {
            if let Some((names, body)) = current.take() {
                add(&mut out, names, body);
            }
            current = Some((script_names(&line), format!("{line}\n")));
        } else if let Some((_, body)) = current.as_mut() {
            body.push_str(&line);
            body.push('\n');
        }
        depth = (depth + bracket_balance(&code)).max(0);
    }
    if let Some((names, body)) = current.take() {
        add(&mut out, names, body);
    }
    Some(out)
}

/// The names a top-level script statement defines (or re-exports, or imports).
fn script_names(line: &str) -> Vec<String> {
    let word = |s: &str| -> String {
        s.trim_start()
            .trim_start_matches('*')
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
            .collect()
    };
    // A default export is imported under any name; several declarators are not told apart.
    if line.contains("export default") || top_level_comma(line) {
        return Vec::new();
    }
    let mut t = line.trim();
    for prefix in ["export ", "default ", "declare ", "abstract ", "async "] {
        t = t.strip_prefix(prefix).unwrap_or(t).trim_start();
    }
    for kw in [
        "function",
        "class",
        "interface",
        "type ",
        "enum ",
        "const enum ",
        "namespace ",
        "const ",
        "let ",
        "var ",
    ] {
        if let Some(rest) = t.strip_prefix(kw) {
            let name = word(rest);
            if !name.is_empty() {
                return vec![name];
            }
        }
    }
    // `import { a, b as c } from …`, `export { a, b } from …`, `import x from …`.
    if line.starts_with("import ") || line.starts_with("export {") || line.starts_with("export *") {
        let inner = line
            .split_once('{')
            .and_then(|(_, r)| r.split_once('}'))
            .map(|(l, _)| l.to_string())
            .unwrap_or_else(|| {
                line.trim_start_matches("import ")
                    .split(" from ")
                    .next()
                    .unwrap_or("")
                    .to_string()
            });
        let names: Vec<String> = inner
            .split(',')
            .filter_map(|n| n.split_whitespace().last().map(str::to_string))
            .filter(|n| n != "*" && !n.starts_with(['"', '\'']))
            .collect();
        if !names.is_empty() {
            return names;
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Option<BTreeSet<String>> {
        Some(v.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn python_changes_are_named_by_their_top_level_definitions() {
        let old = "import os\n\n@cache\ndef f(x):\n    return x  # one\n\nclass C:\n    y = 1\n\nLIMIT = {\n    0: 'a',\n}\n";
        // A comment and a blank line: nothing changed.
        let new = "import os\n\n\n@cache\ndef f(x):\n    return x  # two\n\nclass C:\n    y = 1\n\nLIMIT = {\n    0: 'a',\n}\n";
        assert_eq!(changed_names(Family::Python, old, new), names(&[]));
        let body = old.replace("return x  # one", "return x + 1");
        assert_eq!(changed_names(Family::Python, old, &body), names(&["f"]));
        let deco = old.replace("@cache", "@other");
        assert_eq!(changed_names(Family::Python, old, &deco), names(&["f"]));
        let dict = old.replace("0: 'a'", "0: 'b'");
        assert_eq!(changed_names(Family::Python, old, &dict), names(&["LIMIT"]));
        let added = format!("{old}def g():\n    pass\n");
        assert_eq!(changed_names(Family::Python, old, &added), names(&["g"]));
        // A `#` in a string is not a comment.
        let s = old.replace("0: 'a'", "0: 'a#1'");
        assert_eq!(changed_names(Family::Python, old, &s), names(&["LIMIT"]));
        // A module-level statement that defines nothing: anything may change.
        let stmt = format!("{old}if os.name:\n    print(1)\n");
        assert_eq!(changed_names(Family::Python, old, &stmt), None);
        // What a star import takes, and chained assignments: anything may change.
        let all = format!("{old}__all__ = ['f']\n");
        assert_eq!(
            changed_names(Family::Python, &all, &all.replace("['f']", "[]")),
            None
        );
        let chain = format!("{old}A = B = 0\n");
        assert_eq!(
            changed_names(Family::Python, &chain, &chain.replace("0", "''")),
            None
        );
        // A short or unfinished import line is no crash (it names nothing: anything may change).
        assert_eq!(
            changed_names(Family::Python, "from a\n", "from .\nimport\n"),
            None
        );
        let accented = changed_names(Family::Python, "from .é import x\n", "x = 2\n");
        assert_eq!(accented, names(&["x"]));
        // A docstring documents: editing it changes no name (a module's, a function's).
        let doc = "\"\"\"Doc.\n\nclass NotReal:\n\"\"\"\ndef f():\n    \'\'\'What f does.\n\n    def g(): not code\n    \'\'\'\n    return 1\n";
        let doc2 = doc.replace("NotReal", "Other").replace("What f", "How f");
        assert_eq!(changed_names(Family::Python, doc, &doc2), names(&[]));
        assert_eq!(
            changed_names(Family::Python, doc, &doc.replace("return 1", "return 2")),
            names(&["f"])
        );
        // A string that is an argument or an item is no docstring.
        let all = "__all__ = [\n    \"a\",\n]\n";
        assert_eq!(
            changed_names(Family::Python, all, &all.replace("\"a\"", "\"b\"")),
            None
        );
    }

    /// Django's html.py:300: a raw string holding quotes and brackets left the cutter inside a
    /// bracket for the rest of the file, so no later definition was ever named.
    #[test]
    fn a_raw_string_leaves_the_definitions_after_it_named() {
        let old = "word_split_re = _lazy_re_compile(r\"\"\"([\\s<>\"']+)\"\"\")\n\n\ndef avoid_wrapping(value):\n    return value\n\n\ndef html_safe(klass):\n    return klass\n";
        let renamed = old.replace("def avoid_wrapping", "def avoid_wraps");
        assert_eq!(
            changed_names(Family::Python, old, &renamed),
            names(&["avoid_wrapping", "avoid_wraps"])
        );
        let defs = definitions(Family::Python, old);
        assert!(defs.contains_key("html_safe"), "{defs:?}");
    }

    #[test]
    fn definitions_say_where_each_name_is_and_whether_its_hover_shows_it() {
        let py = "import os\n\n@cache\ndef f(x):\n    return x\n\nclass C:\n    y = 1\n\nLIMIT = 3\nasync def g():\n    pass\n";
        let d = definitions(Family::Python, py);
        let at = |n: &str| (d[n].kind, d[n].line, d[n].column);
        assert_eq!(at("f"), (Kind::Typed, 4, 5));
        let twice = definitions(
            Family::Python,
            "@overload\ndef f(x: int) -> int: ...\n@overload\ndef f(x: str) -> str: ...\nP = NamedTuple('P', [])\n",
        );
        assert_eq!(twice["f"].kind, Kind::Opaque);
        assert_eq!(twice["P"].kind, Kind::Opaque);
        assert_eq!(d["f"].decorators, "@cache\n");
        assert_eq!(at("C"), (Kind::Opaque, 7, 7));
        assert_eq!(at("LIMIT"), (Kind::Typed, 10, 1));
        assert_eq!(at("g"), (Kind::Typed, 11, 11));
        assert_eq!(d["g"].decorators, "");
        assert!(!d.contains_key("os"));
        let ts = "export function total(x: number): number {\n  return x;\n}\nexport interface Shape {\n}\nconst n = 1;\n";
        let d = definitions(Family::Script, ts);
        let at = |n: &str| (d[n].kind, d[n].line, d[n].column);
        assert_eq!(at("total"), (Kind::Typed, 1, 17));
        assert_eq!(at("Shape"), (Kind::Opaque, 4, 18));
        assert_eq!(at("n"), (Kind::Typed, 6, 7));
    }

    #[test]
    fn script_changes_are_named_by_their_top_level_definitions() {
        let old = "import { a } from './a';\n// c\nexport function total(x: number): number {\n  return x;\n}\nexport const LIMIT = 3;\nexport interface Shape {\n  w: number;\n}\n";
        let body = old.replace("return x;", "return x + 1; // more");
        assert_eq!(changed_names(Family::Script, old, &body), names(&["total"]));
        let sig = old.replace("(x: number): number", "(x: number): string");
        assert_eq!(changed_names(Family::Script, old, &sig), names(&["total"]));
        let iface = old.replace("w: number", "w: string");
        assert_eq!(
            changed_names(Family::Script, old, &iface),
            names(&["Shape"])
        );
        let comment = old.replace("// c", "/* other */");
        assert_eq!(changed_names(Family::Script, old, &comment), names(&[]));
        let call = format!("{old}console.log(1);\n");
        assert_eq!(changed_names(Family::Script, old, &call), None);
        let default = "export default function total(): number {\n  return 1;\n}\n";
        let d2 = default.replace("number", "string");
        assert_eq!(changed_names(Family::Script, default, &d2), None);
        let two = "export const a = 1, b = 2;\n";
        assert_eq!(
            changed_names(Family::Script, two, &two.replace("2", "'x'")),
            None
        );
    }

    #[test]
    fn a_change_reaches_the_names_defined_through_it() {
        let text = "class Config:\n    port: int\n\ndef load() -> Config:\n    return Config()\n\ndef run():\n    return load()\n\ndef other():\n    pass\n";
        let got = reaching(Family::Python, text, &names(&["Config"]).unwrap());
        assert_eq!(got, names(&["Config", "load", "run"]).unwrap());
        // Whole words only, each time.
        let wanted = names(&["load", "Config"]).unwrap();
        assert_eq!(mention_count(text, &wanted), 5);
        assert_eq!(mention_count("loader = Configs", &wanted), 0);
        assert!(!mentions("reload()", &wanted));
    }
}
