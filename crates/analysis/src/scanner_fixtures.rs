//! Annotated fixtures (fixtures/scanners/ of this crate) of the scanners that read code through `lexer`: the
//! hooks' top-level names and statement cutter (`hook::surface`), the import scanner
//! (`hook::imports`), the re-check's declaration fingerprints (`gates::declarations`) and the
//! derived hints' call scanner (`hints::scan`). Each fixture's `# expect KIND: VALUE` (or
//! `// expect …`) comments list what the scanner of that kind finds, and it finds nothing else.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::calls;
use crate::declarations;
use crate::imports::{Family, Target, imports_of};
use crate::surface;

const PYTHON: &str = include_str!("../fixtures/scanners/python.py");
const SCRIPT: &str = include_str!("../fixtures/scanners/script.ts");
const DJANGO: &str = include_str!("../fixtures/scanners/django_html.py");

/// The values a fixture expects of `kind`, in order.
fn expected(text: &str, kind: &str) -> Vec<String> {
    let marks = [format!("# expect {kind}: "), format!("// expect {kind}: ")];
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            marks.iter().find_map(|m| l.strip_prefix(m.as_str()))
        })
        .map(str::to_string)
        .collect()
}

fn sorted(v: Vec<String>) -> Vec<String> {
    let mut v = v;
    v.sort();
    v
}

/// The hooks' top-level names, and each name's statement told apart: an edit of the line that
/// defines it changes that name alone.
fn check_names(family: Family, text: &str) {
    let defs = surface::definitions(family, text);
    let found: Vec<String> = defs.keys().cloned().collect();
    assert_eq!(found, sorted(expected(text, "name")), "top-level names");
    let lines: Vec<&str> = text.lines().collect();
    for (name, def) in &defs {
        // A continuation line in the name's statement, just after the line naming it.
        let mut edited: Vec<&str> = lines.clone();
        edited.insert(def.line as usize, "    0");
        let edited = edited.join("\n") + "\n";
        let changed = surface::changed_names(family, text, &edited);
        let want: BTreeSet<String> = [name.clone()].into();
        assert_eq!(changed, Some(want), "an edit after line {}", def.line);
    }
}

fn check_imports(family: Family, text: &str, path: &Path) {
    let found: Vec<String> = imports_of(family, path, text)
        .into_iter()
        .map(|t| match t {
            Target::Suffix(s) => s,
            Target::Exact(p) => p.display().to_string(),
        })
        .collect();
    assert_eq!(sorted(found), sorted(expected(text, "import")), "imports");
}

/// The declaration parts' first lines (past a Python part's decorators).
fn check_declarations(family: Family, text: &str) {
    let heads: Vec<String> = declarations::parts(family, text)
        .iter()
        .map(|p| {
            p.lines()
                .find(|l| !l.starts_with('@'))
                .unwrap_or_default()
                .trim_end()
                .to_string()
        })
        .collect();
    assert_eq!(heads, expected(text, "decl"), "declaration parts");
}

/// The calls the hints scanner sees, as `callee(arguments)`; and every `def`'s parameter list
/// ends at the `)` that a `:` or `->` follows.
fn check_calls(text: &str) {
    let t = calls::Text::new(text);
    let found: Vec<String> = calls::calls(&t, 1, u32::MAX)
        .iter()
        .map(|site| {
            let open = t.index(site.open).unwrap_or(0).saturating_sub(1);
            let callee: String = t.chars[..open]
                .iter()
                .rev()
                .take_while(|c| c.is_alphanumeric() || **c == '_')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let args: Vec<&str> = site.args.iter().map(|a| a.text.as_str()).collect();
            format!("{callee}({})", args.join(", "))
        })
        .collect();
    assert_eq!(sorted(found), sorted(expected(text, "call")), "calls");
    let code: String = t.code.iter().collect();
    for (at, _) in code.match_indices("def ") {
        let start = code[..at].chars().count() + 4;
        let name_end = start
            + t.chars[start..]
                .iter()
                .take_while(|c| c.is_alphanumeric() || **c == '_')
                .count();
        let (end, arrow) = calls::def_params_end(&t.code, name_end)
            .unwrap_or_else(|| panic!("no parameter list after {:?}", t.pos(start)));
        let after: String = t.chars[end..].iter().collect();
        let after = after.trim_start();
        assert_eq!(t.chars[end - 1], ')', "at {:?}", t.pos(end));
        assert!(
            after.starts_with(':') || after.starts_with("->"),
            "at {:?}",
            t.pos(end)
        );
        assert_eq!(arrow, after.starts_with("->"), "at {:?}", t.pos(end));
    }
}

