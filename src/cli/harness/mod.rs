//! `lspgate setup HARNESS`: writes a harness's configuration for lspgate (its MCP server entry,
//! its hooks, its LSP client entry), merged into the files already there.
//!
//! What goes where is each harness's definition (`cli::harnesses`), in the terms of `table.rs`; the text is edited by `merge.rs` (JSON, JSONC,
//! over the spans `json.rs` finds) and `block.rs` (TOML), so every byte outside lspgate's
//! entries stays as it was; `disk.rs` reads, writes atomically and diffs. Every file is
//! checked before any is written: one that does not parse stops the whole run, and so does a
//! project file reached through a symbolic link (`disk::Place`: a repository's link is never
//! written through).
//!
//! An lspgate entry that differs from what `setup` writes may be the user's, or hold the
//! user's changes: `setup` keeps it as it is and `--remove` leaves it in, each with a note.
//!
//! The command written is the one lspgate was run with (`command()`: npx or uvx, an npm install, or
//! the binary), a launcher's line split into words by `table::words`.

mod block;
mod disk;
mod json;
mod merge;
pub(crate) mod table;
#[cfg(test)]
mod tests;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use clap::Args;

use super::Cli;
use super::context;
use crate::cli::harnesses::HarnessDef;
use table::{Entry, File, Format};

#[derive(Debug, Clone, Args)]
pub struct SetupArgs {
    /// The harness to set up.
    #[arg(value_parser = crate::cli::harnesses::setup_parser())]
    pub(crate) harness: &'static HarnessDef,
    /// Write the project's configuration (under --root, default the current folder): the
    /// default.
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// Write the user's configuration (under the home folder) instead.
    #[arg(long)]
    pub user: bool,
    /// Print what would change, as a diff, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Take out lspgate's entries that are exactly what `setup` writes (others are left, with
    /// a note).
    #[arg(long)]
    pub remove: bool,
    /// The command the harness runs lspgate with (default: as lspgate was run: `npx -y
    /// lspgate` or `uvx lspgate` through those, else `lspgate` when that is this executable on
    /// PATH, else this executable's absolute path).
    #[arg(long, value_name = "PATH")]
    pub command: Option<String>,
}

/// One file's change.
struct Plan {
    /// As printed: relative to the root, or `~/…`.
    shown: String,
    /// Under the root or the home folder.
    rel: PathBuf,
    /// `None`: no file.
    before: Option<String>,
    /// `None`: no file (removed, or never made).
    after: Option<String>,
    /// lspgate's entries left as they were, as a note names them: they differ from what
    /// `setup` writes.
    kept: Vec<String>,
}

/// Runs `setup`; the exit code.
pub(super) fn run(cli: &Cli, args: &SetupArgs) -> i32 {
    let row = args.harness;
    let name = row.name;
    let base = match base(cli, args.user) {
        Ok(b) => b,
        Err(e) => {
            complain!("lspgate setup: {e}");
            return 2;
        }
    };
    let cmd = args.command.clone().unwrap_or_else(command);
    let mut plans = Vec::new();
    let mut refused = false;
    for file in row.files {
        let rel = relative(&base, file, args.user);
        let shown = if args.user {
            format!("~/{rel}")
        } else {
            rel.clone()
        };
        let rel = PathBuf::from(rel);
        match plan(&place(&base, &rel, args.user), file, &cmd, args.remove) {
            Ok((before, after, kept)) => plans.push(Plan {
                shown,
                rel,
                before,
                after,
                kept,
            }),
            Err(e) => {
                complain!("lspgate setup: {shown}: {e}");
                refused = true;
            }
        }
    }
    if refused {
        complain!("lspgate setup: nothing written (fix or move the file above, then run again)");
        return 2;
    }
    let changed: Vec<&Plan> = plans.iter().filter(|p| p.before != p.after).collect();
    let shown: Vec<&str> = plans.iter().map(|p| p.shown.as_str()).collect();
    let left = plans.iter().any(|p| !p.kept.is_empty());
    if changed.is_empty() {
        if args.remove && left {
            say!("nothing removed: {name} in {}", shown.join(", "));
        } else if args.remove {
            say!(
                "nothing to remove: {name} has no lspgate entries in {}",
                shown.join(", ")
            );
        } else {
            say!("already set up: {name} in {}", shown.join(", "));
        }
        kept(&plans, args.remove);
        if !args.remove {
            notes(row.notes);
        }
        return 0;
    }
    if args.dry_run {
        for p in &changed {
            super::say_raw(&disk::diff(
                &p.shown,
                p.before.as_deref(),
                p.after.as_deref(),
            ));
        }
        kept(&plans, args.remove);
        if !args.remove {
            notes(row.notes);
        }
        return 0;
    }
    for p in &changed {
        let at = place(&base, &p.rel, args.user);
        let done = match &p.after {
            Some(text) => at.write(text).map(|()| "wrote"),
            None => at.delete(&base).map(|()| "removed"),
        };
        match done {
            Ok(verb) => say!("{verb} {}", p.shown),
            Err(e) => {
                complain!("lspgate setup: cannot write {}: {e}", p.shown);
                return 1;
            }
        }
    }
    kept(&plans, args.remove);
    if !args.remove {
        notes(row.notes);
    }
    0
}

