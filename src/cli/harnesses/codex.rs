//! Codex: its MCP server and hooks in `.codex/config.toml` (`PreToolUse`, `PostToolUse`,
//! `SessionStart`, `Stop`), events like Claude Code's with a `turn_id`, `apply_patch` bodies
//! naming the files written (relative to `cwd`) and the shell tools (`Bash`, `shell`,
//! `exec_command`, `local_shell`, `unified_exec`), the old text from the patch's hunks undone,
//! and Claude Code's answer shapes.

use std::path::PathBuf;

use serde_json::Value;

use super::{HarnessDef, Hooks, context_or_block, matched_group};
use crate::cli::harness::table::{File, Format, HookLine, J, Put, plain_mcp};
use crate::cli::hook::before::{self, Work};
use crate::cli::hook::fields::{Fields, Tool, cwd_of, patch_files};
use crate::ops::hook::Before;

const NAME: &str = "codex";

pub(super) static DEF: HarnessDef = HarnessDef {
    name: NAME,
    files: &[File {
        project: ".codex/config.toml",
        user: ".codex/config.toml",
        instead: None,
        format: Format::Toml,
        seed: "",
        puts: &[
            Put::Mcp(&["mcp_servers"], plain_mcp),
            Put::Hook(&["hooks", "PreToolUse"], "pre-edit", group),
            Put::Hook(&["hooks", "PostToolUse"], "post-edit", group),
            Put::Hook(&["hooks", "SessionStart"], "start", group),
            Put::Hook(&["hooks", "Stop"], "stop", group),
        ],
    }],
    notes: &[
        "Codex reads a project's .codex/ configuration only when the project is trusted, and skips new or changed hooks until you review and trust them in /hooks.",
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

/// Claude Code's event names, with a turn id or an `apply_patch` only Codex writes.
fn detects(v: &Value, name: &str) -> bool {
    super::claude_code::claude_named(name)
        && (v.get("turn_id").is_some()
            || v.get("tool_name").and_then(Value::as_str) == Some("apply_patch"))
}

pub(crate) fn group(h: &HookLine) -> J {
    matched_group(h, NAME, "^(apply_patch|Bash)$")
}

fn read(f: &Fields) -> (Option<PathBuf>, Option<String>, Tool) {
    let command = f.input.get("command").and_then(Value::as_str).unwrap_or("");
    let tool =
        if f.tool_name == "apply_patch" || command.trim_start().starts_with("*** Begin Patch") {
            Tool::Wrote(patch_files(command, &cwd_of(f.v)))
        } else if matches!(
            f.tool_name.as_str(),
            "Bash" | "shell" | "exec_command" | "local_shell" | "unified_exec"
        ) {
            Tool::Shell
        } else {
            Tool::Other
        };
    (f.cwd.clone(), f.s("session_id"), tool)
}

fn old_text(f: &Fields, files: &[PathBuf], work: &mut Work) -> Vec<(PathBuf, Before)> {
    let patch = f.input.get("command").and_then(Value::as_str).unwrap_or("");
    before::patch_befores(patch, files, &cwd_of(f.v), work)
        .into_iter()
        .map(|(path, before)| (path, work.tell(before)))
        .collect()
}
