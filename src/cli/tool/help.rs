//! What each tool parameter means, for the command line's `--help`. MCP clients get a lean
//! input schema: the conventions every tool shares (positions, `symbol`, `source`, paging) are
//! said once in the server's instructions, and most parameters carry no `description` (see
//! `ops::types`). A parameter's schema description, when it has one, is its help; else the
//! tool declaration's (`CliShape::help`); else the shared conventions' here (a test holds that
//! every generated option has one).

use serde_json::Value;

use crate::ops::tools::ToolDef;

/// `(parameter, help)`: the conventions of every tool (`tools::INSTRUCTIONS`), for a
/// parameter the tool's declaration says nothing of (`CliShape::help`).
const HELP: &[(&str, &str)] = &[
    (
        "file",
        "Path relative to the workspace root (or absolute inside it, or a file:// URI)",
    ),
    ("line", "1-based line"),
    (
        "column",
        "1-based column, in Unicode characters (or --symbol)",
    ),
    (
        "symbol",
        "A name on that line (whole-word match), instead of a column",
    ),
    (
        "occurrence",
        "Which match of --symbol on the line, 1-based (default 1)",
    ),
    (
        "source",
        "Analyse this text instead of the file on disk (an unsaved buffer); never written",
    ),
    ("limit", "At most this many results; the rest with --cursor"),
    (
        "cursor",
        "The `next_cursor` of a previous call, to get the rest",
    ),
    ("terse", "Minimal text output (`path:line:col message`)"),
    ("apply", "Write it (default: preview the diff only)"),
    (
        "edits",
        "A JSON list of edits, applied in order: {old_text, new_text} or {start_line, end_line, new_text}",
    ),
];

/// The help of parameter `name` of `def`: its schema description, else the declaration's,
/// else this table's.
pub(super) fn of(def: &ToolDef, name: &str, schema: &'static Value) -> Option<&'static str> {
    if let Some(d) = schema.get("description").and_then(Value::as_str) {
        return Some(d);
    }
    let find = |table: &'static [(&'static str, &'static str)]| {
        table.iter().find(|(n, _)| *n == name).map(|(_, h)| *h)
    };
    find(def.cli.help).or_else(|| find(HELP))
}
