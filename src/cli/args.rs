//! The command line's shape: global options, `serve`, one subcommand per tool, `call`,
//! `check`, `install`, `doctor` (clap derive). What each does is in `cli/mod.rs`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::mcp;
use crate::registry::RestartPolicy;

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
    /// Run everything in this process instead of attaching to the per-user daemon (also
    /// `LSPGATE_STANDALONE=1`).
    #[arg(long, global = true)]
    pub standalone: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// What `lspgate daemon` does besides running one.
#[derive(Debug, Clone, Copy, Subcommand)]
pub enum DaemonAction {
    /// The running daemon's roots, sessions and servers (pid, state, resident memory).
    Status,
    /// Stop the running daemon (its servers shut down cleanly).
    Stop,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over stdio (for Claude Code, Codex, Cursor, …), or over HTTP with --http.
    Serve {
        /// Start the servers for the languages found in the workspace right away, in the
        /// background, instead of on first use.
        #[arg(long)]
        warm: bool,
        /// Largest JSON-RPC frame accepted from the client, in bytes.
        #[arg(long, default_value_t = mcp::stdio::DEFAULT_MAX_FRAME)]
        max_frame: usize,
        /// Offer only these tools: groups (navigation, diagnostics, edits, gates, admin, all)
        /// or tool names, comma-separated; `servers` is always offered. Default: `tools` in
        /// lspgate.toml, else all.
        #[arg(long, value_delimiter = ',', value_name = "GROUPS|TOOLS")]
        tools: Option<Vec<String>>,
        #[command(flatten)]
        http: mcp::http::HttpArgs,
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
    /// Call any tool with its JSON arguments, exactly as an MCP client would:
    /// `lspgate call hover '{"file": "app.py", "line": 7, "symbol": "total"}'`.
    Call {
        /// The tool's name, as MCP lists it (`workspace_symbols`, …).
        tool: String,
        /// Its arguments, a JSON object (default `{}`).
        #[arg(default_value = "{}")]
        arguments: String,
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
    /// The per-user daemon that holds the language servers every session and command attaches
    /// to: run it in the foreground, or `status` / `stop` the running one.
    Daemon {
        #[command(subcommand)]
        action: Option<DaemonAction>,
        /// Stop servers no session has used for this long, in seconds (also
        /// `LSPGATE_IDLE_SERVERS`).
        #[arg(long, value_name = "SECS")]
        idle_servers: Option<u64>,
        /// Exit after this long with no session and no server, in seconds (also
        /// `LSPGATE_IDLE_EXIT`).
        #[arg(long, value_name = "SECS")]
        idle_exit: Option<u64>,
        /// Keep the servers' total resident memory under this many MiB by stopping the least
        /// recently used idle ones (also `LSPGATE_MAX_MEMORY`).
        #[arg(long, value_name = "MIB")]
        max_memory: Option<u64>,
        // `--http`: MCP over HTTP for --root (or the current folder) while the daemon runs.
        #[command(flatten)]
        http: mcp::http::HttpArgs,
    },
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
