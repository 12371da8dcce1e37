//! The journal's unit tests: write-ahead order, recovery after a simulated crash, crafted
//! databases, symlinked state folders, and old journals.

use super::*;
use std::os::unix::fs::symlink;

/// A workspace `ws` (with `a.txt`, `b.txt`) beside a folder `outside` (with `victim.txt`).
struct Ws {
    _dir: tempfile::TempDir,
    root: Root,
    outside: PathBuf,
}

impl Ws {
    fn new() -> Ws {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(ws.join("a.txt"), "a0\n").unwrap();
        std::fs::write(ws.join("b.txt"), "b0\n").unwrap();
        std::fs::write(outside.join("victim.txt"), "a1\n").unwrap();
        Ws {
            root: Root::new(&ws).unwrap(),
            outside: outside.canonicalize().unwrap(),
            _dir: dir,
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    fn state(&self) -> PathBuf {
        self.path(".lspgate")
    }

    fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.path(name)).ok()
    }

    /// a.txt a0→a1, b.txt b0→b1, c/new.txt created.
    fn plan(&self) -> Plan {
        let c = |name: &str, before: Option<&str>, after: Option<&str>| FileChange {
            path: self.path(name),
            before: before.map(|s| s.as_bytes().to_vec()),
            after: after.map(|s| s.as_bytes().to_vec()),
        };
        Plan {
            changes: vec![
                c("a.txt", Some("a0\n"), Some("a1\n")),
                c("b.txt", Some("b0\n"), Some("b1\n")),
                c("c/new.txt", None, Some("new\n")),
            ],
        }
    }

    fn sql(&self, sql: &str) {
        Connection::open(self.state().join(DB))
            .unwrap()
            .execute_batch(sql)
            .unwrap();
    }

    fn outside_tree(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out: Vec<_> = walkdir(&self.outside);
        out.sort();
        out
    }
}

fn walkdir(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if e.file_type().unwrap().is_dir() {
            out.push((p.clone(), b"<dir>".to_vec()));
            out.extend(walkdir(&p));
        } else {
            out.push((p.clone(), std::fs::read(&p).unwrap_or_default()));
        }
    }
    out
}

#[test]
fn entries_survive_reopening_and_undo_marks_in_the_same_transaction() {
    let ws = Ws::new();
    let plan = ws.plan();
    let id = Journal::open(&ws.state(), &ws.root)
        .unwrap()
        .apply("edit", "three files", &plan, None)
        .unwrap();
    assert_eq!(ws.read("c/new.txt").as_deref(), Some("new\n"));
    let j = Journal::open(&ws.state(), &ws.root).unwrap();
    let e = j.get(id).unwrap().unwrap();
    assert_eq!((e.tool.as_str(), e.state), ("edit", State::Applied));
    assert_eq!(e.plan, plan);
    assert!(e.undone_by.is_none());
    let undo = j.apply("undo", "undo", &plan.reversed(), Some(id)).unwrap();
    assert_eq!(j.get(id).unwrap().unwrap().undone_by, Some(undo));
    assert_eq!(ws.read("a.txt").as_deref(), Some("a0\n"));
    assert_eq!(ws.read("c/new.txt"), None);
    assert!(j.get(999).unwrap().is_none());
    assert!(
        std::fs::read_to_string(ws.state().join(".gitignore"))
            .unwrap()
            .contains('*')
    );
}

