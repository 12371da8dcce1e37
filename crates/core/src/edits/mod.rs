//! Applying changes to files, verified: a `Plan` says what each file held when the change was
//! computed and what it should hold after. Applying confines every path again (`Root::confine`)
//! and reaches it without following symlinks (`fs`), checks every file still holds its `before`,
//! writes each atomically (exclusive temporary file, fsync, atomic exchange, permissions kept),
//! re-checks what it displaced, and on any failure restores the files already written: all or
//! nothing. Also the unified diff of a plan, and the write-ahead journal behind `undo`.
//!
//! No write lands in `.git/` or another VCS folder (`VCS_FOLDERS`), whoever asks: checked where
//! every write is confined (`Target::open`). The journal holds its lock as a mutex in the process
//! and `flock` on `edits.lock` across processes.

pub mod fs;
pub mod journal;

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::error::{CoreError, Kind};
use crate::text::digest;
use crate::workspace::Root;
use fs::Dir;

/// One file's change: `None` means the file does not exist (before) or is deleted (after).
#[derive(Debug, Clone, PartialEq)]
pub struct FileChange {
    pub path: PathBuf,
    pub before: Option<Vec<u8>>,
    pub after: Option<Vec<u8>>,
}

/// Changes to apply together.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    pub changes: Vec<FileChange>,
}

impl Plan {
    /// Drops changes that change nothing.
    pub fn normalized(mut self) -> Plan {
        self.changes.retain(|c| c.before != c.after);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The plan that undoes this one.
    pub fn reversed(&self) -> Plan {
        Plan {
            changes: self
                .changes
                .iter()
                .rev()
                .map(|c| FileChange {
                    path: c.path.clone(),
                    before: c.after.clone(),
                    after: c.before.clone(),
                })
                .collect(),
        }
    }
}

/// Per-file line counts of a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub path: PathBuf,
    pub added: usize,
    pub removed: usize,
    pub created: bool,
    pub deleted: bool,
}

/// The unified diff of a plan (paths as `name` gives them) and per-file counts.
pub fn diff(plan: &Plan, name: impl Fn(&Path) -> String) -> (String, Vec<Stat>) {
    let mut out = String::new();
    let mut stats = Vec::new();
    for c in &plan.changes {
        let file = name(&c.path);
        let before = c
            .before
            .as_deref()
            .map(String::from_utf8_lossy)
            .unwrap_or_default();
        let after = c
            .after
            .as_deref()
            .map(String::from_utf8_lossy)
            .unwrap_or_default();
        let d = similar::TextDiff::from_lines(before.as_ref(), after.as_ref());
        let (mut added, mut removed) = (0, 0);
        for change in d.iter_all_changes() {
            match change.tag() {
                similar::ChangeTag::Insert => added += 1,
                similar::ChangeTag::Delete => removed += 1,
                similar::ChangeTag::Equal => {}
            }
        }
        let old_name = if c.before.is_some() {
            format!("a/{file}")
        } else {
            "/dev/null".into()
        };
        let new_name = if c.after.is_some() {
            format!("b/{file}")
        } else {
            "/dev/null".into()
        };
        out.push_str(
            &d.unified_diff()
                .context_radius(3)
                .header(&old_name, &new_name)
                .to_string(),
        );
        stats.push(Stat {
            path: c.path.clone(),
            added,
            removed,
            created: c.before.is_none(),
            deleted: c.after.is_none(),
        });
    }
    (out, stats)
}

/// Where one change is written: its folder (opened from the root without following symlinks;
/// `None` while missing) and its name there.
struct Target {
    /// Root-relative, for messages.
    shown: String,
    parent: PathBuf,
    name: OsString,
    dir: Option<Dir>,
}

/// Version control's own folders: no write of lspgate's (an agent's edit, a server's workspace
/// edit, recovery or undo from the journal) lands in one, wherever in the workspace it is (a
/// `.git/config` or hook written there is code the next `git` command runs).
pub const VCS_FOLDERS: [&str; 7] = [".git", ".hg", ".svn", ".bzr", "_darcs", ".jj", ".pijul"];

