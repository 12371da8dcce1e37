//! What each tool parameter means, for the command line's `--help`. MCP clients get a lean
//! input schema: the conventions every tool shares (positions, `symbol`, `source`, paging) are
//! said once in the server's instructions, and most parameters carry no `description` (see
//! `ops::types`). A parameter's schema description, when it has one, is its help; the others
//! get theirs here (a test holds that every generated option has one).

use serde_json::Value;

/// `(tool, parameter, help)`; tool `*` is any tool with that parameter, where the tool has no
/// entry of its own.
const HELP: &[(&str, &str, &str)] = &[
    // The conventions of every tool (`tools::INSTRUCTIONS`).
    (
        "*",
        "file",
        "Path relative to the workspace root (or absolute inside it, or a file:// URI)",
    ),
    ("code_actions", "line", "First line of the range (1-based)"),
    ("*", "line", "1-based line"),
    (
        "*",
        "column",
        "1-based column, in Unicode characters (or --symbol)",
    ),
    (
        "*",
        "symbol",
        "A name on that line (whole-word match), instead of a column",
    ),
    (
        "*",
        "occurrence",
        "Which match of --symbol on the line, 1-based (default 1)",
    ),
    (
        "*",
        "source",
        "Analyse this text instead of the file on disk (an unsaved buffer); never written",
    ),
    (
        "events",
        "limit",
        "At most this many events (default 100, at most 1,000)",
    ),
    (
        "check",
        "limit",
        "Issues per page (the summary counts them all)",
    ),
    (
        "*",
        "limit",
        "At most this many results; the rest with --cursor",
    ),
    (
        "*",
        "cursor",
        "The `next_cursor` of a previous call, to get the rest",
    ),
    (
        "*",
        "terse",
        "Minimal text output (`path:line:col message`)",
    ),
    // One tool's own.
    (
        "definition",
        "kind",
        "definition (default), declaration, type_definition or implementation",
    ),
    (
        "workspace_symbols",
        "kind",
        "Only symbols of this kind: class, function, method, variable, …",
    ),
    (
        "workspace_symbols",
        "query",
        "The name, or part of it, to look for",
    ),
    (
        "references",
        "include_declaration",
        "Count the declaration as a use too",
    ),
    (
        "call_hierarchy",
        "direction",
        "incoming (who calls this) or outgoing (what this calls)",
    ),
    (
        "code_actions",
        "end_line",
        "Last line of the range (default: LINE)",
    ),
    (
        "code_actions",
        "apply",
        "Apply the action with this index or exact title",
    ),
    ("*", "apply", "Write it (default: preview the diff only)"),
    (
        "what_if",
        "edits",
        "Changes as `edit` takes them (a JSON list); the disk never sees them",
    ),
    (
        "*",
        "edits",
        "A JSON list of edits, applied in order: {old_text, new_text} or {start_line, end_line, new_text}",
    ),
    (
        "what_if",
        "probe",
        "Where to ask for hover and definition after the change: LINE[:COL] or a JSON position",
    ),
    ("rename", "new_name", "The new name"),
    ("format", "tab_size", "Indent width (default 4)"),
    (
        "format",
        "insert_spaces",
        "Spaces rather than tabs (default true)",
    ),
    ("undo", "edit_id", "The `edit_id` an edit returned"),
    (
        "check",
        "changed",
        "Only files git reports as modified, added or untracked",
    ),
    (
        "check",
        "severity",
        "The least severity that fails the check",
    ),
    (
        "check",
        "tasks",
        "Configured tasks to run too (their diagnostics merge in)",
    ),
    (
        "explain_failure",
        "file",
        "The file whose diagnostics to explain",
    ),
    (
        "shrink",
        "file",
        "The file to reduce to a smallest failing case",
    ),
    ("shrink", "max_steps", "Most oracle calls (default 200)"),
    (
        "shrink",
        "max_seconds",
        "Time bound, in seconds (default 90)",
    ),
    (
        "run_task",
        "name",
        "A task from lspgate.toml ([[task]]) or a preset (cargo, tsc, cc, nim, pytest, make)",
    ),
    ("run_task", "args", "Appended to the task's command"),
    (
        "execute_command",
        "server",
        "The server's name, as `servers` lists it",
    ),
    (
        "execute_command",
        "command",
        "One of the commands `servers` lists for it",
    ),
    (
        "execute_command",
        "arguments",
        "The command's arguments, a JSON list",
    ),
    (
        "restart_server",
        "name",
        "The server's name, as `servers` lists it (e.g. builtin/pyright)",
    ),
    (
        "activity",
        "id",
        "The `activity_id` a background call returned",
    ),
    ("events", "kinds", "Only events of these kinds"),
];

/// The help of parameter `name` of `tool`: its schema description, else this table's.
pub(super) fn of(tool: &str, name: &str, schema: &'static Value) -> Option<&'static str> {
    if let Some(d) = schema.get("description").and_then(Value::as_str) {
        return Some(d);
    }
    let find = |tool: &str| {
        HELP.iter()
            .find(|(t, n, _)| *t == tool && *n == name)
            .map(|(_, _, h)| *h)
    };
    find(tool).or_else(|| find("*"))
}
