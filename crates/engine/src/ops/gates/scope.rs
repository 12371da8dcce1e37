//! What a `check` covers: every file named by its path, and the files a walk, glob or git
//! (confined to the root) finds whose language a server is defined for (a config server,
//! trusted or not, or a preset): always for code (python, typescript, c, rust, go, shell, nim:
//! a missing server makes them unchecked), and for data and markup formats (json, yaml, toml,
//! markdown, css, html) when their server is installed. Files no server is known for
//! (plaintext, unknown extensions) are not in scope: there is nothing to check them with. Also
//! the notes that make the scope itself incomplete (a glob matching nothing, a walk past its
//! limit, nothing to check), and whether the scope is the whole workspace.
//!
//! git runs with the repository's executable configuration neutralised: no fsmonitor, hooks or
//! filter drivers.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::super::types::*;
use super::super::{Engine, WALK_LIMIT};
use crate::error::ToolError;
use crate::workspace::presets::{Launch, Preset};

impl Engine {
    /// The files a check covers, and what makes the scope itself incomplete (a glob that
    /// matches nothing, a workspace past the walk limit, nothing to check at all).
    pub(super) async fn check_scope(
        &self,
        p: &CheckParams,
    ) -> Result<(Vec<PathBuf>, Vec<Unchecked>), ToolError> {
        let root = self.root().path();
        let mut notes = Vec::new();
        let mut named = HashSet::new();
        let changed = p.changed.unwrap_or(false);
        let mut files: Vec<PathBuf> = if changed {
            git_changed(self.root()).await?
        } else {
            match p.paths.as_deref() {
                None | Some([]) => walk_scope(root, &mut notes).await,
                Some(paths) => {
                    let mut out = Vec::new();
                    for given in paths {
                        if given.contains(['*', '?', '[']) {
                            let glob = globset::Glob::new(given)
                                .map_err(|e| {
                                    ToolError::invalid(format!("bad glob `{given}`: {e}"))
                                })?
                                .compile_matcher();
                            let before = out.len();
                            out.extend(
                                walk_scope(root, &mut notes).await.into_iter().filter(|f| {
                                    f.strip_prefix(root).is_ok_and(|r| glob.is_match(r))
                                }),
                            );
                            if out.len() == before {
                                notes.push(note("no_files", format!("`{given}` matches no file")));
                            }
                            continue;
                        }
                        let path = self.resolve(given)?;
                        if path.is_dir() {
                            out.extend(walk_scope(&path, &mut notes).await);
                        } else {
                            named.insert(path.clone());
                            out.push(path);
                        }
                    }
                    out
                }
            }
        };
        files.sort();
        files.dedup();
        notes.dedup_by(|a, b| a.reason == b.reason);
        let mut scope: HashMap<String, bool> = HashMap::new();
        let mut kept = Vec::with_capacity(files.len());
        for f in files {
            let language = self.languages().detect(&f);
            let in_scope = match scope.get(&language) {
                Some(v) => *v,
                None => {
                    let v = self.language_in_scope(&language).await;
                    scope.insert(language, v);
                    v
                }
            };
            if in_scope || named.contains(&f) {
                kept.push(f);
            }
        }
        let files = kept;
        if files.is_empty() && !changed && notes.is_empty() {
            notes.push(note(
                "no_files",
                "nothing to check: no file in scope is of a language lspgate has a server for"
                    .to_string(),
            ));
        }
        Ok((files, notes))
    }

    /// Whether files of `language` found by a walk, glob or git are in a check's scope: a
    /// server is defined for it (a config server, trusted or not, or a preset), and either it
    /// is code (a missing server makes its files unchecked) or a server for it is installed
    /// (data and markup formats are checked when their server is there; see
    /// `Preset::data_format`).
    async fn language_in_scope(&self, language: &str) -> bool {
        let names = self.registry.by_language(language);
        if names.is_empty() {
            return false;
        }
        if Preset::required_by_check(language) {
            return true;
        }
        for name in names {
            if let Some(spec) = self.registry.get(&name).await
                && !matches!(spec.launch, Launch::Missing(_))
            {
                return true;
            }
        }
        false
    }

    /// Whether a check's scope is the whole workspace (no paths, or the root itself among
    /// them; not `changed`): then a server's workspace pass covers its files.
    pub(super) fn covers_workspace(&self, p: &CheckParams) -> bool {
        if p.changed.unwrap_or(false) {
            return false;
        }
        match p.paths.as_deref() {
            None | Some([]) => true,
            Some(paths) => paths
                .iter()
                .any(|given| self.resolve(given).is_ok_and(|r| r == self.root().path())),
        }
    }
}

