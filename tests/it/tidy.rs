//! House rules checked on the tree: every source file says what it is for in a `//!` line,
//! nothing outside the CLI prints to stdout (stdout belongs to the protocol), no function is
//! over 100 lines and no file over 800 (the debts named).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The workspace's source folders: the binary's `src/` and each layer crate's, with the module
/// path the crate's root has in the layers' one namespace (`lsp` for `crates/lsp`, whose root
/// was the `lsp` module; nothing for crates that hold several modules, as `crates/core`).
fn source_roots() -> Vec<(PathBuf, &'static str)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = vec![(root.join("src"), "")];
    for (krate, mount) in [
        ("base", ""),
        ("analysis", ""),
        ("lsp", "lsp"),
        ("core", ""),
        ("engine", ""),
        ("mcp", "mcp"),
        ("lspface", "lspface"),
        ("daemon", "daemon"),
    ] {
        out.push((root.join("crates").join(krate).join("src"), mount));
    }
    let crates: Vec<_> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .collect();
    for c in crates {
        assert!(
            out.iter().any(|(d, _)| *d == c),
            "{} is not in tests/it/tidy.rs source_roots",
            c.display()
        );
    }
    out
}

/// Every source file of the workspace, with the module it is in the layers' one namespace and
/// its crate's root module there.
fn sources() -> Vec<(PathBuf, String, &'static str)> {
    let mut out = Vec::new();
    for (dir, mount) in source_roots() {
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        for f in files {
            let module = module_of(f.strip_prefix(&dir).unwrap());
            let module = match (mount, module.as_str()) {
                ("", m) => m.to_string(),
                (m, "") => m.to_string(),
                (m, sub) => format!("{m}::{sub}"),
            };
            out.push((f, module, mount));
        }
    }
    out
}

fn all_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = sources().into_iter().map(|(f, ..)| f).collect();
    for d in ["tests", "bench"] {
        rust_files(&root.join(d), &mut files);
    }
    files
}

#[test]
fn every_source_file_opens_with_a_module_doc() {
    let missing: Vec<_> = all_files()
        .into_iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            !text.trim_start().starts_with("//!")
        })
        .collect();
    assert!(missing.is_empty(), "files without a //! line: {missing:?}");
}

/// `print!`/`println!`/`dbg!` (but not `eprint!`/`eprintln!`).
fn prints_to_stdout(text: &str) -> bool {
    ["print!(", "println!(", "dbg!("].iter().any(|m| {
        text.match_indices(m)
            .any(|(i, _)| !text[..i].ends_with('e'))
    })
}

#[test]
fn the_stdout_check_can_fail() {
    assert!(prints_to_stdout("fn f() { println!(\"x\") }"));
    assert!(!prints_to_stdout("fn f() { eprintln!(\"x\") }"));
}

#[test]
fn only_the_cli_prints_to_stdout() {
    let offenders: Vec<_> = sources()
        .into_iter()
        .filter(|(_, module, _)| module != "cli" && !module.starts_with("cli::"))
        .map(|(p, ..)| p)
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            prints_to_stdout(&text)
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "stdout writes outside src/cli: {offenders:?}"
    );
}

/// Every file under `dir` (recursively), leaving out what builds, tools and VCS put there.
fn every_file(dir: &Path, out: &mut Vec<PathBuf>) {
    const SKIP: [&str; 9] = [
        ".git",
        "target",
        ".tools",
        "node_modules",
        "__pycache__",
        ".lspgate",
        "corpus",
        "artifacts",
        "coverage",
    ];
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            if !p.file_name().is_some_and(|n| SKIP.iter().any(|s| n == *s)) {
                every_file(&p, out);
            }
        } else {
            out.push(p);
        }
    }
}

