//! What a written file held before the write, when the event says enough to tell: the original
//! a tool reports (Claude Code's `originalFile`), or the file now with the event's replacements
//! undone (Claude Code `Edit`/`MultiEdit`, Gemini CLI `replace`, Cursor `afterFileEdit`, Codex
//! `apply_patch` hunks), or absent (a file the tool created). The daemon asks the servers about
//! this content when it knew nothing of the files before, so even a first hook reports only what
//! the write introduced.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::ops::hook::Before;

/// The bytes of old text told at most, in all (past it, the rest is unknown): what the daemon
/// is sent, within its bound on a request (`daemon::MAX_HELLO`, 64 MiB) however it is escaped.
const MAX_TEXT: usize = 8 << 20;
/// The bytes searched while undoing replacements at most, in all (each replacement searches
/// its file's text once): a patch of many hunks on a large file costs this much, no more.
const MAX_SEARCHED: usize = 256 << 20;

/// What undoing may still cost: bytes of text searched, bytes of text told.
pub(crate) struct Work {
    searched: usize,
    told: usize,
}

impl Work {
    pub(crate) fn new() -> Work {
        Work {
            searched: MAX_SEARCHED,
            told: MAX_TEXT,
        }
    }

    /// Whether `bytes` more may be searched (taken if so).
    fn search(&mut self, bytes: usize) -> bool {
        let ok = bytes <= self.searched;
        self.searched = self.searched.saturating_sub(bytes);
        ok
    }

    /// `b`, or unknown once the text told is over the bound.
    pub(crate) fn tell(&mut self, b: Before) -> Before {
        match b {
            Before::Text(t) if t.len() > self.told => {
                self.told = 0;
                Before::Unknown
            }
            Before::Text(t) => {
                self.told -= t.len();
                Before::Text(t)
            }
            b => b,
        }
    }
}

/// The first of `files` (the one file a harness's edit tools write), as `before` tells it.
pub(crate) fn first_file(
    files: &[PathBuf],
    work: &mut Work,
    before: impl FnOnce(&Path, &mut Work) -> Before,
) -> Vec<(PathBuf, Before)> {
    let Some(path) = files.first() else {
        return Vec::new();
    };
    let b = before(path, work);
    vec![(path.clone(), work.tell(b))]
}

/// Claude Code's `tool_response.originalFile`: the text, or `null` for a file it created.
pub(crate) fn original(event: &Value) -> Option<Before> {
    let response = event.get("tool_response")?;
    match response.get("originalFile")? {
        Value::String(s) => Some(Before::Text(s.clone())),
        Value::Null if response.get("type").and_then(Value::as_str) == Some("create") => {
            Some(Before::Absent)
        }
        _ => None,
    }
}

/// A replacement the tool made: old text, new text, every occurrence or one.
pub(crate) struct Replacement {
    old: String,
    new: String,
    all: bool,
}

/// The replacements an input lists: one (`old_string`/`new_string`), or its `edits`.
pub(crate) fn replacements(input: &Value) -> Vec<Replacement> {
    let one = |v: &Value| -> Option<Replacement> {
        Some(Replacement {
            old: v.get("old_string")?.as_str()?.to_string(),
            new: v.get("new_string")?.as_str()?.to_string(),
            all: v
                .get("replace_all")
                .and_then(Value::as_bool)
                .unwrap_or(false)
                || v.get("allow_multiple")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
        })
    };
    match input.get("edits").and_then(Value::as_array) {
        Some(edits) => edits.iter().filter_map(one).collect(),
        None => one(input).into_iter().collect(),
    }
}

/// The file now with `edits` undone, last first; unknown when one cannot be undone exactly (its
/// new text is not there, or is there more than once for a single replacement).
// Not a read inside a root for an answer: the harness's file before its edit, in the hook's own process, checked to be a small regular file.
#[allow(clippy::disallowed_methods)]
pub(crate) fn undo(path: &Path, edits: &[Replacement], work: &mut Work) -> Before {
    if edits.is_empty() {
        return Before::Unknown;
    }
    // A regular file no larger than what may be told (not a device, a fifo, a huge file).
    let small = std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() <= MAX_TEXT as u64);
    let Some(mut text) = small.then(|| std::fs::read_to_string(path).ok()).flatten() else {
        return Before::Unknown;
    };
    for e in edits.iter().rev() {
        if !work.search(text.len()) {
            return Before::Unknown;
        }
        // Every occurrence replaced: which of the new text's occurrences were there before is
        // not known.
        let found = text.matches(e.new.as_str()).count();
        if e.all || e.new.is_empty() || found != 1 {
            return Before::Unknown;
        }
        text = text.replacen(&e.new, &e.old, 1);
    }
    Before::Text(text)
}

