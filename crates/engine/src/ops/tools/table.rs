//! Every tool, declared once: one type per tool implementing `Tool` (name, title, description,
//! group, effect, capabilities, parameter and result types, the operation, heavy/background,
//! command-line shape and help), and `TOOLS`, their rows in the order they are listed.

use serde_json::Value;

use super::{CliShape, Effect, Group, Progress, Tool, ToolDef, entry, schema};
use crate::error::ToolError;
use crate::lsp::Cap;
use crate::ops::Engine;
use crate::ops::activity::ActivityResult;
use crate::ops::durable::{ActivityParams, EventsParams, EventsResult};
use crate::ops::types::*;

/// Every tool, in the order they are listed.
pub static TOOLS: [ToolDef; 26] = [
    entry::<Hover>(),
    entry::<Definition>(),
    entry::<References>(),
    entry::<DocumentSymbols>(),
    entry::<WorkspaceSymbols>(),
    entry::<SignatureHelp>(),
    entry::<Completions>(),
    entry::<CallHierarchy>(),
    entry::<TypeHierarchy>(),
    entry::<InlayHints>(),
    entry::<Diagnostics>(),
    entry::<Edit>(),
    entry::<Rename>(),
    entry::<CodeActions>(),
    entry::<Format>(),
    entry::<Undo>(),
    entry::<WhatIf>(),
    entry::<Check>(),
    entry::<ExplainFailure>(),
    entry::<Shrink>(),
    entry::<RunTask>(),
    entry::<ExecuteCommand>(),
    entry::<Servers>(),
    entry::<RestartServer>(),
    entry::<Activity>(),
    entry::<Events>(),
];

/// Whether `args` say `apply: true`.
fn applies(args: &Value) -> bool {
    args.get("apply") == Some(&Value::Bool(true))
}

pub struct Hover;
impl Tool for Hover {
    const NAME: &'static str = "hover";
    const TITLE: &'static str = "Hover";
    const DESCRIPTION: &'static str = "Type, signature and documentation of the symbol at a position; `hints`: also its line with inferred types inlined.";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CAPS: &'static [Cap] = &[Cap::Hover];
    const CLI: CliShape = CliShape {
        help: &[(
            "hints",
            "Also the line with its inlay hints (inferred types, parameter names) inlined",
        )],
        ..CliShape::PLAIN
    };
    type Params = HoverParams;
    type Result = HoverResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.hover(p).await
    }
}

pub struct Definition;
impl Tool for Definition {
    const NAME: &'static str = "definition";
    const TITLE: &'static str = "Definition";
    const DESCRIPTION: &'static str = "Where the symbol at a position is defined (or declared, its type defined, implemented: `kind`).";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CAPS: &'static [Cap] = &[
        Cap::Definition,
        Cap::Declaration,
        Cap::TypeDefinition,
        Cap::Implementation,
    ];
    const CLI: CliShape = CliShape {
        help: &[(
            "kind",
            "definition (default), declaration, type_definition or implementation",
        )],
        ..CliShape::PLAIN
    };
    type Params = DefinitionParams;
    type Result = LocationsResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.definition(p).await
    }
}

pub struct References;
impl Tool for References {
    const NAME: &'static str = "references";
    const TITLE: &'static str = "References";
    const DESCRIPTION: &'static str = "Every use of the symbol at a position in the whole workspace (unopened files too), grouped by file.";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CAPS: &'static [Cap] = &[Cap::References];
    const CLI: CliShape = CliShape {
        help: &[("include_declaration", "Count the declaration as a use too")],
        ..CliShape::PLAIN
    };
    type Params = ReferencesParams;
    type Result = ReferencesResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.references(p).await
    }
}

pub struct DocumentSymbols;
impl Tool for DocumentSymbols {
    const NAME: &'static str = "document_symbols";
    const TITLE: &'static str = "Outline";
    const DESCRIPTION: &'static str = "Outline of a file in line order: classes, functions, methods and variables with their lines, nested; variables local to functions only with `locals`.";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CLI: CliShape = CliShape {
        aliases: &["symbols"],
        ..CliShape::PLAIN
    };
    type Params = DocumentSymbolsParams;
    type Result = DocumentSymbolsResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.document_symbols(p).await
    }
}

