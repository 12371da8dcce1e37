//! The tool table: every tool's name, title, description, group, effect (read, write, run),
//! schemas and required capability; `dispatch.rs` calls a tool from `(name, JSON arguments)`.
//! MCP and the CLI both use them.

mod dispatch;
pub mod profile;
pub mod schema;

pub(crate) use dispatch::run_admitted;
pub use dispatch::{
    ToolOutput, call, call_for_resource, call_keeping, call_with_progress, decode, offered,
};

use std::sync::OnceLock;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Engine;
use super::render::{Render, cap};
use super::types::*;
use crate::error::ToolError;
use crate::lsp::Cap;
pub use profile::Profile;
use schema::{input, output};

/// One tool as agents see it.
pub struct ToolDef {
    pub name: &'static str,
    /// For people (client UIs).
    pub title: &'static str,
    /// For the model, read once per session: what the tool answers and when to use it. The
    /// conventions every tool shares are in the server's instructions (`INSTRUCTIONS`).
    pub description: &'static str,
    pub group: Group,
    pub effect: Effect,
    params: fn() -> Value,
    result: fn() -> Value,
    /// Offered when a server may support any of these (empty: always).
    pub caps: &'static [Cap],
}

/// The groups a tool profile names (`--tools navigation,diagnostics`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Navigation,
    Diagnostics,
    Edits,
    Gates,
    Admin,
}

impl Group {
    pub const ALL: [Group; 5] = [
        Group::Navigation,
        Group::Diagnostics,
        Group::Edits,
        Group::Gates,
        Group::Admin,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Group::Navigation => "navigation",
            Group::Diagnostics => "diagnostics",
            Group::Edits => "edits",
            Group::Gates => "gates",
            Group::Admin => "admin",
        }
    }

    pub fn by_name(name: &str) -> Option<Group> {
        Group::ALL.into_iter().find(|g| g.name() == name)
    }
}

/// What calling a tool can do to the workspace: the source of its MCP annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads only: files on disk are never written (overlays stay in memory).
    Read,
    /// Can write files (it previews unless `apply`); `idempotent`: repeating the same call
    /// changes nothing more.
    Write { idempotent: bool },
    /// Runs commands lspgate cannot bound (configured tasks, a server's own commands).
    Run,
    /// Changes lspgate's own state only (restarts a server process); no file is written.
    Control,
}

/// MCP tool annotations (all hints): `readOnlyHint`, `destructiveHint`, `idempotentHint`
/// (the last two only mean something when not read-only), `openWorldHint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    /// lspgate works on the workspace and its servers only: never an open world.
    pub open_world: bool,
}

impl Effect {
    pub fn hints(self) -> Hints {
        let (read_only, destructive, idempotent) = match self {
            Effect::Read => (true, None, None),
            // `idempotentHint` defaults to false: said only where it is true.
            Effect::Write { idempotent } => (false, Some(true), idempotent.then_some(true)),
            Effect::Run => (false, Some(true), None),
            Effect::Control => (false, Some(false), None),
        };
        Hints {
            read_only,
            destructive,
            idempotent,
            open_world: false,
        }
    }
}