#[test]
fn python_fixture() {
    let path = PathBuf::from("/fixture/python.py");
    check_names(Family::Python, PYTHON);
    check_imports(Family::Python, PYTHON, &path);
    check_declarations(Family::Python, PYTHON);
    check_calls(PYTHON);
}

#[test]
fn script_fixture() {
    let path = PathBuf::from("/fixture/script.ts");
    check_names(Family::Script, SCRIPT);
    check_imports(Family::Script, SCRIPT, &path);
    check_declarations(Family::Script, SCRIPT);
}

/// Django's html.py: what follows the raw string `r"""([\s<>"']+)"""` is read as code.
#[test]
fn django_html_fixture() {
    let path = PathBuf::from("/fixture/django/utils/html.py");
    check_names(Family::Python, DJANGO);
    check_imports(Family::Python, DJANGO, &path);
    check_declarations(Family::Python, DJANGO);
    check_calls(DJANGO);
}

/// Texts made of the pieces that trouble scanners, at random (a fixed seed: the same texts on
/// every run).
fn random_texts(count: usize) -> Vec<String> {
    const PIECES: &[&str] = &[
        "\"",
        "'",
        "`",
        "\"\"\"",
        "'''",
        "r",
        "b",
        "f",
        "rb",
        "F",
        "\\",
        "\n",
        " ",
        "    ",
        "#",
        "//",
        "/*",
        "*/",
        "/",
        "${",
        "{",
        "}",
        "(",
        ")",
        "[",
        "]",
        ":",
        "=",
        ",",
        "->",
        "def ",
        "class ",
        "import ",
        "from ",
        "export ",
        "function ",
        "x",
        "é",
        "€",
        "\t",
        "\r\n",
        "@",
        "return ",
        "!r",
        "{{",
        "}}",
        ";",
        "<",
        ">",
    ];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    (0..count)
        .map(|_| {
            let len = (next() % 60) as usize;
            (0..len)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect()
        })
        .collect()
}

/// Whatever the text, the lexer keeps its bytes' places and line breaks, and no scanner
/// reading through it panics.
#[test]
fn any_text_keeps_its_shape_and_no_scanner_panics() {
    use crate::lexer::{Lang, lex};
    let path = PathBuf::from("/fixture/any");
    for text in random_texts(3000) {
        for lang in [Lang::Python, Lang::Script, Lang::Go] {
            let l = lex(lang, &text);
            for out in [&l.masked, &l.uncommented] {
                assert_eq!(out.len(), text.len(), "{text:?}");
                let breaks = |s: &str| -> Vec<usize> {
                    s.bytes()
                        .enumerate()
                        .filter(|(_, b)| matches!(b, b'\n' | b'\r'))
                        .map(|(i, _)| i)
                        .collect()
                };
                assert_eq!(breaks(out), breaks(&text), "{text:?}");
            }
            assert_eq!(l.masked_chars(&text).len(), text.chars().count());
            for ranges in [&l.strings, &l.comments] {
                assert!(
                    ranges
                        .windows(2)
                        .all(|w| w[0].end <= w[1].start && w[0].start < w[0].end)
                );
                assert!(
                    ranges.iter().all(|r| text.get(r.clone()).is_some()),
                    "{text:?}"
                );
            }
        }
        for family in [Family::Python, Family::Script, Family::Go] {
            let _ = declarations::parts(family, &text);
            let _ = surface::definitions(family, &text);
            let _ = surface::changed_names(family, &text, &format!("{text}\nx = 1\n"));
            let _ = imports_of(family, &path, &text);
        }
        let t = calls::Text::new(&text);
        assert_eq!(t.code.len(), t.chars.len());
        let _ = calls::calls(&t, 1, u32::MAX);
        for i in 0..t.code.len() {
            let _ = calls::def_params_end(&t.code, i);
            let _ = calls::parts(&t, i);
        }
    }
}
