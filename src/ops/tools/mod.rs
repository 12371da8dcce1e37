//! The tool table: every tool's name, title, description, group, effect (read, write, run),
//! schemas and required capability, and one dispatcher from `(name, JSON arguments)` to the
//! operation, which applies the session's profile and refuses unknown parameters. MCP and the
//! CLI both call it.

pub mod profile;
pub mod schema;

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

/// Whether a tool is offered given what the servers support and the session's profile.
pub fn offered(engine: &Engine, def: &ToolDef) -> bool {
    engine.options().tools.allows(def.name)
        && (def.caps.is_empty() || def.caps.iter().any(|c| engine.may_support(*c)))
}

/// A tool's answer: the structured result and its (capped) text.
pub struct ToolOutput {
    pub structured: Value,
    pub text: String,
}

fn parse<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|e| ToolError::invalid(format!("bad arguments: {e}")))
}

fn finish<T: Serialize + Render>(
    engine: &Engine,
    result: T,
    terse: Option<bool>,
) -> Result<ToolOutput, ToolError> {
    let terse = terse.unwrap_or_else(default_terse);
    let text = cap(result.render(terse), engine.options().max_output);
    let structured =
        serde_json::to_value(&result).map_err(|e| ToolError::internal(e.to_string()))?;
    Ok(ToolOutput { structured, text })
}

/// `LSPGATE_TERSE=1` makes terse output the default.
fn default_terse() -> bool {
    static TERSE: OnceLock<bool> = OnceLock::new();
    *TERSE.get_or_init(|| {
        std::env::var("LSPGATE_TERSE").is_ok_and(|v| matches!(v.as_str(), "1" | "true" | "yes"))
    })
}

/// Runs tool `name` with JSON `args`; with `raw: true`, adds what it sent to the servers and
/// toolchains (`raw` in the structured result, and a section of the text).
pub async fn call(engine: &Engine, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
    call_with_progress(engine, name, args, &|_, _| {}).await
}

/// Runs tool `name` for an MCP resource read (`lspgate://servers`, `lspgate://diagnostics…`):
/// admitted as any call, except that resources are offered whatever the session's tool
/// profile (a profile narrows the tools an agent is offered; resources are read-only and
/// listed, so a listed one reads).
pub async fn call_for_resource(
    engine: &Engine,
    name: &str,
    args: Value,
) -> Result<ToolOutput, ToolError> {
    let args = admit_in(&Profile::all(), name, args)?;
    run_admitted(engine, name, args, &|_, _| {}).await
}

/// Reports `progress(done, total)` from long tools (`check`).
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// `call`, with progress reported as long tools advance.
pub async fn call_with_progress(
    engine: &Engine,
    name: &str,
    args: Value,
    progress: Progress<'_>,
) -> Result<ToolOutput, ToolError> {
    let mut args = admit(engine, name, args)?;
    // Heavy calls run under the workspace's `max_inflight`; `background: true` runs one as an
    // activity and answers its id at once.
    if super::activity::take_background(name, &mut args) {
        return engine.start_activity(name, args).await;
    }
    let _permit = engine.admit_heavy(name, &args)?;
    run_admitted(engine, name, args, progress).await
}

/// Runs an admitted call (its heavy-call place taken, if it needs one).
pub(crate) async fn run_admitted(
    engine: &Engine,
    name: &str,
    args: Value,
    progress: Progress<'_>,
) -> Result<ToolOutput, ToolError> {
    let raw = args.get("raw").and_then(Value::as_bool).unwrap_or(false);
    if !raw {
        return dispatch(engine, name, args, progress).await;
    }
    let (result, recorded) = crate::raw::capture(dispatch(engine, name, args, progress)).await;
    let mut out = result?;
    let listing: Vec<String> = recorded.iter().map(|r| r.to_string()).collect();
    if let Value::Object(m) = &mut out.structured {
        m.insert("raw".into(), Value::Array(recorded));
    }
    out.text = cap(
        format!("{}\n--- raw ---\n{}", out.text, listing.join("\n")),
        engine.options().max_output,
    );
    Ok(out)
}

/// The checks every call passes before its operation runs: a known tool, inside the
/// session's profile, with an object of arguments that names only parameters the tool takes
/// (a typo must not fall back to a default). Returns the arguments (`{}` for none).
fn admit(engine: &Engine, name: &str, args: Value) -> Result<Value, ToolError> {
    admit_in(&engine.options().tools, name, args)
}

/// `admit` under `profile`.
fn admit_in(profile: &Profile, name: &str, args: Value) -> Result<Value, ToolError> {
    let Some(def) = by_name(name) else {
        return Err(ToolError::invalid(format!("unknown tool `{name}`")));
    };
    if !profile.allows(name) {
        return Err(ToolError::invalid(format!(
            "`{name}` is not offered in this session: its tool profile is `{}` (--tools, or `tools` in lspgate.toml)",
            profile.spec()
        )));
    }
    let args = match args {
        Value::Null => Value::Object(Default::default()),
        Value::Object(_) => args,
        other => {
            return Err(ToolError::invalid(format!(
                "the arguments of `{name}` must be an object, not {other}"
            )));
        }
    };
    let mut unknown = schema::unknown_parameters(def.input_schema(), &args);
    unknown.retain(|(path, _)| !EVERY_TOOL.contains(&path.as_str()));
    if let Some((path, known)) = unknown.first() {
        let mut known = known.clone();
        if !path.contains(['.', '[']) {
            known.extend(EVERY_TOOL.iter().map(|p| p.to_string()));
        }
        let names: Vec<String> = unknown.iter().map(|(p, _)| format!("`{p}`")).collect();
        let plural = if names.len() > 1 { "s" } else { "" };
        return Err(ToolError::invalid(format!(
            "unknown parameter{plural} {} for `{name}` (valid there: {})",
            names.join(", "),
            known.join(", ")
        ))
        .with_data(serde_json::json!({
            "unknown": unknown.iter().map(|(p, _)| p).collect::<Vec<_>>(),
            "known": known,
        })));
    }
    Ok(args)
}