/// An `apply_patch` body's files before it (those of `files`, paths against `cwd`, once each:
/// the first section of a file): an added file was absent; an updated one is the file now with
/// each hunk's new lines put back to its old ones; a deleted or moved one is unknown.
pub(crate) fn patch_befores(
    patch: &str,
    files: &[PathBuf],
    cwd: &Path,
    work: &mut Work,
) -> Vec<(PathBuf, Before)> {
    let mut left: HashSet<&Path> = files.iter().map(PathBuf::as_path).collect();
    let mut out = Vec::new();
    let mut lines = patch.lines().peekable();
    while let Some(line) = lines.next() {
        let (path, kind) = if let Some(p) = line.strip_prefix("*** Add File: ") {
            (p, 'A')
        } else if let Some(p) = line.strip_prefix("*** Update File: ") {
            (p, 'U')
        } else if let Some(p) = line.strip_prefix("*** Delete File: ") {
            (p, 'D')
        } else {
            continue;
        };
        let full = cwd.join(path.trim());
        if !left.remove(full.as_path()) {
            continue;
        }
        // This file's section, up to the next file's.
        let mut body = Vec::new();
        while let Some(next) = lines.peek() {
            if next.starts_with("*** ") && !next.starts_with("*** End of File") {
                if next.starts_with("*** Move to: ") {
                    body.push("MOVE");
                    lines.next();
                    continue;
                }
                break;
            }
            body.push(lines.next().unwrap_or_default());
        }
        let before = match kind {
            'A' => Before::Absent,
            'U' if !body.contains(&"MOVE") => undo(&full, &hunks(&body), work),
            _ => Before::Unknown,
        };
        out.push((full, before));
    }
    out
}

/// An update's hunks as replacements: each hunk's new lines (context and `+`) back to its old
/// ones (context and `-`).
fn hunks(body: &[&str]) -> Vec<Replacement> {
    let mut out = Vec::new();
    let (mut old, mut new) = (Vec::new(), Vec::new());
    let mut flush = |old: &mut Vec<&str>, new: &mut Vec<&str>| {
        if !old.is_empty() || !new.is_empty() {
            out.push(Replacement {
                old: old.iter().map(|l| format!("{l}\n")).collect(),
                new: new.iter().map(|l| format!("{l}\n")).collect(),
                all: false,
            });
        }
        old.clear();
        new.clear();
    };
    for line in body {
        if line.starts_with("@@") || line.starts_with("*** End of File") {
            flush(&mut old, &mut new);
        } else if let Some(l) = line.strip_prefix('+') {
            new.push(l);
        } else if let Some(l) = line.strip_prefix('-') {
            old.push(l);
        } else {
            let l = line.strip_prefix(' ').unwrap_or(line);
            old.push(l);
            new.push(l);
        }
    }
    flush(&mut old, &mut new);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What `h`'s reader tells of the files before the write of `event`.
    fn of(h: &str, event: &Value, files: &[PathBuf]) -> Vec<(PathBuf, Before)> {
        let harness = crate::cli::harnesses::by_name(h).unwrap();
        let fields = crate::cli::hook::fields::Fields::of(event, &|_| None);
        (harness.hooks.as_ref().unwrap().before)(&fields, files, &mut Work::new())
    }

    #[test]
    fn replacements_are_undone_exactly_or_not_at_all() {
        let dir = tempfile::Builder::new().prefix("before").tempdir().unwrap();
        let f = dir.path().join("a.py");
        std::fs::write(&f, "def f() -> str:\n    return str(1)\n").unwrap();
        let edit = json!({"tool_name": "MultiEdit", "tool_input": {"file_path": f, "edits": [
            {"old_string": "-> int", "new_string": "-> str"},
            {"old_string": "return 1", "new_string": "return str(1)"}]}});
        let got = of("claude-code", &edit, std::slice::from_ref(&f));
        assert_eq!(
            got[0].1,
            Before::Text("def f() -> int:\n    return 1\n".into())
        );
        // The new text twice for a single replacement: ambiguous.
        std::fs::write(&f, "x = 2\nx = 2\n").unwrap();
        let e = json!({"tool_name": "Edit", "tool_input": {"old_string": "x = 1", "new_string": "x = 2"}});
        assert_eq!(
            of("claude-code", &e, std::slice::from_ref(&f))[0].1,
            Before::Unknown
        );
        // What Claude Code reports is taken as it is.
        let e = json!({"tool_name": "Write", "tool_input": {}, "tool_response": {"type": "create", "originalFile": null}});
        assert_eq!(
            of("claude-code", &e, std::slice::from_ref(&f))[0].1,
            Before::Absent
        );
    }

    #[test]
    fn a_patch_is_undone_hunk_by_hunk() {
        let dir = tempfile::Builder::new().prefix("before").tempdir().unwrap();
        let f = dir.path().join("lib.ts");
        std::fs::write(&f, "a\nb2\nc\nd\ne2\n").unwrap();
        let patch = "*** Begin Patch\n*** Update File: lib.ts\n@@\n a\n-b\n+b2\n c\n@@ d\n-e\n+e2\n*** Add File: n.ts\n+x\n*** Delete File: gone.ts\n*** End Patch";
        let files = vec![
            f.clone(),
            dir.path().join("n.ts"),
            dir.path().join("gone.ts"),
        ];
        let got = patch_befores(patch, &files, dir.path(), &mut Work::new());
        assert_eq!(got[0], (f, Before::Text("a\nb\nc\nd\ne\n".into())));
        assert_eq!(got[1].1, Before::Absent);
        assert_eq!(got[2].1, Before::Unknown);
    }
}
