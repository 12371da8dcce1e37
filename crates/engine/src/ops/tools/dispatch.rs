//! The one dispatcher from `(name, JSON arguments)` to the operation: it finds the tool's row,
//! applies the session's profile, refuses unknown parameters, takes a heavy call's place (or
//! starts it in the background), then runs the row's typed operation (`run_as`, made by
//! `entry` from the tool's declaration) and renders its answer. MCP and the CLI both call it.

use super::*;

/// Whether a tool is offered given what the servers support and the session's profile.
pub fn offered(engine: &Engine, def: &ToolDef) -> bool {
    engine.options().tools.allows(def.name)
        && (def.caps.is_empty() || def.caps.iter().any(|c| engine.may_support(*c)))
}

fn parse<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|e| ToolError::invalid(format!("bad arguments: {e}")))
}

/// Decodes `args` (admitted) into `T`'s parameters, runs it and renders its answer: the row's
/// `run` (`entry`). `terse` is a parameter of every tool, read here once.
pub(super) fn run_as<'a, T: Tool>(
    engine: &'a Engine,
    args: Value,
    progress: Progress<'a>,
) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
    Box::pin(async move {
        let terse = args.get("terse").and_then(Value::as_bool);
        let params = parse::<T::Params>(args)?;
        finish(engine, T::run(engine, params, progress).await?, terse)
    })
}

/// Decodes `args` (admitted) into `T`'s parameters as `run_as` does: the row's `decode`.
pub(super) fn decode_as<T: Tool>(args: Value) -> Result<(), ToolError> {
    parse::<T::Params>(args).map(drop)
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
    Ok(ToolOutput { structured, text })
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
    let (def, args) = admit_in(tools(), &Profile::all(), name, args)?;
    run_def(engine, def, args, &|_, _| {}).await
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
    call_in(engine, tools(), name, args, progress).await
}

/// `call_with_progress` of a tool of `table`.
pub async fn call_in(
    engine: &Engine,
    table: &[ToolDef],
    name: &str,
    args: Value,
    progress: Progress<'_>,
) -> Result<ToolOutput, ToolError> {
    let (def, mut args) = admit_in(table, &engine.options().tools, name, args)?;
    // Heavy calls run under the workspace's `max_inflight`; `background: true` runs one as an
    // activity and answers its id at once.
    if take_background(def, &mut args) {
        return engine.start_activity(def.name, args, run_boxed).await;
    }
    let _permit = engine.admit_heavy(def.name, def.is_heavy(&args))?;
    run_def(engine, def, args, progress).await
}

/// Runs an admitted call of tool `name` (its heavy-call place taken, if it needs one).
async fn run_admitted(
    engine: &Engine,
    name: &str,
    args: Value,
    progress: Progress<'_>,
) -> Result<ToolOutput, ToolError> {
    run_def(engine, find(tools(), name)?, args, progress).await
}

/// `run_admitted`, boxed: what runs a background call (`activity::Runner`).
pub fn run_boxed<'a>(
    engine: &'a Engine,
    name: &'a str,
    args: Value,
    progress: Progress<'a>,
) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
    Box::pin(run_admitted(engine, name, args, progress))
}

/// Takes `background` out of the arguments of a tool that has it; whether it was true.
pub(super) fn take_background(def: &ToolDef, args: &mut Value) -> bool {
    if !def.background {
        return false;
    }
    args.as_object_mut()
        .and_then(|m| m.remove("background"))
        .is_some_and(|v| v == Value::Bool(true))
}

/// `run_admitted` of `def`: the operation, and with `raw`, what it sent.
async fn run_def(
    engine: &Engine,
    def: &ToolDef,
    args: Value,
    progress: Progress<'_>,
) -> Result<ToolOutput, ToolError> {
    let raw = args.get("raw").and_then(Value::as_bool).unwrap_or(false);
    if !raw {
        return dispatch(engine, def, args, progress).await;
    }
    let (result, recorded) = crate::raw::capture(dispatch(engine, def, args, progress)).await;
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

/// The tool of `table` called `name`.
fn find<'t>(table: &'t [ToolDef], name: &str) -> Result<&'t ToolDef, ToolError> {
    table
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| ToolError::invalid(format!("unknown tool `{name}`")))
}

/// The checks every call passes before its operation runs: a known tool of `table`, inside
/// `profile`, with an object of arguments that names only parameters the tool takes (a typo
/// must not fall back to a default). Returns the tool and the arguments (`{}` for none).
fn admit_in<'t>(
    table: &'t [ToolDef],
    profile: &Profile,
    name: &str,
    args: Value,
) -> Result<(&'t ToolDef, Value), ToolError> {
    let def = find(table, name)?;
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
    refuse_unknown(def, &args)?;
    Ok((def, args))
}

/// Refuses arguments that name a parameter `def` does not take, saying which it does.
fn refuse_unknown(def: &ToolDef, args: &Value) -> Result<(), ToolError> {
    let mut unknown = schema::unknown_parameters(def.input_schema(), args);
    unknown.retain(|(path, _)| !EVERY_TOOL.contains(&path.as_str()));
    let Some((path, known)) = unknown.first() else {
        return Ok(());
    };
    let mut known = known.clone();
    if !path.contains(['.', '[']) {
        known.extend(EVERY_TOOL.iter().map(|p| p.to_string()));
    }
    let names: Vec<String> = unknown.iter().map(|(p, _)| format!("`{p}`")).collect();
    let plural = if names.len() > 1 { "s" } else { "" };
    Err(ToolError::invalid(format!(
        "unknown parameter{plural} {} for `{}` (valid there: {})",
        names.join(", "),
        def.name,
        known.join(", ")
    ))
    .with_data(serde_json::json!({
        "unknown": unknown.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        "known": known,
    })))
}

/// What a call checks before its operation runs, and nothing more: admission under
/// `profile`, then the arguments decoded into the tool's parameters as `dispatch` decodes
/// them. Public for the fuzz targets (`fuzz/`); callers use `call`.
#[doc(hidden)]
pub fn decode(profile: &Profile, name: &str, args: Value) -> Result<(), ToolError> {
    decode_in(tools(), profile, name, args)
}

/// `decode` of a tool of `table`.
pub fn decode_in(
    table: &[ToolDef],
    profile: &Profile,
    name: &str,
    args: Value,
) -> Result<(), ToolError> {
    let (def, mut args) = admit_in(table, profile, name, args)?;
    take_background(def, &mut args);
    (def.decode)(args)
}

async fn dispatch(
    engine: &Engine,
    def: &ToolDef,
    args: Value,
    progress: Progress<'_>,
) -> Result<ToolOutput, ToolError> {
    // The consistency point: whatever was written before this call, by anyone, reaches the
    // servers before the call asks them anything.
    engine.registry().sync().await;
    (def.run)(engine, args, progress).await
}
