//! Verified edits through a real MCP client: cross-file rename (files never opened) previewed,
//! applied and undone to a byte-identical tree; conflicts; edits reporting the errors they
//! introduce; what_if; clangd quick fixes and formatting; commands whose edits come back as
//! `workspace/applyEdit`; a journal that survives restarts; and a seeded soak with a concurrent
//! writer.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_file_rename_preview_apply_undo() {
    require("pyright-langserver");
    let ws = example("python");
    let start = snapshot(ws.path());
    let gate = Gate::start(ws.path(), &[], &[]).await;

    let args =
        json!({"file": "shop/pricing.py", "line": 4, "symbol": "compute", "new_name": "calculate"});
    let (preview, text) = gate.ok("rename", args.clone()).await;
    assert_eq!(preview["applied"], false);
    assert_eq!(preview["changed"], true);
    let files: Vec<&str> = preview["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        ["app.py", "shop/pricing.py", "shop/report.py"],
        "{text}"
    );
    assert!(
        preview["diff"]
            .as_str()
            .unwrap()
            .contains("+from shop.pricing import calculate")
    );
    assert_eq!(snapshot(ws.path()), start, "a preview wrote something");

    let mut apply = args.clone();
    apply["apply"] = json!(true);
    let (applied, text) = gate.ok("rename", apply).await;
    assert_eq!(applied["applied"], true, "{text}");
    let id = applied["edit_id"].as_i64().unwrap();
    assert!(read(&ws.path().join("shop/report.py")).contains("sum(calculate(p, 7)"));
    assert!(!read(&ws.path().join("app.py")).contains("compute"));
    // Renaming breaks nothing: no diagnostic introduced, none resolved.
    assert_eq!(applied["introduced"], json!([]), "{text}");
    assert_eq!(applied["resolved"], json!([]), "{text}");

    let (undone, text) = gate.ok("undo", json!({"edit_id": id})).await;
    assert_eq!(undone["applied"], true, "{text}");
    assert_eq!(
        snapshot(ws.path()),
        start,
        "undo did not restore the tree byte for byte"
    );
    let (code, msg) = gate.err("undo", json!({"edit_id": id})).await;
    assert_eq!(code, "invalid_params", "{msg}");

    // A rename that changes nothing says so.
    let (same, text) = gate.ok("rename", json!({"file": "shop/pricing.py", "line": 4, "symbol": "compute", "new_name": "compute", "apply": true})).await;
    assert_eq!(same["changed"], false, "{text}");
    assert!(same.get("edit_id").is_none());
    assert_eq!(snapshot(ws.path()), start);
    gate.stop().await;
}