pub struct WorkspaceSymbols;
impl Tool for WorkspaceSymbols {
    const NAME: &'static str = "workspace_symbols";
    const TITLE: &'static str = "Symbol search";
    const DESCRIPTION: &'static str = "Find classes, functions and other symbols by name across the workspace, best matches first.";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CAPS: &'static [Cap] = &[Cap::WorkspaceSymbols];
    const CLI: CliShape = CliShape {
        help: &[
            (
                "kind",
                "Only symbols of this kind: class, function, method, variable, …",
            ),
            ("query", "The name, or part of it, to look for"),
        ],
        ..CliShape::PLAIN
    };
    type Params = WorkspaceSymbolsParams;
    type Result = WorkspaceSymbolsResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.workspace_symbols(p).await
    }
}

pub struct SignatureHelp;
impl Tool for SignatureHelp {
    const NAME: &'static str = "signature_help";
    const TITLE: &'static str = "Signature help";
    const DESCRIPTION: &'static str =
        "Signature of the call at a position, and which parameter the position is in.";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CAPS: &'static [Cap] = &[Cap::SignatureHelp];
    type Params = PositionParams;
    type Result = SignatureHelpResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.signature_help(p).await
    }
}

pub struct Completions;
impl Tool for Completions {
    const NAME: &'static str = "completions";
    const TITLE: &'static str = "Completions";
    const DESCRIPTION: &'static str =
        "Completions at a position: the members and names valid there.";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CAPS: &'static [Cap] = &[Cap::Completion];
    type Params = CompletionsParams;
    type Result = CompletionsResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.completions(p).await
    }
}

pub struct CallHierarchy;
impl Tool for CallHierarchy {
    const NAME: &'static str = "call_hierarchy";
    const TITLE: &'static str = "Call hierarchy";
    const DESCRIPTION: &'static str = "Callers (`incoming`) or callees (`outgoing`) of the function at a position, with each call site.";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CAPS: &'static [Cap] = &[Cap::CallHierarchy];
    const CLI: CliShape = CliShape {
        help: &[(
            "direction",
            "incoming (who calls this) or outgoing (what this calls)",
        )],
        ..CliShape::PLAIN
    };
    type Params = CallHierarchyParams;
    type Result = CallHierarchyResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.call_hierarchy(p).await
    }
}

pub struct TypeHierarchy;
impl Tool for TypeHierarchy {
    const NAME: &'static str = "type_hierarchy";
    const TITLE: &'static str = "Type hierarchy";
    const DESCRIPTION: &'static str = "Supertypes or subtypes of the class or interface at a position, nested `depth` levels deep.";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CAPS: &'static [Cap] = &[Cap::TypeHierarchy];
    const CLI: CliShape = CliShape {
        help: &[
            (
                "direction",
                "supertypes (what it extends) or subtypes (what extends it)",
            ),
            ("depth", "Levels to walk (default 3, at most 10)"),
        ],
        ..CliShape::PLAIN
    };
    type Params = TypeHierarchyParams;
    type Result = TypeHierarchyResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.type_hierarchy(p).await
    }
}

pub struct InlayHints;
impl Tool for InlayHints {
    const NAME: &'static str = "inlay_hints";
    const TITLE: &'static str = "Inlay hints";
    const DESCRIPTION: &'static str = "Lines of a file with the inferred types and parameter names an editor shows inline; `classes`: each identifier's kind and modifiers (deprecated, readonly …).";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    // Hover: Python's hints are derived from it where the server has none.
    const CAPS: &'static [Cap] = &[Cap::InlayHints, Cap::Hover];
    const CLI: CliShape = CliShape {
        help: &[
            (
                "classes",
                "Also each identifier's kind and modifiers (semantic tokens)",
            ),
            ("end_line", "The last line (default: the page's end)"),
            ("limit", "Source lines a page covers (default 200)"),
        ],
        ..CliShape::PLAIN
    };
    type Params = InlayHintsParams;
    type Result = InlayHintsResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.inlay_hints(p).await
    }
}