#[test]
fn the_intent_is_durable_before_any_file_is_written() {
    let ws = Ws::new();
    let j = Journal::open(&ws.state(), &ws.root).unwrap();
    // A conflict: nothing is written and the attempt leaves no entry.
    std::fs::write(ws.path("b.txt"), "someone else\n").unwrap();
    let e = j.apply("edit", "x", &ws.plan(), None).unwrap_err();
    assert_eq!(e.kind, Kind::RevisionConflict);
    assert_eq!(ws.read("a.txt").as_deref(), Some("a0\n"));
    let count: i64 = j
        .conn()
        .unwrap()
        .query_row("SELECT COUNT(*) FROM edits", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, 0);
    std::fs::write(ws.path("b.txt"), "b0\n").unwrap();
    // The journal cannot record the intent: nothing is written, `internal`.
    ws.sql(
        "CREATE TRIGGER no_intent BEFORE INSERT ON edits BEGIN SELECT RAISE(ABORT, 'disk full'); END;",
    );
    let e = j.apply("edit", "x", &ws.plan(), None).unwrap_err();
    assert_eq!(e.kind, Kind::Internal, "{e}");
    assert_eq!(ws.read("a.txt").as_deref(), Some("a0\n"));
    assert_eq!(ws.read("c/new.txt"), None);
    ws.sql("DROP TRIGGER no_intent;");
    // It cannot record the completion: the files written are rolled back, `internal`.
    ws.sql(
        "CREATE TRIGGER no_completion BEFORE UPDATE OF state ON edits WHEN NEW.state = 'applied'
         BEGIN SELECT RAISE(ABORT, 'disk full'); END;",
    );
    let e = j.apply("edit", "x", &ws.plan(), None).unwrap_err();
    assert_eq!(e.kind, Kind::Internal, "{e}");
    assert_eq!(ws.read("a.txt").as_deref(), Some("a0\n"));
    assert_eq!(ws.read("b.txt").as_deref(), Some("b0\n"));
    assert_eq!(ws.read("c/new.txt"), None);
    let state: String = j
        .conn()
        .unwrap()
        .query_row("SELECT state FROM edits ORDER BY id DESC", [], |r| r.get(0))
        .unwrap();
    assert_eq!(state, "rolled_back");
}

/// What a crash between intent and completion leaves: the intent recorded, some files
/// replaced (one of them with its temporary file still beside it), the others not.
fn crash_midway(ws: &Ws) -> i64 {
    let j = Journal::open(&ws.state(), &ws.root).unwrap();
    let plan = ws.plan();
    let id = j.begin("rename", "crashes", &plan).unwrap();
    super::super::apply(
        &ws.root,
        &Plan {
            changes: plan.changes[..1].to_vec(),
        },
    )
    .unwrap();
    std::fs::write(ws.path(".b.txt.lspgate-00000000deadbeef.tmp"), "b1\n").unwrap();
    id
}

#[test]
fn an_edit_interrupted_midway_is_rolled_back_when_the_journal_opens() {
    let ws = Ws::new();
    let earlier = Journal::open(&ws.state(), &ws.root)
        .unwrap()
        .apply(
            "edit",
            "earlier",
            &Plan {
                changes: vec![FileChange {
                    path: ws.path("d.txt"),
                    before: None,
                    after: Some(b"d\n".to_vec()),
                }],
            },
            None,
        )
        .unwrap();
    let id = crash_midway(&ws);
    assert_eq!(ws.read("a.txt").as_deref(), Some("a1\n"));
    let j = Journal::open(&ws.state(), &ws.root).unwrap();
    // Every file wholly before, and no temporary file left.
    assert_eq!(ws.read("a.txt").as_deref(), Some("a0\n"));
    assert_eq!(ws.read("b.txt").as_deref(), Some("b0\n"));
    assert_eq!(ws.read("c/new.txt"), None);
    assert!(!ws.path(".b.txt.lspgate-00000000deadbeef.tmp").exists());
    assert_eq!(j.get(id).unwrap().unwrap().state, State::RolledBack);
    // The edit before it can still be undone.
    let e = j.get(earlier).unwrap().unwrap();
    j.apply("undo", "undo", &e.plan.reversed(), Some(earlier))
        .unwrap();
    assert_eq!(ws.read("d.txt"), None);
}

#[test]
fn recovery_leaves_alone_a_file_someone_changed_since() {
    let ws = Ws::new();
    let id = crash_midway(&ws);
    std::fs::write(ws.path("a.txt"), "edited by hand\n").unwrap();
    std::fs::create_dir_all(ws.path("c")).unwrap();
    std::fs::write(ws.path("c/new.txt"), "made by hand\n").unwrap();
    let j = Journal::open(&ws.state(), &ws.root).unwrap();
    assert_eq!(ws.read("a.txt").as_deref(), Some("edited by hand\n"));
    assert_eq!(ws.read("b.txt").as_deref(), Some("b0\n"));
    assert_eq!(ws.read("c/new.txt").as_deref(), Some("made by hand\n"));
    assert_eq!(j.get(id).unwrap().unwrap().state, State::RolledBack);
}