/// Said once per session (MCP `instructions`) instead of in every tool and parameter.
pub const INSTRUCTIONS: &str = "\
lspgate answers from the workspace's real language servers and toolchains, always for the files' \
current content on disk. Prefer it to text search for code questions (`definition`, `references`, \
`workspace_symbols`), and ask `diagnostics` or `check` whether code is right after changing it. \
Conventions of every tool:
- `file`: a path relative to the workspace root (or absolute inside it, or a file:// URI). `line` \
and `column` are 1-based; columns count Unicode characters. Instead of `column`, `symbol` names \
a word on that line (`occurrence`: which match, default 1).
- `source` (reading tools): text to analyse instead of the file on disk; never written.
- Every tool also takes `terse: true` (minimal text, one `path:line:col message` a line) and \
`raw: true` (adds the exact LSP requests and commands sent).
- Long lists take `limit`; when cut they give `total` and `next_cursor`: pass it as `cursor` \
for the rest.
- `edit`, `rename` and `format` only preview a diff unless `apply: true` (`code_actions` applies \
the action `apply` names). Applied changes are checked against what you saw, atomic, undoable \
with `undo`, and report the diagnostics they introduced and resolved.
- `partial: true` means a server could not finish (still indexing, timed out); `reason` says why.
- Failures read `CODE: message` (invalid_params, symbol_not_found, no_server, not_supported, \
revision_conflict, ...); unknown parameters are refused.";

/// Every tool, in the order they are listed.
pub const TOOLS: [ToolDef; 24] = [
    ToolDef {
        name: "hover",
        title: "Hover",
        description: "Type, signature and documentation of the symbol at a position.",
        group: Group::Navigation,
        effect: Effect::Read,
        params: input::<PositionParams>,
        result: output::<HoverResult>,
        caps: &[Cap::Hover],
    },
    ToolDef {
        name: "definition",
        title: "Definition",
        description: "Where the symbol at a position is defined (or declared, its type defined, implemented: `kind`).",
        group: Group::Navigation,
        effect: Effect::Read,
        params: input::<DefinitionParams>,
        result: output::<LocationsResult>,
        caps: &[
            Cap::Definition,
            Cap::Declaration,
            Cap::TypeDefinition,
            Cap::Implementation,
        ],
    },
    ToolDef {
        name: "references",
        title: "References",
        description: "Every use of the symbol at a position in the whole workspace (unopened files too), grouped by file.",
        group: Group::Navigation,
        effect: Effect::Read,
        params: input::<ReferencesParams>,
        result: output::<ReferencesResult>,
        caps: &[Cap::References],
    },
    ToolDef {
        name: "document_symbols",
        title: "Outline",
        description: "Outline of a file in line order: classes, functions, methods and variables with their lines, nested; variables local to functions only with `locals`.",
        group: Group::Navigation,
        effect: Effect::Read,
        params: input::<DocumentSymbolsParams>,
        result: output::<DocumentSymbolsResult>,
        caps: &[],
    },
    ToolDef {
        name: "workspace_symbols",
        title: "Symbol search",
        description: "Find classes, functions and other symbols by name across the workspace, best matches first.",
        group: Group::Navigation,
        effect: Effect::Read,
        params: input::<WorkspaceSymbolsParams>,
        result: output::<WorkspaceSymbolsResult>,
        caps: &[Cap::WorkspaceSymbols],
    },
    ToolDef {
        name: "signature_help",
        title: "Signature help",
        description: "Signature of the call at a position, and which parameter the position is in.",
        group: Group::Navigation,
        effect: Effect::Read,
        params: input::<PositionParams>,
        result: output::<SignatureHelpResult>,
        caps: &[Cap::SignatureHelp],
    },
    ToolDef {
        name: "completions",
        title: "Completions",
        description: "Completions at a position: the members and names valid there.",
        group: Group::Navigation,
        effect: Effect::Read,
        params: input::<CompletionsParams>,
        result: output::<CompletionsResult>,
        caps: &[Cap::Completion],
    },
    ToolDef {
        name: "call_hierarchy",
        title: "Call hierarchy",
        description: "Callers (`incoming`) or callees (`outgoing`) of the function at a position, with each call site.",
        group: Group::Navigation,
        effect: Effect::Read,
        params: input::<CallHierarchyParams>,
        result: output::<CallHierarchyResult>,
        caps: &[Cap::CallHierarchy],
    },
    ToolDef {
        name: "diagnostics",
        title: "Diagnostics",
        description: "Errors and warnings of a file as it is now; without `file`, of every file with problems.",
        group: Group::Diagnostics,
        effect: Effect::Read,
        params: input::<DiagnosticsParams>,
        result: output::<DiagnosticsResult>,
        caps: &[],
    },
    ToolDef {
        name: "edit",
        title: "Edit",
        description: "Change a file: replace text that occurs once (`old_text`) or whole lines; shows the errors it introduces.",
        group: Group::Edits,
        effect: Effect::Write { idempotent: false },
        params: input::<EditParams>,
        result: output::<EditResult>,
        caps: &[],
    },
    ToolDef {
        name: "rename",
        title: "Rename",
        description: "Rename the symbol at a position everywhere it is used, unopened files included.",
        group: Group::Edits,
        effect: Effect::Write { idempotent: true },
        params: rename_params,
        result: output::<EditResult>,
        caps: &[Cap::Rename],
    },
    ToolDef {
        name: "code_actions",
        title: "Code actions",
        description: "Quick fixes and refactorings for lines of a file, numbered; `apply` one by number or title.",
        group: Group::Edits,
        effect: Effect::Write { idempotent: false },
        params: input::<CodeActionsParams>,
        result: output::<CodeActionsResult>,
        caps: &[Cap::CodeActions],
    },
    ToolDef {
        name: "format",
        title: "Format",
        description: "Format a file with its language server.",
        group: Group::Edits,
        effect: Effect::Write { idempotent: true },
        params: input::<FormatParams>,
        result: output::<EditResult>,
        caps: &[Cap::Formatting],
    },
    ToolDef {
        name: "undo",
        title: "Undo",
        description: "Undo an applied change by its `edit_id`, if its files still hold what it wrote.",
        group: Group::Edits,
        effect: Effect::Write { idempotent: true },
        params: input::<UndoParams>,
        result: output::<EditResult>,
        caps: &[],
    },
    ToolDef {
        name: "what_if",
        title: "What if",
        description: "The errors `edits` (as for `edit`) would introduce and resolve in a file, and the hover at `probe`; writes nothing.",
        group: Group::Gates,
        effect: Effect::Read,
        params: input::<WhatIfParams>,
        result: output::<WhatIfResult>,
        caps: &[],
    },
    ToolDef {
        name: "check",
        title: "Check",
        description: "Is the code right? `ok` and the issues of every file in scope (the workspace, `paths`, or git's `changed` files) from all servers and `tasks`; what could not be checked is in `unchecked`.",
        group: Group::Gates,
        effect: Effect::Read,
        params: input::<CheckParams>,
        result: output::<CheckReport>,
        caps: &[],
    },
    ToolDef {
        name: "explain_failure",
        title: "Explain failure",
        description: "Why a file fails, in five lines: its first error, the enclosing function and the source around it.",
        group: Group::Gates,
        effect: Effect::Read,
        params: input::<ExplainParams>,
        result: output::<ExplainResult>,
        caps: &[],
    },
    ToolDef {
        name: "shrink",
        title: "Shrink",
        description: "Reduce a failing file to a minimal one with the same first error (in memory; the disk is not written).",
        group: Group::Gates,
        effect: Effect::Read,
        params: input::<ShrinkParams>,
        result: output::<ShrinkResult>,
        caps: &[],
    },
    ToolDef {
        name: "run_task",
        title: "Run task",
        description: "Run a toolchain task (from lspgate.toml, or a preset: cargo, tsc, cc, nim, pytest, make) and parse its errors.",
        group: Group::Gates,
        effect: Effect::Run,
        params: input::<RunTaskParams>,
        result: output::<RunTaskResult>,
        caps: &[],
    },
    ToolDef {
        name: "execute_command",
        title: "Server command",
        description: "Run a language server's own command (`servers` lists them).",
        group: Group::Admin,
        effect: Effect::Run,
        params: input::<ExecuteCommandParams>,
        result: output::<ExecuteCommandResult>,
        caps: &[],
    },
    ToolDef {
        name: "servers",
        title: "Servers",
        description: "The language servers: state, capabilities, commands, last error. Look here after no_server or not_supported.",
        group: Group::Admin,
        effect: Effect::Read,
        params: input::<ServersParams>,
        result: output::<ServersResult>,
        caps: &[],
    },
    ToolDef {
        name: "restart_server",
        title: "Restart server",
        description: "Restart a language server by its name in `servers`.",
        group: Group::Admin,
        effect: Effect::Control,
        params: input::<RestartServerParams>,
        result: output::<ServersResult>,
        caps: &[],
    },
    ToolDef {
        name: "activity",
        title: "Activity",
        description: "State, progress and final result of a background call (`background: true`); `cancel` stops it.",
        group: Group::Gates,
        effect: Effect::Control,
        params: input::<super::durable::ActivityParams>,
        result: output::<super::activity::ActivityResult>,
        caps: &[],
    },
    ToolDef {
        name: "events",
        title: "Events",
        description: "What happened since a cursor (`after`), kept across restarts: file changes by anyone, diagnostics counts, edits, undos, server lifecycle, activities.",
        group: Group::Admin,
        effect: Effect::Read,
        params: input::<super::durable::EventsParams>,
        result: output::<super::durable::EventsResult>,
        caps: &[],
    },
];

/// `rename` writes the disk's text: it takes no `source` (an unsaved buffer is for reading
/// tools), so one sent is refused rather than ignored.
fn rename_params() -> Value {
    let mut v = input::<RenameParams>();
    if let Some(props) = v.get_mut("properties").and_then(Value::as_object_mut) {
        props.remove("source");
    }
    v
}

/// Every tool, in the order they are listed.
pub fn tools() -> &'static [ToolDef] {
    &TOOLS
}

