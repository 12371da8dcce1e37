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
