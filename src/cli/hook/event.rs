//! A harness's hook event, read: which harness wrote it (`cli::harnesses`, each as its
//! reference documents it), whose session, which root, which files the tool wrote or whether
//! it ran a shell command (each harness's reader says, over `fields`), and its stage.

use std::path::PathBuf;

use serde_json::Value;

use super::fields::{Fields, Tool};
use crate::cli::harnesses::{self, HarnessDef};
use crate::ops::hook::{Stage, distinct_bounded};

/// A hook event, read.
#[derive(Debug, Clone)]
pub(super) struct Event {
    pub harness: &'static HarnessDef,
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

/// Reads `v` as `harness`'s event (none: told from its fields); `env` reads the hook's
/// environment (`CLAUDE_PROJECT_DIR`, `GEMINI_PROJECT_DIR`, `CURSOR_PROJECT_DIR`).
pub(super) fn read(
    v: &Value,
    harness: Option<&'static HarnessDef>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Event, String> {
    if !v.is_object() {
        return Err("the hook event is not a JSON object".into());
    }
    let harness = match harness {
        Some(h) => h,
        None => harnesses::detect(v).ok_or(
            "the hook event is none lspgate knows (Claude Code, Codex, Gemini CLI, Cursor): \
             pass --format",
        )?,
    };
    let Some(hooks) = &harness.hooks else {
        return Err(format!("lspgate reads no hook events of {}", harness.name));
    };
    let fields = Fields::of(v, env);
    let (root, session, tool) = (hooks.read)(&fields);
    let name = fields.name;
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
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
        harness,
        name,
        stage,
        session: format!("{}:{}", harness.name, session.unwrap_or_default()),
        root,
        tool,
        named,
        stop_hook_active,
        turn_completed: s("status").is_none_or(|st| st == "completed"),
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn none(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn each_harness_is_told_from_its_event() {
        let claude = json!({"session_id": "s", "cwd": "/p", "hook_event_name": "PostToolUse",
            "tool_name": "Edit", "tool_input": {"file_path": "/p/a.py"}});
        let e = read(&claude, None, &none).unwrap();
        assert_eq!(e.harness.name, "claude-code");
        assert_eq!(e.tool, Tool::Wrote(vec![PathBuf::from("/p/a.py")]));
        assert_eq!(e.stage, Some(Stage::PostEdit));
        assert_eq!(e.session, "claude-code:s");

        let codex = json!({"session_id": "c", "turn_id": "t", "cwd": "/p",
            "hook_event_name": "PostToolUse", "tool_name": "apply_patch",
            "tool_input": {"command": "*** Begin Patch\n*** Add File: n.py\n+x\n*** Update File: a.py\n*** Move to: b.py\n@@\n-1\n+2\n*** Delete File: old.py\n*** End Patch"},
            "tool_response": "Exit code: 0"});
        let e = read(&codex, None, &none).unwrap();
        assert_eq!(e.harness.name, "codex");
        let files: Vec<PathBuf> = ["n.py", "a.py", "b.py", "old.py"]
            .iter()
            .map(|f| Path::new("/p").join(f))
            .collect();
        assert_eq!(e.tool, Tool::Wrote(files));

        let gemini = json!({"session_id": "g", "cwd": "/p", "hook_event_name": "AfterTool",
            "tool_name": "replace", "tool_input": {"file_path": "src/a.py"}});
        let e = read(&gemini, None, &|k| {
            (k == "GEMINI_PROJECT_DIR").then(|| "/proj".into())
        })
        .unwrap();
        assert_eq!(e.harness.name, "gemini");
        assert_eq!(e.tool, Tool::Wrote(vec![PathBuf::from("/proj/src/a.py")]));

        let cursor = json!({"conversation_id": "k", "hook_event_name": "afterFileEdit",
            "workspace_roots": ["/w"], "file_path": "/w/a.ts", "edits": []});
        let e = read(&cursor, None, &none).unwrap();
        assert_eq!(e.harness.name, "cursor");
        assert_eq!(e.root, Some(PathBuf::from("/w")));
        assert_eq!(e.session, "cursor:k");
        assert_eq!(e.tool, Tool::Wrote(vec![PathBuf::from("/w/a.ts")]));

        let bash = json!({"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": "sed -i s/a/b/ x.py"}});
        assert_eq!(read(&bash, None, &none).unwrap().tool, Tool::Shell);
        let read_tool =
            json!({"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Read"});
        assert_eq!(read(&read_tool, None, &none).unwrap().tool, Tool::Other);
        assert!(read(&json!({"x": 1}), None, &none).is_err());
        assert!(read(&json!([1]), harnesses::by_name("claude-code"), &none).is_err());
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
        let e = read(&codex, None, &none).unwrap();
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
        let e = read(&v, None, &none).unwrap();
        assert_eq!(e.harness.name, "codex");
        assert_eq!(sniff(b"\0\0\0"), json!({}));
    }
}
