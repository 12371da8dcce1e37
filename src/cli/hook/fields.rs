//! A hook event's fields as the harnesses' readers take them (`Fields`), what a tool did
//! (`Tool`), and the readings they share: the file a tool's input names, the files an
//! `apply_patch` body names, the event's `cwd`.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// What the tool did, as far as the hook is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tool {
    /// It writes (or wrote) these files.
    Wrote(Vec<PathBuf>),
    /// It ran a command: the files are those seen changing.
    Shell,
    /// Nothing lspgate checks (a read, a search).
    Other,
}

/// Fields naming the written file in a tool's input, by the harnesses' spellings.
const PATH_KEYS: [&str; 6] = [
    "file_path",
    "path",
    "target_file",
    "filePath",
    "file",
    "notebook_path",
];

/// An event's fields, as a harness's reader takes them.
pub(crate) struct Fields<'a> {
    pub(crate) v: &'a Value,
    /// `hook_event_name`.
    pub(crate) name: String,
    pub(crate) tool_name: String,
    /// The tool's input (`tool_input`).
    pub(crate) input: Value,
    pub(crate) cwd: Option<PathBuf>,
    env: &'a dyn Fn(&str) -> Option<String>,
}

impl<'a> Fields<'a> {
    /// `v`'s fields; `env` reads the hook's environment.
    pub(crate) fn of(v: &'a Value, env: &'a dyn Fn(&str) -> Option<String>) -> Fields<'a> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        Fields {
            v,
            name: s("hook_event_name"),
            tool_name: s("tool_name"),
            input: tool_input(v),
            cwd: v.get("cwd").and_then(Value::as_str).map(PathBuf::from),
            env,
        }
    }

    /// The string field `k`.
    pub(crate) fn s(&self, k: &str) -> Option<String> {
        self.v.get(k).and_then(Value::as_str).map(str::to_string)
    }

    /// The project folder the environment variable `var` names.
    pub(crate) fn project(&self, var: &str) -> Option<PathBuf> {
        (self.env)(var).filter(|p| !p.is_empty()).map(PathBuf::from)
    }
}

/// The event's `cwd` (empty when it has none): what Codex's patch paths are relative to.
pub(crate) fn cwd_of(v: &Value) -> PathBuf {
    v.get("cwd")
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// The tool's input (an object; Cursor may send it as a JSON string).
pub(crate) fn tool_input(v: &Value) -> Value {
    match v.get("tool_input") {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

/// The file an input names (relative paths against `root`).
pub(crate) fn wrote(input: &Value, root: Option<&Path>) -> Tool {
    let path = PATH_KEYS
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
        .filter(|p| !p.is_empty());
    Tool::Wrote(
        path.map(|p| match root {
            Some(r) if Path::new(p).is_relative() => r.join(p),
            _ => PathBuf::from(p),
        })
        .into_iter()
        .collect(),
    )
}

/// The files an `apply_patch` body adds, updates, deletes or moves to, against `cwd`, in
/// order, each as often as the patch names it (`distinct_bounded` makes them distinct).
pub(crate) fn patch_files(patch: &str, cwd: &Path) -> Vec<PathBuf> {
    patch
        .lines()
        .filter_map(|line| {
            [
                "*** Add File: ",
                "*** Update File: ",
                "*** Delete File: ",
                "*** Move to: ",
            ]
            .iter()
            .find_map(|p| line.strip_prefix(p))
        })
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| cwd.join(p))
        .collect()
}
