//! `lspgate trust [--root DIR] [--revoke]`: records the digest of the workspace's own
//! lspgate.toml in the user's data folder (like `direnv allow`), after checking that it parses,
//! or, with no lspgate.toml, the root itself; and prints what it may now run (the file's
//! commands, and the presets' features and task arguments that run the repository's code).
//! `--revoke` forgets both records.

use super::Cli;
use crate::workspace::Root;
use crate::workspace::config::{Config, TransportKind};
use crate::workspace::trust;

/// Runs the subcommand; returns the exit code.
// Not a read inside a root for an answer: the lspgate.toml the user asks to trust.
#[allow(clippy::disallowed_methods)]
pub(super) fn run(cli: &Cli, revoke: bool) -> i32 {
    let root = match workspace(cli) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let path = root.path().join("lspgate.toml");
    if revoke {
        return revoke_trust(&root, &path);
    }
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return trust_root(root.path()),
        Err(e) => {
            eprintln!("invalid_params: cannot read {}: {e}", path.display());
            return 2;
        }
    };
    let config = match std::str::from_utf8(&bytes)
        .map_err(|_| format!("{}:0: not UTF-8", path.display()))
        .and_then(|text| Config::parse(text, &path).map_err(|e| e.to_string()))
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("invalid_params: invalid config {e}; nothing was trusted");
            return 2;
        }
    };
    if let Err(e) = trust::grant(&path, &bytes) {
        eprintln!(
            "internal: cannot write the trust record under {}: {e}",
            trust::dir().display()
        );
        return 1;
    }
    say!(
        "trusted {} (sha256 {})",
        path.display(),
        trust::digest(&bytes)
    );
    say_what_it_runs(&root, &config);
    say_repository_code(root.path());
    say!("A change to the file makes it untrusted until `lspgate trust` again.");
    0
}

/// The workspace to trust (`--root`, or the current directory), or the exit code when there is
/// none or a file was given with `--config` (said on stderr).
fn workspace(cli: &Cli) -> Result<Root, i32> {
    if cli.config.is_some() {
        eprintln!(
            "invalid_params: a file given with --config is trusted by that act; `lspgate trust` records the workspace's own lspgate.toml (see --root)"
        );
        return Err(2);
    }
    let dir = match &cli.root {
        Some(r) => r.clone(),
        None => match std::env::current_dir() {
            Ok(d) => d,
            Err(e) => {
                eprintln!("invalid_params: no current directory: {e}");
                return Err(2);
            }
        },
    };
    Root::new(&dir).map_err(|e| {
        eprintln!("{e}");
        2
    })
}

/// `--revoke`: forgets the records of the file at `path` and of `root`; returns the exit code.
fn revoke_trust(root: &Root, path: &std::path::Path) -> i32 {
    match trust::revoke(path).and_then(|f| Ok(f | trust::revoke(root.path())?)) {
        Ok(true) => {
            say!("{} is no longer trusted", root.path().display());
            0
        }
        Ok(false) => {
            say!("{} was not trusted", root.path().display());
            0
        }
        Err(e) => {
            eprintln!("internal: cannot remove the trust record: {e}");
            1
        }
    }
}

/// What the trusted `config` may now run in `root`: its servers' commands (or addresses) with
/// their environments, and its tasks.
fn say_what_it_runs(root: &Root, config: &Config) {
    if config.has_commands() {
        say!("lspgate may now run, in {}:", root.path().display());
    }
    for s in &config.servers {
        let what = match s.transport {
            TransportKind::Tcp => {
                format!("connects to tcp://{}", s.address.as_deref().unwrap_or(""))
            }
            TransportKind::Stdio => std::iter::once(s.command.as_deref().unwrap_or(""))
                .chain(s.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
        };
        let env: Vec<String> = s.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        say!(
            "  server {}: {what}{}",
            s.name,
            if env.is_empty() {
                String::new()
            } else {
                format!("  (env {})", env.join(" "))
            }
        );
    }
    for t in &config.tasks {
        say!("  task {}: {}", t.name, t.command.join(" "));
    }
}

/// Trusts a workspace that has no lspgate.toml: a record of its root.
fn trust_root(root: &std::path::Path) -> i32 {
    if let Err(e) = trust::grant_root(root) {
        eprintln!(
            "internal: cannot write the trust record under {}: {e}",
            trust::dir().display()
        );
        return 1;
    }
    say!(
        "trusted the workspace {} (it has no lspgate.toml)",
        root.display()
    );
    say_repository_code(root);
    say!(
        "An lspgate.toml added later is untrusted (and so is the workspace) until `lspgate trust` again."
    );
    0
}

/// What trusting the workspace lets the presets do there.
fn say_repository_code(root: &std::path::Path) {
    say!(
        "lspgate may now run the repository's own code in {}:",
        root.display()
    );
    for (name, what) in crate::workspace::presets::repository_code() {
        say!("  server {name}: {what}");
    }
    say!(
        "  run_task of a task preset with extra args (cargo, tsc, cc, nim, pytest, make: their arguments can run commands)"
    );
}