pub struct Diagnostics;
impl Tool for Diagnostics {
    const NAME: &'static str = "diagnostics";
    const TITLE: &'static str = "Diagnostics";
    const DESCRIPTION: &'static str =
        "Errors and warnings of a file as it is now; without `file`, of every file with problems.";
    const GROUP: Group = Group::Diagnostics;
    const EFFECT: Effect = Effect::Read;
    type Params = DiagnosticsParams;
    type Result = DiagnosticsResult;
    async fn run(e: &Engine, p: Self::Params, at: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.diagnostics_with_progress(p, at).await
    }
    /// Without a file it does a check's work on the whole workspace.
    fn heavy(args: &Value) -> bool {
        args.get("file").is_none_or(Value::is_null)
    }
}

pub struct Edit;
impl Tool for Edit {
    const NAME: &'static str = "edit";
    const TITLE: &'static str = "Edit";
    const DESCRIPTION: &'static str = "Change a file: replace text that occurs once (`old_text`) or whole lines; shows the errors it introduces.";
    const GROUP: Group = Group::Edits;
    const EFFECT: Effect = Effect::Write { idempotent: false };
    type Params = EditParams;
    type Result = EditResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.edit(p).await
    }
}

pub struct Rename;
impl Tool for Rename {
    const NAME: &'static str = "rename";
    const TITLE: &'static str = "Rename";
    const DESCRIPTION: &'static str =
        "Rename the symbol at a position everywhere it is used, unopened files included.";
    const GROUP: Group = Group::Edits;
    const EFFECT: Effect = Effect::Write { idempotent: true };
    const CAPS: &'static [Cap] = &[Cap::Rename];
    const CLI: CliShape = CliShape {
        flag_aliases: &[("new_name", "to")],
        help: &[("new_name", "The new name")],
        ..CliShape::PLAIN
    };
    type Params = RenameParams;
    type Result = EditResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.rename(p).await
    }
    /// Applied, it touches every file that uses the symbol.
    fn heavy(args: &Value) -> bool {
        applies(args)
    }
    /// It writes the disk's text: it takes no `source` (an unsaved buffer is for reading
    /// tools), so one sent is refused rather than ignored.
    fn input() -> Value {
        let mut v = schema::input::<RenameParams>();
        if let Some(props) = v.get_mut("properties").and_then(Value::as_object_mut) {
            props.remove("source");
        }
        v
    }
}

pub struct CodeActions;
impl Tool for CodeActions {
    const NAME: &'static str = "code_actions";
    const TITLE: &'static str = "Code actions";
    const DESCRIPTION: &'static str = "Quick fixes and refactorings for lines of a file, numbered; `apply` one by number or title.";
    const GROUP: Group = Group::Edits;
    const EFFECT: Effect = Effect::Write { idempotent: false };
    const CAPS: &'static [Cap] = &[Cap::CodeActions];
    const CLI: CliShape = CliShape {
        help: &[
            ("line", "First line of the range (1-based)"),
            ("end_line", "Last line of the range (default: LINE)"),
            ("apply", "Apply the action with this index or exact title"),
        ],
        ..CliShape::PLAIN
    };
    type Params = CodeActionsParams;
    type Result = CodeActionsResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.code_actions(p).await
    }
}

pub struct Format;
impl Tool for Format {
    const NAME: &'static str = "format";
    const TITLE: &'static str = "Format";
    const DESCRIPTION: &'static str = "Format a file with its language server.";
    const GROUP: Group = Group::Edits;
    const EFFECT: Effect = Effect::Write { idempotent: true };
    const CAPS: &'static [Cap] = &[Cap::Formatting];
    const CLI: CliShape = CliShape {
        help: &[
            ("tab_size", "Indent width (default 4)"),
            ("insert_spaces", "Spaces rather than tabs (default true)"),
        ],
        ..CliShape::PLAIN
    };
    type Params = FormatParams;
    type Result = EditResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.format(p).await
    }
}