impl Target {
    /// Confines `path` again, now (`Root::confine`), and opens its folder. A path that no longer
    /// confines to itself (a folder on it became a symlink) is refused.
    fn open(root: &Root, path: &Path) -> Result<Target, CoreError> {
        let shown = root.relative(path);
        let confined = root.confine(path).map_err(|e| match e.kind {
            Kind::OutsideRoot => CoreError::new(
                Kind::OutsideRoot,
                format!("{shown} leads outside the workspace; nothing was written"),
            )
            .with_data(json!({"file": shown, "root": root.path()})),
            _ => e,
        })?;
        if confined != path {
            return Err(CoreError::new(
                Kind::RevisionConflict,
                format!(
                    "{shown} now leads to {} (a folder on its path changed); nothing was written",
                    root.relative(&confined)
                ),
            )
            .with_data(json!({"file": shown})));
        }
        let rel = confined
            .strip_prefix(root.path())
            .map_err(|_| CoreError::invalid(format!("{shown} is outside the workspace")))?;
        if let Some(vcs) = rel.iter().find(|c| VCS_FOLDERS.iter().any(|v| c == v)) {
            return Err(CoreError::new(
                Kind::OutsideRoot,
                format!(
                    "{shown} is inside the workspace's {} folder, which lspgate never writes (version control's own files, and what its configuration runs); nothing was written",
                    vcs.to_string_lossy()
                ),
            )
            .with_data(json!({"file": shown, "vcs": vcs.to_string_lossy()})));
        }
        let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
            return Err(CoreError::invalid(format!(
                "{shown} is the workspace root, not a file"
            )));
        };
        let dir = fs::walk(root.path(), parent).map_err(|e| fs_error(&shown, "reach", e))?;
        Ok(Target {
            shown,
            parent: parent.to_path_buf(),
            name: name.to_os_string(),
            dir,
        })
    }

    /// What the file holds now (`None`: absent).
    fn current(&self) -> Result<Option<Vec<u8>>, CoreError> {
        match &self.dir {
            None => Ok(None),
            Some(d) => d
                .read(&self.name)
                .map_err(|e| fs_error(&self.shown, "read", e)),
        }
    }

    /// The folder, created (one component at a time, following no symlink) if missing.
    fn dir_creating(&mut self, root: &Root) -> Result<&Dir, CoreError> {
        if self.dir.is_none() {
            let d = fs::walk_creating(root.path(), &self.parent)
                .map_err(|e| fs_error(&self.shown, "create the folder of", e))?;
            self.dir = Some(d);
        }
        self.dir
            .as_ref()
            .ok_or_else(|| CoreError::internal(format!("no folder for {}", self.shown)))
    }
}

/// A file operation's failure: a symlink met while following none is a change of the path since
/// it was confined; the rest by their cause (`CoreError::io`).
fn fs_error(shown: &str, action: &str, e: std::io::Error) -> CoreError {
    if fs::is_symlink_error(&e) {
        return CoreError::new(
            Kind::RevisionConflict,
            format!(
                "{shown}: a symbolic link is now in the way (lspgate writes through none); nothing was written"
            ),
        )
        .with_data(json!({"file": shown}));
    }
    CoreError::io(action, shown, &e)
}

fn conflict(shown: &str, expected: &Option<Vec<u8>>, current: &Option<Vec<u8>>) -> CoreError {
    let d = |b: &Option<Vec<u8>>| b.as_deref().map(digest);
    CoreError::new(
        Kind::RevisionConflict,
        format!("{shown} changed since lspgate last read it (for an undo: since the edit wrote it); nothing was written"),
    )
    .with_data(json!({
        "file": shown,
        "expected_digest": d(expected),
        "current_digest": d(current),
    }))
}

/// Applies a plan, all or nothing. Every path is confined again now and reached without
/// following symlinks; every file must still hold its `before`, else `revision_conflict` and
/// nothing is written.
pub fn apply(root: &Root, plan: &Plan) -> Result<(), CoreError> {
    let mut targets = Vec::with_capacity(plan.changes.len());
    for c in &plan.changes {
        let t = Target::open(root, &c.path)?;
        let current = t.current()?;
        if current != c.before {
            return Err(conflict(&t.shown, &c.before, &current));
        }
        targets.push(t);
    }
    let mut done: Vec<(&FileChange, &mut Target)> = Vec::new();
    for (n, (c, t)) in plan.changes.iter().zip(targets.iter_mut()).enumerate() {
        if let Err(e) = write_one(root, t, &c.before, &c.after) {
            for (d, t) in done.iter_mut().rev() {
                if let Err(re) = write_one(root, t, &d.after, &d.before) {
                    tracing::error!("could not roll back {}: {re}", t.shown);
                }
            }
            return Err(e);
        }
        fault::after_write(n + 1);
        done.push((c, t));
    }
    Ok(())
}

