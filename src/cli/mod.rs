//! The command line: `serve`, one subcommand per tool (same operation code as the MCP tools),
//! `call`, `check`, `install` and `doctor`. Human-readable output by default, `--json` for
//! scripts. The arguments' shape is in `args.rs`; install and doctor in `setup.rs`.
//!
//! Also `daemon` (here), and `lsp`, `hook`, `setup` and `trust`, each in its own file. A tool
//! command builds the JSON arguments an MCP client would send (`tool.rs`) and calls the tool in the
//! per-user daemon (`daemon::client::call`), or, standalone (`--standalone`, or no daemon to be
//! had), in this process (`ops::tools::call_with_progress`): the CLI and the MCP tool for an
//! operation run the same code. `check` is the `check` tool call too, its `CheckReport` read back
//! from the structured result for its exit code, progress bar and SARIF.

mod args;
pub mod context;
mod http;
mod lsp;
pub mod output;
mod tool;

use serde_json::{Value, json};

pub use args::*;
pub use tool::ToolCommand;

use crate::daemon::protocol::CallLine;
use crate::error::ToolError;
use crate::mcp;
use crate::ops::Engine;
use crate::ops::session::SessionSpec;
use crate::ops::tools::{self, ToolOutput};
use crate::ops::types::CheckReport;
use crate::workspace::Root;
use crate::workspace::config::Config;

/// Writes a line to stdout; a closed stdout (`| head`) is not an error worth a panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        $crate::cli::output::stdout(&format!("{}\n", format_args!($($arg)*)));
    }};
}

/// Writes a line to stderr.
macro_rules! complain {
    ($($arg:tt)*) => {{
        $crate::cli::output::stderr(&format!("{}\n", format_args!($($arg)*)));
    }};
}

fn say_raw(text: &str) {
    output::stdout(text);
}

// After `say!`, which they use.
mod harness;
mod harnesses;
mod hook;
mod setup;
mod status;
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

/// An engine of this process's own for `cli`'s session (`doctor`, standalone commands).
fn engine_for(cli: &Cli, explicit: &[String]) -> Result<Engine, ToolError> {
    context::session(cli, explicit).engine(None)
}

/// How a tool call ended, wherever it ran.
enum Called {
    Done(ToolOutput),
    Failed(ToolError),
    /// Its session could not be opened: nothing ran.
    Unopened(ToolError),
}

/// Calls `name` for `cli`'s session: in the per-user daemon (its warm servers) unless
/// standalone or none can be had, else in this process.
async fn call(
    cli: &Cli,
    session: SessionSpec,
    name: &str,
    args: Value,
    progress: tools::Progress<'_>,
) -> Called {
    if !standalone(cli) {
        match crate::daemon::client::call(session.clone(), name, args.clone(), progress).await {
            Ok(CallLine::Done { structured, text }) => {
                return Called::Done(ToolOutput { structured, text });
            }
            Ok(CallLine::Failed { error }) => return Called::Failed(error),
            Ok(CallLine::Unopened { error }) => return Called::Unopened(error),
            Ok(CallLine::Progress { .. }) => {}
            Err(why) => tracing::warn!("no daemon ({why}); running in this process"),
        }
    }
    let engine = match session.engine(None) {
        Ok(e) => e,
        Err(e) => return Called::Unopened(e),
    };
    let result = tools::call_with_progress(&engine, name, args, progress).await;
    engine.shutdown().await;
    match result {
        Ok(out) => Called::Done(out),
        Err(e) => Called::Failed(e),
    }
}

