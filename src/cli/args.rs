//! The command line's shape: `serve`, `call`, `install`, `doctor`, `trust`, `daemon` (clap
//! derive), one subcommand per tool, generated from the tool table (`cli/tool.rs`), and the
//! option groups each takes (`SCOPES`): a subcommand's help lists only the options that apply
//! to it. What each does is in `cli/mod.rs`.
//! An option is taken after the subcommand's name where it applies, and before it by every
//! subcommand, hidden, as before.

use std::path::PathBuf;

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::mcp;
use crate::registry::RestartPolicy;

/// The command line as lspgate reads it: the options (resolved, defaults filled in) and the
/// command. Parsed by `Line` (below): each option is taken by the subcommands it applies to
/// (`SCOPES`), after their name or, as before, before it.
#[derive(Debug)]
pub struct Cli {
    /// Workspace root (default: the current directory).
    pub root: Option<PathBuf>,
    /// lspgate's state folder (default: the root's own in lspgate's data folder).
    pub state: Option<PathBuf>,
    /// Config file (default: lspgate.toml in the root, when there is one).
    pub config: Option<PathBuf>,
    pub json: bool,
    pub terse: bool,
    pub raw: bool,
    pub install: bool,
    pub max_output: usize,
    pub timeout: f64,
    pub ready_timeout: f64,
    pub diagnostics_timeout: f64,
    pub restart: RestartPolicy,
    pub restart_backoff_ms: u64,
    pub open_documents: usize,
    pub verbose: u8,
    pub standalone: bool,
    pub command: Command,
}

/// lspgate: real language servers for coding agents, over MCP and on the command line.
///
/// Every tool is also a subcommand: `lspgate hover src/app.py:12:5`,
/// `lspgate references src/app.py:12 --symbol total`, `lspgate diagnostics src/app.py`.
/// Servers come from built-in presets found on PATH or installed by `lspgate install`, or from
/// a command after `--`.
#[derive(Debug, Parser)]
#[command(
    name = "lspgate",
    version,
    about,
    long_about = None,
    after_help = "Options such as --root, --json or --timeout belong to the commands that take \
                  them (written before or after the command's name): `lspgate COMMAND --help` \
                  lists them."
)]
struct Line {
    /// Log more to stderr (-v info, -vv debug). `LSPGATE_LOG` takes filter directives.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    // Every option, before the subcommand's name (hidden here: each subcommand lists those
    // it takes).
    #[command(flatten)]
    workspace: WorkspaceOpts,
    #[command(flatten)]
    server: ServerOpts,
    #[command(flatten)]
    json: JsonOpts,
    #[command(flatten)]
    render: RenderOpts,
    #[command(flatten)]
    attach: AttachOpts,
    #[command(subcommand)]
    command: Command,
}

// Where the workspace is and how it is configured. (Plain comments on these groups: a doc
// comment would become the `about` of every subcommand they are flattened into.)
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Workspace options")]
pub struct WorkspaceOpts {
    /// Workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Config file (default: lspgate.toml in the root, when there is one).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

// How the workspace's servers run (a session's or command's engine).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Server options")]
pub struct ServerOpts {
    /// Folder of lspgate's state (edit journal, event log); default: the root's own folder in
    /// lspgate's data folder (`state/HASH`), outside the workspace.
    #[arg(long, value_name = "DIR")]
    pub state: Option<PathBuf>,
    /// Install a missing preset server (npm, PyPI, `go install`) into lspgate's data folder on
    /// first use.
    #[arg(long)]
    pub install: bool,
    /// Cap on a text reply, in characters [default: 20000].
    #[arg(long, value_name = "CHARS")]
    pub max_output: Option<usize>,
    /// Bound on each request to a language server, in seconds [default: 30].
    #[arg(long, id = "request_timeout", value_name = "SECS")]
    pub timeout: Option<f64>,
    /// How long workspace-wide questions wait for a server to finish indexing, in seconds
    /// [default: 15].
    #[arg(long, value_name = "SECS")]
    pub ready_timeout: Option<f64>,
    /// How long `diagnostics` waits for a server's fresh report, in seconds [default: 15].
    #[arg(long, value_name = "SECS")]
    pub diagnostics_timeout: Option<f64>,
    /// Restart a crashed server: never, always, or at most N times in a streak of crashes
    /// less than a minute apart (then it is given up) [default: 3].
    #[arg(long, value_name = "never|always|N")]
    pub restart: Option<RestartPolicy>,
    /// First delay before a restart, in milliseconds (it doubles within a streak, up to 30 s).
    #[arg(long, hide = true)]
    pub restart_backoff_ms: Option<u64>,
    /// Most documents each server keeps open (least recently used ones are closed)
    /// [default: 200].
    #[arg(long, value_name = "N")]
    pub open_documents: Option<usize>,
}

// `--json`.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Output options")]
pub struct JsonOpts {
    /// Print the structured result as JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

// How a tool's answer is rendered.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Output options")]
pub struct RenderOpts {
    /// Minimal text output (`path:line:col message`).
    #[arg(long)]
    pub terse: bool,
    /// Add the exact LSP requests and command lines a tool sent.
    #[arg(long)]
    pub raw: bool,
}

// Whether to attach to the per-user daemon.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Server options")]
pub struct AttachOpts {
    /// Run everything in this process instead of attaching to the per-user daemon (also
    /// `LSPGATE_STANDALONE=1`).
    #[arg(long)]
    pub standalone: bool,
}

/// The option groups a subcommand takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    /// `--root`, `--config`.
    Workspace,
    /// `--state`, `--install`, `--timeout`, `--restart`, `--open-documents`, … (the engine's).
    Server,
    /// `--json`.
    Json,
    /// `--terse`, `--raw`.
    Render,
    /// `--standalone`.
    Attach,
}

use Group::*;

/// What each fixed subcommand takes; every tool subcommand takes `TOOL`. `install` and
/// `config-schema` take none, `daemon status` only `--json`, `daemon stop` none (the options
/// of `daemon` itself are for the daemon it runs and its `--http` listener).
const SCOPES: &[(&str, &[Group])] = &[
    ("serve", &[Workspace, Server, Attach]),
    ("lsp", &[Workspace, Server, Attach]),
    ("call", TOOL),
    ("daemon", &[Workspace, Server]),
    ("doctor", &[Workspace, Server, Json]),
    ("trust", &[Workspace]),
    ("hook", &[Workspace]),
    ("setup", &[Workspace]),
];
const TOOL: &[Group] = &[Workspace, Server, Json, Render, Attach];

/// The groups subcommand `name` takes.
fn scope(name: &str) -> &'static [Group] {
    match SCOPES.iter().find(|(n, _)| *n == name) {
        Some((_, groups)) => groups,
        None if super::tool::ToolCommand::has_subcommand(name) => TOOL,
        None => &[],
    }
}