/// Moves the target's content from `expected` to `after`, atomically, checking that what it
/// displaces is exactly `expected` (else it puts that back: `revision_conflict`).
fn write_one(
    root: &Root,
    t: &mut Target,
    expected: &Option<Vec<u8>>,
    after: &Option<Vec<u8>>,
) -> Result<(), CoreError> {
    let shown = t.shown.clone();
    let name = t.name.clone();
    let io = |action: &str| {
        let shown = shown.clone();
        let action = action.to_string();
        move |e: std::io::Error| fs_error(&shown, &action, e)
    };
    match after {
        Some(bytes) => {
            let dir = t.dir_creating(root)?;
            let (tmp, mut f) = dir.create_temp(&name).map_err(io("write"))?;
            let mut written = f.write_all(bytes).and_then(|()| f.sync_all());
            if written.is_ok()
                && let Ok(Some(st)) = dir.stat(&name)
            {
                written = f.set_permissions(std::fs::Permissions::from_mode(st.st_mode & 0o7777));
            }
            drop(f);
            if let Err(e) = written {
                let _ = dir.remove(&tmp);
                return Err(io("write")(e));
            }
            if expected.is_none() {
                // A new file: it must still not exist.
                return match dir.rename(&tmp, &name, libc::RENAME_NOREPLACE) {
                    Ok(()) => {
                        let _ = dir.sync();
                        Ok(())
                    }
                    Err(e) => {
                        let _ = dir.remove(&tmp);
                        if e.kind() == std::io::ErrorKind::AlreadyExists {
                            let now = dir.read(&name).unwrap_or_default();
                            Err(conflict(&shown, expected, &now))
                        } else {
                            Err(io("write")(e))
                        }
                    }
                };
            }
            if let Err(e) = dir.rename(&tmp, &name, libc::RENAME_EXCHANGE) {
                let _ = dir.remove(&tmp);
                return Err(io("replace")(e));
            }
            // `tmp` now holds what was at the target: it must be what the plan expected.
            let displaced = dir.read(&tmp);
            if displaced.as_ref().ok() != Some(expected) {
                let _ = dir.rename(&tmp, &name, libc::RENAME_EXCHANGE);
                let _ = dir.remove(&tmp);
                return Err(match displaced {
                    Ok(d) => conflict(&shown, expected, &d),
                    Err(e) => io("replace")(e),
                });
            }
            let _ = dir.remove(&tmp);
            let _ = dir.sync();
            Ok(())
        }
        None => {
            let Some(dir) = &t.dir else {
                // Its folder is gone, so is the file.
                return match expected {
                    None => Ok(()),
                    Some(_) => Err(conflict(&shown, expected, &None)),
                };
            };
            if expected.is_none() {
                return match dir.read(&name).map_err(io("read"))? {
                    None => Ok(()),
                    now => Err(conflict(&shown, expected, &now)),
                };
            }
            let tmp = fs::temp_name(&name);
            dir.rename(&name, &tmp, libc::RENAME_NOREPLACE)
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::NotFound => conflict(&shown, expected, &None),
                    _ => io("delete")(e),
                })?;
            let displaced = dir.read(&tmp);
            if displaced.as_ref().ok() != Some(expected) {
                let _ = dir.rename(&tmp, &name, libc::RENAME_NOREPLACE);
                return Err(match displaced {
                    Ok(d) => conflict(&shown, expected, &d),
                    Err(e) => io("delete")(e),
                });
            }
            let _ = dir.remove(&tmp);
            let _ = dir.sync();
            Ok(())
        }
    }
}

/// What `path` holds now, read as `apply` reads it (confined again, no symlink followed).
pub(crate) fn read_current(root: &Root, path: &Path) -> Result<Option<Vec<u8>>, CoreError> {
    Target::open(root, path)?.current()
}

