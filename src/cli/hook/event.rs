//! A harness's hook event, read: which harness wrote it (Claude Code, Codex, Gemini CLI,
//! Cursor, each as its reference documents it), whose session, which root, which files the tool
//! wrote (a path field, an `apply_patch` body's files) or whether it ran a shell command.

use std::path::{Path, PathBuf};

use clap::ValueEnum;
use serde_json::Value;

use crate::ops::hook::{Stage, distinct_bounded};

/// The harnesses whose hook events lspgate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Told from the event itself.
    Auto,
    ClaudeCode,
    Codex,
    Gemini,
    Cursor,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::Gemini => "gemini",
            Format::Cursor => "cursor",
        }
    }
}

/// What the tool did, as far as the hook is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Tool {
    /// It writes (or wrote) these files.
    Wrote(Vec<PathBuf>),
    /// It ran a command: the files are those seen changing.
    Shell,
    /// Nothing lspgate checks (a read, a search).
    Other,
}

/// A hook event, read.
#[derive(Debug, Clone)]
pub(super) struct Event {
    pub format: Format,
    /// The event's name as the harness spells it (`PostToolUse`, `AfterTool`, `postToolUse`,
    /// `afterFileEdit`), for the answer.
    pub name: String,
    /// Whether it comes before or after the tool (from the event's name when it says).
    pub stage: Option<Stage>,
    /// `harness:session id`.
    pub session: String,
    /// The project the harness works in.
    pub root: Option<PathBuf>,
    /// What it wrote: `MAX_FILES` files at most, the first the event names.
    pub tool: Tool,
    /// The distinct files the event names, those past `MAX_FILES` included.
    pub named: usize,
    /// At a turn's end: the harness goes on because a turn-end hook blocked before.
    pub stop_hook_active: bool,
    /// At a turn's end: the turn completed (Cursor also sends `stop` for aborted and failed
    /// ones, with `status`).
    pub turn_completed: bool,
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

/// Reads `v` as `format`'s event (`Auto`: told from its fields); `env` reads the hook's
/// environment (`CLAUDE_PROJECT_DIR`, `GEMINI_PROJECT_DIR`, `CURSOR_PROJECT_DIR`).
pub(super) fn read(
    v: &Value,
    format: Format,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Event, String> {
    if !v.is_object() {
        return Err("the hook event is not a JSON object".into());
    }
    let format = match format {
        Format::Auto => detect(v).ok_or(
            "the hook event is none lspgate knows (Claude Code, Codex, Gemini CLI, Cursor): \
             pass --format",
        )?,
        f => f,
    };
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let name = s("hook_event_name").unwrap_or_default();
    let cwd = s("cwd").map(PathBuf::from);
    let project = |var: &str| env(var).filter(|p| !p.is_empty()).map(PathBuf::from);
    let tool_name = s("tool_name").unwrap_or_default();
    let input = tool_input(v);
    let (root, session, tool) = match format {
        Format::ClaudeCode => {
            let root = project("CLAUDE_PROJECT_DIR").or(cwd.clone());
            let tool = match tool_name.as_str() {
                "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => wrote(&input, root.as_deref()),
                "Bash" => Tool::Shell,
                _ => Tool::Other,
            };
            (root, s("session_id"), tool)
        }
        Format::Codex => {
            let command = input.get("command").and_then(Value::as_str).unwrap_or("");
            let tool = if tool_name == "apply_patch"
                || command.trim_start().starts_with("*** Begin Patch")
            {
                Tool::Wrote(patch_files(command, &cwd_of(v)))
            } else if matches!(
                tool_name.as_str(),
                "Bash" | "shell" | "exec_command" | "local_shell" | "unified_exec"
            ) {
                Tool::Shell
            } else {
                Tool::Other
            };
            (cwd.clone(), s("session_id"), tool)
        }
        Format::Gemini => {
            let root = project("GEMINI_PROJECT_DIR").or(cwd.clone());
            let tool = match tool_name.as_str() {
                "write_file" | "replace" => wrote(&input, root.as_deref()),
                "run_shell_command" => Tool::Shell,
                _ => Tool::Other,
            };
            (root, s("session_id"), tool)
        }
        Format::Cursor => {
            let root = v
                .get("workspace_roots")
                .and_then(Value::as_array)
                .and_then(|r| r.first())
                .and_then(Value::as_str)
                .map(PathBuf::from)
                .or_else(|| project("CURSOR_PROJECT_DIR"))
                .or(cwd.clone());
            let tool = match name.as_str() {
                "afterFileEdit" => wrote(v, root.as_deref()),
                "afterShellExecution" | "beforeShellExecution" => Tool::Shell,
                _ => match tool_name.as_str() {
                    "Shell" => Tool::Shell,
                    "Write" | "Edit" | "Delete" => match wrote(&input, root.as_deref()) {
                        // Its input names no file lspgate can read: what changed on disk.
                        Tool::Wrote(f) if f.is_empty() => Tool::Shell,
                        t => t,
                    },
                    _ => Tool::Other,
                },
            };
            (root, s("conversation_id").or(s("session_id")), tool)
        }
        Format::Auto => unreachable!("resolved above"),
    };
    let stage = match name.as_str() {
        "PreToolUse" | "BeforeTool" | "preToolUse" | "beforeShellExecution" => Some(Stage::PreEdit),
        "PostToolUse" | "AfterTool" | "postToolUse" | "afterFileEdit" | "afterShellExecution" => {
            Some(Stage::PostEdit)
        }
        "SessionStart" | "sessionStart" => Some(Stage::Start),
        "Stop" | "SubagentStop" | "AfterAgent" | "stop" | "subagentStop" => Some(Stage::Stop),
        _ => None,
    };
    // Claude Code, Codex and Gemini CLI say so; Cursor counts the follow-ups it sent.
    let stop_hook_active = v.get("stop_hook_active").and_then(Value::as_bool) == Some(true)
        || v.get("loop_count")
            .and_then(Value::as_u64)
            .is_some_and(|n| n > 0);
    // The files named, once each, and the first `MAX_FILES` of them kept.
    let (tool, named) = match tool {
        Tool::Wrote(files) => {
            let (kept, named) = distinct_bounded(files);
            (Tool::Wrote(kept), named)
        }
        t => (t, 0),
    };
    Ok(Event {
        format,
        name,
        stage,
        session: format!("{}:{}", format.name(), session.unwrap_or_default()),
        root,
        tool,
        named,
        stop_hook_active,
        turn_completed: s("status").is_none_or(|st| st == "completed"),
    })
}

/// The event's `cwd` (empty when it has none): what Codex's patch paths are relative to.
pub(super) fn cwd_of(v: &Value) -> PathBuf {
    v.get("cwd")
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// The fields an event's first bytes hold (an event cut short), as far as they go: its
/// top-level strings and the few others that tell the harness (`workspace_roots`); the rest
/// skipped as it is read, once.
pub(super) fn sniff(prefix: &[u8]) -> Value {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Fields<'a>(&'a mut serde_json::Map<String, Value>);
    impl<'de> Visitor<'de> for Fields<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                if key.starts_with("tool_") {
                    map.next_value::<IgnoredAny>()?;
                } else {
                    let value = map.next_value::<Value>()?;
                    self.0.insert(key, value);
                }
            }
            Ok(())
        }
    }
    let mut fields = serde_json::Map::new();
    let mut de = serde_json::Deserializer::from_slice(prefix);
    // It ends where the bytes do, with an error: what was read before is kept.
    let _ = de.deserialize_map(Fields(&mut fields));
    Value::Object(fields)
}

