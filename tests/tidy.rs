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