/// What a call checks before its operation runs, and nothing more: admission under
/// `profile`, then the arguments decoded into the tool's parameters as `dispatch` decodes
/// them. Public for the fuzz targets (`fuzz/`); callers use `call`.
#[doc(hidden)]
pub fn decode(profile: &Profile, name: &str, args: Value) -> Result<(), ToolError> {
    let mut args = admit_in(profile, name, args)?;
    super::activity::take_background(name, &mut args);
    fn p<T: DeserializeOwned>(args: Value) -> Result<(), ToolError> {
        parse::<T>(args).map(drop)
    }
    match name {
        "hover" | "signature_help" => p::<PositionParams>(args),
        "definition" => p::<DefinitionParams>(args),
        "references" => p::<ReferencesParams>(args),
        "document_symbols" => p::<DocumentSymbolsParams>(args),
        "workspace_symbols" => p::<WorkspaceSymbolsParams>(args),
        "completions" => p::<CompletionsParams>(args),
        "call_hierarchy" => p::<CallHierarchyParams>(args),
        "diagnostics" => p::<DiagnosticsParams>(args),
        "edit" => p::<EditParams>(args),
        "rename" => p::<RenameParams>(args),
        "code_actions" => p::<CodeActionsParams>(args),
        "format" => p::<FormatParams>(args),
        "undo" => p::<UndoParams>(args),
        "what_if" => p::<WhatIfParams>(args),
        "check" => p::<CheckParams>(args),
        "explain_failure" => p::<ExplainParams>(args),
        "shrink" => p::<ShrinkParams>(args),
        "run_task" => p::<RunTaskParams>(args),
        "execute_command" => p::<ExecuteCommandParams>(args),
        "servers" => p::<ServersParams>(args),
        "restart_server" => p::<RestartServerParams>(args),
        "activity" => p::<super::durable::ActivityParams>(args),
        "events" => p::<super::durable::EventsParams>(args),
        other => Err(ToolError::invalid(format!("unknown tool `{other}`"))),
    }
}

async fn dispatch(
    engine: &Engine,
    name: &str,
    args: Value,
    progress: Progress<'_>,
) -> Result<ToolOutput, ToolError> {
    // The consistency point: whatever was written before this call, by anyone, reaches the
    // servers before the call asks them anything.
    engine.registry().sync().await;
    match name {
        "hover" => {
            let p: PositionParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.hover(p).await?, t)
        }
        "definition" => {
            let p: DefinitionParams = parse(args)?;
            let t = p.at.terse;
            finish(engine, engine.definition(p).await?, t)
        }
        "references" => {
            let p: ReferencesParams = parse(args)?;
            let t = p.at.terse;
            finish(engine, engine.references(p).await?, t)
        }
        "document_symbols" => {
            let p: DocumentSymbolsParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.document_symbols(p).await?, t)
        }
        "workspace_symbols" => {
            let p: WorkspaceSymbolsParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.workspace_symbols(p).await?, t)
        }
        "signature_help" => {
            let p: PositionParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.signature_help(p).await?, t)
        }
        "completions" => {
            let p: CompletionsParams = parse(args)?;
            let t = p.at.terse;
            finish(engine, engine.completions(p).await?, t)
        }
        "call_hierarchy" => {
            let p: CallHierarchyParams = parse(args)?;
            let t = p.at.terse;
            finish(engine, engine.call_hierarchy(p).await?, t)
        }
        "diagnostics" => {
            let p: DiagnosticsParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.diagnostics(p).await?, t)
        }
        "edit" => {
            let p: EditParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.edit(p).await?, t)
        }
        "rename" => {
            let p: RenameParams = parse(args)?;
            let t = p.at.terse;
            finish(engine, engine.rename(p).await?, t)
        }
        "code_actions" => {
            let p: CodeActionsParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.code_actions(p).await?, t)
        }
        "format" => {
            let p: FormatParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.format(p).await?, t)
        }
        "undo" => {
            let p: UndoParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.undo(p).await?, t)
        }
        "what_if" => {
            let p: WhatIfParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.what_if(p).await?, t)
        }
        "check" => {
            let p: CheckParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.check_with_progress(p, progress).await?, t)
        }
        "explain_failure" => {
            let p: ExplainParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.explain_failure(p).await?, t)
        }
        "shrink" => {
            let p: ShrinkParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.shrink(p).await?, t)
        }
        "run_task" => {
            let p: RunTaskParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.run_task(p).await?, t)
        }
        "execute_command" => {
            let p: ExecuteCommandParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.execute_command(p).await?, t)
        }
        "servers" => {
            let p: ServersParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.servers(p).await?, t)
        }
        "restart_server" => {
            let p: RestartServerParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.restart_server(p).await?, t)
        }
        "activity" => {
            let p: super::durable::ActivityParams = parse(args)?;
            let t = p.terse;
            let a = engine.activity(&p.id, p.cancel.unwrap_or(false)).await?;
            finish(engine, a, t)
        }
        "events" => {
            let p: super::durable::EventsParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.events(p).await?, t)
        }
        other => Err(ToolError::invalid(format!("unknown tool `{other}`"))),
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