fn notes(notes: &[&str]) {
    for n in notes {
        say!("note: {n}");
    }
}

/// The notes on lspgate's entries left as they were.
fn kept(plans: &[Plan], remove: bool) {
    for p in plans {
        for entry in &p.kept {
            if remove {
                say!(
                    "note: left {entry} in {}: it differs from what setup writes (take it out by hand if it is lspgate's)",
                    p.shown
                );
            } else {
                say!(
                    "note: kept {entry} in {} as it is: it differs from what setup writes (take it out to have setup write its own)",
                    p.shown
                );
            }
        }
    }
}

/// Where `rel` under `base` is: the user's own file with `--user`, else a project's.
fn place<'a>(base: &'a Path, rel: &'a Path, user: bool) -> disk::Place<'a> {
    if user {
        disk::Place::User(base.join(rel))
    } else {
        disk::Place::Project(base, rel)
    }
}

/// The folder the files are under: the home folder with `--user`, else the project root (its
/// real path: what is under it is reached following no link).
fn base(cli: &Cli, user: bool) -> Result<PathBuf, String> {
    if user {
        return match context::var("HOME") {
            Some(home) if !home.is_empty() => Ok(PathBuf::from(home)),
            _ => Err("HOME is not set: no user configuration to write".into()),
        };
    }
    let root = cli
        .root
        .as_deref()
        .map(context::absolute)
        .unwrap_or_else(context::cwd);
    if !root.is_dir() {
        return Err(format!("{} is not a folder", root.display()));
    }
    root.canonicalize()
        .map_err(|e| format!("{}: {e}", root.display()))
}

/// `file`'s path under `base`: its `instead` name when a file of that name is there.
fn relative(base: &Path, file: &File, user: bool) -> String {
    let rel = if user { file.user } else { file.project };
    let Some(instead) = file.instead else {
        return rel.to_string();
    };
    let alt = match rel.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/{instead}"),
        None => instead.to_string(),
    };
    if std::fs::symlink_metadata(base.join(&alt)).is_ok() {
        alt
    } else {
        rel.to_string()
    }
}

/// The file's text before and after: every entry put in (or, with `remove`, taken out); and
/// lspgate's entries left as they were, as a note names them.
type Change = (Option<String>, Option<String>, Vec<String>);