/// The documents stand alone: README.md, ARCHITECTURE.md, docs/ and src/ point at no contract
/// outside the repository (a clone has nothing beside it; docs/protocol.md is the contract), and
/// the additions page that docs/protocol.md absorbed is named nowhere.
#[test]
fn the_docs_stand_alone() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Spelled in pieces so that this file does not name them itself.
    let outside = [concat!("shared", "/SPEC"), concat!("..", "/shared")];
    let gone = concat!("SPEC-", "ADDITIONS");
    assert!(
        !root.join(format!("{gone}.md")).exists(),
        "{gone}.md is back: its content belongs in docs/protocol.md"
    );
    let mut docs = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    every_file(&root.join("docs"), &mut docs);
    every_file(&root.join("src"), &mut docs);
    every_file(&root.join("crates"), &mut docs);
    assert!(
        root.join("docs/protocol.md").exists(),
        "docs/protocol.md is missing"
    );
    let mut everything = Vec::new();
    every_file(root, &mut everything);
    let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
    let mut offenders = Vec::new();
    for p in &docs {
        let text = read(p);
        for needle in outside {
            if text.contains(needle) {
                offenders.push(format!("{} mentions {needle}", p.display()));
            }
        }
    }
    for p in &everything {
        if read(p).contains(gone) {
            offenders.push(format!("{} mentions {gone}", p.display()));
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

/// The layers, lowest first: a module may use only modules of a lower layer (ARCHITECTURE.md
/// draws them). Front ends on top; the daemon hosts MCP sessions and runs the operations.
const LAYERS: &[&[&str]] = &[
    &["text", "raw", "procfs", "regular", "lexer"],
    &["imports", "calls"],
    &["surface", "declarations"],
    &["scanner_fixtures"],
    &["watch"],
    &["lsp"],
    // Core's error (and the engine's, which Cargo keeps above the core).
    &["error"],
    &["documents", "workspace", "state"],
    &["edits", "gates"],
    &["registry"],
    &["events"],
    &["ops"],
    &["mcp", "lspface"],
    &["daemon"],
    &["cli"],
];

/// Imports that still run up a layer, each a debt named here (none now: the daemon serves
/// typed requests, and command lines stay in the client).
const KNOWN_UPWARD: &[(&str, &str)] = &[];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// `text` without its `#[cfg(test)]` items: each such attribute and the item, field, variant,
/// statement or match arm it is on (to its `;` or `,`, or the `}` that closes it).
fn without_test_items(text: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let item = &rest[at + MARK.len()..];
        let mut depth = 0usize;
        let mut end = item.len();
        for (i, c) in item.char_indices() {
            match c {
                '{' | '(' | '[' => depth += 1,
                '}' | ')' | ']' if depth == 0 => {
                    end = i;
                    break;
                }
                '}' | ')' | ']' => {
                    depth -= 1;
                    if depth == 0 && c == '}' {
                        end = i + 1;
                        break;
                    }
                }
                ';' | ',' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The lines of a source text outside comments and its `#[cfg(test)]` items.
fn code_lines(text: &str) -> Vec<String> {
    without_test_items(text)
        .lines()
        .map(|line| line.split("//").next().unwrap_or("").to_string())
        .collect()
}

/// Every `crate::MODULE` a source text uses outside comments and its `#[cfg(test)]` items.
fn uses(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in code_lines(text) {
        let mut rest = line.as_str();
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

/// The imports of the workspace's sources that run up a layer (or to a module no layer names),
/// as `file: from -> to`. (Between crates Cargo holds the layers; this holds them within one.)
fn upward_imports() -> Vec<String> {
    let all = sources();
    let modules: BTreeSet<&str> = all.iter().map(|(_, m, _)| m.as_str()).collect();
    let mut out = Vec::new();
    for (f, module, mount) in &all {
        let from = module.split("::").next().unwrap_or("").to_string();
        if from.is_empty() || f.ends_with("tests.rs") {
            continue;
        }
        let rel = f
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap_or(f)
            .to_path_buf();
        let text = std::fs::read_to_string(f).unwrap();
        for to in uses(&text) {
            // In a crate whose root is a module (`lsp`), `crate::client` is that module's.
            let to = if !mount.is_empty() && modules.contains(format!("{mount}::{to}").as_str()) {
                mount.to_string()
            } else {
                to
            };
            if to == from || KNOWN_UPWARD.contains(&(from.as_str(), to.as_str())) {
                continue;
            }
            match (layer(&from), layer(&to)) {
                (Some(a), Some(b)) if b < a => {}
                _ => out.push(format!("{}: {from} -> {to}", rel.display())),
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn no_module_imports_a_higher_layer() {
    let up = upward_imports();
    assert!(
        up.is_empty(),
        "imports against the layering (tests/it/tidy.rs LAYERS):\n{}",
        up.join("\n")
    );
    // The check can fail: an import of `ops` from `lsp` is caught.
    assert_eq!(uses("use crate::ops::Engine; // crate::cli"), ["ops"]);
    assert!(layer("ops") > layer("lsp"));
}

/// ARCHITECTURE.md names every crate (`crates/core/`) and every module at the top of a crate's
/// `src/` (`text.rs`, `registry/`); the files below are described by their own `//!` lines.
#[test]
fn every_crate_and_module_is_in_the_code_map() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut missing = Vec::new();
    for (dir, _) in source_roots() {
        let krate = dir.parent().unwrap();
        let rel = krate
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if !rel.is_empty() && !map.contains(&format!("{rel}/")) {
            missing.push(format!("{rel}/"));
        }
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let named = if p.is_dir() {
                map.contains(&format!("{name}/"))
            } else {
                ["lib.rs", "main.rs", "tests.rs"].contains(&name.as_str()) || map.contains(&name)
            };
            if !named {
                missing.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "crates and modules ARCHITECTURE.md does not name: {missing:?}"
    );
}

/// Module → the modules it imports.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The module a file under `src/` is: `a/b.rs` and `a/b/mod.rs` are `a::b`; `lib.rs` and
/// `main.rs` the crate's root, `""`.
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts
        .last()
        .is_some_and(|p| ["mod", "lib", "main"].contains(&p.as_str()))
    {
        parts.pop();
    }
    parts.join("::")
}

/// The lowercase segments `::a::b` at the start of `s`, and what follows them.
fn segments(mut s: &str) -> (Vec<String>, &str) {
    let mut out = Vec::new();
    while let Some(rest) = s.strip_prefix("::") {
        let n = rest
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(rest.len());
        if n == 0 || rest.starts_with(|c: char| c.is_ascii_digit()) {
            break;
        }
        out.push(rest[..n].to_string());
        s = &rest[n..];
    }
    (out, s)
}

/// Where the next `crate`, `super` or `self` (a whole word) is in `code`, from `at` on.
fn next_base(code: &str, at: usize) -> Option<(usize, &'static str)> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    ["crate", "super", "self"]
        .into_iter()
        .filter_map(|base| {
            code[at..]
                .match_indices(base)
                .map(|(i, _)| at + i)
                .find(|&i| !code[..i].ends_with(word))
                .map(|i| (i, base))
        })
        .min()
}

/// Every path `crate::…`, `super::…` or `self::…` in `code`, as its base and its lowercase
/// segments; a braced group (`super::{a, b::C}`) gives one path per item.
fn paths(code: &str) -> Vec<(&'static str, Vec<String>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some((i, base)) = next_base(code, at) {
        let (segs, rest) = segments(&code[i + base.len()..]);
        at = code.len() - rest.len();
        if let Some(group) = rest.strip_prefix("::{") {
            let group = group.split('}').next().unwrap_or("");
            for item in group.split(',') {
                let more = segments(&format!("::{}", item.trim())).0;
                out.push((base, [segs.clone(), more].concat()));
            }
        } else {
            out.push((base, segs));
        }
    }
    out
}

/// The module `base::segs` names, seen from module `from`: the deepest of `modules` it goes
/// through (`super` is the parent of `from`, whether its file is `b.rs` or `b/mod.rs`). In a
/// crate whose root is module `mount`, `crate::x` is `mount::x`, or the layer `x` it imports.
fn resolve(
    from: &str,
    mount: &str,
    base: &str,
    segs: &[String],
    modules: &BTreeSet<String>,
) -> Option<String> {
    if base == "crate" && !mount.is_empty() {
        let inner = [vec![mount.to_string()], segs.to_vec()].concat();
        if let Some(m) = resolve(from, "", "crate", &inner, modules).filter(|m| m != mount) {
            return Some(m);
        }
    }
    let mut cur: Vec<&str> = match base {
        "crate" => Vec::new(),
        _ => from.split("::").filter(|p| !p.is_empty()).collect(),
    };
    let mut segs = segs;
    if base == "super" {
        cur.pop();
        while let Some((first, rest)) = segs.split_first()
            && first == "super"
        {
            cur.pop();
            segs = rest;
        }
    }
    (1..=segs.len())
        .rev()
        .map(|n| {
            let tail = segs[..n].iter().map(String::as_str);
            cur.iter()
                .copied()
                .chain(tail)
                .collect::<Vec<_>>()
                .join("::")
        })
        .find(|m| modules.contains(m))
}

/// Whether `a` and `b` are one module, or one holds the other (the crate's root holds all).
fn related(a: &str, b: &str) -> bool {
    let holds =
        |outer: &str, inner: &str| outer.is_empty() || inner.starts_with(&format!("{outer}::"));
    a == b || holds(a, b) || holds(b, a)
}

/// The modules that `text`, the source of module `from`, imports outside comments and its
/// `#[cfg(test)]` part, leaving out `from` itself, its submodules and the modules holding it.
fn imports(from: &str, mount: &str, text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    paths(&code_lines(text).join("\n"))
        .into_iter()
        .filter_map(|(base, segs)| resolve(from, mount, base, &segs, modules))
        .filter(|to| !related(from, to))
        .collect()
}

/// The file-level import graph of the workspace (unit tests' `tests.rs` files left out).
fn import_graph() -> Graph {
    let mut files = sources();
    files.retain(|(f, ..)| !f.ends_with("tests.rs"));
    let modules: BTreeSet<String> = files.iter().map(|(_, m, _)| m.clone()).collect();
    files
        .iter()
        .map(|(f, from, mount)| {
            let text = std::fs::read_to_string(f).unwrap();
            let from = from.clone();
            let to = imports(&from, mount, &text, &modules);
            (from, to)
        })
        .collect()
}

/// The modules `from` reaches through `graph`, one import or more away.
fn reachable<'g>(graph: &'g Graph, from: &str) -> BTreeSet<&'g str> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<&str> = graph
        .get(from)
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect();
    while let Some(m) = todo.pop() {
        if seen.insert(m) {
            todo.extend(graph.get(m).into_iter().flatten().map(String::as_str));
        }
    }
    seen
}

/// The cycles of `graph`: its strongly connected components of more than one module, each
/// sorted.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    let reach: BTreeMap<&str, BTreeSet<&str>> = graph
        .keys()
        .map(|m| (m.as_str(), reachable(graph, m)))
        .collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for (m, from_m) in &reach {
        let component: Vec<String> = from_m
            .iter()
            .filter(|w| reach.get(*w).is_some_and(|r| r.contains(m)))
            .map(|w| w.to_string())
            .collect();
        if component.len() > 1 && !out.contains(&component) {
            out.push(component);
        }
    }
    out
}

#[test]
fn no_import_cycles_between_files() {
    let found = cycles(&import_graph());
    let listed: Vec<String> = found.iter().map(|c| c.join(" <-> ")).collect();
    assert!(
        found.is_empty(),
        "files that import each other (through `crate::`, `super::` or `self::` paths):\n{}",
        listed.join("\n")
    );
    // The check can fail: `a::b` and `a::c` importing each other are a cycle; `a::c` and its
    // submodule `a::c::d` are not, nor are comments and test parts.
    let modules: BTreeSet<String> = ["a", "a::b", "a::c", "a::c::d"].map(String::from).into();
    assert_eq!(module_of(Path::new("a/c/mod.rs")), "a::c");
    assert_eq!(module_of(Path::new("a/c/d.rs")), "a::c::d");
    let sources = [
        (
            "a::b",
            "use super::{c::X, Y}; // crate::a::c::d\n#[cfg(test)]\nuse crate::a::c::d;",
        ),
        ("a::c", "use self::d::Z;\nfn f() { crate::a::b::g() }"),
        (
            "a::c::d",
            "use super::super::b::W;\nfn f() { crate::a::c::g() }",
        ),
    ];
    let graph: Graph = sources
        .iter()
        .map(|(from, text)| (from.to_string(), imports(from, "", text, &modules)))
        .collect();
    let only = |m: &str| BTreeSet::from([m.to_string()]);
    assert_eq!(graph["a::b"], only("a::c"));
    assert_eq!(graph["a::c"], only("a::b"));
    assert_eq!(graph["a::c::d"], only("a::b"));
    assert_eq!(cycles(&graph), [["a::b", "a::c"]]);
    // Test items are left out wherever they stand; the code around them is kept.
    let kept = without_test_items(
        "a\n#[cfg(test)]\nuse x::Y;\nb #[cfg(test)] fn f() { g({}); }\nstruct S { p: u8, \
         #[cfg(test)]\n hold: crate::x::Y<(u8, u8)>,\n q: u8 }\nenum E { #[cfg(test)] T(u8) }",
    );
    for gone in ["x::Y", "g(", "hold", "T(u8)"] {
        assert!(!kept.contains(gone), "{gone} kept in {kept}");
    }
    for stays in ["a\n", "b ", "p: u8", "q: u8 }", "enum E { }"] {
        assert!(kept.contains(stays), "{stays} lost from {kept}");
    }
    // In a crate whose root is a module, `crate::` names that module's parts or a layer below.
    let modules: BTreeSet<String> = ["lsp", "lsp::client", "error"].map(String::from).into();
    assert_eq!(
        imports(
            "lsp::view",
            "lsp",
            "use crate::client::X;\nuse crate::error::E;",
            &modules
        ),
        BTreeSet::from(["lsp::client".to_string(), "error".to_string()])
    );
}

/// Functions over `MAX_FUNCTION_LINES` still being split elsewhere, each a debt to pay (file,
/// function): remove an entry once its function is short.
const LONG_FUNCTION_DEBTS: [(&str, &str); 0] = [];

/// The most lines a function may have, from its `fn` line to its closing brace.
const MAX_FUNCTION_LINES: usize = 100;

/// Words that may stand before `fn` in a function's first line.
fn qualifies_fn(word: &str) -> bool {
    ["pub", "async", "const", "unsafe", "extern", "\"C\""].contains(&word)
        || word.starts_with("pub(")
}

/// Each function of a (rustfmt-formatted) source text with a body, its `#[cfg(test)]` items
/// left out: its name and its lines, from the `fn` line to the `}` at its indentation that
/// closes it.
fn functions(text: &str) -> Vec<(String, usize)> {
    let text = without_test_items(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        let indent = &line[..line.len() - code.len()];
        let Some(at) = code.find("fn ") else {
            continue;
        };
        if !code[..at].split_whitespace().all(qualifies_fn) {
            continue;
        }
        let name: String = code[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // The signature ends in `{` (a body), `;` (none) or `}` (a body on one line).
        let Some(open) = (i..lines.len()).find(|&j| lines[j].trim_end().ends_with(['{', ';', '}']))
        else {
            continue;
        };
        if !lines[open].trim_end().ends_with('{') {
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(end) = (open + 1..lines.len()).find(|&k| lines[k].trim_end() == close) {
            out.push((name, end - i + 1));
        }
    }
    out
}

/// The functions of `text` over `MAX_FUNCTION_LINES`, by name with their lines.
fn long_functions(text: &str) -> Vec<(String, usize)> {
    functions(text)
        .into_iter()
        .filter(|(_, n)| *n > MAX_FUNCTION_LINES)
        .collect()
}

#[test]
fn the_function_length_check_can_fail() {
    let body = "        x += 1;\n".repeat(MAX_FUNCTION_LINES);
    let text = format!(
        "//! x\n\nimpl A {{\n    pub(crate) async fn long(\n        &self,\n    ) -> u8 {{\n{body}    }}\n\n    fn short(&self) -> u8 {{ 1 }}\n}}\n\ntrait T {{\n    fn declared(&self);\n}}\n\nfn fine() {{\n    if x {{\n    }}\n}}\n\n#[cfg(test)]\nmod tests {{\n    fn long_test() {{\n{body}    }}\n}}\n"
    );
    assert_eq!(
        functions(&text),
        [
            ("long".to_string(), MAX_FUNCTION_LINES + 4),
            ("fine".to_string(), 4)
        ]
    );
    assert_eq!(
        long_functions(&text),
        [("long".to_string(), MAX_FUNCTION_LINES + 4)]
    );
}

#[test]
fn no_function_is_over_100_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut long = Vec::new();
    let mut debts_found = BTreeSet::new();
    for (path, ..) in sources() {
        if path.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        for (name, n) in long_functions(&text) {
            if LONG_FUNCTION_DEBTS.contains(&(rel.as_str(), name.as_str())) {
                debts_found.insert((rel.clone(), name));
            } else {
                long.push(format!("{rel} `{name}`: {n} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines (split them along their seams): {long:#?}"
    );
    let paid: Vec<_> = LONG_FUNCTION_DEBTS
        .iter()
        .filter(|(f, n)| !debts_found.contains(&(f.to_string(), n.to_string())))
        .collect();
    assert!(
        paid.is_empty(),
        "no longer over {MAX_FUNCTION_LINES} lines: remove from LONG_FUNCTION_DEBTS {paid:?}"
    );
}

/// Files over `MAX_FILE_LINES` lines, each a debt to pay: remove an entry once its file is
/// split.
const LONG_FILE_DEBTS: [&str; 0] = [];

/// The most lines a file of the workspace's Rust may have.
const MAX_FILE_LINES: usize = 800;

#[test]
fn no_file_is_over_800_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut long = Vec::new();
    let mut debts_found = BTreeSet::new();
    for path in all_files() {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let n = std::fs::read_to_string(&path).unwrap().lines().count();
        if n <= MAX_FILE_LINES {
            continue;
        }
        if LONG_FILE_DEBTS.contains(&rel.as_str()) {
            debts_found.insert(rel);
        } else {
            long.push(format!("{rel}: {n} lines"));
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_LINES} lines (split them): {long:#?}"
    );
    let paid: Vec<_> = LONG_FILE_DEBTS
        .iter()
        .filter(|f| !debts_found.contains(**f))
        .collect();
    assert!(
        paid.is_empty(),
        "no longer over {MAX_FILE_LINES} lines: remove from LONG_FILE_DEBTS {paid:?}"
    );
}
