//! Claude Code: its MCP server in `.mcp.json` (`~/.claude.json` for the user), its hooks in
//! `.claude/settings.json` (`PreToolUse`, `PostToolUse`, `SessionStart`, `Stop`,
//! `SubagentStop`), events with `session_id` and no `turn_id`, `Write`/`Edit`/`MultiEdit`/
//! `NotebookEdit` writing `file_path` and `Bash` for shell commands, the old text in
//! `tool_response.originalFile` (else the edits undone), and `hookSpecificOutput` or
//! `{"decision": "block"}` answers.

use std::path::PathBuf;

use serde_json::Value;

use super::{HarnessDef, Hooks, context_or_block, matched_group};
use crate::cli::harness::table::{HookLine, J, MCP, Put, json, plain_mcp};
use crate::cli::hook::before::{self, Work};
use crate::cli::hook::fields::{Fields, Tool, wrote};
use crate::ops::hook::Before;

const NAME: &str = "claude-code";

pub(super) static DEF: HarnessDef = HarnessDef {
    name: NAME,
    files: &[
        json(".mcp.json", ".claude.json", &[Put::Mcp(MCP, plain_mcp)]),
        json(
            ".claude/settings.json",
            ".claude/settings.json",
            &[
                Put::Hook(&["hooks", "PreToolUse"], "pre-edit", group),
                Put::Hook(&["hooks", "PostToolUse"], "post-edit", group),
                Put::Hook(&["hooks", "SessionStart"], "start", group),
                Put::Hook(&["hooks", "Stop"], "stop", group),
                Put::Hook(&["hooks", "SubagentStop"], "stop", group),
            ],
        ),
    ],
    notes: &[
        "Claude Code reads LSP servers only from plugins (no project or user LSP configuration): no LSP entry written.",
    ],
    hooks: Some(Hooks {
        detects,
        read,
        before: old_text,
        answer: context_or_block,
        keep_going: super::block,
        after_tool: "PostToolUse",
    }),
};

/// Its events' names (Codex's too: `super::codex` tells its own apart first).
pub(super) fn claude_named(name: &str) -> bool {
    matches!(
        name,
        "PostToolUse" | "PreToolUse" | "Stop" | "SubagentStop" | "SessionStart"
    )
}

fn detects(_: &Value, name: &str) -> bool {
    claude_named(name)
}

pub(crate) fn group(h: &HookLine) -> J {
    matched_group(h, NAME, "Write|Edit|MultiEdit|Bash")
}

fn read(f: &Fields) -> (Option<PathBuf>, Option<String>, Tool) {
    let root = f.project("CLAUDE_PROJECT_DIR").or(f.cwd.clone());
    let tool = match f.tool_name.as_str() {
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => wrote(&f.input, root.as_deref()),
        "Bash" => Tool::Shell,
        _ => Tool::Other,
    };
    (root, f.s("session_id"), tool)
}

fn old_text(f: &Fields, files: &[PathBuf], work: &mut Work) -> Vec<(PathBuf, Before)> {
    before::first_file(files, work, |path, work| match f.tool_name.as_str() {
        "Write" | "Edit" | "MultiEdit" => before::original(f.v)
            .unwrap_or_else(|| before::undo(path, &before::replacements(&f.input), work)),
        _ => Before::Unknown,
    })
}
