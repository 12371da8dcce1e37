//! The command line: `serve`, one subcommand per tool (same operation code as the MCP tools),
//! `call`, `check`, `install` and `doctor`. Human-readable output by default, `--json` for
//! scripts. The arguments' shape is in `args.rs`; install and doctor in `setup.rs`.

mod args;
pub mod context;
mod http;
pub mod output;

use std::sync::Arc;

use serde_json::{Map, Value, json};

pub use args::*;

use crate::error::ToolError;
use crate::mcp;
use crate::ops::tools::{self, Profile};
use crate::ops::{Engine, EngineOptions, Workspace};
use crate::registry::{Registry, RegistryOptions};
use crate::watch::WatchOptions;
use crate::workspace::config::Config;
use crate::workspace::presets::ServerSpec;
use crate::workspace::{Languages, Root};

/// Writes a line to stdout; a closed stdout (`| head`) is not an error worth a panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        $crate::cli::output::stdout(&format!("{}\n", format_args!($($arg)*)));
    }};
}

/// Writes a line to stderr (or, in the daemon, to what the client is sent back).
macro_rules! complain {
    ($($arg:tt)*) => {{
        $crate::cli::output::stderr(&format!("{}\n", format_args!($($arg)*)));
    }};
}

fn say_raw(text: &str) {
    output::stdout(text);
}

// After `say!`, which it uses.
mod setup;
mod trust;

/// Splits `FILE:LINE[:COL]`.
fn split_at(at: &str) -> Result<(String, u32, Option<u32>), ToolError> {
    let parts: Vec<&str> = at.rsplitn(3, ':').collect();
    let num = |s: &str| s.parse::<u32>().ok();
    match parts.as_slice() {
        [c, l, f] if num(c).is_some() && num(l).is_some() => {
            Ok((f.to_string(), num(l).unwrap_or(1), num(c)))
        }
        [l, f, ..] if num(l).is_some() => {
            let file = if parts.len() == 3 {
                format!("{}:{}", parts[2], parts[1])
            } else {
                f.to_string()
            };
            Ok((file, num(l).unwrap_or(1), None))
        }
        _ => Err(ToolError::invalid(format!(
            "`{at}` is not FILE:LINE or FILE:LINE:COL"
        ))),
    }
}

impl PosArgs {
    fn to_json(&self, terse: bool) -> Result<Map<String, Value>, ToolError> {
        let (file, line, column) = split_at(&self.at)?;
        let mut m = Map::new();
        m.insert("file".into(), json!(file));
        m.insert("line".into(), json!(line));
        if let Some(c) = column {
            m.insert("column".into(), json!(c));
        }
        if let Some(s) = &self.symbol {
            m.insert("symbol".into(), json!(s));
        }
        if let Some(o) = self.occurrence {
            m.insert("occurrence".into(), json!(o));
        }
        if let Some(p) = &self.source_from {
            let text = std::fs::read_to_string(p).map_err(|e| {
                ToolError::invalid(format!("cannot read --source-from {}: {e}", p.display()))
            })?;
            m.insert("source".into(), json!(text));
        }
        if terse {
            m.insert("terse".into(), json!(true));
        }
        Ok(m)
    }
}