/// Removes the temporary files an interrupted apply may have left beside `path` (recovery only:
/// the caller holds the journal's lock, so no apply is running).
pub(crate) fn remove_temporaries(root: &Root, path: &Path) {
    let Ok(t) = Target::open(root, path) else {
        return;
    };
    let Some(dir) = &t.dir else { return };
    for n in dir.names().unwrap_or_default() {
        if fs::is_temp_of(&n, &t.name) {
            match dir.remove(&n) {
                Ok(()) => tracing::info!(
                    "removed {}/{} left by an interrupted edit",
                    t.parent.display(),
                    n.to_string_lossy()
                ),
                Err(e) => tracing::warn!("cannot remove {}: {e}", n.to_string_lossy()),
            }
        }
    }
}

/// Fault injection for tests, in debug builds only: `LSPGATE_TEST_ABORT_AFTER_WRITES=N` aborts
/// the process right after the N-th file of an apply is replaced (the journal's recovery is
/// tested against it).
mod fault {
    #[cfg(debug_assertions)]
    pub(super) fn after_write(n: usize) {
        static AT: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
        let at = AT.get_or_init(|| {
            std::env::var("LSPGATE_TEST_ABORT_AFTER_WRITES")
                .ok()
                .and_then(|v| v.parse().ok())
        });
        if *at == Some(n) {
            tracing::error!("LSPGATE_TEST_ABORT_AFTER_WRITES={n}: aborting");
            std::process::abort();
        }
    }

    #[cfg(not(debug_assertions))]
    pub(super) fn after_write(_: usize) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn change(path: &Path, before: Option<&str>, after: Option<&str>) -> FileChange {
        FileChange {
            path: path.to_path_buf(),
            before: before.map(|s| s.as_bytes().to_vec()),
            after: after.map(|s| s.as_bytes().to_vec()),
        }
    }

    /// A workspace `ws` beside a folder `outside`.
    fn setup() -> (tempfile::TempDir, Root, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        let root = Root::new(&dir.path().join("ws")).unwrap();
        let outside = dir.path().join("outside").canonicalize().unwrap();
        (dir, root, outside)
    }

