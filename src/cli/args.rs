//! The command line's shape: global options, `serve`, `call`, `install`, `doctor`, `trust`
//! (clap derive), and one subcommand per tool, generated from the tool table (`cli/tool.rs`).
//! What each does is in `cli/mod.rs`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

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
    /// Folder of lspgate's state (edit journal, event log); default: the root's own folder in
    /// lspgate's data folder (`state/HASH`), outside the workspace.
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
    /// Add the exact LSP requests and command lines a tool sent.
    #[arg(long, global = true)]
    pub raw: bool,
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
        /// Serve exactly this server command for every file, with no config: after the
        /// options, with or without `--` (`serve --root . pyright-langserver --stdio`).
        #[arg(
            value_name = "CMD",
            trailing_var_arg = true,
            allow_hyphen_values = true,
            num_args = 0..
        )]
        server: Vec<String>,
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
    /// One subcommand per tool, generated from the tool table (`cli/tool.rs`).
    #[command(flatten)]
    Tool(super::tool::ToolCommand),
}

#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Use exactly this server command instead of the presets.
    #[arg(last = true, value_name = "CMD")]
    pub server: Vec<String>,
}
