//! lspgate's own folders and files whatever the umask, through the real binary run under
//! `umask 000` with its data and runtime folders in a temporary folder: every folder it makes
//! (data, state, trust records, runtime) is 0700 and every file (the daemon's log, socket and
//! lock, the journal's key, the state database, trust records) 0600; a data or state folder
//! others may write to, or another user's, is refused with a message naming it and what to do,
//! and nothing is edited.

use crate::common;
use common::*;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A data folder and a runtime folder (neither made yet) and a workspace.
struct Places {
    dir: tempfile::TempDir,
    ws: tempfile::TempDir,
}

impl Places {
    fn new() -> Places {
        Places {
            dir: tempfile::tempdir().unwrap(),
            ws: workspace(&[("a.txt", "hello\n")]),
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn run(&self) -> PathBuf {
        self.dir.path().join("run")
    }

    /// `lspgate ARGS` under umask 000, in the workspace, through the daemon unless
    /// `standalone`: exit code and stderr.
    fn lspgate(&self, standalone: bool, args: &[&str]) -> (i32, String) {
        let out = std::process::Command::new("sh")
            .args(["-c", "umask 000; exec \"$@\"", "sh", LSPGATE])
            .args(args)
            .current_dir(self.ws.path())
            .env("PATH", test_path())
            .env("LSPGATE_HOME", self.data())
            .env("XDG_RUNTIME_DIR", self.run())
            .env("LSPGATE_STANDALONE", if standalone { "1" } else { "0" })
            .env("LSPGATE_IDLE_EXIT", "30")
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// An edit of `a.txt` from `from` to `to`, applied (journaled in the state folder).
    fn edit(&self, standalone: bool, from: &str, to: &str) -> (i32, String) {
        let args = serde_json::json!({
            "file": "a.txt", "edits": [{"old_text": from, "new_text": to}], "apply": true
        });
        self.lspgate(
            standalone,
            &["call", "edit", &args.to_string(), "--", FIXTURE],
        )
    }

    fn text(&self) -> String {
        std::fs::read_to_string(self.ws.path().join("a.txt")).unwrap()
    }
}

impl Drop for Places {
    fn drop(&mut self) {
        let _ = self.lspgate(false, &["daemon", "stop"]);
    }
}

/// Every folder and file under `dir` (itself included) with its mode, not following links.
fn modes(dir: &Path, out: &mut Vec<(PathBuf, std::fs::Metadata)>) {
    let meta = std::fs::symlink_metadata(dir).unwrap();
    let is_dir = meta.is_dir();
    out.push((dir.to_path_buf(), meta));
    if is_dir {
        for e in std::fs::read_dir(dir).unwrap() {
            modes(&e.unwrap().path(), out);
        }
    }
}

#[test]
fn every_folder_is_0700_and_every_file_0600_under_umask_000() {
    let p = Places::new();
    let (code, err) = p.lspgate(true, &["trust"]);
    assert_eq!(code, 0, "{err}");
    let (code, err) = p.edit(false, "hello", "bye");
    assert_eq!(code, 0, "{err}");
    assert_eq!(p.text(), "bye\n");
    let mut found = Vec::new();
    modes(&p.data(), &mut found);
    modes(&p.run(), &mut found);
    let mut wrong = Vec::new();
    for (path, meta) in &found {
        let want = if meta.is_dir() { 0o700 } else { 0o600 };
        if meta.mode() & 0o7777 != want || meta.file_type().is_symlink() {
            wrong.push(format!("{:o} {}", meta.mode() & 0o7777, path.display()));
        }
    }
    assert!(wrong.is_empty(), "not private:\n{}", wrong.join("\n"));
    // Everything was looked at: the daemon's, the journal's and trust's.
    let names: Vec<String> = found
        .iter()
        .filter_map(|(p, _)| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    for name in [
        "daemon.log",
        "daemon.sock",
        "journal.key",
        "state.db",
        "edits.lock",
        "trust",
    ] {
        assert!(names.iter().any(|n| n == name), "no {name} in {names:?}");
    }
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("daemon-") && n.ends_with(".lock")),
        "{names:?}"
    );
}

/// The root's state folder in the data folder (after an edit made it).
fn state_of(p: &Places) -> PathBuf {
    let states: Vec<PathBuf> = std::fs::read_dir(p.data().join("state"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(states.len(), 1, "{states:?}");
    states[0].clone()
}

/// An edit is refused with a message naming `dir` and `fix`, and changes nothing.
fn refused(p: &Places, standalone: bool, dir: &Path, fix: &str) {
    let before = p.text();
    let (code, err) = p.edit(standalone, before.trim_end(), "changed");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&format!("{} {fix}", dir.display())), "{err}");
    assert_eq!(p.text(), before);
}

#[test]
fn data_and_state_folders_others_may_write_to_are_refused() {
    let p = Places::new();
    let (code, err) = p.edit(true, "hello", "one");
    assert_eq!(code, 0, "{err}");
    let state = state_of(&p);
    let chmod = |dir: &Path, mode: u32| {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    let writable = "may be written by other users (mode 777)";
    for dir in [p.data(), p.data().join("state"), state.clone()] {
        chmod(&dir, 0o777);
        refused(&p, true, &dir, writable);
        let (_, err) = p.edit(true, "one", "two");
        assert!(
            err.contains(&format!("`chmod 700 {}`", dir.display())),
            "{err}"
        );
        chmod(&dir, 0o700);
    }
    // Group-writable is as bad; readable is not refused (an older lspgate made them so).
    chmod(&state, 0o770);
    refused(&p, true, &state, "may be written by other users (mode 770)");
    chmod(&state, 0o755);
    let (code, err) = p.edit(true, "one", "two");
    assert_eq!(code, 0, "{err}");
    // A daemon is started with its log in the data folder: refused there too (the call runs
    // in this process instead, saying why), no log made.
    chmod(&p.data(), 0o777);
    let (code, err) = p.lspgate(false, &["hover", "a.txt:1:1", "--", FIXTURE]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!("no daemon ({} {writable}", p.data().display())),
        "{err}"
    );
    assert!(!p.data().join("daemon.log").exists());
}

#[test]
fn a_state_folder_of_another_user_is_refused() {
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        panic!("this test gives a folder to another user, which needs root (CI runs as root)");
    }
    let p = Places::new();
    let (code, err) = p.edit(true, "hello", "one");
    assert_eq!(code, 0, "{err}");
    let state = state_of(&p);
    for dir in [p.data().join("state"), state] {
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
        refused(
            &p,
            true,
            &dir,
            "belongs to another user (uid 65534, you are 0)",
        );
        std::os::unix::fs::chown(&dir, Some(0), Some(0)).unwrap();
    }
    let (code, err) = p.edit(true, "one", "two");
    assert_eq!(code, 0, "{err}");
}