/// Runs the CLI; returns the process exit code.
pub async fn run(cli: Cli) -> i32 {
    match &cli.command {
        Command::Install { name } => return setup::install(name),
        Command::Doctor => return setup::doctor(&cli).await,
        Command::Trust { revoke } => return trust::run(&cli, *revoke),
        Command::Hook(args) => return hook::run(&cli, args).await,
        Command::Setup(args) => return harness::run(&cli, args),
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
        Command::Lsp {
            server,
            languages,
            servers,
        } => {
            let only = crate::lspface::Only {
                languages: languages.clone(),
                servers: servers.clone(),
            };
            return lsp::serve(&cli, server, only).await;
        }
        Command::Daemon {
            action,
            idle_servers,
            idle_exit,
            max_memory,
            http,
        } => {
            let life = crate::daemon::Lifecycle::new(*idle_servers, *idle_exit, *max_memory);
            return daemon(&cli, *action, life, http).await;
        }
        Command::Tool(t) if t.tool == "check" => return check(&cli, t).await,
        _ => {}
    }
    let call_args = match tool_call(&cli) {
        Ok(Some(c)) => c,
        Ok(None) => return 2,
        Err(e) => {
            complain!("{e}");
            return 2;
        }
    };
    let (name, args, explicit) = call_args;
    let session = context::session(&cli, &explicit);
    match call(&cli, session, name, args, &|_, _| {}).await {
        Called::Done(out) => {
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
        Called::Failed(e) => {
            if cli.json {
                say!(
                    "{}",
                    serde_json::to_string_pretty(&e.to_json()).unwrap_or_default()
                );
            }
            complain!("{e}");
            1
        }
        Called::Unopened(e) => {
            complain!("{e}");
            2
        }
    }
}

/// `lspgate daemon [status|stop]`, or the daemon itself (with its own `--http` listener).
async fn daemon(
    cli: &Cli,
    action: Option<DaemonAction>,
    life: crate::daemon::Lifecycle,
    http: &args::HttpFlags,
) -> i32 {
    use crate::daemon::client;
    match action {
        Some(DaemonAction::Status { web: true, open }) => match client::web().await {
            Ok(url) => {
                say!("{url}");
                complain!(
                    "lspgate: the status page; this URL lets one browser in, once, within 60 s"
                );
                if open {
                    status::open_browser(&url);
                }
                0
            }
            Err(e) => {
                complain!("{e}");
                1
            }
        },
        Some(DaemonAction::Status { .. }) if !cli.json => match client::snapshot().await {
            Ok(snap) => {
                say!("{}", status::render(&snap));
                0
            }
            Err(e) => {
                complain!("{e}");
                1
            }
        },
        Some(DaemonAction::Status { .. }) => match client::status().await {
            Ok(status) => {
                say!(
                    "{}",
                    serde_json::to_string_pretty(&status).unwrap_or_default()
                );
                0
            }
            Err(e) => {
                complain!("{e}");
                1
            }
        },
        Some(DaemonAction::Stop) => match client::stop().await {
            Ok(said) => {
                say!("{said}");
                0
            }
            Err(e) => {
                complain!("{e}");
                1
            }
        },
        None => {
            let own = http.http.is_some().then(|| crate::daemon::OwnHttp {
                session: context::session(cli, &[]),
                http: http.settings(),
            });
            crate::daemon::run(life, own).await
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
    let session = context::session(cli, &t.server);
    let bar = indicatif::ProgressBar::new(0);
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    bar.set_style(
        indicatif::ProgressStyle::with_template("checking {pos}/{len} files {wide_bar} {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let progress = |done: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    };
    let called = call(cli, session, "check", args, &progress).await;
    bar.finish_and_clear();
    let out = match called {
        Called::Done(out) => out,
        Called::Failed(e) | Called::Unopened(e) => {
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
    // The report, read back from the structured result (as any client of the tool would);
    // none when the check runs in the background and `out` says where to follow it.
    let report: Option<CheckReport> = serde_json::from_value(out.structured.clone()).ok();
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
    report.map_or(0, |r| r.exit_code())
}

/// `lspgate serve`: a thin session relaying to the per-user daemon, or (standalone, or when no
/// daemon can be had) everything in this process.
async fn serve(cli: &Cli, max_frame: usize) -> i32 {
    let Command::Serve { server, .. } = &cli.command else {
        return 2;
    };
    let session = context::session(cli, server);
    if !standalone(cli) {
        match crate::daemon::client::serve(session.clone(), max_frame).await {
            Ok(code) => return code,
            Err(why) => tracing::warn!("no daemon ({why}); serving in this process"),
        }
    }
    let engine = match session.agent_engine(None).await {
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
        _ = crate::daemon::terminated() => 0,
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), engine.shutdown()).await;
    code
}

/// Whether to run everything in this process (`--standalone`, `LSPGATE_STANDALONE=1`).
pub fn standalone(cli: &Cli) -> bool {
    cli.standalone
        || context::var("LSPGATE_STANDALONE").is_some_and(|v| v == "1" || v == "true" || v == "yes")
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
