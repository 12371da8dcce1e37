//! The command line: `serve`, one subcommand per tool (same operation code as the MCP tools),
//! `call`, `check`, `install` and `doctor`. Human-readable output by default, `--json` for
//! scripts. The arguments' shape is in `args.rs`; install and doctor in `setup.rs`.

mod args;
pub mod context;
mod http;
pub mod output;
mod tool;

use std::sync::Arc;

use serde_json::{Value, json};

pub use args::*;
pub use tool::ToolCommand;

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

/// A tool to run: its name, its JSON arguments, and the explicit server command, if any.
type ToolCall = (&'static str, Value, Vec<String>);

/// The tool a tool subcommand or `call` names, with the arguments an MCP client would send.
fn tool_call(cli: &Cli) -> Result<Option<ToolCall>, ToolError> {
    Ok(Some(match &cli.command {
        Command::Tool(t) => (t.tool, t.json(cli.terse, cli.raw)?, t.server.clone()),
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
            if let Value::Object(m) = &mut args {
                if cli.terse {
                    m.entry("terse").or_insert(json!(true));
                }
                if cli.raw {
                    m.entry("raw").or_insert(json!(true));
                }
            }
            (def.name, args, server.server.clone())
        }
        _ => return Ok(None),
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
            Some(names) => Profile::parse(names).map_err(|e| {
                ToolError::invalid(format!("invalid config {}", config.tools_error(e)))
            })?,
            None => Profile::all(),
        },
        _ => Profile::all(),
    };
    // The session's environment: its servers and tasks run with it, and the variables its
    // servers read tell which workspace (and so which servers) it shares with other sessions.
    let env: crate::workspace::env::SharedEnv = std::sync::Arc::new(context::env());
    let identity = env.identity(&identity_keys(&config, explicit));
    let opts = EngineOptions {
        env: Some(env.clone()),
        tools,
        tasks,
        state_dir: cli
            .state
            .as_deref()
            .map(context::absolute)
            .unwrap_or_else(|| crate::edits::journal::default_dir(root.path())),
        max_output: cli.max_output,
        ready_timeout: secs(cli.ready_timeout, "ready-timeout")?,
        diagnostics_timeout: secs(cli.diagnostics_timeout, "diagnostics-timeout")?,
        max_inflight: config
            .max_inflight
            .unwrap_or(crate::ops::activity::MAX_INFLIGHT),
        // The session's environment (in the daemon, its client's), not the daemon's.
        terse: context::var("LSPGATE_TERSE")
            .is_some_and(|v| matches!(v.as_str(), "1" | "true" | "yes")),
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
        path: env.get("PATH").map(Into::into),
        env: Some(env.clone()),
        identity: identity.clone(),
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
            &identity,
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

/// The variables that make a workspace's servers what they are (`workspace::env`): every one
/// but the per-session ones for an explicit command or a configured server that names none,
/// else those its presets and configured servers read.
fn identity_keys(config: &Config, explicit: &[String]) -> crate::workspace::env::Keys {
    use crate::workspace::env::{Keys, preset_keys};
    if !explicit.is_empty() {
        return Keys::AllBut;
    }
    let presets = crate::workspace::presets::PRESETS
        .iter()
        .map(|p| preset_keys(p.name))
        .fold(Keys::Only(Vec::new()), Keys::union);
    config.servers.iter().fold(presets, |keys, s| {
        keys.union(match &s.env_keys {
            Some(names) => Keys::Only(
                std::iter::once("PATH".to_string())
                    .chain(names.iter().cloned())
                    .collect(),
            ),
            None => Keys::AllBut,
        })
    })
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
        Command::Tool(t) if t.tool == "check" => return check(&cli, t).await,
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

/// `lspgate check`: the `check` tool call (admitted, consistent, rendered and `--raw` as an MCP
/// client's is), with a progress bar; exit 0 ok, 1 issues, 2 could not check. Its report
/// holds every issue unless `--limit` says otherwise (CI reads it whole; SARIF always is).
async fn check(cli: &Cli, t: &ToolCommand) -> i32 {
    let args = t.json(cli.terse, cli.raw).map(|mut v| {
        if let Value::Object(m) = &mut v
            && (t.sarif || !m.contains_key("limit"))
        {
            m.insert("limit".into(), json!(u32::MAX));
        }
        v
    });
    let args = match args {
        Ok(a) => a,
        Err(e) => {
            complain!("{e}");
            return 2;
        }
    };
    let engine = match engine_for(cli, &t.server) {
        Ok(e) => e,
        Err(e) => {
            complain!("{e}");
            return 2;
        }
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
    let result =
        tools::call_keeping::<crate::ops::types::CheckReport>(&engine, "check", args, &progress)
            .await;
    bar.finish_and_clear();
    engine.shutdown().await;
    let (out, report) = match result {
        Ok(r) => r,
        Err(e) => {
            if cli.json && !t.sarif {
                say!(
                    "{}",
                    serde_json::to_string_pretty(&e.to_json()).unwrap_or_default()
                );
            }
            complain!("{e}");
            return 2;
        }
    };
    match &report {
        Some(r) if t.sarif => say!(
            "{}",
            serde_json::to_string_pretty(&r.sarif()).unwrap_or_default()
        ),
        _ if cli.json => say!(
            "{}",
            serde_json::to_string_pretty(&out.structured).unwrap_or_default()
        ),
        _ => say!("{}", out.text),
    }
    // No report: it runs in the background (`--background`), and `out` says where to follow it.
    report.map_or(0, |r| r.exit_code())
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
        use tool::split_at;
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

    /// The MCP Inspector's CLI drops `--`: a server command right after `serve`'s options is
    /// the same as one after `--`.
    #[test]
    fn serve_takes_a_server_command_with_or_without_dashes() {
        use clap::Parser;
        for args in [
            &[
                "lspgate",
                "serve",
                "--root",
                ".",
                "pyright-langserver",
                "--stdio",
            ][..],
            &[
                "lspgate",
                "serve",
                "--root",
                ".",
                "--",
                "pyright-langserver",
                "--stdio",
            ][..],
        ] {
            let cli = Cli::try_parse_from(args).unwrap();
            let Command::Serve { server, .. } = cli.command else {
                panic!("not serve: {args:?}");
            };
            assert_eq!(server, ["pyright-langserver", "--stdio"], "{args:?}");
        }
        let cli = Cli::try_parse_from(["lspgate", "serve", "--warm"]).unwrap();
        assert!(
            matches!(cli.command, Command::Serve { warm: true, ref server, .. } if server.is_empty())
        );
    }
}