pub struct Undo;
impl Tool for Undo {
    const NAME: &'static str = "undo";
    const TITLE: &'static str = "Undo";
    const DESCRIPTION: &'static str =
        "Undo an applied change by its `edit_id`, if its files still hold what it wrote.";
    const GROUP: Group = Group::Edits;
    const EFFECT: Effect = Effect::Write { idempotent: true };
    const CLI: CliShape = CliShape {
        help: &[("edit_id", "The `edit_id` an edit returned")],
        ..CliShape::PLAIN
    };
    type Params = UndoParams;
    type Result = EditResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.undo(p).await
    }
}

pub struct WhatIf;
impl Tool for WhatIf {
    const NAME: &'static str = "what_if";
    const TITLE: &'static str = "What if";
    const DESCRIPTION: &'static str = "The errors `edits` (as for `edit`) would introduce and resolve in a file, and the hover at `probe`; writes nothing.";
    const GROUP: Group = Group::Gates;
    const EFFECT: Effect = Effect::Read;
    const CLI: CliShape = CliShape {
        help: &[
            (
                "edits",
                "Changes as `edit` takes them (a JSON list); the disk never sees them",
            ),
            (
                "probe",
                "Where to ask for hover and definition after the change: LINE[:COL] or a JSON position",
            ),
        ],
        ..CliShape::PLAIN
    };
    type Params = WhatIfParams;
    type Result = WhatIfResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.what_if(p).await
    }
}

pub struct Check;
impl Tool for Check {
    const NAME: &'static str = "check";
    const TITLE: &'static str = "Check";
    const DESCRIPTION: &'static str = "Is the code right? `ok` and the issues of every file in scope (the workspace, `paths`, or git's `changed` files) from all servers and `tasks`; what could not be checked is in `unchecked`.";
    const GROUP: Group = Group::Gates;
    const EFFECT: Effect = Effect::Read;
    const BACKGROUND: bool = true;
    const CLI: CliShape = CliShape {
        positional: &["paths"],
        flag_aliases: &[("tasks", "task")],
        help: &[
            ("limit", "Issues per page (the summary counts them all)"),
            (
                "changed",
                "Only files git reports as modified, added or untracked",
            ),
            ("severity", "The least severity that fails the check"),
            (
                "tasks",
                "Configured tasks to run too (their diagnostics merge in)",
            ),
        ],
        sarif: true,
        ..CliShape::PLAIN
    };
    type Params = CheckParams;
    type Result = CheckReport;
    async fn run(e: &Engine, p: Self::Params, at: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.check_with_progress(p, at).await
    }
}

pub struct ExplainFailure;
impl Tool for ExplainFailure {
    const NAME: &'static str = "explain_failure";
    const TITLE: &'static str = "Explain failure";
    const DESCRIPTION: &'static str = "Why a file fails, in five lines: its first error, the enclosing function and the source around it.";
    const GROUP: Group = Group::Gates;
    const EFFECT: Effect = Effect::Read;
    const CLI: CliShape = CliShape {
        help: &[("file", "The file whose diagnostics to explain")],
        ..CliShape::PLAIN
    };
    type Params = ExplainParams;
    type Result = ExplainResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.explain_failure(p).await
    }
}

pub struct Shrink;
impl Tool for Shrink {
    const NAME: &'static str = "shrink";
    const TITLE: &'static str = "Shrink";
    const DESCRIPTION: &'static str = "Reduce a failing file to a minimal one with the same first error (in memory; the disk is not written).";
    const GROUP: Group = Group::Gates;
    const EFFECT: Effect = Effect::Read;
    const BACKGROUND: bool = true;
    const CLI: CliShape = CliShape {
        help: &[
            ("file", "The file to reduce to a smallest failing case"),
            ("max_steps", "Most oracle calls (default 200)"),
            ("max_seconds", "Time bound, in seconds (default 90)"),
        ],
        ..CliShape::PLAIN
    };
    type Params = ShrinkParams;
    type Result = ShrinkResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.shrink(p).await
    }
}