/// A tool to run: its name, its JSON arguments, and the explicit server command, if any.
type ToolCall = (&'static str, Value, Vec<String>);

fn tool_call(cli: &Cli) -> Result<Option<ToolCall>, ToolError> {
    let terse = cli.terse;
    let opt = |m: &mut Map<String, Value>, k: &str, v: Option<Value>| {
        if let Some(v) = v {
            m.insert(k.into(), v);
        }
    };
    Ok(Some(match &cli.command {
        Command::Hover(a) => (
            "hover",
            Value::Object(a.to_json(terse)?),
            a.server.server.clone(),
        ),
        Command::SignatureHelp(a) => (
            "signature_help",
            Value::Object(a.to_json(terse)?),
            a.server.server.clone(),
        ),
        Command::Definition { at, kind } => {
            let mut m = at.to_json(terse)?;
            let k = match kind {
                GotoKind::Definition => "definition",
                GotoKind::Declaration => "declaration",
                GotoKind::TypeDefinition => "type_definition",
                GotoKind::Implementation => "implementation",
            };
            m.insert("kind".into(), json!(k));
            ("definition", Value::Object(m), at.server.server.clone())
        }
        Command::References {
            at,
            no_declaration,
            limit,
            cursor,
        } => {
            let mut m = at.to_json(terse)?;
            m.insert("include_declaration".into(), json!(!no_declaration));
            opt(&mut m, "limit", limit.map(|l| json!(l)));
            opt(&mut m, "cursor", cursor.as_ref().map(|c| json!(c)));
            ("references", Value::Object(m), at.server.server.clone())
        }
        Command::Completions { at, limit } => {
            let mut m = at.to_json(terse)?;
            opt(&mut m, "limit", limit.map(|l| json!(l)));
            ("completions", Value::Object(m), at.server.server.clone())
        }
        Command::CallHierarchy { at, direction } => {
            let mut m = at.to_json(terse)?;
            let d = match direction {
                CallDir::Incoming => "incoming",
                CallDir::Outgoing => "outgoing",
            };
            m.insert("direction".into(), json!(d));
            ("call_hierarchy", Value::Object(m), at.server.server.clone())
        }
        Command::DocumentSymbols { file, server } => (
            "document_symbols",
            json!({"file": file, "terse": terse}),
            server.server.clone(),
        ),
        Command::WorkspaceSymbols {
            query,
            kind,
            limit,
            server,
        } => {
            let mut m = Map::new();
            m.insert("query".into(), json!(query));
            m.insert("terse".into(), json!(terse));
            opt(&mut m, "kind", kind.as_ref().map(|k| json!(k)));
            opt(&mut m, "limit", limit.map(|l| json!(l)));
            ("workspace_symbols", Value::Object(m), server.server.clone())
        }
        Command::Diagnostics { file, server } => {
            let mut m = Map::new();
            m.insert("terse".into(), json!(terse));
            opt(&mut m, "file", file.as_ref().map(|f| json!(f)));
            ("diagnostics", Value::Object(m), server.server.clone())
        }
        Command::Edit {
            file,
            old,
            lines,
            new,
            expected_digest,
            apply,
            server,
        } => {
            if old.len() + lines.len() != new.len() {
                return Err(ToolError::invalid(
                    "give one --new for each --old or --lines",
                ));
            }
            let mut news = new.iter();
            let mut edits = Vec::new();
            for o in old {
                edits.push(json!({"old_text": o, "new_text": news.next()}));
            }
            for l in lines {
                let (a, b) = l.split_once('-').unwrap_or((l, l));
                let n = |x: &str| {
                    x.trim()
                        .parse::<i64>()
                        .map_err(|_| ToolError::invalid(format!("--lines `{l}` is not A-B")))
                };
                edits
                    .push(json!({"start_line": n(a)?, "end_line": n(b)?, "new_text": news.next()}));
            }
            let mut m = Map::new();
            m.insert("file".into(), json!(file));
            m.insert("edits".into(), json!(edits));
            m.insert("apply".into(), json!(apply));
            m.insert("terse".into(), json!(terse));
            opt(
                &mut m,
                "expected_digest",
                expected_digest.as_ref().map(|d| json!(d)),
            );
            ("edit", Value::Object(m), server.server.clone())
        }
        Command::Rename {
            at,
            new_name,
            apply,
        } => {
            let mut m = at.to_json(terse)?;
            m.insert("new_name".into(), json!(new_name));
            m.insert("apply".into(), json!(apply));
            ("rename", Value::Object(m), at.server.server.clone())
        }
        Command::CodeActions {
            at,
            end_line,
            kind,
            apply,
            preview,
            server,
        } => {
            let (file, line, _) = split_at(at)?;
            let mut m = Map::new();
            m.insert("file".into(), json!(file));
            m.insert("line".into(), json!(line));
            m.insert("terse".into(), json!(terse));
            m.insert("preview".into(), json!(preview));
            opt(&mut m, "end_line", end_line.map(|l| json!(l)));
            opt(&mut m, "kind", kind.as_ref().map(|k| json!(k)));
            opt(&mut m, "apply", apply.as_ref().map(|a| json!(a)));
            ("code_actions", Value::Object(m), server.server.clone())
        }
        Command::Format {
            file,
            apply,
            server,
        } => (
            "format",
            json!({"file": file, "apply": apply, "terse": terse}),
            server.server.clone(),
        ),
        Command::Undo { edit_id, server } => (
            "undo",
            json!({"edit_id": edit_id, "terse": terse}),
            server.server.clone(),
        ),
        Command::WhatIf {
            file,
            edits,
            probe,
            server,
        } => {
            let edits: Value = serde_json::from_str(edits)
                .map_err(|e| ToolError::invalid(format!("--edits is not JSON: {e}")))?;
            let mut m = Map::new();
            m.insert("file".into(), json!(file));
            m.insert("edits".into(), edits);
            m.insert("terse".into(), json!(terse));
            if let Some(p) = probe {
                let (l, c) = p.split_once(':').unwrap_or((p, "1"));
                m.insert("probe".into(), json!({"line": l, "column": c}));
            }
            ("what_if", Value::Object(m), server.server.clone())
        }
        Command::Check { .. } => return Ok(None),
        Command::RunTask { name, args } => (
            "run_task",
            json!({"name": name, "args": args, "terse": terse}),
            Vec::new(),
        ),
        Command::ExplainFailure { file, server } => (
            "explain_failure",
            json!({"file": file, "terse": terse}),
            server.server.clone(),
        ),
        Command::Shrink {
            file,
            max_steps,
            max_seconds,
            server,
        } => {
            let mut m = Map::new();
            m.insert("file".into(), json!(file));
            opt(&mut m, "max_steps", max_steps.map(|v| json!(v)));
            opt(&mut m, "max_seconds", max_seconds.map(|v| json!(v)));
            ("shrink", Value::Object(m), server.server.clone())
        }
        Command::Servers { server } => ("servers", json!({"terse": terse}), server.server.clone()),
        Command::Call {
            tool,
            arguments,
            server,
        } => {
            let Some(def) = tools::by_name(tool) else {
                return Err(ToolError::invalid(format!("unknown tool `{tool}`")));
            };
            let mut args: Value = serde_json::from_str(arguments)
                .map_err(|e| ToolError::invalid(format!("the arguments are not JSON: {e}")))?;
            if terse && let Value::Object(m) = &mut args {
                m.entry("terse").or_insert(json!(true));
            }
            (def.name, args, server.server.clone())
        }
        Command::Serve { .. }
        | Command::Install { .. }
        | Command::Doctor
        | Command::Daemon { .. }
        | Command::Trust { .. }
        | Command::ConfigSchema => {
            return Ok(None);
        }
    }))
}

/// lspgate.toml: `--config` (trusted by being named), else the root's own file when there is
/// one, with its trust.
fn load_config(cli: &Cli, root: &Root) -> Result<Config, ToolError> {
    let named = cli.config.as_deref().map(context::absolute);
    Config::for_workspace(root.path(), named.as_deref())
        .map_err(|e| ToolError::invalid(format!("invalid config {e}")))
}

/// The engine a command works with: a workspace of its own, or (in the daemon) the shared one
/// for the same root, config, environment and options, with a session of its own on it.
fn engine_for(cli: &Cli, explicit: &[String]) -> Result<Engine, ToolError> {
    let root_dir = match &cli.root {
        Some(r) => context::absolute(r),
        None => context::cwd(),
    };
    let root = Root::new(&root_dir)?;
    let config = load_config(cli, &root)?;
    let secs = |v: f64, what: &str| {
        std::time::Duration::try_from_secs_f64(v).map_err(|_| {
            ToolError::invalid(format!("--{what} must be a number of seconds, got {v}"))
        })
    };
    let tasks = config
        .tasks
        .iter()
        .map(|t| crate::gates::Task::from_config(t, config.untrusted.as_ref()))
        .collect();
    // The profile limits what agent sessions are offered; a subcommand runs the tool it names.
    let tools = match &cli.command {
        Command::Serve {
            tools: Some(names), ..
        } => Profile::parse(names).map_err(|e| ToolError::invalid(format!("--tools: {e}")))?,
        // A daemon's own HTTP listener serves agent sessions too.
        Command::Serve { .. } | Command::Daemon { .. } => match &config.tools {
            Some(names) => Profile::parse(names)
                .map_err(|e| ToolError::invalid(format!("invalid config: tools: {e}")))?,
            None => Profile::all(),
        },
        _ => Profile::all(),
    };
    let opts = EngineOptions {
        tools,
        tasks,
        state_dir: cli
            .state
            .as_deref()
            .map(context::absolute)
            .unwrap_or_else(|| root.path().join(".lspgate")),
        max_output: cli.max_output,
        ready_timeout: secs(cli.ready_timeout, "ready-timeout")?,
        diagnostics_timeout: secs(cli.diagnostics_timeout, "diagnostics-timeout")?,
        max_inflight: config
            .max_inflight
            .unwrap_or(crate::ops::activity::MAX_INFLIGHT),
    };
    let mut timeouts = std::collections::HashMap::new();
    for (kind, v) in &config.timeouts {
        timeouts.insert(kind.clone(), secs(*v, kind)?);
    }
    let reg_opts = RegistryOptions {
        open_documents: cli.open_documents,
        request_timeout: secs(cli.timeout, "timeout")?,
        timeouts,
        install: cli.install,
        restart: cli.restart,
        backoff: std::time::Duration::from_millis(cli.restart_backoff_ms),
        watch: WatchOptions::from_env(vec![opts.state_dir.clone()]),
        path: context::var("PATH").map(Into::into),
    };
    let make = || {
        let root = root.clone();
        let registry = match ServerSpec::explicit(explicit) {
            Some(spec) => {
                let languages = Languages::new(root.path(), &config.languages);
                let r = Registry::new(root, languages, reg_opts.clone());
                r.register(spec);
                r
            }
            None => Registry::with_config(root, &config, reg_opts.clone()),
        };
        Workspace::new(registry, opts.clone())
    };
    let Some(provider) = context::provider() else {
        return Ok(Engine::session_owning(make(), opts));
    };
    // Sessions share a workspace only when everything that shapes its servers is the same.
    let key = format!(
        "{:?}",
        (
            root.path(),
            &cli.config,
            config_digest(root.path(), cli.config.as_deref()),
            explicit,
            &reg_opts.path,
            (
                reg_opts.open_documents,
                reg_opts.request_timeout,
                &reg_opts.timeouts
            ),
            (reg_opts.install, reg_opts.restart, reg_opts.backoff),
            (
                &opts.state_dir,
                opts.ready_timeout,
                opts.diagnostics_timeout
            ),
        )
    );
    let mut make = make;
    let ws = provider(&key, &mut make);
    Ok(Engine::session(ws, opts))
}

/// The digest of the config file a workspace would load (and so of its trust).
fn config_digest(root: &std::path::Path, named: Option<&std::path::Path>) -> Option<String> {
    let path = match named {
        Some(p) => context::absolute(p),
        None => root.join("lspgate.toml"),
    };
    std::fs::read(path).ok().map(|b| crate::text::digest(&b))
}

/// Runs the CLI; returns the process exit code.
pub async fn run(cli: Cli) -> i32 {
    // Tool subcommands and `check` attach to the per-user daemon and its warm servers (the
    // daemon runs them with this command line and sends back what they print).
    let local = matches!(
        cli.command,
        Command::Serve { .. }
            | Command::Daemon { .. }
            | Command::Install { .. }
            | Command::Doctor
            | Command::Trust { .. }
            | Command::ConfigSchema
    );
    if !local && !standalone(&cli) && context::provider().is_none() {
        match crate::daemon::client::run(std::env::args().collect()).await {
            Ok(ran) => {
                output::stdout(&ran.stdout);
                output::stderr(&ran.stderr);
                return ran.code;
            }
            Err(why) => tracing::warn!("no daemon ({why}); running in this process"),
        }
    }
    match &cli.command {
        Command::Install { name } => return setup::install(name),
        Command::Doctor => return setup::doctor(&cli).await,
        Command::Trust { revoke } => return trust::run(&cli, *revoke),
        Command::ConfigSchema => {
            say!(
                "{}",
                serde_json::to_string_pretty(&Config::json_schema()).unwrap_or_default()
            );
            return 0;
        }
        Command::Serve {
            max_frame, http, ..
        } if http.http.is_some() => return http::serve(&cli, *max_frame).await,
        Command::Serve { max_frame, .. } => return serve(&cli, *max_frame).await,
        Command::Daemon {
            action,
            idle_servers,
            idle_exit,
            max_memory,
            ..
        } => {
            return crate::daemon::command(*action, *idle_servers, *idle_exit, *max_memory).await;
        }
        Command::Check {
            paths,
            changed,
            severity,
            tasks,
            sarif,
            server,
        } => {
            return check(
                &cli,
                paths,
                *changed,
                severity,
                tasks,
                *sarif,
                &server.server,
            )
            .await;
        }
        _ => {}
    }
    let call = match tool_call(&cli) {
        Ok(Some(c)) => c,
        Ok(None) => return 2,
        Err(e) => {
            complain!("{e}");
            return 2;
        }
    };
    let (name, args, explicit) = call;
    let engine = match engine_for(&cli, &explicit) {
        Ok(e) => e,
        Err(e) => {
            complain!("{e}");
            return 2;
        }
    };
    let result = tools::call(&engine, name, args).await;
    engine.shutdown().await;
    match result {
        Ok(out) => {
            if cli.json {
                say!(
                    "{}",
                    serde_json::to_string_pretty(&out.structured).unwrap_or_default()
                );
            } else {
                say!("{}", out.text);
            }
            0
        }
        Err(e) => {
            if cli.json {
                say!(
                    "{}",
                    serde_json::to_string_pretty(&e.to_json()).unwrap_or_default()
                );
            }
            complain!("{e}");
            1
        }
    }
}

/// `lspgate check`: exit 0 ok, 1 issues, 2 could not check.
async fn check(
    cli: &Cli,
    paths: &[String],
    changed: bool,
    severity: &str,
    tasks: &[String],
    sarif: bool,
    explicit: &[String],
) -> i32 {
    let engine = match engine_for(cli, explicit) {
        Ok(e) => e,
        Err(e) => {
            complain!("{e}");
            return 2;
        }
    };
    let severity = match serde_json::from_value(json!(severity)) {
        Ok(s) => s,
        Err(_) => {
            complain!("invalid_params: --severity is error, warning, info or hint");
            return 2;
        }
    };
    let params = crate::ops::types::CheckParams {
        paths: Some(paths.to_vec()),
        changed: Some(changed),
        severity: Some(severity),
        tasks: Some(tasks.to_vec()),
        terse: Some(cli.terse),
    };
    let bar = indicatif::ProgressBar::new(0);
    bar.set_draw_target(if output::captured() {
        indicatif::ProgressDrawTarget::hidden()
    } else {
        indicatif::ProgressDrawTarget::stderr()
    });
    bar.set_style(
        indicatif::ProgressStyle::with_template("checking {pos}/{len} files {wide_bar} {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let progress = |done: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    };
    let report = engine.check_with_progress(params, &progress).await;
    bar.finish_and_clear();
    engine.shutdown().await;
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            complain!("{e}");
            return 2;
        }
    };
    if sarif {
        say!(
            "{}",
            serde_json::to_string_pretty(&report.sarif()).unwrap_or_default()
        );
    } else if cli.json {
        say!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        use crate::ops::render::Render;
        say!("{}", report.render(cli.terse));
    }
    report.exit_code()
}

/// `lspgate serve`: a thin session relaying to the per-user daemon, or (standalone, or when no
/// daemon can be had) everything in this process.
async fn serve(cli: &Cli, max_frame: usize) -> i32 {
    if !standalone(cli) {
        match crate::daemon::client::serve(std::env::args().collect(), max_frame).await {
            Ok(code) => return code,
            Err(why) => tracing::warn!("no daemon ({why}); serving in this process"),
        }
    }
    let engine = match session_for(cli).await {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let code = tokio::select! {
        r = mcp::serve_stdio(engine.clone(), max_frame) => match r {
            Ok(()) => 0,
            Err(e) => {
                tracing::error!("MCP session failed: {e:#}");
                1
            }
        },
        _ = terminated() => 0,
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), engine.shutdown()).await;
    code
}

/// Whether to run everything in this process (`--standalone`, `LSPGATE_STANDALONE=1`).
pub fn standalone(cli: &Cli) -> bool {
    cli.standalone
        || context::var("LSPGATE_STANDALONE").is_some_and(|v| v == "1" || v == "true" || v == "yes")
}

/// The engine of an MCP session (`lspgate serve`, in this process or in the daemon, or the
/// HTTP listener of `lspgate daemon --http`): an explicit server started at once (its
/// capabilities decide the tool list), or the workspace's servers warmed with `--warm`.
pub async fn session_for(cli: &Cli) -> Result<Arc<Engine>, ToolError> {
    let (server, warm) = match &cli.command {
        Command::Serve { server, warm, .. } => (server.as_slice(), warm),
        Command::Daemon { .. } => (&[][..], &false),
        _ => return Err(ToolError::invalid("not a `serve` command line")),
    };
    let engine = Arc::new(engine_for(cli, server)?);
    if !server.is_empty() {
        for r in engine.registry().start_all().await {
            r?;
        }
    } else if *warm {
        engine.warm();
    }
    Ok(engine)
}

/// Resolves on SIGINT or SIGTERM.
pub(crate) async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn file_line_col_parsing() {
        assert_eq!(
            split_at("src/a.py:12:5").unwrap(),
            ("src/a.py".into(), 12, Some(5))
        );
        assert_eq!(
            split_at("src/a.py:12").unwrap(),
            ("src/a.py".into(), 12, None)
        );
        assert_eq!(
            split_at("c:/x/a.py:3").unwrap(),
            ("c:/x/a.py".into(), 3, None)
        );
        assert!(split_at("src/a.py").is_err());
    }
}
