//! The command line: `serve`, one subcommand per tool (same operation code as the MCP tools),
//! `install` and `doctor`. Human-readable output by default, `--json` for scripts.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Map, Value, json};

use crate::error::ToolError;
use crate::mcp;
use crate::ops::{Engine, EngineOptions, tools};
use crate::registry::{Registry, RegistryOptions, RestartPolicy};
use crate::watch::WatchOptions;
use crate::workspace::config::Config;
use crate::workspace::presets::{self, PRESETS, Preset, ServerSpec};
use crate::workspace::{Languages, Root};

/// lspgate: real language servers for coding agents, over MCP and on the command line.
///
/// Every tool is also a subcommand: `lspgate hover src/app.py:12:5`,
/// `lspgate references src/app.py:12 --symbol total`, `lspgate diagnostics src/app.py`.
/// Servers come from built-in presets found on PATH or installed by `lspgate install`, or from
/// a command after `--`.
#[derive(Debug, Parser)]
#[command(name = "lspgate", version, about, long_about = None)]
pub struct Cli {
    /// Workspace root (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Folder of lspgate's state (the edit journal); default `.lspgate` under the root.
    #[arg(long, global = true, value_name = "DIR")]
    pub state: Option<PathBuf>,
    /// Config file (default: lspgate.toml in the root, when there is one).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print the structured result as JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// Minimal text output (`path:line:col message`).
    #[arg(long, global = true)]
    pub terse: bool,
    /// Install a missing preset server (npm or PyPI) into lspgate's data folder on first use.
    #[arg(long, global = true)]
    pub install: bool,
    /// Cap on a text reply, in characters.
    #[arg(long, global = true, default_value_t = 20_000, value_name = "CHARS")]
    pub max_output: usize,
    /// Bound on each request to a language server, in seconds.
    #[arg(long, global = true, default_value_t = 30.0, value_name = "SECS")]
    pub timeout: f64,
    /// How long workspace-wide questions wait for a server to finish indexing, in seconds.
    #[arg(long, global = true, default_value_t = 15.0, value_name = "SECS")]
    pub ready_timeout: f64,
    /// How long `diagnostics` waits for a server's fresh report, in seconds.
    #[arg(long, global = true, default_value_t = 15.0, value_name = "SECS")]
    pub diagnostics_timeout: f64,
    /// Restart a crashed server: never, always, or at most N times in a streak of crashes
    /// less than a minute apart (then it is given up).
    #[arg(
        long,
        global = true,
        default_value = "3",
        value_name = "never|always|N"
    )]
    pub restart: RestartPolicy,
    /// First delay before a restart, in milliseconds (it doubles within a streak, up to 30 s).
    #[arg(long, global = true, default_value_t = 500, hide = true)]
    pub restart_backoff_ms: u64,
    /// Most documents each server keeps open (least recently used ones are closed).
    #[arg(long, global = true, default_value_t = 200, value_name = "N")]
    pub open_documents: usize,
    /// Log more to stderr (-v info, -vv debug). `LSPGATE_LOG` takes filter directives.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over stdio (for Claude Code, Codex, Cursor, …).
    Serve {
        /// Start the servers for the languages found in the workspace right away, in the
        /// background, instead of on first use.
        #[arg(long)]
        warm: bool,
        /// Largest JSON-RPC frame accepted from the client, in bytes.
        #[arg(long, default_value_t = mcp::stdio::DEFAULT_MAX_FRAME)]
        max_frame: usize,
        /// Serve exactly this server command for every file, with no config.
        #[arg(last = true, value_name = "CMD")]
        server: Vec<String>,
    },
    /// Type and docs of the symbol at FILE:LINE[:COL].
    Hover(PosArgs),
    /// Where the symbol at FILE:LINE[:COL] is defined.
    Definition {
        #[command(flatten)]
        at: PosArgs,
        /// definition, declaration, type-definition or implementation.
        #[arg(long, value_enum, default_value_t = GotoKind::Definition)]
        kind: GotoKind,
    },
    /// Every reference to the symbol at FILE:LINE[:COL].
    References {
        #[command(flatten)]
        at: PosArgs,
        /// Leave the declaration out.
        #[arg(long)]
        no_declaration: bool,
        #[arg(long)]
        limit: Option<u32>,
        #[arg(long)]
        cursor: Option<String>,
    },
    /// The outline of a file.
    #[command(
        name = "document-symbols",
        alias = "document_symbols",
        alias = "symbols"
    )]
    DocumentSymbols {
        file: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Find symbols by name across the workspace.
    #[command(name = "workspace-symbols", alias = "workspace_symbols")]
    WorkspaceSymbols {
        query: String,
        #[arg(long)]
        kind: Option<String>,
        #[arg(long)]
        limit: Option<u32>,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// The signature of the call at FILE:LINE[:COL].
    #[command(name = "signature-help", alias = "signature_help")]
    SignatureHelp(PosArgs),
    /// Completions at FILE:LINE:COL.
    Completions {
        #[command(flatten)]
        at: PosArgs,
        #[arg(long)]
        limit: Option<u32>,
    },
    /// Callers or callees of the function at FILE:LINE[:COL].
    #[command(name = "call-hierarchy", alias = "call_hierarchy")]
    CallHierarchy {
        #[command(flatten)]
        at: PosArgs,
        #[arg(long, value_enum, default_value_t = CallDir::Incoming)]
        direction: CallDir,
    },
    /// Fresh diagnostics for FILE (or every file the servers report on).
    Diagnostics {
        file: Option<String>,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Change a file: replace unique text (--old/--new, repeatable) or lines (--lines A-B --new).
    /// Previews the diff unless --apply.
    Edit {
        file: String,
        /// Text to replace (must occur exactly once); pairs with the next --new.
        #[arg(long = "old")]
        old: Vec<String>,
        /// Lines to replace, `A-B` (1-based, inclusive); pairs with the next --new.
        #[arg(long = "lines")]
        lines: Vec<String>,
        /// Replacement text.
        #[arg(long = "new")]
        new: Vec<String>,
        #[arg(long)]
        expected_digest: Option<String>,
        #[arg(long)]
        apply: bool,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Rename the symbol at FILE:LINE[:COL] everywhere (--to NEW_NAME); previews unless --apply.
    Rename {
        #[command(flatten)]
        at: PosArgs,
        /// The new name.
        #[arg(long = "to", value_name = "NEW_NAME")]
        new_name: String,
        #[arg(long)]
        apply: bool,
    },
    /// List the code actions for lines of FILE (or apply one with --apply INDEX|TITLE).
    #[command(name = "code-actions", alias = "code_actions")]
    CodeActions {
        /// FILE:LINE
        at: String,
        #[arg(long)]
        end_line: Option<u32>,
        #[arg(long)]
        kind: Option<String>,
        #[arg(long)]
        apply: Option<String>,
        #[arg(long)]
        preview: bool,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Format FILE; previews unless --apply.
    Format {
        file: String,
        #[arg(long)]
        apply: bool,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Undo an applied edit by its id (if its files still hold what it wrote).
    Undo {
        edit_id: i64,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// The diagnostics an edit would introduce and resolve, without writing it (edits as JSON).
    #[command(name = "what-if", alias = "what_if")]
    WhatIf {
        file: String,
        /// The `edits` array of the `edit` tool, as JSON.
        #[arg(long)]
        edits: String,
        /// LINE:COL to hover at, in the edited text.
        #[arg(long)]
        probe: Option<String>,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Check the workspace (or PATHS: files, folders, globs): every server's diagnostics plus
    /// --task outputs. Exit 0 when ok, 1 when there are issues, 2 when it could not check.
    Check {
        paths: Vec<String>,
        /// Only files git reports as modified, added or untracked.
        #[arg(long)]
        changed: bool,
        /// Least severity that fails: error, warning, info or hint.
        #[arg(long, default_value = "error")]
        severity: String,
        /// Run this configured task too (repeatable).
        #[arg(long = "task")]
        tasks: Vec<String>,
        /// SARIF 2.1.0 on stdout (for code scanning).
        #[arg(long)]
        sarif: bool,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Run a configured task and parse its diagnostics.
    #[command(name = "run-task", alias = "run_task")]
    RunTask {
        name: String,
        /// Extra arguments for the task.
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// The first error of FILE, in five lines, and its culprit.
    #[command(name = "explain-failure", alias = "explain_failure")]
    ExplainFailure {
        file: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Reduce a failing FILE to a minimal version with the same first error (disk untouched).
    Shrink {
        file: String,
        #[arg(long)]
        max_steps: Option<u32>,
        #[arg(long)]
        max_seconds: Option<u32>,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// The language servers of this workspace and their state.
    Servers {
        #[command(flatten)]
        server: ServerArgs,
    },
    /// The JSON Schema of lspgate.toml.
    #[command(name = "config-schema")]
    ConfigSchema,
    /// Install a server (npm or PyPI) into lspgate's own data folder.
    Install {
        /// Preset name, e.g. pyright, typescript-language-server, pylsp.
        name: String,
    },
    /// What servers lspgate knows, which are found, and how to install the missing ones.
    Doctor,
    /// Trust the workspace's lspgate.toml as it is now, so its servers and tasks may run (a
    /// changed file needs trusting again).
    Trust {
        /// Forget the trust instead.
        #[arg(long)]
        revoke: bool,
    },
}

#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Use exactly this server command instead of the presets.
    #[arg(last = true, value_name = "CMD")]
    pub server: Vec<String>,
}

#[derive(Debug, Args)]
pub struct PosArgs {
    /// FILE:LINE[:COL] (1-based line, 1-based column in characters).
    pub at: String,
    /// A name on that line to point at, instead of a column.
    #[arg(long)]
    pub symbol: Option<String>,
    /// Which match of --symbol on the line.
    #[arg(long)]
    pub occurrence: Option<u32>,
    /// Analyse this file's text instead of FILE's (FILE on disk is not touched).
    #[arg(long, value_name = "PATH")]
    pub source_from: Option<PathBuf>,
    #[command(flatten)]
    pub server: ServerArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum GotoKind {
    Definition,
    Declaration,
    TypeDefinition,
    Implementation,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CallDir {
    Incoming,
    Outgoing,
}

/// Writes a line to stdout; a closed stdout (`| head`) is not an error worth a panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, $($arg)*);
    }};
}

fn say_raw(text: &str) {
    use std::io::Write as _;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

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
        Command::Serve { .. }
        | Command::Install { .. }
        | Command::Doctor
        | Command::Trust { .. }
        | Command::ConfigSchema => {
            return Ok(None);
        }
    }))
}

/// lspgate.toml: `--config` (trusted by being named), else the root's own file when there is
/// one, with its trust.
fn load_config(cli: &Cli, root: &Root) -> Result<Config, ToolError> {
    Config::for_workspace(root.path(), cli.config.as_deref())
        .map_err(|e| ToolError::invalid(format!("invalid config {e}")))
}

fn engine_for(cli: &Cli, explicit: &[String]) -> Result<Engine, ToolError> {
    let root_dir = match &cli.root {
        Some(r) => r.clone(),
        None => std::env::current_dir()
            .map_err(|e| ToolError::invalid(format!("no current directory: {e}")))?,
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
    let opts = EngineOptions {
        tasks,
        state_dir: cli
            .state
            .clone()
            .unwrap_or_else(|| root.path().join(".lspgate")),
        max_output: cli.max_output,
        ready_timeout: secs(cli.ready_timeout, "ready-timeout")?,
        diagnostics_timeout: secs(cli.diagnostics_timeout, "diagnostics-timeout")?,
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
    };
    let registry = match ServerSpec::explicit(explicit) {
        Some(spec) => {
            let languages = Languages::new(root.path(), &config.languages);
            let r = Registry::new(root, languages, reg_opts);
            r.register(spec);
            r
        }
        None => Registry::with_config(root, &config, reg_opts),
    };
    Ok(Engine::new(registry, opts))
}

/// Runs the CLI; returns the process exit code.
pub async fn run(cli: Cli) -> i32 {
    match &cli.command {
        Command::Install { name } => return install(name),
        Command::Doctor => return doctor(&cli).await,
        Command::Trust { revoke } => return trust::run(&cli, *revoke),
        Command::ConfigSchema => {
            say!(
                "{}",
                serde_json::to_string_pretty(&Config::json_schema()).unwrap_or_default()
            );
            return 0;
        }
        Command::Serve {
            max_frame,
            server,
            warm,
        } => return serve(&cli, *max_frame, server, *warm).await,
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
            eprintln!("{e}");
            return 2;
        }
    };
    let (name, args, explicit) = call;
    let engine = match engine_for(&cli, &explicit) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
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
            eprintln!("{e}");
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
            eprintln!("{e}");
            return 2;
        }
    };
    let severity = match serde_json::from_value(json!(severity)) {
        Ok(s) => s,
        Err(_) => {
            eprintln!("invalid_params: --severity is error, warning, info or hint");
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
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
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
            eprintln!("{e}");
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

async fn serve(cli: &Cli, max_frame: usize, server: &[String], warm: bool) -> i32 {
    let engine = match engine_for(cli, server) {
        Ok(e) => Arc::new(e),
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    if !server.is_empty() {
        for r in engine.registry().start_all().await {
            if let Err(e) = r {
                eprintln!("{e}");
                return 2;
            }
        }
    } else if warm {
        engine.warm();
    }
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

/// Resolves on SIGINT or SIGTERM.
async fn terminated() {
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

fn install(name: &str) -> i32 {
    let Some(preset) = Preset::by_name(name) else {
        let names: Vec<_> = PRESETS.iter().map(|p| p.name).collect();
        eprintln!(
            "invalid_params: no preset `{name}`; known: {}",
            names.join(", ")
        );
        return 2;
    };
    eprintln!(
        "installing {} into {} …",
        preset.name,
        presets::install_dir(preset).display()
    );
    match presets::install(preset) {
        Ok(exe) => {
            say!("{} installed: {}", preset.name, exe.display());
            0
        }
        Err(e) => {
            eprintln!("install failed: {e}");
            1
        }
    }
}

/// For the workspace: the languages found, which server serves each (found, or how to install
/// it), and each found server's version and capabilities (from a real `initialize`).
async fn doctor(cli: &Cli) -> i32 {
    let engine = match engine_for(cli, &[]) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let root = engine.root().clone();
    let mut text = String::new();
    let _ = writeln!(
        text,
        "lspgate {} — workspace {}",
        env!("CARGO_PKG_VERSION"),
        root.path().display()
    );
    let _ = writeln!(text, "data folder: {}", presets::data_dir().display());
    if let Ok(Config {
        untrusted: Some(u), ..
    }) = load_config(cli, &root)
    {
        let _ = writeln!(
            text,
            "config: {} is NOT TRUSTED ({}): its servers and tasks do not run; review it, then `{}`",
            u.config.display(),
            if u.changed {
                "changed since it was trusted"
            } else {
                "never trusted"
            },
            u.command()
        );
    }
    let found = engine.languages().scan(20_000);
    let mut report = Vec::new();
    if found.is_empty() {
        let _ = writeln!(text, "no source files found");
    }
    for (language, files) in &found {
        let names = engine.registry().by_language(language);
        if names.is_empty() {
            let e = engine.registry().no_server(language, root.path());
            let _ = writeln!(
                text,
                "{language} ({files} files): no server — {}",
                e.message
            );
            report.push(
                json!({"language": language, "files": files, "servers": [], "missing": e.message}),
            );
            continue;
        }
        let _ = writeln!(text, "{language} ({files} files):");
        let mut servers = Vec::new();
        let file = engine.languages().first_file(20_000, |l| l == language);
        let started = match &file {
            Some(f) => engine.registry().servers_for(f, language).await,
            None => Vec::new(),
        };
        for (name, result) in names.iter().zip(started) {
            match result {
                Ok(server) => {
                    let c = server.client();
                    let version = match c.server_version() {
                        Some(v) if v.chars().any(|ch| ch.is_ascii_digit()) => Some(v.to_string()),
                        _ => match engine.registry().get(name).await.map(|s| s.launch) {
                            Some(presets::Launch::Stdio(s)) => presets::package_version(&s.command),
                            _ => None,
                        },
                    };
                    let caps: Vec<&str> = crate::lsp::Cap::ALL
                        .iter()
                        .filter(|cap| {
                            server.supports(**cap) || **cap == crate::lsp::Cap::PullDiagnostics
                        })
                        .map(|cap| cap.name())
                        .collect();
                    let _ = writeln!(
                        text,
                        "  ok       {name}  {}\n           capabilities: {}",
                        version.as_deref().unwrap_or("(no version given)"),
                        caps.join(", ")
                    );
                    servers.push(
                        json!({"name": name, "ok": true, "version": version, "capabilities": caps}),
                    );
                }
                Err(e) => {
                    let fix = e
                        .data
                        .as_ref()
                        .and_then(|d| d.get("install").or_else(|| d.get("fix")))
                        .and_then(|v| v.as_str())
                        .unwrap_or("")
                        .to_string();
                    let label = match e.code {
                        crate::error::Code::UntrustedConfig => "untrusted",
                        crate::error::Code::NoServer => "missing",
                        _ => "failed",
                    };
                    let _ = writeln!(text, "  {label:<8} {name}  — {}", e.message);
                    servers
                        .push(json!({"name": name, "ok": false, "error": e.message, "fix": fix}));
                }
            }
        }
        report.push(json!({"language": language, "files": files, "servers": servers}));
    }
    engine.shutdown().await;
    if cli.json {
        say!(
            "{}",
            serde_json::to_string_pretty(&json!({"languages": report})).unwrap_or_default()
        );
    } else {
        say_raw(&text);
    }
    let all_ok = report.iter().all(|r| {
        r["servers"]
            .as_array()
            .is_some_and(|s| !s.is_empty() && s.iter().all(|x| x["ok"] == true))
    });
    i32::from(!all_ok)
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