/// A rename whose symbol findings name (pyright: `"Widget" is not assignable …`) introduces
/// and resolves nothing: the finding names the new name after, and is the same finding; so is
/// its undo.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_named_in_findings_introduces_nothing() {
    require("pyright-langserver");
    let ws = workspace(&[
        ("pyproject.toml", "[project]\nname = \"w\"\n"),
        ("lib.py", "class Widget:\n    pass\n"),
        (
            "app.py",
            "from lib import Widget\n\ncount: int = Widget()\nname: str = Widget()\n",
        ),
    ]);
    let gate = Gate::start(ws.path(), &[], &[]).await;
    let (d, text) = gate.ok("diagnostics", json!({"file": "app.py"})).await;
    let messages: String = diags(&d["files"])
        .iter()
        .map(|x| x["message"].as_str().unwrap().to_string() + "\n")
        .collect();
    assert!(messages.matches("Widget").count() >= 2, "{text}");
    let (applied, text) = gate
        .ok(
            "rename",
            json!({"file": "lib.py", "line": 1, "symbol": "Widget", "new_name": "Gadget", "apply": true}),
        )
        .await;
    assert_eq!(applied["applied"], true, "{text}");
    assert!(read(&ws.path().join("app.py")).contains("count: int = Gadget()"));
    assert_eq!(applied["introduced"], json!([]), "{text}");
    assert_eq!(applied["resolved"], json!([]), "{text}");
    let id = applied["edit_id"].as_i64().unwrap();
    let (undone, text) = gate.ok("undo", json!({"edit_id": id})).await;
    assert_eq!(undone["applied"], true, "{text}");
    assert_eq!(undone["introduced"], json!([]), "{text}");
    assert_eq!(undone["resolved"], json!([]), "{text}");
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conflicts_write_nothing() {
    require("pyright-langserver");
    let ws = example("python");
    let gate = Gate::start(ws.path(), &[], &[]).await;
    let args =
        json!({"file": "shop/pricing.py", "line": 4, "symbol": "compute", "new_name": "calc"});
    gate.ok("rename", args.clone()).await;
    // Someone changes a file the rename touches, between preview and apply.
    let report = ws.path().join("shop/report.py");
    let changed = read(&report) + "# touched\n";
    std::fs::write(&report, &changed).unwrap();
    let before = snapshot(ws.path());
    let mut apply = args.clone();
    apply["apply"] = json!(true);
    let r = gate.call("rename", apply).await;
    assert_eq!(r.is_error, Some(true), "{}", text_of(&r));
    let e = &r.structured_content.as_ref().unwrap()["error"];
    assert_eq!(e["code"], "revision_conflict", "{e}");
    assert_eq!(
        e["data"]["current_digest"],
        lspgate::text::digest(changed.as_bytes())
    );
    assert_eq!(
        snapshot(ws.path()),
        before,
        "a conflicting rename wrote something"
    );

    // expected_digest guards a plain edit.
    let (code, _) = gate
        .err("edit", json!({"file": "app.py", "edits": [{"old_text": "def receipt", "new_text": "def receipt2"}], "expected_digest": "00", "apply": true}))
        .await;
    assert_eq!(code, "revision_conflict");

    // An undo after a later change is refused, and writes nothing.
    let (done, _) = gate
        .ok("edit", json!({"file": "app.py", "edits": [{"old_text": "def receipt", "new_text": "def receipt2"}], "apply": true}))
        .await;
    let id = done["edit_id"].as_i64().unwrap();
    let app = ws.path().join("app.py");
    let later = read(&app).replace("receipt2", "receipt3");
    std::fs::write(&app, &later).unwrap();
    let (code, message) = gate.err("undo", json!({"edit_id": id})).await;
    assert_eq!(code, "revision_conflict");
    assert!(
        message.contains(
            "app.py changed since lspgate last read it (for an undo: since the edit wrote it)"
        ),
        "{message}"
    );
    assert_eq!(read(&app), later);
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_report_the_errors_they_introduce_and_what_if_writes_nothing() {
    require("pyright-langserver");
    let ws = example("python");
    let gate = Gate::start(ws.path(), &[], &[]).await;
    let edits =
        json!([{"old_text": "    return f\"{label} {total:.2f}\"", "new_text": "    return 42"}]);

    let start = snapshot(ws.path());
    let (w, text) = gate
        .ok(
            "what_if",
            json!({"file": "app.py", "edits": edits, "probe": {"line": 8, "symbol": "return"}}),
        )
        .await;
    let intro = diags(&w["introduced"]);
    assert!(
        intro
            .iter()
            .any(|d| d["line"] == 8 && d["code"] == "reportReturnType"),
        "{text}"
    );
    assert!(w["resolved"].as_array().unwrap().is_empty(), "{text}");
    assert!(w["hover_at_probe"].is_string());
    assert_eq!(snapshot(ws.path()), start, "what_if touched the disk");
    // The server is back on the disk's content: no trace of the overlay.
    let (d, _) = gate.ok("diagnostics", json!({"file": "app.py"})).await;
    assert!(!diags(&d["files"]).iter().any(|x| x["line"] == 8), "{d}");

    let (r, text) = gate
        .ok(
            "edit",
            json!({"file": "app.py", "edits": edits, "apply": true}),
        )
        .await;
    assert_eq!(r["applied"], true);
    let intro = diags(&r["introduced"]);
    assert!(
        intro
            .iter()
            .any(|d| d["file"] == "app.py" && d["line"] == 8 && d["code"] == "reportReturnType"),
        "{text}"
    );
    assert!(read(&ws.path().join("app.py")).contains("    return 42\n"));

    // Line edits, and an edit that changes nothing.
    let (r, _) = gate.ok("edit", json!({"file": "app.py", "edits": [{"start_line": 8, "end_line": 8, "new_text": "    return str(total)"}], "apply": true})).await;
    // The type error is resolved (and, with ruff installed, its unused-variable warning too).
    assert!(
        diags(&r["resolved"])
            .iter()
            .any(|d| d["code"] == "reportReturnType"),
        "{r}"
    );
    assert!(r["introduced"].as_array().unwrap().is_empty(), "{r}");
    let (r, _) = gate.ok("edit", json!({"file": "app.py", "edits": [{"old_text": "str(total)", "new_text": "str(total)"}], "apply": true})).await;
    assert_eq!(r["changed"], false);
    let (code, _) = gate
        .err(
            "edit",
            json!({"file": "app.py", "edits": [{"old_text": "cart", "new_text": "x"}]}),
        )
        .await;
    assert_eq!(code, "invalid_params");
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clangd_quick_fix_and_format() {
    require("clangd");
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("compile_flags.txt"), "-std=c11\n").unwrap();
    std::fs::write(
        ws.path().join("fix.c"),
        "int main(void) {\n  int x = 1\n  return x;\n}\n",
    )
    .unwrap();
    std::fs::write(
        ws.path().join("messy.c"),
        "int  main( void ){int y=2;return y;}\n",
    )
    .unwrap();
    let gate = Gate::start(ws.path(), &[], &[]).await;

    let (list, text) = gate
        .ok(
            "code_actions",
            json!({"file": "fix.c", "line": 2, "end_line": 3}),
        )
        .await;
    let first = &list["actions"][0];
    assert_eq!(first["index"], 1, "{text}");
    assert!(
        first["title"].as_str().unwrap().contains("insert ';'"),
        "{text}"
    );
    let (done, text) = gate
        .ok(
            "code_actions",
            json!({"file": "fix.c", "line": 2, "end_line": 3, "apply": 1}),
        )
        .await;
    let applied = &done["applied"];
    assert_eq!(applied["applied"], true, "{text}");
    assert_eq!(
        read(&ws.path().join("fix.c")),
        "int main(void) {\n  int x = 1;\n  return x;\n}\n"
    );
    assert!(
        diags(&applied["resolved"])
            .iter()
            .any(|d| d["message"].as_str().unwrap().contains("Expected ';'")),
        "{text}"
    );
    let (bad, _) = gate
        .err(
            "code_actions",
            json!({"file": "fix.c", "line": 2, "apply": "no such action"}),
        )
        .await;
    assert_eq!(bad, "invalid_params");

    let (preview, _) = gate.ok("format", json!({"file": "messy.c"})).await;
    assert_eq!(preview["applied"], false);
    assert_eq!(
        read(&ws.path().join("messy.c")),
        "int  main( void ){int y=2;return y;}\n"
    );
    let (done, text) = gate
        .ok("format", json!({"file": "messy.c", "apply": true}))
        .await;
    assert_eq!(done["applied"], true, "{text}");
    assert_eq!(
        read(&ws.path().join("messy.c")),
        "int main(void) {\n  int y = 2;\n  return y;\n}\n"
    );
    let (again, _) = gate
        .ok("format", json!({"file": "messy.c", "apply": true}))
        .await;
    assert_eq!(
        again["changed"], false,
        "formatting a formatted file changes nothing"
    );
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_whose_edit_comes_back_as_apply_edit() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "hello world\nsecond\n").unwrap();
    let log = ws.path().join("fixture.log");
    let gate = Gate::start(
        ws.path(),
        &[],
        &[FIXTURE, "--actions", "--log", log.to_str().unwrap()],
    )
    .await;
    let (done, text) = gate
        .ok(
            "code_actions",
            json!({"file": "a.txt", "line": 1, "apply": 1}),
        )
        .await;
    assert_eq!(done["applied"]["applied"], true, "{text}");
    assert_eq!(read(&ws.path().join("a.txt")), "HELLO WORLD\nsecond\n");
    assert!(read(&log).contains("applyEdit applied=true"));
    let id = done["applied"]["edit_id"].as_i64().unwrap();
    gate.ok("undo", json!({"edit_id": id})).await;
    assert_eq!(read(&ws.path().join("a.txt")), "hello world\nsecond\n");
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_journal_survives_a_restart_of_lspgate() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    let home = new_home();
    let gate = Gate::start_in(ws.path(), &[], &[FIXTURE], &[], &home).await;
    let (r, _) = gate.ok("edit", json!({"file": "a.txt", "edits": [{"old_text": "one", "new_text": "two"}], "apply": true})).await;
    let id = r["edit_id"].as_i64().unwrap();
    gate.stop().await;
    // The journal is lspgate's, in its data folder, not the workspace's.
    assert!(!ws.path().join(".lspgate").exists());
    let states: Vec<_> = std::fs::read_dir(home.join("state"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(states.len(), 1);
    assert!(states[0].path().join("state.db").is_file());
    let gate = Gate::start_in(ws.path(), &[], &[FIXTURE], &[], &home).await;
    gate.ok("undo", json!({"edit_id": id})).await;
    assert_eq!(read(&ws.path().join("a.txt")), "one\n");
    gate.stop().await;
}

/// A small deterministic generator (xorshift), so the soak is reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn complete(text: &str) -> bool {
    text.starts_with("BEGIN\n") && text.ends_with("END\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_edits_and_undos_against_a_concurrent_writer() {
    let ws = tempfile::tempdir().unwrap();
    let names = ["f0.txt", "f1.txt", "f2.txt"];
    for n in names {
        std::fs::write(ws.path().join(n), "BEGIN\nline a\nline b\nline c\nEND\n").unwrap();
    }
    let gate = Gate::start(ws.path(), &[], &[FIXTURE]).await;
    let stop = Arc::new(AtomicBool::new(false));
    // Held by the writer for each save, and by the test while it checks an undo: a handshake
    // (no sleep) that the writer is between saves and stays there.
    let turn = Arc::new(tokio::sync::Mutex::new(()));
    let torn = Arc::new(AtomicBool::new(false));
    // A writer that saves like an editor (write a temporary file, rename it into place), and a
    // reader that checks every file it sees is whole.
    let writer = {
        let (dir, stop, turn) = (ws.path().to_path_buf(), stop.clone(), turn.clone());
        std::thread::spawn(move || {
            let mut rng = Rng(0x5eed);
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                {
                    let _turn = turn.blocking_lock();
                    n += 1;
                    let f = dir.join(names[rng.below(3) as usize]);
                    let tmp = dir.join(format!(".writer-{n}"));
                    std::fs::write(&tmp, format!("BEGIN\nwriter {n}\nline b\nline c\nEND\n"))
                        .unwrap();
                    std::fs::rename(&tmp, &f).unwrap();
                }
                std::thread::sleep(Duration::from_millis(3 + rng.below(7)));
            }
        })
    };
    let reader = {
        let (dir, stop, torn) = (ws.path().to_path_buf(), stop.clone(), torn.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                for n in names {
                    if let Ok(t) = std::fs::read_to_string(dir.join(n))
                        && !complete(&t)
                    {
                        torn.store(true, Ordering::SeqCst);
                    }
                }
            }
        })
    };
    let mut rng = Rng(42);
    let (mut applied, mut refused, mut undone) = (0, 0, 0);
    let mut ids: Vec<(i64, String, usize)> = Vec::new();
    for i in 0..150 {
        let file = names[rng.below(3) as usize];
        if rng.below(4) == 0 && !ids.is_empty() {
            // Undo with the writer paused: either exact, or refused (the file moved on).
            let paused = turn.lock().await;
            let (id, f, n) = ids.remove(rng.below(ids.len() as u64) as usize);
            let entry_before = read(&ws.path().join(&f));
            let r = gate.call("undo", json!({"edit_id": id})).await;
            let after = read(&ws.path().join(&f));
            if r.is_error == Some(true) {
                let code = r.structured_content.as_ref().unwrap()["error"]["code"].clone();
                assert_eq!(code, "revision_conflict", "undo {id}: {}", text_of(&r));
                assert_eq!(after, entry_before, "a refused undo wrote something");
            } else {
                // Exact: the file held what the edit wrote, and now holds what it replaced,
                // every other line untouched.
                undone += 1;
                assert!(complete(&after));
                let (b, a): (Vec<&str>, Vec<&str>) =
                    (entry_before.lines().collect(), after.lines().collect());
                assert_eq!(
                    b[2],
                    format!("edit {n}"),
                    "undo {id} accepted a file the edit did not write"
                );
                assert_ne!(a[2], b[2]);
                assert_eq!(
                    (&a[..2], &a[3..]),
                    (&b[..2], &b[3..]),
                    "undo {id} changed other lines"
                );
            }
            drop(paused);
            continue;
        }
        let r = gate
            .call("edit", json!({"file": file, "edits": [{"start_line": 3, "end_line": 3, "new_text": format!("edit {i}")}], "apply": true}))
            .await;
        if r.is_error == Some(true) {
            let code = r.structured_content.as_ref().unwrap()["error"]["code"]
                .as_str()
                .unwrap()
                .to_string();
            assert!(code == "revision_conflict", "edit {i}: {}", text_of(&r));
            refused += 1;
        } else {
            let s = r.structured_content.unwrap();
            if let Some(id) = s["edit_id"].as_i64() {
                applied += 1;
                ids.push((id, file.to_string(), i));
            }
        }
    }
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    reader.join().unwrap();
    assert!(
        !torn.load(Ordering::SeqCst),
        "a reader saw a half-written file"
    );
    assert!(applied > 20, "applied {applied}, refused {refused}");
    eprintln!("soak: {applied} applied, {refused} refused, {undone} undone");
    // Quiet now: an edit and its undo are exact.
    let f = ws.path().join("f0.txt");
    let before = read(&f);
    let (r, _) = gate.ok("edit", json!({"file": "f0.txt", "edits": [{"start_line": 2, "end_line": 2, "new_text": "final"}], "apply": true})).await;
    assert_eq!(
        read(&f),
        before.replacen(before.lines().nth(1).unwrap(), "final", 1)
    );
    gate.ok("undo", json!({"edit_id": r["edit_id"]})).await;
    assert_eq!(read(&f), before);
    let leftovers: Vec<Value> = std::fs::read_dir(ws.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("lspgate-"))
        .map(|e| json!(e.file_name().to_string_lossy()))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_operations_are_applied_and_undone() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "x movefile y\n").unwrap();
    let start = snapshot(ws.path());
    let gate = Gate::start(ws.path(), &[], &[FIXTURE, "--actions"]).await;
    let args = json!({"file": "a.txt", "line": 1, "symbol": "movefile", "new_name": "moved", "apply": true});
    let (r, text) = gate.ok("rename", args).await;
    assert_eq!(r["applied"], true, "{text}");
    assert!(!ws.path().join("a.txt").exists());
    assert_eq!(read(&ws.path().join("moved.txt")), "x moved y\n");
    assert_eq!(read(&ws.path().join("moved.log")), "");
    let files: Vec<(String, bool, bool)> = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["created"] == true,
                f["deleted"] == true,
            )
        })
        .collect();
    assert!(files.contains(&("a.txt".into(), false, true)), "{files:?}");
    assert!(
        files.contains(&("moved.txt".into(), true, false)),
        "{files:?}"
    );
    gate.ok("undo", json!({"edit_id": r["edit_id"]})).await;
    assert_eq!(snapshot(ws.path()), start);
    gate.stop().await;
}
