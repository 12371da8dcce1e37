//! The tool table: every tool's name, description, schemas and required capability, and one
//! dispatcher from `(name, JSON arguments)` to the operation. MCP and the CLI both call it.

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Engine;
use super::render::{Render, cap};
use super::types::*;
use crate::error::ToolError;
use crate::lsp::Cap;

/// One tool as agents see it.
pub struct ToolDef {
    pub name: &'static str,
    pub description: &'static str,
    pub input_schema: fn() -> Value,
    pub output_schema: fn() -> Value,
    /// Offered when a server may support any of these (empty: always).
    pub caps: &'static [Cap],
}

fn schema<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null)
}

/// A result's schema as it is serialized: fields we leave out when empty are not required.
/// Clients such as the Python SDK validate every structured result against it, so it is kept
/// cheap to check: subschemas inline (no `$ref` to resolve per location) and no `format` or
/// `minimum` on counts and positions (which are never negative) — a quarter less of the
/// client's time on a 121-location answer.
fn out_schema<T: JsonSchema>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12().for_serialize();
    settings.inline_subschemas = true;
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut v = serde_json::to_value(schema).unwrap_or(Value::Null);
    strip_integer_annotations(&mut v);
    v
}

fn strip_integer_annotations(v: &mut Value) {
    match v {
        Value::Object(map) => {
            let integer = match map.get("type") {
                Some(Value::String(t)) => t == "integer",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
                _ => false,
            };
            if integer {
                map.remove("format");
                map.remove("minimum");
            }
            map.values_mut().for_each(strip_integer_annotations);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_integer_annotations),
        _ => {}
    }
}

const POS: &str = " Position: `file` (root-relative path, absolute path in the root, or file:// URI), \
1-based `line`, and 1-based `column` in Unicode code points, or `symbol` (a name on that line) \
with optional `occurrence`. `source` analyses that text instead of the disk (never written).";

