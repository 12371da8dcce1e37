//! The Go cases of two peers' test suites, run against lspgate with the real gopls on small
//! modules of our own (no file of theirs is copied): mcp-language-server's
//! `integrationtests/tests/go/*` (definition, references, hover, diagnostics, rename, text
//! edits, call hierarchy, code lens) and Serena's `test/solidlsp/go/*.py` with the Go cases of
//! `test/serena/test_serena_agent.py` and `test_symbol_editing.py`. Each case says which peer
//! test it stands for; what has no lspgate equivalent is said where it would go.

mod mcp;
mod serena;

use crate::common::*;
use crate::golang::go_env;
use serde_json::{Value, json};
use std::path::Path;

/// Where a name is: `(file, line, column)`, 1-based, columns in code points.
pub(super) type Place = (String, u64, u64);

/// A Go module in a temp folder (gopls leaves dot-prefixed folders out, hence the prefix).
pub(super) fn go_module(prefix: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
    for (name, text) in files {
        write(dir.path(), name, text);
    }
    dir
}

pub(super) fn write(root: &Path, name: &str, text: &str) {
    let path = root.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

pub(super) fn read(root: &Path, name: &str) -> String {
    std::fs::read_to_string(root.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `(file, line, column)` of the `nth` (1-based) `word` on the first line of `file` holding
/// `needle`: where gopls puts a name.
pub(super) fn at(root: &Path, file: &str, needle: &str, word: &str, nth: usize) -> Place {
    let text = read(root, file);
    let (i, l) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle} is not in {file}"));
    let byte = l
        .match_indices(word)
        .nth(nth - 1)
        .unwrap_or_else(|| panic!("no {word} #{nth} in `{l}`"))
        .0;
    (
        file.to_string(),
        i as u64 + 1,
        l[..byte].chars().count() as u64 + 1,
    )
}

/// A position argument for a tool: the `nth` `word` on the line of `needle`.
pub(super) fn pos(root: &Path, file: &str, needle: &str, word: &str, nth: usize) -> Value {
    let (file, line, column) = at(root, file, needle, word, nth);
    json!({"file": file, "line": line, "column": column})
}

pub(super) fn with(mut v: Value, extra: Value) -> Value {
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

/// A result's Positions as sorted `(file, line, column)`.
pub(super) fn places(files: &Value) -> Vec<Place> {
    let mut out: Vec<Place> = locs(files)
        .iter()
        .map(|l| {
            (
                l["file"].as_str().unwrap().to_string(),
                l["line"].as_u64().unwrap(),
                l["column"].as_u64().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

pub(super) fn sorted(mut v: Vec<Place>) -> Vec<Place> {
    v.sort();
    v
}

/// The distinct files of sorted places.
pub(super) fn distinct_files(places: &[Place]) -> Vec<String> {
    let mut out: Vec<String> = places.iter().map(|p| p.0.clone()).collect();
    out.dedup();
    out
}

/// The names of a call hierarchy answer's calls, sorted.
pub(super) fn call_names(calls: &Value) -> Vec<String> {
    let mut out: Vec<String> = calls["calls"]
        .as_array()
        .unwrap_or_else(|| panic!("no calls: {calls}"))
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

/// Every symbol of an outline, children included, as `(name, kind, line, end_line)`.
pub(super) fn outline(symbols: &Value) -> Vec<(String, String, u64, u64)> {
    let mut out = Vec::new();
    for s in symbols.as_array().unwrap_or_else(|| panic!("{symbols}")) {
        out.push((
            s["name"].as_str().unwrap().to_string(),
            s["kind"].as_str().unwrap().to_string(),
            s["at"][0].as_u64().unwrap(),
            s["at"][2].as_u64().unwrap(),
        ));
        if let Some(children) = s.get("children") {
            out.extend(outline(children));
        }
    }
    out
}

pub(super) async fn start(root: &Path) -> Gate {
    let env = go_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Gate::start_in(root, &["--ready-timeout", "60"], &[], &env, &new_home()).await
}
