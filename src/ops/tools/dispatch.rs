//! The one dispatcher from `(name, JSON arguments)` to the operation: it applies the
//! session's profile, refuses unknown parameters, runs the tool and renders its answer. MCP and
//! the CLI both call it.

use super::*;

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

tokio::task_local! {
    /// Where `finish` leaves the operation's own result while `call_keeping` waits for it.
    static KEPT: std::cell::RefCell<Option<Box<dyn std::any::Any + Send>>>;
}

fn finish<T: Serialize + Render + Send + 'static>(
    engine: &Engine,
    result: T,
    terse: Option<bool>,
) -> Result<ToolOutput, ToolError> {
    let terse = terse.unwrap_or(engine.options().terse);
    let text = cap(result.render(terse), engine.options().max_output);
    let structured =
        serde_json::to_value(&result).map_err(|e| ToolError::internal(e.to_string()))?;
    // Only a `call_keeping` caller has a place for it.
    let _ = KEPT.try_with(|k| *k.borrow_mut() = Some(Box::new(result)));
    Ok(ToolOutput { structured, text })
}

/// `call_with_progress` (the same admission, heavy-call place, consistency point, rendering
/// and `raw`), also handing back the operation's own result when it is a `T` (`CheckReport`
/// for `check`): for a front end that makes more of it than its text and JSON (`lspgate
/// check`'s SARIF and exit code). `None` when the call answered something else (`background`).
pub async fn call_keeping<T: 'static>(
    engine: &Engine,
    name: &str,
    args: Value,
    progress: Progress<'_>,
) -> Result<(ToolOutput, Option<T>), ToolError> {
    KEPT.scope(std::cell::RefCell::new(None), async {
        let out = call_with_progress(engine, name, args, progress).await?;
        let kept = KEPT
            .with(|k| k.borrow_mut().take())
            .and_then(|b| (b as Box<dyn std::any::Any>).downcast::<T>().ok())
            .map(|b| *b);
        Ok((out, kept))
    })
    .await
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
    if crate::ops::activity::take_background(name, &mut args) {
        return engine.start_activity(name, args).await;
    }
    let _permit = engine.admit_heavy(name, &args)?;
    // `diagnostics` without a file does a check's work on the whole workspace: heavy too (not
    // as a resource read, which a subscription must be able to make).
    let _workspace = if name == "diagnostics" && args.get("file").is_none_or(Value::is_null) {
        Some(engine.activities.admit(name)?)
    } else {
        None
    };
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
    crate::ops::activity::take_background(name, &mut args);
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
        "activity" => p::<crate::ops::durable::ActivityParams>(args),
        "events" => p::<crate::ops::durable::EventsParams>(args),
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
            finish(
                engine,
                engine.diagnostics_with_progress(p, progress).await?,
                t,
            )
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
            let p: crate::ops::durable::ActivityParams = parse(args)?;
            let t = p.terse;
            let a = engine.activity(&p.id, p.cancel.unwrap_or(false)).await?;
            finish(engine, a, t)
        }
        "events" => {
            let p: crate::ops::durable::EventsParams = parse(args)?;
            let t = p.terse;
            finish(engine, engine.events(p).await?, t)
        }
        other => Err(ToolError::invalid(format!("unknown tool `{other}`"))),
    }
}
