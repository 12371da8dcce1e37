//! The file watchers a server registered (`workspace/didChangeWatchedFiles` with glob patterns,
//! relative patterns and watch kinds), and which changes each one wants to hear of.

use std::path::{Path, PathBuf};

use serde_json::Value;
use url::Url;

use crate::watch::ChangeKind;

/// LSP `WatchKind` bits.
const CREATE: u64 = 1;
const CHANGE: u64 = 2;
const DELETE: u64 = 4;

/// One registered watcher.
#[derive(Debug, Clone)]
pub(super) struct FileWatcher {
    glob: globset::GlobMatcher,
    /// A relative pattern's base folder; `None`: the pattern is matched against absolute paths
    /// (and, leniently, paths relative to the server's root).
    base: Option<PathBuf>,
    kind: u64,
}

impl FileWatcher {
    fn wants(&self, path: &Path, kind: ChangeKind, root: &Path) -> bool {
        let bit = match kind {
            ChangeKind::Created => CREATE,
            ChangeKind::Changed => CHANGE,
            ChangeKind::Deleted => DELETE,
        };
        // A file moved in over an existing one is reported as created; a watcher of changes
        // only must still hear of it.
        let kind_ok = self.kind & bit != 0 || (bit == CREATE && self.kind & CHANGE != 0);
        if !kind_ok {
            return false;
        }
        match &self.base {
            Some(base) => path
                .strip_prefix(base)
                .is_ok_and(|rel| self.glob.is_match(rel)),
            None => {
                self.glob.is_match(path)
                    || path
                        .strip_prefix(root)
                        .is_ok_and(|rel| self.glob.is_match(rel))
            }
        }
    }
}

/// The watchers of one `registerCapability` entry's `registerOptions`.
pub(super) fn parse(options: &Value) -> Vec<FileWatcher> {
    let Some(list) = options.get("watchers").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter().filter_map(parse_one).collect()
}

fn parse_one(w: &Value) -> Option<FileWatcher> {
    let kind = w.get("kind").and_then(Value::as_u64).unwrap_or(7);
    let (pattern, base) = match w.get("globPattern")? {
        Value::String(s) => (s.clone(), None),
        rel => {
            let pattern = rel.get("pattern")?.as_str()?.to_string();
            // `baseUri` is a URI or a WorkspaceFolder.
            let base = rel.get("baseUri")?;
            let uri = base
                .as_str()
                .or_else(|| base.get("uri").and_then(Value::as_str))?;
            let dir = Url::parse(uri).ok()?.to_file_path().ok()?;
            (pattern, Some(dir))
        }
    };
    let glob = globset::GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| tracing::debug!("unusable watcher glob `{pattern}`: {e}"))
        .ok()?
        .compile_matcher();
    Some(FileWatcher { glob, base, kind })
}

/// Whether any of `watchers` wants to hear that `path` changed this way.
pub(super) fn wanted<'a>(
    mut watchers: impl Iterator<Item = &'a FileWatcher>,
    path: &Path,
    kind: ChangeKind,
    root: &Path,
) -> bool {
    watchers.any(|w| w.wants(path, kind, root))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn globs_relative_patterns_and_kinds() {
        let root = Path::new("/w");
        // pyright's registration.
        let py = parse(&json!({"watchers": [
            {"globPattern": "**/pyrightconfig.json", "kind": 7},
            {"globPattern": "**/*.py"}
        ]}));
        assert_eq!(py.len(), 2);
        let hit = |ws: &[FileWatcher], p: &str, k| wanted(ws.iter(), Path::new(p), k, root);
        assert!(hit(&py, "/w/pkg/a.py", ChangeKind::Changed));
        assert!(hit(&py, "/w/a.py", ChangeKind::Created));
        assert!(hit(&py, "/w/pyrightconfig.json", ChangeKind::Deleted));
        assert!(!hit(&py, "/w/a.txt", ChangeKind::Changed));

        // A relative pattern, change-only: created counts as a change, deletes do not.
        let rel = parse(&json!({"watchers": [
            {"globPattern": {"baseUri": "file:///w/sub", "pattern": "*.toml"}, "kind": 2},
            {"globPattern": {"baseUri": {"uri": "file:///w", "name": "w"}, "pattern": "ruff.toml"}, "kind": 4}
        ]}));
        assert!(hit(&rel, "/w/sub/x.toml", ChangeKind::Changed));
        assert!(hit(&rel, "/w/sub/x.toml", ChangeKind::Created));
        assert!(!hit(&rel, "/w/sub/x.toml", ChangeKind::Deleted));
        assert!(
            !hit(&rel, "/w/sub/deeper/x.toml", ChangeKind::Changed),
            "* stops at /"
        );
        assert!(
            !hit(&rel, "/w/x.toml", ChangeKind::Changed),
            "outside the base"
        );
        assert!(hit(&rel, "/w/ruff.toml", ChangeKind::Deleted));
        assert!(!hit(&rel, "/w/ruff.toml", ChangeKind::Changed));

        // A root-relative string pattern is matched leniently against the root-relative path.
        let plain = parse(&json!({"watchers": [{"globPattern": "src/*.{ts,js}"}]}));
        assert!(hit(&plain, "/w/src/a.ts", ChangeKind::Changed));
        assert!(!hit(&plain, "/w/lib/a.ts", ChangeKind::Changed));

        assert!(parse(&json!({})).is_empty());
        assert!(parse(&json!({"watchers": [{"globPattern": "[bad"}]})).is_empty());
    }
}