impl CommandFactory for Cli {
    fn command() -> clap::Command {
        let mut cmd = Line::command();
        // Before a subcommand's name, every option is still read (scripts write
        // `lspgate --json servers`); each subcommand's help lists those it takes.
        let ids: Vec<clap::Id> = cmd
            .get_arguments()
            .filter(|a| a.get_id() != "verbose")
            .map(|a| a.get_id().clone())
            .collect();
        for id in ids {
            cmd = cmd.mut_arg(id, |a| a.hide(true));
        }
        let names: Vec<String> = cmd
            .get_subcommands()
            .map(|s| s.get_name().to_string())
            .collect();
        for name in names {
            let groups = scope(&name);
            cmd = cmd.mut_subcommand(name, |mut sub| {
                for g in groups {
                    sub = match g {
                        Workspace => WorkspaceOpts::augment_args(sub),
                        Server => ServerOpts::augment_args(sub),
                        Json => JsonOpts::augment_args(sub),
                        Render => RenderOpts::augment_args(sub),
                        Attach => AttachOpts::augment_args(sub),
                    };
                }
                sub
            });
        }
        // `daemon status --json`: its answer is JSON (scripts say so explicitly).
        cmd.mut_subcommand("daemon", |d| {
            d.mut_subcommand("status", JsonOpts::augment_args)
        })
    }

    fn command_for_update() -> clap::Command {
        Cli::command()
    }
}