fn plan(place: &disk::Place, file: &File, cmd: &str, remove: bool) -> Result<Change, String> {
    let before = place.read()?;
    let text = before.clone().unwrap_or_else(|| file.seed.to_string());
    let entries: Vec<Entry> = file.puts.iter().map(|p| table::entry(p, cmd)).collect();
    // The entries to check landed: not those left as they were.
    let mut landed: Vec<&Entry> = entries.iter().collect();
    let (after, kept) = match file.format {
        Format::Toml => {
            block::parse(&text)?;
            if remove {
                block::take(&text, &entries)
            } else {
                let (after, kept) = block::put(&text, &entries, cmd)?;
                if kept.iter().any(|k| k == block::NAMED) {
                    landed.clear();
                }
                (after, kept)
            }
        }
        Format::Json | Format::Jsonc => {
            let jsonc = file.format == Format::Jsonc;
            merge::parse(&text, jsonc)?;
            let mut after = text.clone();
            let mut kept = Vec::new();
            for e in &entries {
                let (text, left) = if remove {
                    merge::take(&after, jsonc, e, cmd)?
                } else {
                    merge::put(&after, jsonc, e, cmd)?
                };
                after = text;
                if let Some(named) = left {
                    landed.retain(|l| !std::ptr::eq(*l, e));
                    kept.push(named);
                }
            }
            (after, kept)
        }
    };
    if !remove {
        check(&after, file.format, &landed, cmd)?;
    }
    // Removing to the seed deletes the file; a file never made stays unmade.
    let gone = remove && after != text && after == file.seed;
    let after = if gone || (before.is_none() && after == text) {
        None
    } else {
        Some(after)
    };
    Ok((before, after, kept))
}

/// That `text` parses and holds every entry (lspgate's, or one of the user's counted as set up).
fn check(text: &str, format: Format, entries: &[&Entry], cmd: &str) -> Result<(), String> {
    for e in entries {
        let holds = match format {
            Format::Toml => block::has(&block::parse(text)?, e, cmd),
            Format::Json | Format::Jsonc => merge::holds(text, format == Format::Jsonc, e, cmd)?,
        };
        if !holds {
            return Err(format!(
                "internal error: the entry under `{}` would not land; nothing written",
                e.path().join(".")
            ));
        }
    }
    Ok(())
}

/// How the harness runs lspgate: as the user ran it. Through npx or uvx (`npx -y lspgate`,
/// `uvx lspgate`: the npm launcher says so in `LSPGATE_LAUNCHER`, uvx's throwaway environment is
/// in uv's cache); else `lspgate` when the first `lspgate` on PATH is this executable (or the
/// npm launcher that ran it), else the absolute path of that executable.
fn command() -> String {
    let exe = std::env::current_exe().ok();
    let exe = exe.map(|e| e.canonicalize().unwrap_or(e));
    let launcher = context::var("LSPGATE_LAUNCHER").unwrap_or_default();
    launched(&launcher, exe.as_deref()).unwrap_or_else(|| {
        // The npm launcher (a global or project install) runs the binary from its package.
        let ran = context::var("LSPGATE_LAUNCHER_PATH")
            .filter(|_| launcher == "npm")
            .map(PathBuf::from)
            .map(|p| p.canonicalize().unwrap_or(p))
            .or(exe);
        match ran {
            Some(ran) => on_path(&ran),
            None => "lspgate".into(),
        }
    })
}

/// The launcher line for a run through npx or uvx.
fn launched(launcher: &str, exe: Option<&Path>) -> Option<String> {
    match launcher {
        "npx" => return Some("npx -y lspgate".into()),
        "uvx" => return Some("uvx lspgate".into()),
        _ => {}
    }
    // uvx runs the wheel's binary from a throwaway environment in uv's cache
    // (`CACHE/archive-v0/ID/bin/lspgate`, with that `bin` first on PATH), gone at the next
    // `uv cache clean`: `uvx lspgate` is what finds it again.
    let env = exe?.parent()?.parent()?;
    let cache = env.parent()?.file_name()?.to_string_lossy();
    let throwaway = cache.starts_with("archive-v") || cache.starts_with("builds-v");
    throwaway.then(|| "uvx lspgate".into())
}

/// `lspgate` when the first `lspgate` on PATH is `ran`, else `ran`'s path.
fn on_path(ran: &Path) -> String {
    let path = context::var("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join("lspgate");
        let runnable = candidate
            .metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
        if runnable {
            if candidate.canonicalize().is_ok_and(|c| c == ran) {
                return "lspgate".into();
            }
            break;
        }
    }
    ran.to_string_lossy().into_owned()
}
