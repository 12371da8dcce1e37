//! Gemini CLI: its MCP server and hooks in `.gemini/settings.json` (JSONC; `BeforeTool`,
//! `AfterTool`, `SessionStart`, `AfterAgent`; named handlers, timeouts in milliseconds),
//! `write_file`/`replace` writing `file_path` (relative to `GEMINI_PROJECT_DIR`) and
//! `run_shell_command`, the old text from `replace` undone, and `{"decision": "deny"}` to block.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{HarnessDef, Hooks};
use crate::cli::harness::table::{
    File, Format, HookLine, J, MCP, Put, handler, json, plain_mcp, s,
};
use crate::cli::hook::before::{self, Work};
use crate::cli::hook::fields::{Fields, Tool, wrote};
use crate::ops::hook::Before;

const NAME: &str = "gemini";

pub(super) static DEF: HarnessDef = HarnessDef {
    name: NAME,
    files: &[File {
        format: Format::Jsonc,
        ..json(
            ".gemini/settings.json",
            ".gemini/settings.json",
            &[
                Put::Mcp(MCP, plain_mcp),
                Put::Hook(&["hooks", "BeforeTool"], "pre-edit", group),
                Put::Hook(&["hooks", "AfterTool"], "post-edit", group),
                Put::Hook(&["hooks", "SessionStart"], "start", group),
                Put::Hook(&["hooks", "AfterAgent"], "stop", group),
            ],
        )
    }],
    notes: &[
        "Gemini CLI ignores a project's .gemini/settings.json in an untrusted folder, and asks again when a project hook's command changes.",
    ],
    hooks: Some(Hooks {
        detects,
        read,
        before: old_text,
        answer,
        keep_going: deny,
        after_tool: "AfterTool",
    }),
};

fn detects(_: &Value, name: &str) -> bool {
    matches!(
        name,
        "AfterTool" | "BeforeTool" | "AfterAgent" | "BeforeAgent"
    )
}

/// Gemini's timeouts are in milliseconds, and its handlers are named.
pub(crate) fn group(h: &HookLine) -> J {
    h.matched(
        "write_file|replace|run_shell_command",
        vec![(
            "hooks",
            handler(
                h.command(NAME),
                Some(s(&format!("lspgate-{}", h.which))),
                h.secs * 1000,
            ),
        )],
    )
}

fn read(f: &Fields) -> (Option<PathBuf>, Option<String>, Tool) {
    let root = f.project("GEMINI_PROJECT_DIR").or(f.cwd.clone());
    let tool = match f.tool_name.as_str() {
        "write_file" | "replace" => wrote(&f.input, root.as_deref()),
        "run_shell_command" => Tool::Shell,
        _ => Tool::Other,
    };
    (root, f.s("session_id"), tool)
}

fn old_text(f: &Fields, files: &[PathBuf], work: &mut Work) -> Vec<(PathBuf, Before)> {
    before::first_file(files, work, |path, work| match f.tool_name.as_str() {
        "replace" => before::undo(path, &before::replacements(&f.input), work),
        _ => Before::Unknown,
    })
}

fn answer(event: &str, report: &str, block: bool) -> Value {
    if block {
        deny(report)
    } else {
        json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": report}})
    }
}

fn deny(report: &str) -> Value {
    json!({"decision": "deny", "reason": report})
}
