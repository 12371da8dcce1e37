//! House rules checked on the tree: every source file says what it is for in a `//!` line, and
//! nothing outside the CLI prints to stdout (stdout belongs to the protocol).

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

fn all_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for d in ["src", "tests", "bench"] {
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
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let offenders: Vec<_> = files
        .into_iter()
        .filter(|p| !p.starts_with(root.join("cli")))
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
    &["text", "error", "raw", "procfs", "lexer"],
    &["watch"],
    &["lsp"],
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

/// The lines of a source text outside comments and its `#[cfg(test)]` part.
fn code_lines(text: &str) -> impl Iterator<Item = &str> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    code.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
}

/// Every `crate::MODULE` a source text uses outside comments and its `#[cfg(test)]` part.
fn uses(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in code_lines(text) {
        let mut rest = line;
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

/// The imports of `src/` that run up a layer (or to a module no layer names), as
/// `file: from -> to`.
fn upward_imports(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap();
        let from = rel
            .iter()
            .next()
            .unwrap()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if from == "lib" || from == "main" || f.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for to in uses(&text) {
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
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let up = upward_imports(&src);
    assert!(
        up.is_empty(),
        "imports against the layering (tests/it/tidy.rs LAYERS):\n{}",
        up.join("\n")
    );
    // The check can fail: an import of `ops` from `lsp` is caught.
    assert_eq!(uses("use crate::ops::Engine; // crate::cli"), ["ops"]);
    assert!(layer("ops") > layer("lsp"));
}

#[test]
fn every_source_file_is_in_the_code_map() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let missing: Vec<String> = files
        .iter()
        .map(|f| f.strip_prefix(root.join("src")).unwrap().to_path_buf())
        .filter(|rel| {
            let name = rel.file_name().unwrap().to_string_lossy().into_owned();
            let path = rel.to_string_lossy().into_owned();
            // A folder's `mod.rs` is named by its folder; any other file by its path or name.
            let folder = rel
                .parent()
                .map(|p| format!("{}/", p.to_string_lossy()))
                .unwrap_or_default();
            // A file by its name in backticks or any tail of its path (`journal/seal.rs`).
            let parts: Vec<String> = rel
                .iter()
                .map(|c| c.to_string_lossy().into_owned())
                .collect();
            let tail_named =
                (0..parts.len().saturating_sub(1)).any(|i| map.contains(&parts[i..].join("/")));
            let named = if name == "mod.rs" {
                map.contains(&format!("src/{folder}")) || map.contains(&folder)
            } else {
                map.contains(&path) || tail_named || map.contains(&format!("`{name}`"))
            };
            // A folder's unit tests (`tests.rs`) go with the module they test.
            !named && name != "tests.rs"
        })
        .map(|rel| rel.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "source files ARCHITECTURE.md does not name: {missing:?}"
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
/// through (`super` is the parent of `from`, whether its file is `b.rs` or `b/mod.rs`).
fn resolve(from: &str, base: &str, segs: &[String], modules: &BTreeSet<String>) -> Option<String> {
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
fn imports(from: &str, text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let code: Vec<&str> = code_lines(text).collect();
    paths(&code.join("\n"))
        .into_iter()
        .filter_map(|(base, segs)| resolve(from, base, &segs, modules))
        .filter(|to| !related(from, to))
        .collect()
}

/// The file-level import graph of `src/` (unit tests' `tests.rs` files left out).
fn import_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.retain(|f| !f.ends_with("tests.rs"));
    let module = |f: &Path| module_of(f.strip_prefix(src).unwrap());
    let modules: BTreeSet<String> = files.iter().map(|f| module(f)).collect();
    files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let from = module(f);
            let to = imports(&from, &text, &modules);
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
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = cycles(&import_graph(&src));
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
        .map(|(from, text)| (from.to_string(), imports(from, text, &modules)))
        .collect();
    let only = |m: &str| BTreeSet::from([m.to_string()]);
    assert_eq!(graph["a::b"], only("a::c"));
    assert_eq!(graph["a::c"], only("a::b"));
    assert_eq!(graph["a::c::d"], only("a::b"));
    assert_eq!(cycles(&graph), [["a::b", "a::c"]]);
}