    /// Every entry under `dir` (folders too) with the bytes of each file.
    fn tree(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                out.push((p.clone(), None));
                out.extend(tree(&p));
            } else {
                out.push((p.clone(), std::fs::read(&p).ok()));
            }
        }
        out.sort();
        out
    }

    #[test]
    fn applies_creates_deletes_and_keeps_permissions() {
        let (_dir, root, _) = setup();
        let a = root.path().join("a.sh");
        let b = root.path().join("b.txt");
        let c = root.path().join("new/deeper/c.txt");
        std::fs::write(&a, "one\n").unwrap();
        std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(&b, "gone\n").unwrap();
        let plan = Plan {
            changes: vec![
                change(&a, Some("one\n"), Some("two\n")),
                change(&b, Some("gone\n"), None),
                change(&c, None, Some("new\n")),
            ],
        };
        apply(&root, &plan).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "two\n");
        assert_eq!(
            std::fs::metadata(&a).unwrap().permissions().mode() & 0o777,
            0o755
        );
        assert!(!b.exists());
        assert_eq!(std::fs::read_to_string(&c).unwrap(), "new\n");
        // And back.
        apply(&root, &plan.reversed()).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\n");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "gone\n");
        assert!(!c.exists());
        let leftovers: Vec<_> = tree(root.path())
            .into_iter()
            .filter(|(p, _)| p.to_string_lossy().contains("lspgate"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn a_changed_file_is_a_conflict_and_nothing_is_written() {
        let (_dir, root, _) = setup();
        let a = root.path().join("a");
        let b = root.path().join("b");
        std::fs::write(&a, "a0").unwrap();
        std::fs::write(&b, "b-changed").unwrap();
        let plan = Plan {
            changes: vec![
                change(&a, Some("a0"), Some("a1")),
                change(&b, Some("b0"), Some("b1")),
            ],
        };
        let e = apply(&root, &plan).unwrap_err();
        assert_eq!(e.kind, Kind::RevisionConflict);
        let data = e.data.unwrap();
        assert_eq!(data["current_digest"], digest(b"b-changed"));
        assert_eq!(data["file"], "b");
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "a0");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "b-changed");
    }

    #[test]
    fn a_failure_midway_restores_what_was_written() {
        let (_dir, root, _) = setup();
        let a = root.path().join("a");
        std::fs::write(&a, "a0").unwrap();
        // The second change cannot be written (its parent is a file).
        let bad = a.join("child");
        let plan = Plan {
            changes: vec![
                change(&a, Some("a0"), Some("a1")),
                change(&bad, None, Some("x")),
            ],
        };
        assert!(apply(&root, &plan).is_err());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "a0");
    }

    #[test]
    fn a_folder_that_became_a_symlink_leading_out_is_refused_at_the_moment_of_writing() {
        let (_dir, root, outside) = setup();
        std::fs::create_dir_all(root.path().join("sub")).unwrap();
        std::fs::write(root.path().join("sub/f.txt"), "f0").unwrap();
        std::fs::write(outside.join("f.txt"), "f0").unwrap();
        // Planned while `sub` and `fresh` were (or would be) real folders of the workspace...
        let plan = Plan {
            changes: vec![
                change(&root.path().join("sub/f.txt"), Some("f0"), Some("f1")),
                change(&root.path().join("fresh/deep/new.txt"), None, Some("n")),
            ],
        };
        // ...then both are made symlinks that lead out.
        std::fs::remove_dir_all(root.path().join("sub")).unwrap();
        symlink(&outside, root.path().join("sub")).unwrap();
        symlink(&outside, root.path().join("fresh")).unwrap();
        let before = tree(&outside);
        let e = apply(&root, &plan).unwrap_err();
        assert_eq!(e.kind, Kind::OutsideRoot, "{e}");
        let e = apply(
            &root,
            &Plan {
                changes: plan.changes[1..].to_vec(),
            },
        )
        .unwrap_err();
        assert_eq!(e.kind, Kind::OutsideRoot, "{e}");
        assert_eq!(tree(&outside), before, "something was written outside");
    }

    #[test]
    fn a_symlink_inside_is_not_written_through_either() {
        let (_dir, root, _) = setup();
        std::fs::create_dir_all(root.path().join("real")).unwrap();
        std::fs::write(root.path().join("real/f.txt"), "f0").unwrap();
        let plan = Plan {
            changes: vec![change(&root.path().join("moved/f.txt"), None, Some("n"))],
        };
        symlink(root.path().join("real"), root.path().join("moved")).unwrap();
        let e = apply(&root, &plan).unwrap_err();
        assert_eq!(e.kind, Kind::RevisionConflict, "{e}");
        // A file that became a symlink (even one leading inside) is refused, never written through.
        std::fs::write(root.path().join("g.txt"), "g0").unwrap();
        let plan = Plan {
            changes: vec![change(&root.path().join("g.txt"), Some("g0"), Some("g1"))],
        };
        std::fs::remove_file(root.path().join("g.txt")).unwrap();
        symlink(root.path().join("real/f.txt"), root.path().join("g.txt")).unwrap();
        assert!(apply(&root, &plan).is_err());
        assert_eq!(
            std::fs::read_to_string(root.path().join("real/f.txt")).unwrap(),
            "f0"
        );
        assert!(
            std::fs::symlink_metadata(root.path().join("g.txt"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn temporaries_left_by_a_crash_are_removed() {
        let (_dir, root, _) = setup();
        let f = root.path().join("f.txt");
        std::fs::write(&f, "x").unwrap();
        let left = root.path().join(".f.txt.lspgate-0123456789abcdef.tmp");
        std::fs::write(&left, "half").unwrap();
        let other = root.path().join(".g.txt.lspgate-0123456789abcdef.tmp");
        std::fs::write(&other, "not f's").unwrap();
        remove_temporaries(&root, &f);
        assert!(!left.exists());
        assert!(other.exists() && f.exists());
    }

    #[test]
    fn diffs_count_lines() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.py");
        let plan = Plan {
            changes: vec![change(
                &a,
                Some("x = 1\ny = 2\n"),
                Some("x = 1\ny = 3\nz = 4\n"),
            )],
        };
        let (text, stats) = diff(&plan, |_| "a.py".into());
        assert!(text.contains("--- a/a.py\n+++ b/a.py\n"), "{text}");
        assert!(text.contains("-y = 2\n+y = 3\n+z = 4\n"), "{text}");
        assert_eq!((stats[0].added, stats[0].removed), (2, 1));
    }
}