/// Every reading and navigation tool.
pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef {
            name: "hover",
            description: "Type, signature and documentation of the symbol at a position, from the language server.",
            input_schema: schema::<PositionParams>,
            output_schema: out_schema::<HoverResult>,
            caps: &[Cap::Hover],
        },
        ToolDef {
            name: "definition",
            description: "Where the symbol at a position is defined; `kind` picks definition (default), declaration, type_definition or implementation.",
            input_schema: schema::<DefinitionParams>,
            output_schema: out_schema::<LocationsResult>,
            caps: &[
                Cap::Definition,
                Cap::Declaration,
                Cap::TypeDefinition,
                Cap::Implementation,
            ],
        },
        ToolDef {
            name: "references",
            description: "Every reference to the symbol at a position, across the workspace (files never opened included), grouped by file. Waits for indexing; says `partial` if it could not.",
            input_schema: schema::<ReferencesParams>,
            output_schema: out_schema::<ReferencesResult>,
            caps: &[Cap::References],
        },
        ToolDef {
            name: "document_symbols",
            description: "The outline of a file: classes, functions, methods and variables with their lines, nested.",
            input_schema: schema::<FileParams>,
            output_schema: out_schema::<DocumentSymbolsResult>,
            caps: &[],
        },
        ToolDef {
            name: "workspace_symbols",
            description: "Find symbols by name across the workspace; `kind` filters (function, class, method, …).",
            input_schema: schema::<WorkspaceSymbolsParams>,
            output_schema: out_schema::<WorkspaceSymbolsResult>,
            caps: &[Cap::WorkspaceSymbols],
        },
        ToolDef {
            name: "signature_help",
            description: "The signature of the call at a position and which parameter the position is in.",
            input_schema: schema::<PositionParams>,
            output_schema: out_schema::<SignatureHelpResult>,
            caps: &[Cap::SignatureHelp],
        },
        ToolDef {
            name: "completions",
            description: "What the language server would complete at a position (`limit`, default 20).",
            input_schema: schema::<CompletionsParams>,
            output_schema: out_schema::<CompletionsResult>,
            caps: &[Cap::Completion],
        },
        ToolDef {
            name: "call_hierarchy",
            description: "Callers (`direction: incoming`) or callees (`outgoing`) of the function at a position, with each call site.",
            input_schema: schema::<CallHierarchyParams>,
            output_schema: out_schema::<CallHierarchyResult>,
            caps: &[Cap::CallHierarchy],
        },
        ToolDef {
            name: "diagnostics",
            description: "Errors and warnings for a file, always for its current content (re-read from disk on every call), or for every file the servers reported on. `partial` if the server did not answer in time.",
            input_schema: schema::<DiagnosticsParams>,
            output_schema: out_schema::<DiagnosticsResult>,
            caps: &[],
        },
        ToolDef {
            name: "edit",
            description: "Change a file: `edits` replace a unique `old_text` or whole lines (`start_line`..`end_line`). Previews a unified diff unless `apply: true`; applying checks the file did not change since (`expected_digest`, or the preview), writes atomically, journals it for `undo`, and returns the diagnostics it introduced and resolved.",
            input_schema: schema::<EditParams>,
            output_schema: out_schema::<EditResult>,
            caps: &[],
        },
        ToolDef {
            name: "rename",
            description: "Rename the symbol at a position across the workspace (files never opened included). Previews the diff unless `apply: true`; applied renames are verified, atomic, undoable, and report the diagnostics they introduced and resolved.",
            input_schema: schema::<RenameParams>,
            output_schema: out_schema::<EditResult>,
            caps: &[Cap::Rename],
        },
        ToolDef {
            name: "code_actions",
            description: "The code actions (quick fixes, refactorings) for `line`..`end_line` of a file, with stable 1-based indexes. `apply`: an index or exact title applies that action (its edit and its command), verified and undoable.",
            input_schema: schema::<CodeActionsParams>,
            output_schema: out_schema::<CodeActionsResult>,
            caps: &[Cap::CodeActions],
        },
        ToolDef {
            name: "format",
            description: "Format a file with its language server. Previews the diff unless `apply: true`.",
            input_schema: schema::<FormatParams>,
            output_schema: out_schema::<EditResult>,
            caps: &[Cap::Formatting],
        },
        ToolDef {
            name: "undo",
            description: "Undo an applied edit by its `edit_id`: restores its files if they still hold what it wrote, else `revision_conflict`.",
            input_schema: schema::<UndoParams>,
            output_schema: out_schema::<EditResult>,
            caps: &[],
        },
        ToolDef {
            name: "what_if",
            description: "The diagnostics `edits` (as `edit` takes them) would introduce and resolve in a file, and optionally the hover at `probe` in the edited text, without writing anything.",
            input_schema: schema::<WhatIfParams>,
            output_schema: out_schema::<WhatIfResult>,
            caps: &[],
        },
        ToolDef {
            name: "check",
            description: "Is the code right? Diagnostics of every file in scope (the workspace, `paths`/globs, or `changed`: git's modified and untracked files) from every server, plus configured `tasks`, merged, as CheckReport v1: {version, ok, summary {files, errors, warnings, unchecked}, issues, unchecked}. `ok` only when everything in scope was checked and nothing found at `severity` (default error); what could not be checked (no server, server failed or silent, task failed unparsed) is in `unchecked`.",
            input_schema: schema::<CheckParams>,
            output_schema: out_schema::<CheckReport>,
            caps: &[],
        },
        ToolDef {
            name: "explain_failure",
            description: "Why a file fails: a verdict of at most five lines (the first error, what it is about, where) and the culprit: the enclosing function and the source lines around the error.",
            input_schema: schema::<ExplainParams>,
            output_schema: out_schema::<ExplainResult>,
            caps: &[],
        },
        ToolDef {
            name: "shrink",
            description: "Delta-debug a failing file to a minimal version that still gives its first error (same code and message), with the language server as the oracle, in an overlay: the disk is never written. Bounded by `max_steps` and `max_seconds`.",
            input_schema: schema::<ShrinkParams>,
            output_schema: out_schema::<ShrinkResult>,
            caps: &[],
        },
        ToolDef {
            name: "run_task",
            description: "Run a configured toolchain task (lspgate.toml [[task]], or a preset where its markers are: cargo, tsc, cc, nim, pytest, make) in the root: exit code, stdout and stderr (capped), and its output parsed into diagnostics.",
            input_schema: schema::<RunTaskParams>,
            output_schema: out_schema::<RunTaskResult>,
            caps: &[],
        },
        ToolDef {
            name: "execute_command",
            description: "Run one of a server's own commands (`workspace/executeCommand`; `servers` lists them). Edits it asks for are applied, journaled and undoable.",
            input_schema: schema::<ExecuteCommandParams>,
            output_schema: out_schema::<ExecuteCommandResult>,
            caps: &[],
        },
        ToolDef {
            name: "servers",
            description: "The language servers of this workspace: languages, root, state (idle/starting/indexing/ready/restarting/failed), pid, restarts, last error, capabilities and commands.",
            input_schema: schema::<ServersParams>,
            output_schema: out_schema::<ServersResult>,
            caps: &[],
        },
        ToolDef {
            name: "restart_server",
            description: "Restart a language server by name (as `servers` lists it); returns its new state.",
            input_schema: schema::<RestartServerParams>,
            output_schema: out_schema::<ServersResult>,
            caps: &[],
        },
    ]
}

/// Text under `POS` for tools that take a position.
pub fn description(def: &ToolDef) -> String {
    let positional = matches!(
        def.name,
        "hover"
            | "definition"
            | "references"
            | "signature_help"
            | "completions"
            | "call_hierarchy"
            | "rename"
    );
    if positional {
        format!("{}{POS}", def.description)
    } else {
        def.description.to_string()
    }
}

/// Whether a tool is offered given what the servers support.
pub fn offered(engine: &Engine, def: &ToolDef) -> bool {
    def.caps.is_empty() || def.caps.iter().any(|c| engine.may_support(*c))
}

/// A tool's answer: the structured result and its (capped) text.
pub struct ToolOutput {
    pub structured: Value,
    pub text: String,
}

fn parse<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    let args = if args.is_null() {
        Value::Object(Default::default())
    } else {
        args
    };
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
    static TERSE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TERSE.get_or_init(|| {
        std::env::var("LSPGATE_TERSE").is_ok_and(|v| matches!(v.as_str(), "1" | "true" | "yes"))
    })
}

/// A tool's input schema as agents see it: its parameters plus `raw`.
pub fn input_schema(def: &ToolDef) -> Value {
    let mut schema = (def.input_schema)();
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert(
            "raw".into(),
            serde_json::json!({
                "type": ["boolean", "null"],
                "default": null,
                "description": "Add the exact LSP requests and command lines this call sent."
            }),
        );
    }
    schema
}

/// Runs tool `name` with JSON `args`; with `raw: true`, adds what it sent to the servers and
/// toolchains (`raw` in the structured result, and a section of the text).
pub async fn call(engine: &Engine, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
    call_with_progress(engine, name, args, &|_, _| {}).await
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
            let p: FileParams = parse(args)?;
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
        other => Err(ToolError::invalid(format!("unknown tool `{other}`"))),
    }
}
