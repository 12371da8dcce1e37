//! Safe by default, through a real MCP client: paths from a language server (the fixture's
//! hostile renames: creates, edits, deletes and moves aimed through a symlinked folder, at `../`,
//! at absolute paths and at `file://` URIs outside the root) are refused, and nothing is written
//! outside, checked byte for byte; a `state.db` committed to a cloned repository (pending entries
//! aimed at `.git/config` and `.git/hooks`, and outside) is never opened, and one edited behind
//! lspgate's back is never replayed; a symlinked state folder named with `--state` is refused;
//! and an lspgate killed between an edit's journaled intent and its completion leaves, at its
//! next start, every file as it was before that edit, with `undo` working for the edits before
//! it.

use crate::common;
use common::*;
use serde_json::json;
use std::path::{Path, PathBuf};

/// Every entry under `dir` (hidden ones, folders and symlinks included) with what it holds.
fn tree(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        // lspgate's own state (the event log records the servers it starts) is not a write
        // anyone asked for; that nothing else is written is what counts here.
        if e.file_name() == ".lspgate" {
            continue;
        }
        let t = e.file_type().unwrap();
        if t.is_symlink() {
            out.push((
                p.clone(),
                format!("-> {}", std::fs::read_link(&p).unwrap().display()),
            ));
        } else if t.is_dir() {
            out.push((p.clone(), "<dir>".into()));
            out.extend(tree(&p));
        } else {
            let bytes = std::fs::read(&p).unwrap();
            out.push((p.clone(), String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    out.sort();
    out
}

/// A workspace `ws` (with `a.txt` naming the fixture's words, and `out`, a symlink to
/// `outside`) beside a folder `outside` holding `victim.txt`.
struct Setup {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(ws.join("inner")).unwrap();
    std::fs::create_dir_all(outside.join("folder")).unwrap();
    std::fs::write(ws.join("a.txt"), "escape here\n").unwrap();
    std::fs::write(outside.join("victim.txt"), "escape there\n").unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("out")).unwrap();
    Setup {
        ws: ws.canonicalize().unwrap(),
        outside: outside.canonicalize().unwrap(),
        _dir: dir,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_paths_that_lead_out_are_refused_and_nothing_is_written_outside() {
    let s = setup();
    let outside_before = tree(&s.outside);
    let ws_before = tree(&s.ws);
    let gate = Gate::start(&s.ws, &[], &[FIXTURE, "--actions"]).await;
    let abs = |name: &str| s.outside.join(name).display().to_string();
    let uri = |name: &str| {
        url::Url::from_file_path(s.outside.join(name))
            .unwrap()
            .to_string()
    };
    let cases = [
        // Creates, missing parent folders included (they must not be made through the link).
        "create:out/sub/deeper/new.txt".to_string(),
        "create:out/new.txt".to_string(),
        "create:../outside/new.txt".to_string(),
        "create:inner/../../outside/new.txt".to_string(),
        format!("create:{}", abs("sub/new.txt")),
        format!("create:{}", uri("new file.txt")),
        // Edits of a file outside.
        "edit:out/victim.txt".to_string(),
        "edit:../outside/victim.txt".to_string(),
        format!("edit:{}", abs("victim.txt")),
        format!("changes:{}", uri("victim.txt")),
        "changes:out/victim.txt".to_string(),
        // Deletes.
        "delete:out/victim.txt".to_string(),
        "delete:../outside/victim.txt".to_string(),
        format!("delete:{}", abs("victim.txt")),
        format!("delete:{}", uri("victim.txt")),
        "delete:out".to_string(),
        // Moving a workspace file out.
        "rename:out/moved.txt".to_string(),
        "rename:out/sub/moved.txt".to_string(),
        "rename:../outside/moved.txt".to_string(),
        format!("rename:{}", abs("moved.txt")),
        format!("rename:{}", uri("moved.txt")),
    ];
    for target in &cases {
        for apply in [false, true] {
            let args = json!({"file": "a.txt", "line": 1, "symbol": "escape",
                "new_name": target, "apply": apply});
            let r = gate.call("rename", args).await;
            let text = text_of(&r);
            assert_eq!(
                r.is_error,
                Some(true),
                "{target} (apply {apply}) was accepted: {text}"
            );
            let code = &r.structured_content.as_ref().unwrap()["error"]["code"];
            assert_eq!(code, "outside_root", "{target} (apply {apply}): {text}");
            assert_eq!(
                tree(&s.outside),
                outside_before,
                "{target} (apply {apply}) wrote outside the workspace"
            );
            assert_eq!(
                tree(&s.ws),
                ws_before,
                "{target} (apply {apply}) wrote in the workspace"
            );
        }
    }
    // The same operations inside the workspace are applied: the refusals above are about where
    // they lead, not about what they are.
    let (r, text) = gate
        .ok(
            "rename",
            json!({"file": "a.txt", "line": 1, "symbol": "escape",
            "new_name": "create:inner/made/new.txt", "apply": true}),
        )
        .await;
    assert_eq!(r["applied"], true, "{text}");
    assert_eq!(
        std::fs::read_to_string(s.ws.join("inner/made/new.txt")).unwrap(),
        "written by the fixture\n"
    );
    assert_eq!(tree(&s.outside), outside_before);
    gate.stop().await;
}

/// The workspace's journal in lspgate's data folder `home` (the one root's state there),
/// opened behind lspgate's back.
fn db(home: &Path) -> rusqlite::Connection {
    let states: Vec<PathBuf> = std::fs::read_dir(home.join("state"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("state.db"))
        .collect();
    assert_eq!(states.len(), 1, "{states:?}");
    rusqlite::Connection::open(&states[0]).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_refuses_journal_entries_that_point_outside() {
    let s = setup();
    let home = new_home();
    let gate = Gate::start_in(&s.ws, &[], &[FIXTURE], &[], &home).await;
    let (r, _) = gate
        .ok("edit", json!({"file": "a.txt", "edits": [{"old_text": "here", "new_text": "there"}], "apply": true}))
        .await;
    let id = r["edit_id"].as_i64().unwrap();
    // victim.txt holds what the edit wrote, so an undo aimed at it would pass the content check
    // and write the edit's `before` there.
    let outside_before = tree(&s.outside);
    let original: String = db(&home)
        .query_row("SELECT path FROM files WHERE edit_id = ?1", [id], |r| {
            r.get(0)
        })
        .unwrap();
    for crafted in [
        s.outside.join("victim.txt").display().to_string(),
        format!("{}/../outside/victim.txt", s.ws.display()),
        "../outside/victim.txt".to_string(),
        format!("{}/out/victim.txt", s.ws.display()),
    ] {
        db(&home)
            .execute(
                "UPDATE files SET path = ?1 WHERE edit_id = ?2",
                rusqlite::params![crafted, id],
            )
            .unwrap();
        let (code, msg) = gate.err("undo", json!({"edit_id": id})).await;
        assert_eq!(code, "outside_root", "{crafted}: {msg}");
        assert_eq!(
            tree(&s.outside),
            outside_before,
            "{crafted}: undo wrote outside"
        );
    }
    // Put back, the entry undoes as it should: the refusals were about the paths.
    db(&home)
        .execute(
            "UPDATE files SET path = ?1 WHERE edit_id = ?2",
            rusqlite::params![original, id],
        )
        .unwrap();
    gate.ok("undo", json!({"edit_id": id})).await;
    assert_eq!(
        std::fs::read_to_string(s.ws.join("a.txt")).unwrap(),
        "escape here\n"
    );
    gate.stop().await;
}

/// Every entry under `dir`, `.git` and `.lspgate` included.
fn whole_tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if e.file_type().unwrap().is_dir() {
            out.push((p.clone(), Vec::new()));
            out.extend(whole_tree(&p));
        } else {
            out.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
    out.sort();
    out
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_db_committed_to_a_repository_is_never_opened() {
    let s = setup();
    // A repository that commits `.lspgate/state.db`: interrupted ("pending") edits whose
    // "before" is a `.git/config` that runs a command and a `post-checkout` hook, and an
    // applied one aimed outside; recovery at start would write them, undo would too.
    let repo = s.ws.parent().unwrap().join("repo");
    std::fs::create_dir_all(repo.join(".lspgate")).unwrap();
    std::fs::write(repo.join("a.txt"), "escape here\n").unwrap();
    git(&repo, &["init", "-q"]);
    let clone = s.ws.parent().unwrap().join("clone");
    let config = |root: &Path| root.join(".git/config").display().to_string();
    let hook = |root: &Path| root.join(".git/hooks/post-checkout").display().to_string();
    let victim = s.outside.join("victim.txt").display().to_string();
    let evil_config = b"[core]\n\tfsmonitor = \"touch /tmp/pwned #\"\n".to_vec();
    let digest = lspgate::text::digest;
    let conn = rusqlite::Connection::open(repo.join(".lspgate/state.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE edits (id INTEGER PRIMARY KEY AUTOINCREMENT, time TEXT NOT NULL DEFAULT '',
             tool TEXT NOT NULL, summary TEXT NOT NULL, undone_by INTEGER,
             state TEXT NOT NULL DEFAULT 'applied', seal TEXT);
         CREATE TABLE files (edit_id INTEGER NOT NULL, seq INTEGER NOT NULL, path TEXT NOT NULL,
             before BLOB, after BLOB, before_digest TEXT, after_digest TEXT,
             PRIMARY KEY (edit_id, seq));
         INSERT INTO edits (tool, summary, state, seal) VALUES ('edit', 'config', 'pending', 'x');
         INSERT INTO edits (tool, summary, state) VALUES ('edit', 'hook', 'pending');
         INSERT INTO edits (tool, summary, state) VALUES ('edit', 'outside', 'applied');",
    )
    .unwrap();
    drop(conn);
    git(&repo, &["add", "-f", "."]);
    git(&repo, &["commit", "-qm", "start"]);
    git(
        s.ws.parent().unwrap(),
        &["clone", "-q", &repo.display().to_string(), "clone"],
    );
    // Aimed at the clone's own paths, as a repository author who knows where it is cloned
    // would (the config's "after" is what git wrote there, so a rollback would match it).
    let conn = rusqlite::Connection::open(clone.join(".lspgate/state.db")).unwrap();
    let cloned_config = std::fs::read(config(&clone)).unwrap();
    type Row = (i64, String, Option<Vec<u8>>, Option<Vec<u8>>);
    let rows: [Row; 3] = [
        (1, config(&clone), Some(evil_config), Some(cloned_config)),
        (
            2,
            hook(&clone),
            Some(b"#!/bin/sh\ntouch /tmp/pwned\n".to_vec()),
            None,
        ),
        (
            3,
            victim,
            Some(b"pwned\n".to_vec()),
            Some(b"escape there\n".to_vec()),
        ),
    ];
    for (id, path, before, after) in rows {
        conn.execute(
            "INSERT INTO files VALUES (?1, 0, ?2, ?3, ?4, ?5, ?6)",
            rusqlite::params![
                id,
                path,
                before,
                after,
                before.as_deref().map(digest),
                after.as_deref().map(digest)
            ],
        )
        .unwrap();
    }
    drop(conn);
    let clone_before = whole_tree(&clone);
    let outside_before = tree(&s.outside);

    // Opening a session (and so the journal, and recovery) writes nothing anywhere.
    let home = new_home();
    let gate = Gate::start_in(&clone, &[], &[FIXTURE], &[], &home).await;
    gate.ok("servers", json!({})).await;
    assert_eq!(whole_tree(&clone), clone_before, "the clone was written");
    assert_eq!(tree(&s.outside), outside_before, "outside was written");
    // Its entries are not lspgate's: there is no edit 1 to undo.
    for id in [1, 2, 3] {
        let (code, msg) = gate.err("undo", json!({"edit_id": id})).await;
        assert_eq!(code, "invalid_params", "{msg}");
        assert!(msg.contains("no edit"), "{msg}");
    }
    // lspgate's own journal, in its data folder, works as ever.
    let (r, _) = gate
        .ok("edit", json!({"file": "a.txt", "edits": [{"old_text": "here", "new_text": "there"}], "apply": true}))
        .await;
    assert_eq!(r["edit_id"], 1);
    gate.ok("undo", json!({"edit_id": 1})).await;
    gate.stop().await;
    assert_eq!(whole_tree(&clone), clone_before, "the clone was written");
    assert_eq!(tree(&s.outside), outside_before, "outside was written");

    // Named with --state, the committed database is opened, but its unsealed entries are
    // still never replayed, and nothing lands in `.git` whatever an entry says.
    let state = clone.join(".lspgate").display().to_string();
    let gate = Gate::start_in(&clone, &["--state", &state], &[FIXTURE], &[], &home).await;
    for id in [1, 2, 3] {
        let (code, msg) = gate.err("undo", json!({"edit_id": id})).await;
        assert!(
            code == "invalid_params" || code == "outside_root",
            "{code}: {msg}"
        );
    }
    gate.stop().await;
    assert_eq!(
        std::fs::read(config(&clone)).unwrap(),
        clone_before
            .iter()
            .find(|(p, _)| p.ends_with(".git/config"))
            .unwrap()
            .1
    );
    assert!(!Path::new(&hook(&clone)).exists());
    assert_eq!(tree(&s.outside), outside_before, "outside was written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlinked_state_folder_leading_out_is_refused() {
    let s = setup();
    std::os::unix::fs::symlink(s.outside.join("folder"), s.ws.join(".lspgate")).unwrap();
    let outside_before = tree(&s.outside);
    let state = s.ws.join(".lspgate").display().to_string();
    let gate = Gate::start(&s.ws, &["--state", &state], &[FIXTURE]).await;
    let (code, msg) = gate
        .err("edit", json!({"file": "a.txt", "edits": [{"old_text": "here", "new_text": "there"}], "apply": true}))
        .await;
    assert_eq!(code, "outside_root", "{msg}");
    assert!(msg.contains(".lspgate"), "{msg}");
    assert_eq!(
        tree(&s.outside),
        outside_before,
        "the journal was created outside"
    );
    assert_eq!(
        std::fs::read_to_string(s.ws.join("a.txt")).unwrap(),
        "escape here\n"
    );
    // A preview needs no journal.
    gate.ok(
        "edit",
        json!({"file": "a.txt", "edits": [{"old_text": "here", "new_text": "there"}]}),
    )
    .await;
    gate.stop().await;
    // By default the state is in lspgate's data folder: the link is never followed.
    let gate = Gate::start(&s.ws, &[], &[FIXTURE]).await;
    gate.ok("edit", json!({"file": "a.txt", "edits": [{"old_text": "here", "new_text": "there"}], "apply": true}))
        .await;
    assert_eq!(tree(&s.outside), outside_before);
    gate.stop().await;
}

/// Temporary files lspgate may have left in `dir` (its `.lspgate` state folder aside).
fn temporaries(dir: &Path) -> Vec<PathBuf> {
    tree(dir)
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .contains(".lspgate-")
        })
        .collect()
}

#[cfg(debug_assertions)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_between_intent_and_completion_is_rolled_back_at_the_next_start() {
    use rmcp::model::CallToolRequestParams;
    let ws = tempfile::tempdir().unwrap();
    let ws = ws.path();
    std::fs::write(ws.join("a.txt"), "x movefile y\n").unwrap();
    std::fs::write(ws.join("b.txt"), "b0\n").unwrap();
    // lspgate aborts right after the second file of an apply is replaced.
    let home = new_home();
    let gate = Gate::start_in(
        ws,
        &[],
        &[FIXTURE, "--actions"],
        &[("LSPGATE_TEST_ABORT_AFTER_WRITES", "2")],
        &home,
    )
    .await;
    let (r, _) = gate
        .ok("edit", json!({"file": "b.txt", "edits": [{"old_text": "b0", "new_text": "b1"}], "apply": true}))
        .await;
    let first = r["edit_id"].as_i64().unwrap();
    let after_first = snapshot(ws);
    // The rename moves a.txt to moved.txt and creates moved.log: three files, in path order
    // a.txt (deleted), moved.log (created), moved.txt (created).
    let args = json!({"file": "a.txt", "line": 1, "symbol": "movefile", "new_name": "moved", "apply": true});
    let serde_json::Value::Object(map) = args else {
        unreachable!()
    };
    let call = gate
        .client
        .call_tool(CallToolRequestParams::new("rename").with_arguments(map));
    let crashed = tokio::time::timeout(std::time::Duration::from_secs(60), call)
        .await
        .expect("no answer and no crash within 60 s");
    assert!(
        crashed.is_err(),
        "lspgate answered instead of aborting: {crashed:?}"
    );
    // Half applied: the first two files replaced, the third not.
    assert!(!ws.join("a.txt").exists());
    assert!(ws.join("moved.log").exists());
    assert!(!ws.join("moved.txt").exists());
    drop(gate);

    let gate = Gate::start_in(ws, &[], &[FIXTURE, "--actions"], &[], &home).await;
    // Rolled back at start, before any call: every file as it was before the rename.
    assert_eq!(
        snapshot(ws),
        after_first,
        "the next start left the rename half-applied"
    );
    assert!(temporaries(ws).is_empty(), "{:?}", temporaries(ws));
    let (code, msg) = gate.err("undo", json!({"edit_id": first + 1})).await;
    assert_eq!(code, "invalid_params", "{msg}");
    assert!(msg.contains("rolled back"), "{msg}");
    // The edit before it undoes exactly.
    gate.ok("undo", json!({"edit_id": first})).await;
    assert_eq!(std::fs::read_to_string(ws.join("b.txt")).unwrap(), "b0\n");
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "x movefile y\n"
    );
    // And the rename, done again, applies whole.
    let (r, text) = gate
        .ok("rename", json!({"file": "a.txt", "line": 1, "symbol": "movefile", "new_name": "moved", "apply": true}))
        .await;
    assert_eq!(r["applied"], true, "{text}");
    assert_eq!(
        std::fs::read_to_string(ws.join("moved.txt")).unwrap(),
        "x moved y\n"
    );
    gate.stop().await;
}
