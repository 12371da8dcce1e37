//! The session a command line asks for (`SessionSpec`), resolved in this process: paths made
//! absolute against its working folder, its whole environment, its options with their
//! defaults. The daemon (or this process, standalone) opens it.

use std::path::{Path, PathBuf};

use super::{Cli, Command};
use crate::ops::session::{SessionSpec, Settings, Tools};
use crate::workspace::env::Env;

/// The session of `cli` with the explicit server command `server` (none: the config's and
/// presets' servers).
pub fn session(cli: &Cli, server: &[String]) -> SessionSpec {
    // The profile limits what agent sessions are offered; a subcommand runs the tool it names.
    let (tools, warm) = match &cli.command {
        Command::Serve {
            tools: Some(names),
            warm,
            ..
        } => (Tools::Named(names.clone()), *warm),
        Command::Serve { warm, .. } => (Tools::Configured, *warm),
        // A daemon's own HTTP listener serves agent sessions too.
        Command::Daemon { .. } => (Tools::Configured, false),
        _ => (Tools::All, false),
    };
    SessionSpec {
        root: cli.root.as_deref().map_or_else(cwd, absolute),
        config: cli.config.as_deref().map(absolute),
        state: cli.state.as_deref().map(absolute),
        server: server.to_vec(),
        env: Env::of_process()
            .vars()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        tools,
        warm,
        settings: Settings {
            install: cli.install,
            max_output: cli.max_output,
            timeout: cli.timeout,
            ready_timeout: cli.ready_timeout,
            diagnostics_timeout: cli.diagnostics_timeout,
            restart: cli.restart,
            restart_backoff_ms: cli.restart_backoff_ms,
            open_documents: cli.open_documents,
        },
    }
}

/// This process's working folder.
pub fn cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_default()
}

/// An environment variable of this process.
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// `path` made absolute against the working folder.
pub fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd().join(path)
    }
}