impl FromArgMatches for Cli {
    fn from_arg_matches(m: &ArgMatches) -> Result<Cli, clap::Error> {
        let line = Line::from_arg_matches(m)?;
        let (mut ws, mut server, mut json, mut render, mut attach) = (
            line.workspace,
            line.server,
            line.json,
            line.render,
            line.attach,
        );
        // What is written after the subcommand's name wins over what is written before.
        if let Some(("daemon", d)) = m.subcommand()
            && let Some(("status", status)) = d.subcommand()
        {
            json.json |= JsonOpts::from_arg_matches(status)?.json;
        }
        if let Some((name, sub)) = m.subcommand() {
            for g in scope(name) {
                match g {
                    Workspace => {
                        let o = WorkspaceOpts::from_arg_matches(sub)?;
                        ws.root = o.root.or(ws.root);
                        ws.config = o.config.or(ws.config);
                    }
                    Server => {
                        let o = ServerOpts::from_arg_matches(sub)?;
                        server = ServerOpts {
                            state: o.state.or(server.state),
                            install: o.install || server.install,
                            max_output: o.max_output.or(server.max_output),
                            timeout: o.timeout.or(server.timeout),
                            ready_timeout: o.ready_timeout.or(server.ready_timeout),
                            diagnostics_timeout: o
                                .diagnostics_timeout
                                .or(server.diagnostics_timeout),
                            restart: o.restart.or(server.restart),
                            restart_backoff_ms: o.restart_backoff_ms.or(server.restart_backoff_ms),
                            open_documents: o.open_documents.or(server.open_documents),
                        };
                    }
                    Json => json.json |= JsonOpts::from_arg_matches(sub)?.json,
                    Render => {
                        let o = RenderOpts::from_arg_matches(sub)?;
                        render.terse |= o.terse;
                        render.raw |= o.raw;
                    }
                    Attach => attach.standalone |= AttachOpts::from_arg_matches(sub)?.standalone,
                }
            }
        }
        Ok(Cli {
            root: ws.root,
            state: server.state,
            config: ws.config,
            json: json.json,
            terse: render.terse,
            raw: render.raw,
            install: server.install,
            max_output: server.max_output.unwrap_or(20_000),
            timeout: server.timeout.unwrap_or(30.0),
            ready_timeout: server.ready_timeout.unwrap_or(15.0),
            diagnostics_timeout: server.diagnostics_timeout.unwrap_or(15.0),
            restart: server.restart.unwrap_or(RestartPolicy::Limit(3)),
            restart_backoff_ms: server.restart_backoff_ms.unwrap_or(500),
            open_documents: server.open_documents.unwrap_or(200),
            verbose: line.verbose,
            standalone: attach.standalone,
            command: line.command,
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Cli::from_arg_matches(m)?;
        Ok(())
    }
}

impl Parser for Cli {}

/// What `lspgate daemon` does besides running one.
#[derive(Debug, Clone, Copy, Subcommand)]
pub enum DaemonAction {
    /// The running daemon's roots, servers (state, pid, memory, uptime, restarts, last error),
    /// sessions and activities, as tables (`--json`: the daemon's status as JSON).
    Status {
        /// Print the URL of the daemon's live status page, with a one-time ticket (starts a
        /// daemon if none runs).
        #[arg(long)]
        web: bool,
        /// With `--web`: open it in the browser too (`$BROWSER`, else `xdg-open`).
        #[arg(long, requires = "web")]
        open: bool,
    },
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
        http: HttpFlags,
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
    /// Speak LSP on stdio for an editor or a harness's LSP client (`{"command": "lspgate",
    /// "args": ["lsp"]}`): one language server fronting the workspace's servers, the same ones
    /// every other session uses. The root is --root, else the client's `rootUri`.
    Lsp {
        /// Front only the servers of this language (repeatable): `python`, `typescript`, …
        #[arg(long = "language", value_name = "LANGUAGE")]
        languages: Vec<String>,
        /// Front only the server of this name (repeatable): `pyright`, `builtin/ruff`, …
        #[arg(long = "server", value_name = "NAME")]
        servers: Vec<String>,
        /// Serve exactly this server command for every file, with no config: after `--`.
        #[arg(
            value_name = "CMD",
            last = true,
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
    /// Install a server (npm, PyPI, `go install`) into lspgate's own data folder.
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
        http: HttpFlags,
    },
    /// Trust the workspace's lspgate.toml as it is now, so its servers and tasks may run (a
    /// changed file needs trusting again).
    Trust {
        /// Forget the trust instead.
        #[arg(long)]
        revoke: bool,
    },
    /// For a harness's hooks: reads its hook event on stdin and answers, in its own format,
    /// with the diagnostics the edit introduced in the written files and those importing
    /// them (nothing when nothing broke). Never fails the harness: no daemon or no server,
    /// empty output and exit 0.
    Hook(super::hook::HookArgs),
    /// Writes a harness's configuration for lspgate (MCP server, hooks, LSP client), merged
    /// into its files: `lspgate setup claude-code`.
    Setup(super::harness::SetupArgs),
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

/// The `--http` options of `serve` and `daemon`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HttpFlags {
    /// Serve MCP over Streamable HTTP at ADDR (`HOST:PORT`, or a port on 127.0.0.1; port 0
    /// picks a free one) instead of stdio; URL `http://ADDR/mcp`, bearer token `LSPGATE_TOKEN`
    /// or a new one (printed to stderr, and kept in a 0600 file in the runtime folder).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Let --http listen on an address other than loopback (the token is still required).
    #[arg(long, requires = "http")]
    pub http_public: bool,
    /// Also serve requests whose Host is NAME (repeatable; also LSPGATE_HTTP_HOSTS,
    /// comma-separated). Loopback names are always served.
    #[arg(long = "http-host", value_name = "NAME", requires = "http")]
    pub http_hosts: Vec<String>,
    /// Also serve browsers at ORIGIN (`https://ide.example`, `http://box:*` for any port,
    /// repeatable; also LSPGATE_HTTP_ORIGINS, comma-separated). Loopback origins are always
    /// served, requests without an Origin too.
    #[arg(long = "http-origin", value_name = "ORIGIN", requires = "http")]
    pub http_origins: Vec<String>,
}

impl HttpFlags {
    /// The settings these flags give.
    pub fn settings(&self) -> mcp::http::HttpArgs {
        mcp::http::HttpArgs {
            http: self.http.clone(),
            http_public: self.http_public,
            http_hosts: self.http_hosts.clone(),
            http_origins: self.http_origins.clone(),
        }
    }
}
