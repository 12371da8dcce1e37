//! Applying changes to files, verified: a `Plan` says what each file held when the change was
//! computed and what it should hold after. Applying checks every file still holds its `before`,
//! writes each atomically (temporary file, fsync, atomic exchange, permissions kept), re-checks
//! what it displaced, and on any failure restores the files already written: all or nothing.
//! Also the unified diff of a plan, and the SQLite journal behind `undo`.

pub mod journal;

use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::error::{Code, ToolError};
use crate::text::digest;

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

fn read_opt(path: &Path) -> Result<Option<Vec<u8>>, ToolError> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(path, e)),
    }
}

fn io_error(path: &Path, e: std::io::Error) -> ToolError {
    ToolError::new(
        Code::InvalidParams,
        format!("cannot write {}: {e}", path.display()),
    )
}

fn conflict(path: &Path, expected: &Option<Vec<u8>>, current: &Option<Vec<u8>>) -> ToolError {
    let d = |b: &Option<Vec<u8>>| b.as_deref().map(digest);
    ToolError::new(
        Code::RevisionConflict,
        format!(
            "{} changed since the edit was computed; nothing was written",
            path.display()
        ),
    )
    .with_data(json!({
        "file": path,
        "expected_digest": d(expected),
        "current_digest": d(current),
    }))
}

/// Applies a plan, all or nothing. Every file must still hold its `before`, else
/// `revision_conflict` and nothing is written.
pub fn apply(plan: &Plan) -> Result<(), ToolError> {
    for c in &plan.changes {
        let current = read_opt(&c.path)?;
        if current != c.before {
            return Err(conflict(&c.path, &c.before, &current));
        }
    }
    let mut done: Vec<&FileChange> = Vec::new();
    for c in &plan.changes {
        if let Err(e) = write_one(&c.path, &c.before, &c.after) {
            for d in done.iter().rev() {
                if let Err(re) = write_one(&d.path, &d.after, &d.before) {
                    tracing::error!("could not roll back {}: {re}", d.path.display());
                }
            }
            return Err(e);
        }
        done.push(c);
    }
    Ok(())
}

fn temp_path(path: &Path) -> PathBuf {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.lspgate-{}-{n}.tmp", std::process::id()))
}

fn cstr(p: &Path) -> Result<CString, ToolError> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| ToolError::invalid(format!("bad path {}", p.display())))
}

/// `renameat2` with `flags` (RENAME_EXCHANGE, RENAME_NOREPLACE).
fn rename2(from: &Path, to: &Path, flags: u32) -> std::io::Result<()> {
    let (Ok(a), Ok(b)) = (cstr(from), cstr(to)) else {
        return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
    };
    // SAFETY: two valid NUL-terminated paths relative to the current directory.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            flags,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn sync_dir(path: &Path) {
    if let Some(dir) = path.parent()
        && let Ok(d) = std::fs::File::open(dir)
    {
        let _ = d.sync_all();
    }
}

/// Moves `path`'s content from `expected` to `after`, atomically, checking that what it
/// displaces is exactly `expected` (else it puts that back: `revision_conflict`).
fn write_one(
    path: &Path,
    expected: &Option<Vec<u8>>,
    after: &Option<Vec<u8>>,
) -> Result<(), ToolError> {
    let tmp = temp_path(path);
    match after {
        Some(bytes) => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| io_error(path, e))?;
            }
            let mut f = std::fs::File::create(&tmp).map_err(|e| io_error(&tmp, e))?;
            let written = f.write_all(bytes).and_then(|()| f.sync_all());
            if let Ok(meta) = std::fs::metadata(path) {
                let _ = std::fs::set_permissions(&tmp, meta.permissions());
            }
            drop(f);
            if let Err(e) = written {
                let _ = std::fs::remove_file(&tmp);
                return Err(io_error(path, e));
            }
            if expected.is_none() {
                // A new file: it must still not exist.
                return match rename2(&tmp, path, libc::RENAME_NOREPLACE) {
                    Ok(()) => {
                        sync_dir(path);
                        Ok(())
                    }
                    Err(e) => {
                        let _ = std::fs::remove_file(&tmp);
                        if e.kind() == std::io::ErrorKind::AlreadyExists {
                            Err(conflict(path, expected, &read_opt(path)?))
                        } else {
                            Err(io_error(path, e))
                        }
                    }
                };
            }
            if let Err(e) = rename2(&tmp, path, libc::RENAME_EXCHANGE) {
                let _ = std::fs::remove_file(&tmp);
                return Err(io_error(path, e));
            }
            // `tmp` now holds what was at `path`: it must be what the plan expected.
            let displaced = read_opt(&tmp)?;
            if displaced != *expected {
                let _ = rename2(&tmp, path, libc::RENAME_EXCHANGE);
                let _ = std::fs::remove_file(&tmp);
                return Err(conflict(path, expected, &displaced));
            }
            let _ = std::fs::remove_file(&tmp);
            sync_dir(path);
            Ok(())
        }
        None => {
            if expected.is_none() {
                return Ok(());
            }
            std::fs::rename(path, &tmp).map_err(|e| io_error(path, e))?;
            let displaced = read_opt(&tmp)?;
            if displaced != *expected {
                let _ = rename2(&tmp, path, libc::RENAME_NOREPLACE);
                return Err(conflict(path, expected, &displaced));
            }
            let _ = std::fs::remove_file(&tmp);
            sync_dir(path);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn change(path: &Path, before: Option<&str>, after: Option<&str>) -> FileChange {
        FileChange {
            path: path.to_path_buf(),
            before: before.map(|s| s.as_bytes().to_vec()),
            after: after.map(|s| s.as_bytes().to_vec()),
        }
    }

    #[test]
    fn applies_creates_deletes_and_keeps_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.sh");
        let b = dir.path().join("b.txt");
        let c = dir.path().join("new/c.txt");
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
        apply(&plan).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "two\n");
        assert_eq!(
            std::fs::metadata(&a).unwrap().permissions().mode() & 0o777,
            0o755
        );
        assert!(!b.exists());
        assert_eq!(std::fs::read_to_string(&c).unwrap(), "new\n");
        // And back.
        apply(&plan.reversed()).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\n");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "gone\n");
        assert!(!c.exists());
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains("lspgate"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn a_changed_file_is_a_conflict_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::write(&a, "a0").unwrap();
        std::fs::write(&b, "b-changed").unwrap();
        let plan = Plan {
            changes: vec![
                change(&a, Some("a0"), Some("a1")),
                change(&b, Some("b0"), Some("b1")),
            ],
        };
        let e = apply(&plan).unwrap_err();
        assert_eq!(e.code, Code::RevisionConflict);
        assert_eq!(e.data.unwrap()["current_digest"], digest(b"b-changed"));
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "a0");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "b-changed");
    }

    #[test]
    fn a_failure_midway_restores_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::write(&a, "a0").unwrap();
        // The second change cannot be written (its parent is a file).
        let bad = a.join("child");
        let plan = Plan {
            changes: vec![
                change(&a, Some("a0"), Some("a1")),
                change(&bad, None, Some("x")),
            ],
        };
        assert!(apply(&plan).is_err());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "a0");
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