#[test]
fn recovery_waits_for_a_live_writer() {
    let ws = Ws::new();
    let id = crash_midway(&ws);
    // Another lspgate holds the lock: its pending edit is alive, not rolled back under it.
    let other = std::fs::File::open(ws.state().join(LOCK)).unwrap();
    rustix::fs::flock(&other, rustix::fs::FlockOperation::LockExclusive).unwrap();
    let j = Journal::open(&ws.state(), &ws.root).unwrap();
    assert_eq!(ws.read("a.txt").as_deref(), Some("a1\n"));
    assert_eq!(j.get(id).unwrap().unwrap().state, State::Pending);
    drop(other);
    // Once it is gone, the next apply recovers first.
    std::fs::write(ws.path("e.txt"), "e0\n").unwrap();
    let plan = Plan {
        changes: vec![FileChange {
            path: ws.path("e.txt"),
            before: Some(b"e0\n".to_vec()),
            after: Some(b"e1\n".to_vec()),
        }],
    };
    j.apply("edit", "e", &plan, None).unwrap();
    assert_eq!(ws.read("a.txt").as_deref(), Some("a0\n"));
    assert_eq!(j.get(id).unwrap().unwrap().state, State::RolledBack);
}

#[test]
fn entries_pointing_outside_the_root_are_refused() {
    let ws = Ws::new();
    let j = Journal::open(&ws.state(), &ws.root).unwrap();
    let id = j.apply("edit", "a", &ws.plan(), None).unwrap();
    symlink(&ws.outside, ws.path("out")).unwrap();
    let before = ws.outside_tree();
    let outside = ws.outside.join("victim.txt");
    for crafted in [
        outside.display().to_string(),
        format!("{}/../outside/victim.txt", ws.root.path().display()),
        "../outside/victim.txt".to_string(),
        format!("{}/out/victim.txt", ws.root.path().display()),
    ] {
        ws.sql(&format!(
            "UPDATE files SET path = '{crafted}' WHERE edit_id = {id} AND seq = 0;"
        ));
        let e = j.get(id).unwrap_err();
        assert_eq!(e.kind, Kind::OutsideRoot, "{crafted}: {e}");
    }
    // A crafted pending entry is never replayed by recovery.
    ws.sql(&format!(
        "UPDATE edits SET state = 'pending' WHERE id = {id};"
    ));
    drop(j);
    let j = Journal::open(&ws.state(), &ws.root).unwrap();
    assert_eq!(ws.outside_tree(), before, "something was written outside");
    let state: String = j
        .conn()
        .unwrap()
        .query_row("SELECT state FROM edits WHERE id = ?1", [id], |r| r.get(0))
        .unwrap();
    assert_eq!(state, "refused");
}

#[test]
fn a_damaged_entry_is_not_replayed() {
    let ws = Ws::new();
    let j = Journal::open(&ws.state(), &ws.root).unwrap();
    let id = j.apply("edit", "a", &ws.plan(), None).unwrap();
    ws.sql(&format!(
        "UPDATE files SET before = X'00' WHERE edit_id = {id} AND seq = 0;"
    ));
    assert_eq!(j.get(id).unwrap_err().kind, Kind::Internal);
}