/// A scope note (no file matched, past the walk limit, …) as an `unchecked` entry.
pub(super) fn note(cause: &str, reason: String) -> Unchecked {
    Unchecked {
        file: None,
        language: None,
        server: None,
        task: None,
        cause: cause.to_string(),
        reason,
        files: None,
        examples: Vec::new(),
    }
}

/// The files under `dir` (see `workspace::walk`), walked on the blocking pool so the runtime's
/// one thread keeps serving other calls meanwhile; past the walk limit, a note says the check
/// does not cover the rest.
async fn walk_scope(dir: &Path, notes: &mut Vec<Unchecked>) -> Vec<PathBuf> {
    let owned = dir.to_path_buf();
    let mut files =
        tokio::task::spawn_blocking(move || crate::workspace::walk(&owned, WALK_LIMIT + 1))
            .await
            .unwrap_or_default();
    if files.len() > WALK_LIMIT {
        files.truncate(WALK_LIMIT);
        notes.push(note(
            "too_many_files",
            format!(
                "{} holds more than {WALK_LIMIT} files: the rest were not checked (check folders or globs one at a time)",
                dir.display()
            ),
        ));
    }
    files
}

/// The repository's configuration that makes git run a program, neutralised on every git
/// command lspgate runs (a workspace is not trusted to run code by being a repository): the
/// file system monitor, hooks (`git status` refreshing the index runs `post-index-change`),
/// the pager, and below, per driver, the filter drivers (a clean filter runs when a file's
/// stat changed). Submodules are not entered (each has a configuration of its own).
const GIT_NEUTRAL: [&str; 6] = [
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.pager=cat",
];

/// A git command in `root` that runs nothing the repository names: `GIT_NEUTRAL`, no system
/// configuration, no prompt, no optional index write, and every filter driver the
/// configuration defines blanked (`filters`, from `git config`, which runs no program).
fn git(root: &Path, filters: &[String], args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new("git");
    cmd.args(GIT_NEUTRAL).arg("--no-optional-locks");
    for driver in filters {
        for (key, value) in [
            ("clean", ""),
            ("smudge", ""),
            ("process", ""),
            ("required", "false"),
        ] {
            cmd.arg("-c").arg(format!("filter.{driver}.{key}={value}"));
        }
    }
    cmd.args(args)
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_EXTERNAL_DIFF")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    cmd
}

/// The filter drivers git's configuration defines (`filter.NAME.clean` and the like), read
/// with `git config`, which runs none of them.
async fn git_filters(root: &Path) -> Vec<String> {
    let Ok(out) = git(
        root,
        &[],
        &["config", "--null", "--get-regexp", r"^filter\."],
    )
    .output()
    .await
    else {
        return Vec::new();
    };
    let mut drivers: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .split('\0')
        .filter_map(|entry| {
            let key = entry.split('\n').next()?.strip_prefix("filter.")?;
            let (driver, _) = key.rsplit_once('.')?;
            Some(driver.to_string())
        })
        .collect();
    drivers.sort();
    drivers.dedup();
    drivers
}

/// Files git reports as modified, added or untracked (not deleted), under `root` (git runs as
/// a child process the runtime waits for, so a slow `git status` holds up nothing), with the
/// repository's executable configuration neutralised (`git`).
async fn git_changed(root: &crate::workspace::Root) -> Result<Vec<PathBuf>, ToolError> {
    let (workspace, root) = (root, root.path());
    let filters = git_filters(root).await;
    let out = git(
        root,
        &filters,
        &[
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--ignore-submodules=all",
            ".",
        ],
    )
    .output()
    .await
    .map_err(|e| ToolError::invalid(format!("`changed` needs git: {e}")))?;
    if !out.status.success() {
        return Err(ToolError::invalid(format!(
            "`changed` needs a git work tree: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let top = git(root, &filters, &["rev-parse", "--show-toplevel"])
        .output()
        .await
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .unwrap_or_else(|| root.to_path_buf());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut files = Vec::new();
    let mut entries = text.split('\0');
    while let Some(e) = entries.next() {
        if e.len() < 4 {
            continue;
        }
        let (status, path) = e.split_at(3);
        if status.starts_with('R') || status.starts_with('C') {
            entries.next(); // the old name
        }
        if status.contains('D') {
            continue;
        }
        // Confined like every other path: what git names may be a symlink leading out.
        if let Ok(p) = workspace.confine(&top.join(path))
            && p.is_file()
        {
            files.push(p);
        }
    }
    Ok(files)
}
