//! The truth `hook_recall` measures the hooks against: pyright's CLI (`pyright --outputjson`)
//! on the written file and every file that mentions one of the edit's names, in a copy of the
//! workspace of its own (the daemon never sees these writes), before and after the edit; cached
//! on disk by what was run, so a second run of the bench costs nothing here.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

/// A diagnostic as both sides can tell it: the file, its severity, the first line of its
/// message (as the hook crops it) and the text of its line; the line number for the reader.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Item {
    pub file: String,
    pub line: usize,
    pub severity: String,
    pub message: String,
    pub text: String,
}

pub(crate) type Key = (String, String, String, String);

impl Item {
    pub(crate) fn key(&self) -> Key {
        (
            self.file.clone(),
            self.severity.clone(),
            self.message.clone(),
            self.text.clone(),
        )
    }
}

/// The first line of `message`, cropped as the hook's answer crops it (300 characters).
pub(crate) fn first_line(message: &str) -> String {
    let line = message.lines().next().unwrap_or("");
    line.chars()
        .take(300)
        .collect::<String>()
        .trim()
        .to_string()
}

/// The text of `line` (1-based) of `root/file`, trimmed.
pub(crate) fn line_text(root: &Path, file: &str, line: usize) -> String {
    std::fs::read_to_string(root.join(file))
        .ok()
        .and_then(|t| {
            t.lines()
                .nth(line.saturating_sub(1))
                .map(|l| l.trim().to_string())
        })
        .unwrap_or_default()
}

/// The files under `root/django` that mention one of `names` as a word (root-relative,
/// sorted), and `module`.
pub(crate) fn subset(root: &Path, module: &str, names: &[&str]) -> Vec<String> {
    let words: Vec<regex::Regex> = names
        .iter()
        .map(|n| regex::Regex::new(&format!(r"\b{}\b", regex::escape(n))).expect("a word"))
        .collect();
    let mut out = vec![module.to_string()];
    let mut stack = vec![root.join("django")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "py") {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                if words.iter().any(|w| w.is_match(&text)) {
                    let rel = p
                        .strip_prefix(root)
                        .map(|r| r.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    out.push(rel);
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// What pyright's CLI says of `files` in `root` as it is now (errors and warnings).
pub(crate) fn pyright(root: &Path, path: &str, files: &[String]) -> Vec<Item> {
    let out = Command::new("pyright")
        .arg("--outputjson")
        .args(files)
        .current_dir(root)
        .env("PATH", path)
        .stderr(Stdio::null())
        .output()
        .expect("pyright's CLI runs");
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("pyright's CLI answers JSON");
    let mut items = Vec::new();
    for d in v["generalDiagnostics"].as_array().into_iter().flatten() {
        let severity = d["severity"].as_str().unwrap_or("");
        if severity != "error" && severity != "warning" {
            continue;
        }
        let abs = PathBuf::from(d["file"].as_str().unwrap_or(""));
        let file = abs
            .strip_prefix(root)
            .map(|r| r.to_string_lossy().into_owned())
            .unwrap_or_default();
        let line = d["range"]["start"]["line"].as_u64().unwrap_or(0) as usize + 1;
        items.push(Item {
            text: line_text(root, &file, line),
            file,
            line,
            severity: severity.into(),
            message: first_line(d["message"].as_str().unwrap_or("")),
        });
    }
    items
}

/// `after` less `before`, counting repeats.
pub(crate) fn minus(after: &[Item], before: &[Item]) -> Vec<Item> {
    let mut left: HashMap<Key, usize> = HashMap::new();
    for i in before {
        *left.entry(i.key()).or_default() += 1;
    }
    after
        .iter()
        .filter(|i| match left.get_mut(&i.key()) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect()
}

/// One edit's truth: the subset's diagnostics in the original, after the setup edit (a fix's
/// broken state) and after the edit.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Truth {
    pub files: Vec<String>,
    pub original: Vec<Item>,
    pub broken: Option<Vec<Item>>,
    pub after: Vec<Item>,
    pub secs: f64,
}

impl Truth {
    /// What the edit introduced: after less before (the broken state for a fix).
    pub(crate) fn introduced(&self) -> Vec<Item> {
        minus(&self.after, self.broken.as_ref().unwrap_or(&self.original))
    }

    /// The errors present after the edit that the original did not have: the turn-end gate's.
    pub(crate) fn gate(&self) -> Vec<Item> {
        minus(&self.after, &self.original)
            .into_iter()
            .filter(|i| i.severity == "error")
            .collect()
    }

    /// What undoing the edit brings back (the original's less after).
    pub(crate) fn undo(&self) -> Vec<Item> {
        minus(&self.original, &self.after)
    }
}

/// FNV-1a of `parts`: the cache's key.
pub(crate) fn fnv(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for p in parts {
        for b in p.bytes().chain([0xff]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    h
}
