//! Cursor: its MCP server in `.cursor/mcp.json`, its hooks in `.cursor/hooks.json` (flat
//! `{command, matcher, timeout}` entries; `postToolUse` and `stop` only: no pre-edit hook, and
//! some versions reject `sessionStart`), events with `conversation_id` and `workspace_roots`,
//! `afterFileEdit` with its edits (undone for the old text), the tool input possibly a JSON
//! string, `additional_context` answers (it cannot block after an edit) and
//! `followup_message` to keep a turn going.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{HarnessDef, Hooks};
use crate::cli::harness::table::{File, HookLine, J, MCP, Put, json, obj, plain_mcp, s};
use crate::cli::hook::before::{self, Work};
use crate::cli::hook::fields::{Fields, Tool, wrote};
use crate::ops::hook::Before;

const NAME: &str = "cursor";

pub(super) static DEF: HarnessDef = HarnessDef {
    name: NAME,
    files: &[
        json(
            ".cursor/mcp.json",
            ".cursor/mcp.json",
            &[Put::Mcp(MCP, plain_mcp)],
        ),
        File {
            seed: "{\n  \"version\": 1\n}\n",
            ..json(
                ".cursor/hooks.json",
                ".cursor/hooks.json",
                &[
                    Put::Hook(&["hooks", "postToolUse"], "post-edit", group),
                    Put::Hook(&["hooks", "stop"], "stop", group),
                ],
            )
        },
    ],
    notes: &[
        "Cursor gets the post-edit hook and the turn-end gate: no pre-edit hook, and no sessionStart hook (some Cursor versions reject it).",
    ],
    hooks: Some(Hooks {
        detects,
        read,
        before: old_text,
        answer,
        keep_going,
        after_tool: "PostToolUse",
    }),
};

fn detects(v: &Value, name: &str) -> bool {
    v.get("conversation_id").is_some()
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
}

/// A flat entry: `{command, matcher, timeout}`.
pub(crate) fn group(h: &HookLine) -> J {
    let mut members = vec![("command", h.command(NAME))];
    if h.edits {
        members.push(("matcher", s("Write|Shell|Delete")));
    }
    members.push(("timeout", J::Int(h.secs)));
    obj(members)
}

fn read(f: &Fields) -> (Option<PathBuf>, Option<String>, Tool) {
    let root =
        f.v.get("workspace_roots")
            .and_then(Value::as_array)
            .and_then(|r| r.first())
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .or_else(|| f.project("CURSOR_PROJECT_DIR"))
            .or(f.cwd.clone());
    let tool = match f.name.as_str() {
        "afterFileEdit" => wrote(f.v, root.as_deref()),
        "afterShellExecution" | "beforeShellExecution" => Tool::Shell,
        _ => match f.tool_name.as_str() {
            "Shell" => Tool::Shell,
            "Write" | "Edit" | "Delete" => match wrote(&f.input, root.as_deref()) {
                // Its input names no file lspgate can read: what changed on disk.
                Tool::Wrote(files) if files.is_empty() => Tool::Shell,
                t => t,
            },
            _ => Tool::Other,
        },
    };
    (root, f.s("conversation_id").or(f.s("session_id")), tool)
}

fn old_text(f: &Fields, files: &[PathBuf], work: &mut Work) -> Vec<(PathBuf, Before)> {
    before::first_file(files, work, |path, work| {
        before::undo(path, &before::replacements(f.v), work)
    })
}

fn answer(_: &str, report: &str, block: bool) -> Value {
    if block {
        json!({"additional_context": format!(
            "{report}\nlspgate: Cursor has no answer that blocks after an edit; reported only."
        )})
    } else {
        json!({"additional_context": report})
    }
}

fn keep_going(report: &str) -> Value {
    json!({"followup_message": report})
}
