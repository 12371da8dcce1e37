//! House rules checked on the tree: every source file says what it is for in a `//!` line, and
//! nothing outside the CLI prints to stdout (stdout belongs to the protocol).

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
    &["text", "error", "raw", "procfs"],
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

/// Every `crate::MODULE` a source text uses outside comments and its `#[cfg(test)]` part.
fn uses(text: &str) -> Vec<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut out = Vec::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or("");
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
        "imports against the layering (tests/tidy.rs LAYERS):\n{}",
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