#[test]
fn a_symlinked_state_folder_is_refused() {
    let ws = Ws::new();
    // Leading out: refused, nothing created there.
    symlink(&ws.outside, ws.state()).unwrap();
    let before = ws.outside_tree();
    let e = Journal::open(&ws.state(), &ws.root).err().unwrap();
    assert_eq!(e.kind, Kind::OutsideRoot, "{e}");
    assert_eq!(ws.outside_tree(), before);
    assert!(!Journal::exists(&ws.state()));
    // Leading inside: refused too (lspgate would write its `.gitignore` of `*` there).
    std::fs::remove_file(ws.state()).unwrap();
    std::fs::create_dir(ws.path("src")).unwrap();
    symlink(ws.path("src"), ws.state()).unwrap();
    let e = Journal::open(&ws.state(), &ws.root).err().unwrap();
    assert_eq!(e.kind, Kind::Internal, "{e}");
    assert!(e.message.contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read_dir(ws.path("src")).unwrap().count(), 0);
    // A real folder whose database is a symlink leading out.
    std::fs::remove_file(ws.state()).unwrap();
    std::fs::create_dir(ws.state()).unwrap();
    Connection::open(ws.outside.join("other.db")).unwrap();
    let before = ws.outside_tree();
    symlink(ws.outside.join("other.db"), ws.state().join(DB)).unwrap();
    let e = Journal::open(&ws.state(), &ws.root).err().unwrap();
    assert_eq!(e.kind, Kind::OutsideRoot, "{e}");
    assert_eq!(ws.outside_tree(), before);
    // Nested: a symlinked folder above the state folder.
    std::fs::remove_file(ws.state().join(DB)).unwrap();
    symlink(&ws.outside, ws.path("cache")).unwrap();
    let e = Journal::open(&ws.path("cache/lspgate"), &ws.root)
        .err()
        .unwrap();
    assert_eq!(e.kind, Kind::OutsideRoot, "{e}");
    assert_eq!(ws.outside_tree(), before);
}

#[test]
fn a_state_folder_named_outside_the_root_is_used_as_given() {
    let ws = Ws::new();
    let state = ws.outside.join("state");
    let j = Journal::open(&state, &ws.root).unwrap();
    j.apply("edit", "a", &ws.plan(), None).unwrap();
    assert!(state.join(DB).is_file());
    assert!(Journal::exists(&state));
}

