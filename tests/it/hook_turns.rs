//! A harness session's turns through `lspgate hook`, against real pyright and the per-user
//! daemon: the session-start hook answers at once and warms the workspace; the turn-end gate
//! (`hook stop`) keeps a turn going, in each harness's own form, while an error the session's
//! edits introduced is still present, names it once, and lets a clean turn end in silence; a
//! file the session created is new; what a post-edit hook could not check within its budget
//! comes with the session's next answer, exactly once.

use crate::common;
use crate::hooks::{block_reason, context_of};
use common::*;
use serde_json::{Value, json};
use std::path::Path;

/// Runs `lspgate hook ARGS` in `root` with `event` on stdin: exit code, stdout, stderr.
fn hook(d: &Daemon, root: &Path, args: &[&str], event: &Value) -> (i32, String, String) {
    d.hook(root, args, &event.to_string(), &[])
}

/// A Claude Code event of `session` in `root`: `name` with `extra` fields.
fn claude(root: &Path, session: &str, name: &str, extra: Value) -> Value {
    let mut v = json!({
        "session_id": session,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": root,
        "permission_mode": "acceptEdits",
        "hook_event_name": name,
    });
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

/// Claude Code's Edit or Write of `file` (its tool events).
fn edit(root: &Path, session: &str, name: &str, tool: &str, file: &str) -> Value {
    claude(
        root,
        session,
        name,
        json!({"tool_name": tool, "tool_input": {"file_path": root.join(file)}}),
    )
}

/// The additional context of a Claude Code post-edit answer (exactly its documented shape).
fn context(out: &str) -> String {
    context_of(out, "PostToolUse")
}

/// Pre-edit, the write, post-edit: the post-edit answer.
fn write(d: &Daemon, root: &Path, session: &str, tool: &str, file: &str, text: &str) -> String {
    let (code, out, err) = hook(
        d,
        root,
        &["pre-edit"],
        &edit(root, session, "PreToolUse", tool, file),
    );
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    std::fs::write(root.join(file), text).unwrap();
    let (code, out, err) = hook(
        d,
        root,
        &["post-edit"],
        &edit(root, session, "PostToolUse", tool, file),
    );
    assert_eq!(code, 0, "{err}");
    out
}

fn python_project() -> tempfile::TempDir {
    workspace(&[
        ("pyproject.toml", "[project]\nname = \"h\"\n"),
        ("lib.py", "def total(x: int) -> int:\n    return x\n"),
        (
            "app.py",
            "from lib import total\n\nn: int = total(1)\nold: str = 1\n",
        ),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_turn_end_gate_keeps_a_turn_going_while_an_introduced_error_remains() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = python_project();
    let root = ws.path();
    let s = "turn-1";

    // The session starts: answered at once, with nothing on stdout.
    let started = std::time::Instant::now();
    let (code, out, err) = hook(
        &d,
        root,
        &["start"],
        &claude(root, s, "SessionStart", json!({"source": "startup"})),
    );
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());

    // A clean turn so far: the gate says nothing.
    let stop = |active: bool| claude(root, s, "Stop", json!({"stop_hook_active": active}));
    let (code, out, err) = hook(&d, root, &["stop"], &stop(false));
    assert_eq!((code, out.as_str()), (0, ""), "{err}");

    // lib.py now returns text (app.py:3 breaks), and a new file holds an error of its own.
    let out = write(
        &d,
        root,
        s,
        "Edit",
        "lib.py",
        "def total(x: int) -> str:\n    return str(x)\n",
    );
    assert!(context(&out).contains("app.py:3:10 error"), "{out}");
    let out = write(&d, root, s, "Write", "fresh.py", "count: int = \"many\"\n");
    let report = context(&out);
    // Created by the session: its error is introduced, not merely present.
    assert!(
        report.starts_with("lspgate: this edit introduced 1 error:\nfresh.py:1:14 error"),
        "{report}"
    );

    // The turn ends: blocked, naming both errors, not app.py's old one (line 4).
    let (code, out, err) = hook(&d, root, &["stop"], &stop(false));
    assert_eq!(code, 0, "{err}");
    let why = block_reason(&out, "block");
    assert!(why.contains("introduced 2 errors"), "{why}");
    assert!(why.contains("app.py:3:10 error"), "{why}");
    assert!(why.contains("fresh.py:1:14 error"), "{why}");
    assert!(!why.contains("app.py:4"), "{why}");

    // The harness goes on because of the gate and the agent fixed nothing: not blocked again
    // for the same errors (no endless loop).
    let (code, out, err) = hook(&d, root, &["stop"], &stop(true));
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(err.contains("named before"), "{err}");

    // The agent fixes lib.py; fresh.py still holds its error, named already: a gate that is
    // not kept going names it again (a new turn), one kept going does not.
    write(
        &d,
        root,
        s,
        "Edit",
        "lib.py",
        "def total(x: int) -> int:\n    return x\n",
    );
    let (_, out, _) = hook(&d, root, &["stop"], &stop(false));
    let why = block_reason(&out, "block");
    assert!(why.contains("introduced 1 error"), "{why}");
    assert!(
        why.contains("fresh.py:1:14") && !why.contains("app.py"),
        "{why}"
    );
    // Everything fixed: the turn ends in silence.
    write(&d, root, s, "Write", "fresh.py", "count: int = 3\n");
    let (code, out, err) = hook(&d, root, &["stop"], &stop(false));
    assert_eq!((code, out.as_str()), (0, ""), "{err}");

    // Another session's gate knows nothing of this one's edits.
    let (code, out, err) = hook(
        &d,
        root,
        &["stop"],
        &claude(root, "other", "Stop", json!({"stop_hook_active": false})),
    );
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_harness_is_kept_going_in_its_own_form() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = python_project();
    let root = ws.path();
    let broken = "def total(x: int) -> str:\n    return str(x)\n";
    let fixed = "def total(x: int) -> int:\n    return x\n";
    let cases: [(&str, Value, Value, Value, &str); 3] = [
        (
            "codex",
            json!({"session_id": "c1", "turn_id": "t1", "cwd": root, "hook_event_name": "PreToolUse",
                   "tool_name": "apply_patch", "tool_input": {"command": format!(
                       "*** Begin Patch\n*** Update File: {}\n@@\n-x\n+y\n*** End Patch", root.join("lib.py").display())}}),
            json!({"session_id": "c1", "turn_id": "t1", "cwd": root, "hook_event_name": "PostToolUse",
                   "tool_name": "apply_patch", "tool_input": {"command": format!(
                       "*** Begin Patch\n*** Update File: {}\n@@\n-x\n+y\n*** End Patch", root.join("lib.py").display())}}),
            json!({"session_id": "c1", "turn_id": "t1", "cwd": root, "hook_event_name": "Stop",
                   "stop_hook_active": false, "last_assistant_message": "done"}),
            "block",
        ),
        (
            "gemini",
            json!({"session_id": "g1", "cwd": root, "hook_event_name": "BeforeTool",
                   "tool_name": "replace", "tool_input": {"file_path": root.join("lib.py")}}),
            json!({"session_id": "g1", "cwd": root, "hook_event_name": "AfterTool",
                   "tool_name": "replace", "tool_input": {"file_path": root.join("lib.py")}}),
            json!({"session_id": "g1", "cwd": root, "hook_event_name": "AfterAgent",
                   "prompt": "p", "prompt_response": "r", "stop_hook_active": false}),
            "deny",
        ),
        (
            "cursor",
            json!({"conversation_id": "k1", "generation_id": "x", "hook_event_name": "preToolUse",
                   "workspace_roots": [root], "tool_name": "Write",
                   "tool_input": {"file_path": root.join("lib.py")}}),
            json!({"conversation_id": "k1", "generation_id": "x", "hook_event_name": "postToolUse",
                   "workspace_roots": [root], "tool_name": "Write",
                   "tool_input": {"file_path": root.join("lib.py")}}),
            json!({"conversation_id": "k1", "generation_id": "x", "hook_event_name": "stop",
                   "workspace_roots": [root], "status": "completed", "loop_count": 0}),
            "",
        ),
    ];
    for (harness, pre, post, stop, decision) in cases {
        let (code, _, err) = hook(&d, root, &["pre-edit"], &pre);
        assert_eq!(code, 0, "{harness}: {err}");
        std::fs::write(root.join("lib.py"), broken).unwrap();
        let (code, _, err) = hook(&d, root, &["post-edit"], &post);
        assert_eq!(code, 0, "{harness}: {err}");
        let (code, out, err) = hook(&d, root, &["stop"], &stop);
        assert_eq!(code, 0, "{harness}: {err}");
        let why = if decision.is_empty() {
            let v: Value =
                serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
            assert_eq!(v.as_object().unwrap().len(), 1, "{out}");
            v["followup_message"].as_str().unwrap().to_string()
        } else {
            block_reason(&out, decision)
        };
        assert!(why.contains("app.py:3:10 error"), "{harness}: {why}");
        // Put back for the next harness: its gate then finds the turn clean.
        let (_, _, _) = hook(&d, root, &["pre-edit"], &pre);
        std::fs::write(root.join("lib.py"), fixed).unwrap();
        let (_, _, _) = hook(&d, root, &["post-edit"], &post);
        let (code, out, err) = hook(&d, root, &["stop"], &stop);
        assert_eq!((code, out.as_str()), (0, ""), "{harness}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_budget_cut_leaves_comes_with_the_next_answer_once() {
    require("pyright-langserver");
    // Many importers, each broken by one change of lib.py, and a budget that leaves the daemon
    // no time at all (0.3 s, of which the hook keeps 0.3 s for itself): the cut is certain on
    // any machine (a quiet one answered for all 300 within 1.5 s).
    const IMPORTERS: usize = 300;
    let mut files: Vec<(String, String)> = vec![
        ("pyproject.toml".into(), "[project]\nname = \"h\"\n".into()),
        (
            "lib.py".into(),
            "def total(x: int) -> int:\n    return x\n".into(),
        ),
        ("other.py".into(), "y = 1\n".into()),
    ];
    for i in 0..IMPORTERS {
        files.push((
            format!("use{i:03}.py"),
            format!("from lib import total\n\nn{i}: int = total({i})\n"),
        ));
    }
    let ws = workspace(&files);
    let root = ws.path();
    let d = Daemon::new();
    let s = "cut-1";
    // Baselines for every importer (what a session's start warms), then the breaking edit
    // with a budget that cannot cover them all.
    let (code, out, err) = d.cli(root, &["check", "--json"]);
    assert!(code == 0 || code == 1, "{out}{err}");
    let (code, out, err) = hook(
        &d,
        root,
        &["pre-edit"],
        &edit(root, s, "PreToolUse", "Edit", "lib.py"),
    );
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    std::fs::write(
        root.join("lib.py"),
        "def total(x: int) -> str:\n    return str(x)\n",
    )
    .unwrap();
    let (code, out, err) = hook(
        &d,
        root,
        &["post-edit", "--budget", "0.3"],
        &edit(root, s, "PostToolUse", "Edit", "lib.py"),
    );
    assert_eq!(code, 0, "{err}");
    let first = context(&out);
    assert!(first.contains("not checked yet within"), "{first}");
    assert!(first.contains("checking goes on"), "{first}");
    let told_first = count_after(&first, "lspgate: this edit introduced ");

    // The background check goes on; the session's next answers (unrelated edits) tell what it
    // found since the edit of lib.py, each finding once.
    let mut told_later = 0;
    let mut last = String::new();
    for _ in 0..90 {
        std::thread::sleep(std::time::Duration::from_secs(2));
        let out = write(&d, root, s, "Edit", "other.py", "y = 2\n");
        if out.trim().is_empty() {
            continue;
        }
        last = context(&out);
        told_later += count_after(&last, "lspgate: since your edit of lib.py, ");
        if told_first + told_later >= IMPORTERS && !last.contains("still being checked") {
            break;
        }
    }
    assert_eq!(told_first + told_later, IMPORTERS, "{first}\n…\n{last}");
    assert!(told_later > 0, "{first}");
    // Told once: the next answer says nothing more of it.
    let again = write(&d, root, s, "Edit", "other.py", "y = 3\n");
    assert!(!again.contains("since your edit"), "{again}");
}

/// The count of errors a report's line starting with `prefix` gives (`… 3 errors:`), or 0.
fn count_after(report: &str, prefix: &str) -> usize {
    report
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// A body edit that changes only what is inferred of a function (its header stands): the
/// post-edit answers after the written file, says the function's importers are being checked
/// behind it, and names none of them; what they show comes with the next answer, and the
/// turn-end gate holds the turn while it remains. A changed header is waited for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inferred_only_change_is_checked_behind_the_answer() {
    require("pyright-langserver");
    let ws = workspace(&[
        ("pyproject.toml", "[project]\nname = \"h\"\n"),
        ("lib.py", "def total(x):\n    return x + 1\n"),
        ("app.py", "from lib import total\n\nn: int = total(1)\n"),
        ("other.py", "y = 1\n"),
    ]);
    let root = ws.path();
    let d = Daemon::new();
    let s = "behind-1";
    let (code, out, err) = d.cli(root, &["check", "--json"]);
    assert!(code == 0 || code == 1, "{out}{err}");

    // The body now returns text: what is inferred of `total` changes, its header does not.
    let out = write(
        &d,
        root,
        s,
        "Edit",
        "lib.py",
        "def total(x):\n    return str(x)\n",
    );
    let first = context(&out);
    assert!(
        first.contains("changed what is inferred of total, not its declaration"),
        "{first}"
    );
    assert!(!first.contains("app.py"), "{first}");

    // The next answer tells app.py's error, once it is checked.
    let mut later = String::new();
    for _ in 0..60 {
        std::thread::sleep(std::time::Duration::from_millis(500));
        let out = write(&d, root, s, "Edit", "other.py", "y = 2\n");
        later = context(&out);
        if later.contains("app.py:3:10 error") {
            break;
        }
    }
    assert!(
        later.contains("since your edit of lib.py") && later.contains("app.py:3:10 error"),
        "{later}"
    );
    // The gate holds the turn while it remains.
    let stop = claude(root, s, "Stop", json!({"stop_hook_active": false}));
    let (code, out, err) = hook(&d, root, &["stop"], &stop);
    assert_eq!(code, 0, "{err}");
    assert!(
        block_reason(&out, "block").contains("app.py:3:10 error"),
        "{out}"
    );

    // A header change (a parameter added) is waited for: its importer's error is in the answer.
    let out = write(
        &d,
        root,
        s,
        "Edit",
        "lib.py",
        "def total(x, y):\n    return x + 1\n",
    );
    let said = context(&out);
    assert!(said.contains("app.py:3:10 error"), "{said}");
    assert!(!said.contains("what is inferred"), "{said}");
}