pub struct RunTask;
impl Tool for RunTask {
    const NAME: &'static str = "run_task";
    const TITLE: &'static str = "Run task";
    const DESCRIPTION: &'static str = "Run a toolchain task (from lspgate.toml, or a preset: cargo, tsc, cc, nim, pytest, make) and parse its errors.";
    const GROUP: Group = Group::Gates;
    const EFFECT: Effect = Effect::Run;
    const BACKGROUND: bool = true;
    const CLI: CliShape = CliShape {
        trailing: Some("args"),
        renamed: &[("timeout", "task-timeout")],
        help: &[
            (
                "name",
                "A task from lspgate.toml ([[task]]) or a preset (cargo, tsc, cc, nim, pytest, make)",
            ),
            ("args", "Appended to the task's command"),
        ],
        ..CliShape::PLAIN
    };
    type Params = RunTaskParams;
    type Result = RunTaskResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.run_task(p).await
    }
}

pub struct ExecuteCommand;
impl Tool for ExecuteCommand {
    const NAME: &'static str = "execute_command";
    const TITLE: &'static str = "Server command";
    const DESCRIPTION: &'static str = "Run a language server's own command (`servers` lists them).";
    const GROUP: Group = Group::Admin;
    const EFFECT: Effect = Effect::Run;
    const CLI: CliShape = CliShape {
        help: &[
            ("server", "The server's name, as `servers` lists it"),
            ("command", "One of the commands `servers` lists for it"),
            ("arguments", "The command's arguments, a JSON list"),
        ],
        ..CliShape::PLAIN
    };
    type Params = ExecuteCommandParams;
    type Result = ExecuteCommandResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.execute_command(p).await
    }
}

pub struct Servers;
impl Tool for Servers {
    const NAME: &'static str = "servers";
    const TITLE: &'static str = "Servers";
    const DESCRIPTION: &'static str = "The language servers: state, capabilities, commands, last error. Look here after no_server or not_supported.";
    const GROUP: Group = Group::Admin;
    const EFFECT: Effect = Effect::Read;
    const ALWAYS_OFFERED: bool = true;
    type Params = ServersParams;
    type Result = ServersResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.servers(p).await
    }
}

pub struct RestartServer;
impl Tool for RestartServer {
    const NAME: &'static str = "restart_server";
    const TITLE: &'static str = "Restart server";
    const DESCRIPTION: &'static str = "Restart a language server by its name in `servers`.";
    const GROUP: Group = Group::Admin;
    const EFFECT: Effect = Effect::Control;
    const CLI: CliShape = CliShape {
        help: &[(
            "name",
            "The server's name, as `servers` lists it (e.g. builtin/pyright)",
        )],
        ..CliShape::PLAIN
    };
    type Params = RestartServerParams;
    type Result = ServersResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.restart_server(p).await
    }
}

pub struct Activity;
impl Tool for Activity {
    const NAME: &'static str = "activity";
    const TITLE: &'static str = "Activity";
    const DESCRIPTION: &'static str = "State, progress and final result of a background call (`background: true`); `cancel` stops it.";
    const GROUP: Group = Group::Gates;
    const EFFECT: Effect = Effect::Control;
    const CLI: CliShape = CliShape {
        help: &[("id", "The `activity_id` a background call returned")],
        ..CliShape::PLAIN
    };
    type Params = ActivityParams;
    type Result = ActivityResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.activity(&p.id, p.cancel.unwrap_or(false)).await
    }
}

pub struct Events;
impl Tool for Events {
    const NAME: &'static str = "events";
    const TITLE: &'static str = "Events";
    const DESCRIPTION: &'static str = "What happened since a cursor (`after`), kept across restarts: file changes by anyone, diagnostics counts, edits, undos, server lifecycle, activities.";
    const GROUP: Group = Group::Admin;
    const EFFECT: Effect = Effect::Read;
    const CLI: CliShape = CliShape {
        help: &[
            (
                "limit",
                "At most this many events (default 100, at most 1,000)",
            ),
            ("kinds", "Only events of these kinds"),
        ],
        ..CliShape::PLAIN
    };
    type Params = EventsParams;
    type Result = EventsResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.events(p).await
    }
}