/// A journal lspgate did not seal: one shipped with a repository (the attack: a `pending` entry
/// whose "before" is a `.git/config` that runs a command, and one that would create a hook),
/// or one from before sealing, which looks the same. Nothing of it is ever replayed or undone.
#[test]
fn an_unsealed_journal_is_never_replayed() {
    let ws = Ws::new();
    std::fs::create_dir_all(ws.path(".git/hooks")).unwrap();
    std::fs::write(ws.path(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir(ws.state()).unwrap();
    let evil = b"[core]\n\tfsmonitor = touch pwned\n";
    let conn = Connection::open(ws.state().join(DB)).unwrap();
    conn.execute_batch(
        "CREATE TABLE edits (id INTEGER PRIMARY KEY AUTOINCREMENT, time TEXT NOT NULL DEFAULT '',
             tool TEXT NOT NULL, summary TEXT NOT NULL, undone_by INTEGER,
             state TEXT NOT NULL DEFAULT 'applied');
         CREATE TABLE files (edit_id INTEGER NOT NULL, seq INTEGER NOT NULL, path TEXT NOT NULL,
             before BLOB, after BLOB, before_digest TEXT, after_digest TEXT,
             PRIMARY KEY (edit_id, seq));
         INSERT INTO edits (tool, summary, state) VALUES ('edit', 'config', 'pending');
         INSERT INTO edits (tool, summary, state) VALUES ('edit', 'hook', 'pending');
         INSERT INTO edits (tool, summary, state) VALUES ('edit', 'old', 'applied');",
    )
    .unwrap();
    type Row<'a> = (i64, PathBuf, Option<&'a [u8]>, Option<&'a [u8]>);
    let rows: [Row; 3] = [
        (1, ws.path(".git/config"), Some(evil), Some(b"[core]\n")),
        (
            2,
            ws.path(".git/hooks/post-checkout"),
            Some(b"#!/bin/sh\n"),
            None,
        ),
        (3, ws.path("a.txt"), Some(b"pwned\n"), Some(b"a0\n")),
    ];
    for (id, path, before, after) in rows {
        conn.execute(
            "INSERT INTO files VALUES (?1, 0, ?2, ?3, ?4, ?5, ?6)",
            params![
                id,
                path.display().to_string(),
                before,
                after,
                before.map(digest),
                after.map(digest)
            ],
        )
        .unwrap();
    }
    drop(conn);
    let j = Journal::open(&ws.state(), &ws.root).unwrap();
    assert_eq!(ws.read(".git/config").as_deref(), Some("[core]\n"));
    assert!(!ws.path(".git/hooks/post-checkout").exists());
    for id in [1, 2, 3] {
        let e = j.get(id).unwrap_err();
        assert_eq!(e.kind, Kind::InvalidParams, "{e}");
        assert!(e.message.contains("not recorded by lspgate"), "{e}");
    }
    let states: Vec<String> = j
        .conn()
        .unwrap()
        .prepare("SELECT state FROM edits ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(states, ["refused", "refused", "applied"]);
    assert_eq!(ws.read("a.txt").as_deref(), Some("a0\n"));
    // The journal goes on for lspgate's own edits.
    let id = j.apply("edit", "a", &ws.plan(), None).unwrap();
    assert_eq!(id, 4);
    assert!(j.get(id).unwrap().is_some());
}

/// Even an entry lspgate sealed never writes into a VCS folder, whether recovery or undo asks.
#[test]
fn recovery_and_undo_never_write_into_a_vcs_folder() {
    let ws = Ws::new();
    std::fs::create_dir_all(ws.path(".git")).unwrap();
    std::fs::write(ws.path(".git/config"), "[core]\n").unwrap();
    let j = Journal::open(&ws.state(), &ws.root).unwrap();
    let plan = Plan {
        changes: vec![
            FileChange {
                path: ws.path(".git/config"),
                before: Some(b"[core]\n\thooksPath = x\n".to_vec()),
                after: Some(b"[core]\n".to_vec()),
            },
            FileChange {
                path: ws.path("sub/.hg/hgrc"),
                before: Some(b"[hooks]\n".to_vec()),
                after: None,
            },
        ],
    };
    let id = j.begin("edit", "vcs", &plan).unwrap();
    drop(j);
    let j = Journal::open(&ws.state(), &ws.root).unwrap();
    assert_eq!(ws.read(".git/config").as_deref(), Some("[core]\n"));
    assert!(!ws.path("sub/.hg").exists());
    let state: String = j
        .conn()
        .unwrap()
        .query_row("SELECT state FROM edits WHERE id = ?1", [id], |r| r.get(0))
        .unwrap();
    assert_eq!(state, "refused");
    // An apply (an undo is one) is refused the same way, and writes nothing.
    let e = j.apply("undo", "undo", &plan.reversed(), None).unwrap_err();
    assert_eq!(e.kind, Kind::OutsideRoot, "{e}");
    assert!(e.message.contains("lspgate never writes"), "{e}");
    assert_eq!(ws.read(".git/config").as_deref(), Some("[core]\n"));
}

/// The state folder lspgate makes outside the workspace and the database are the user's alone.
#[test]
fn the_state_outside_the_workspace_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let ws = Ws::new();
    let state = ws.outside.join("state/root");
    let j = Journal::open(&state, &ws.root).unwrap();
    j.apply("edit", "a", &ws.plan(), None).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&state), 0o700);
    assert_eq!(mode(&ws.outside.join("state")), 0o700);
    assert_eq!(mode(&state.join(DB)), 0o600);
    assert_eq!(mode(&state.join("state.db-wal")), 0o600);
}

#[test]
fn paths_that_are_not_utf8_are_kept_exactly() {
    let ws = Ws::new();
    let name = OsStr::from_bytes(b"caf\xe9.txt");
    let path = ws.root.path().join(name);
    let plan = Plan {
        changes: vec![FileChange {
            path: path.clone(),
            before: None,
            after: Some(b"x".to_vec()),
        }],
    };
    let j = Journal::open(&ws.state(), &ws.root).unwrap();
    let id = j.apply("edit", "latin-1 name", &plan, None).unwrap();
    assert_eq!(j.get(id).unwrap().unwrap().plan.changes[0].path, path);
}