/// The tool called `name`.
pub fn by_name(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().find(|t| t.name == name)
}

/// Parameters every tool takes, stated once in `INSTRUCTIONS` rather than in every schema.
pub const EVERY_TOOL: &[&str] = &["terse", "raw"];

const N: usize = TOOLS.len();
static INPUTS: [OnceLock<Value>; N] = [const { OnceLock::new() }; N];
static OUTPUTS: [OnceLock<Value>; N] = [const { OnceLock::new() }; N];

impl ToolDef {
    fn index(&self) -> usize {
        TOOLS.iter().position(|t| t.name == self.name).unwrap_or(0)
    }

    /// The input schema as sent: the tool's own parameters. `terse` and `raw`, which every
    /// tool takes, are said once in the instructions (`EVERY_TOOL`). Generated once.
    pub fn input_schema(&self) -> &'static Value {
        INPUTS[self.index()].get_or_init(|| {
            let mut schema = (self.params)();
            if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
                for p in EVERY_TOOL {
                    props.remove(*p);
                }
            }
            super::activity::background_input(self.name, &mut schema);
            schema
        })
    }

    /// The output schema as sent; every structured result validates against it.
    pub fn output_schema(&self) -> &'static Value {
        OUTPUTS[self.index()].get_or_init(|| {
            let mut schema = (self.result)();
            super::activity::background_output(self.name, &mut schema);
            schema
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decode_knows_every_tool_as_dispatch_does() {
        for def in tools() {
            if let Err(e) = decode(&Profile::all(), def.name, json!({})) {
                assert!(!e.message.contains("unknown tool"), "{}: {e:?}", def.name);
            }
        }
        assert!(
            decode(
                &Profile::all(),
                "hover",
                json!({"file": "a.py", "line": "3", "column": 1})
            )
            .is_ok()
        );
        let e = decode(
            &Profile::all(),
            "hover",
            json!({"file": "a.py", "line": 1, "colum": 1}),
        )
        .unwrap_err();
        assert!(e.message.contains("`colum`"), "{e:?}");
    }

    /// Found by fuzzing (fuzz/tool_params): `servers` takes no parameters of its own, and any
    /// parameter was admitted for it.
    #[test]
    fn a_tool_without_parameters_refuses_unknown_ones() {
        let e = decode(&Profile::all(), "servers", json!({"": "10"})).unwrap_err();
        assert!(e.message.contains("unknown parameter"), "{e:?}");
        assert!(
            decode(
                &Profile::all(),
                "servers",
                json!({"terse": true, "raw": false})
            )
            .is_ok()
        );
        assert!(decode(&Profile::all(), "servers", Value::Null).is_ok());
    }
}