/// The harness whose event `v` is, from the fields only it writes.
fn detect(v: &Value) -> Option<Format> {
    let name = v
        .get("hook_event_name")
        .and_then(Value::as_str)
        .unwrap_or("");
    if v.get("conversation_id").is_some()
        || v.get("workspace_roots").is_some()
        || matches!(
            name,
            "afterFileEdit"
                | "postToolUse"
                | "preToolUse"
                | "afterShellExecution"
                | "beforeShellExecution"
                | "sessionStart"
                | "stop"
                | "subagentStop"
        )
    {
        return Some(Format::Cursor);
    }
    match name {
        "AfterTool" | "BeforeTool" | "AfterAgent" | "BeforeAgent" => Some(Format::Gemini),
        "PostToolUse" | "PreToolUse" | "Stop" | "SubagentStop" | "SessionStart" => {
            let patch = v.get("tool_name").and_then(Value::as_str) == Some("apply_patch");
            Some(if v.get("turn_id").is_some() || patch {
                Format::Codex
            } else {
                Format::ClaudeCode
            })
        }
        _ => None,
    }
}

/// The tool's input (an object; Cursor may send it as a JSON string).
pub(super) fn tool_input(v: &Value) -> Value {
    match v.get("tool_input") {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

/// The file an input names (relative paths against `root`).
fn wrote(input: &Value, root: Option<&Path>) -> Tool {
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
pub(super) fn patch_files(patch: &str, cwd: &Path) -> Vec<PathBuf> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn none(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn each_harness_is_told_from_its_event() {
        let claude = json!({"session_id": "s", "cwd": "/p", "hook_event_name": "PostToolUse",
            "tool_name": "Edit", "tool_input": {"file_path": "/p/a.py"}});
        let e = read(&claude, Format::Auto, &none).unwrap();
        assert_eq!(e.format, Format::ClaudeCode);
        assert_eq!(e.tool, Tool::Wrote(vec![PathBuf::from("/p/a.py")]));
        assert_eq!(e.stage, Some(Stage::PostEdit));
        assert_eq!(e.session, "claude-code:s");

        let codex = json!({"session_id": "c", "turn_id": "t", "cwd": "/p",
            "hook_event_name": "PostToolUse", "tool_name": "apply_patch",
            "tool_input": {"command": "*** Begin Patch\n*** Add File: n.py\n+x\n*** Update File: a.py\n*** Move to: b.py\n@@\n-1\n+2\n*** Delete File: old.py\n*** End Patch"},
            "tool_response": "Exit code: 0"});
        let e = read(&codex, Format::Auto, &none).unwrap();
        assert_eq!(e.format, Format::Codex);
        let files: Vec<PathBuf> = ["n.py", "a.py", "b.py", "old.py"]
            .iter()
            .map(|f| Path::new("/p").join(f))
            .collect();
        assert_eq!(e.tool, Tool::Wrote(files));

        let gemini = json!({"session_id": "g", "cwd": "/p", "hook_event_name": "AfterTool",
            "tool_name": "replace", "tool_input": {"file_path": "src/a.py"}});
        let e = read(&gemini, Format::Auto, &|k| {
            (k == "GEMINI_PROJECT_DIR").then(|| "/proj".into())
        })
        .unwrap();
        assert_eq!(e.format, Format::Gemini);
        assert_eq!(e.tool, Tool::Wrote(vec![PathBuf::from("/proj/src/a.py")]));

        let cursor = json!({"conversation_id": "k", "hook_event_name": "afterFileEdit",
            "workspace_roots": ["/w"], "file_path": "/w/a.ts", "edits": []});
        let e = read(&cursor, Format::Auto, &none).unwrap();
        assert_eq!(e.format, Format::Cursor);
        assert_eq!(e.root, Some(PathBuf::from("/w")));
        assert_eq!(e.session, "cursor:k");
        assert_eq!(e.tool, Tool::Wrote(vec![PathBuf::from("/w/a.ts")]));

        let bash = json!({"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": "sed -i s/a/b/ x.py"}});
        assert_eq!(read(&bash, Format::Auto, &none).unwrap().tool, Tool::Shell);
        let read_tool =
            json!({"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Read"});
        assert_eq!(
            read(&read_tool, Format::Auto, &none).unwrap().tool,
            Tool::Other
        );
        assert!(read(&json!({"x": 1}), Format::Auto, &none).is_err());
        assert!(read(&json!([1]), Format::ClaudeCode, &none).is_err());
    }

    #[test]
    fn a_patch_naming_many_files_keeps_the_first_once_each() {
        let mut patch = String::from("*** Begin Patch\n");
        for i in 0..3000 {
            patch.push_str(&format!("*** Update File: f{}.py\n@@\n-a\n+b\n", i % 1500));
        }
        let codex = json!({"session_id": "c", "turn_id": "t", "cwd": "/p",
            "hook_event_name": "PostToolUse", "tool_name": "apply_patch",
            "tool_input": {"command": patch}});
        let e = read(&codex, Format::Auto, &none).unwrap();
        assert_eq!(e.named, 1500);
        let Tool::Wrote(files) = e.tool else {
            panic!("{:?}", e.tool)
        };
        assert_eq!(files.len(), crate::ops::hook::MAX_FILES);
        assert_eq!(files[0], Path::new("/p/f0.py"));
        assert_eq!(files[999], Path::new("/p/f999.py"));
    }

    #[test]
    fn an_event_cut_short_still_tells_its_harness() {
        // In Codex's order: the tool's input comes last.
        let event = format!(
            r#"{{"session_id":"c","turn_id":"t","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"apply_patch","tool_input":{{"command":"{}"}}}}"#,
            "*** Begin Patch\\n".repeat(100)
        );
        let cut = &event.as_bytes()[..event.len() - 200];
        let v = sniff(cut);
        assert_eq!(v["hook_event_name"], "PostToolUse");
        assert!(v.get("tool_input").is_none());
        let e = read(&v, Format::Auto, &none).unwrap();
        assert_eq!(e.format, Format::Codex);
        assert_eq!(sniff(b"\0\0\0"), json!({}));
    }
}
