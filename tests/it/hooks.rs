//! `lspgate hook` driven with hook events shaped as each harness documents them (`tests/hooks/`:
//! Claude Code Edit, Write, MultiEdit and Bash; Codex `apply_patch` adding, updating and
//! deleting; Gemini CLI `replace`; Cursor `afterFileEdit`), through the per-user daemon,
//! against real pyright and typescript-language-server: what a write breaks in an importer is
//! reported, what was broken before is not, nothing is said when nothing broke, each answer
//! has the harness's documented shape, and no daemon or no server means silence and exit 0.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;

/// Runs `lspgate hook ARGS` in `root` with `event` (a `tests/hooks/` file, `$ROOT` and
/// `$EVENT` filled in) on stdin: exit code, stdout, stderr.
fn hook(d: &Daemon, root: &Path, args: &[&str], event: &str, name: &str) -> (i32, String, String) {
    let text = std::fs::read_to_string(repo().join("tests/hooks").join(event))
        .unwrap()
        .replace("$ROOT", root.to_str().unwrap())
        .replace("$EVENT", name);
    hook_with(d, root, args, &text, &[])
}

fn hook_with(
    d: &Daemon,
    root: &Path,
    args: &[&str],
    stdin: &str,
    env: &[(&str, &str)],
) -> (i32, String, String) {
    d.hook(root, args, stdin, env)
}

/// The report in a Claude Code, Codex or Gemini answer, checked to be exactly the documented
/// shape (Codex refuses unknown keys): `{"hookSpecificOutput": {"hookEventName": EVENT,
/// "additionalContext": TEXT}}`.
pub(crate) fn context_of(out: &str, event: &str) -> String {
    let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["hookSpecificOutput"], "{out}");
    let inner = v["hookSpecificOutput"].as_object().unwrap();
    let mut keys: Vec<&String> = inner.keys().collect();
    keys.sort();
    assert_eq!(keys, ["additionalContext", "hookEventName"], "{out}");
    assert_eq!(inner["hookEventName"], event, "{out}");
    inner["additionalContext"].as_str().unwrap().to_string()
}

/// The reason of a block answer (`decision` as the harness spells it), exactly those keys.
pub(crate) fn block_reason(out: &str, decision: &str) -> String {
    let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    let mut keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["decision", "reason"], "{out}");
    assert_eq!(v["decision"], decision, "{out}");
    v["reason"].as_str().unwrap().to_string()
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

/// What lib.py says once it returns text: app.py's `n: int = total(1)` breaks.
const LIB_TEXT: &str = "def total(x: int) -> str:\n    return str(x)\n";
/// A body-only change: nothing breaks.
const LIB_BODY: &str = "def total(x: int) -> int:\n    return x + 0\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_edits_report_what_broke_in_an_importer_and_only_that() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = python_project();
    let root = ws.path();
    let edit = "claude-code-edit.json";

    // Before the edit: recorded, nothing said.
    let (code, out, err) = hook(&d, root, &["pre-edit"], edit, "PreToolUse");
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    std::fs::write(root.join("lib.py"), LIB_TEXT).unwrap();
    let (code, out, err) = hook(&d, root, &["post-edit"], edit, "PostToolUse");
    assert_eq!(code, 0, "{err}");
    let report = context_of(&out, "PostToolUse");
    // Exactly the new finding, in the importer; app.py's old error (line 4) is not reported.
    assert!(
        report.starts_with("lspgate: this edit introduced 1 error:\n"),
        "{report}"
    );
    let lines: Vec<&str> = report.lines().skip(1).collect();
    assert_eq!(lines.len(), 1, "{report}");
    assert!(lines[0].starts_with("app.py:3:10 error "), "{report}");
    assert!(!report.contains("app.py:4"), "{report}");

    // A write that breaks nothing more (a Write back to a body-only change fixes it): silence.
    std::fs::write(root.join("lib.py"), LIB_BODY).unwrap();
    let (code, out, err) = hook(
        &d,
        root,
        &["post-edit"],
        "claude-code-write.json",
        "PostToolUse",
    );
    assert_eq!((code, out.as_str()), (0, ""), "{err}");

    // A MultiEdit that breaks the importer again, with --block-on error: the block answer.
    let multi = "claude-code-multiedit.json";
    let (code, out, _) = hook(&d, root, &["pre-edit"], multi, "PreToolUse");
    assert_eq!((code, out.as_str()), (0, ""));
    std::fs::write(root.join("lib.py"), LIB_TEXT).unwrap();
    let (code, out, err) = hook(
        &d,
        root,
        &["post-edit", "--block-on", "error"],
        multi,
        "PostToolUse",
    );
    assert_eq!(code, 0, "{err}");
    let reason = block_reason(&out, "block");
    assert!(reason.contains("app.py:3:10 error"), "{reason}");

    // A shell command's writes: the files seen changing since the session's previous hook.
    let bash = "claude-code-bash.json";
    let (_, out, _) = hook(&d, root, &["pre-edit"], bash, "PreToolUse");
    assert_eq!(out, "");
    std::fs::write(
        root.join("lib.py"),
        "def total(x: int) -> bytes:\n    return b''\n",
    )
    .unwrap();
    let (code, out, err) = hook(&d, root, &["post-edit"], bash, "PostToolUse");
    assert_eq!(code, 0, "{err}");
    let report = context_of(&out, "PostToolUse");
    // `bytes` into `int`: new; the `str` error it replaces is gone.
    assert!(
        report.contains("app.py:3:10 error") && report.contains("bytes"),
        "{report}"
    );

    // The event log holds each verdict.
    let (code, out, err) = d.cli(root, &["events", "--json", "--kinds", "[\"hook\"]"]);
    assert_eq!(code, 0, "{err}");
    let events: Value = serde_json::from_str(&out).unwrap();
    let posts: Vec<&Value> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["data"]["stage"] == "post-edit")
        .collect();
    let introduced: Vec<u64> = posts
        .iter()
        .map(|e| e["data"]["introduced"].as_u64().unwrap())
        .collect();
    assert_eq!(introduced, [1, 0, 1, 1], "{out}");
    assert_eq!(posts[0]["data"]["files"], json!(["lib.py"]), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_patches_that_add_update_and_delete_are_checked_with_typescript() {
    require("typescript-language-server");
    let d = Daemon::new();
    let ws = workspace(&[
        (
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true}}\n",
        ),
        (
            "lib.ts",
            "export function total(x: number): number {\n  return x;\n}\n",
        ),
        (
            "app.ts",
            "import { total } from \"./lib\";\nconst n: number = total(1);\nconst old: string = 1;\nexport { n, old };\n",
        ),
    ]);
    let root = ws.path();
    let update = "codex-apply-patch-update.json";
    let (code, out, err) = hook(&d, root, &["pre-edit"], update, "PreToolUse");
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    std::fs::write(
        root.join("lib.ts"),
        "export function total(x: number): string {\n  return String(x);\n}\n",
    )
    .unwrap();
    let (code, out, err) = hook(&d, root, &["post-edit"], update, "PostToolUse");
    assert_eq!(code, 0, "{err}");
    let report = context_of(&out, "PostToolUse");
    assert!(
        report.starts_with("lspgate: this edit introduced 1 error:\napp.ts:2:7 error "),
        "{report}"
    );
    assert!(!report.contains("app.ts:3"), "{report}");

    // An added file had nothing to say before: its errors are the write's.
    let add = "codex-apply-patch-add.json";
    hook(&d, root, &["pre-edit"], add, "PreToolUse");
    std::fs::write(
        root.join("extra.ts"),
        "const bad: number = \"s\";\nexport {};\n",
    )
    .unwrap();
    let (code, out, err) = hook(
        &d,
        root,
        &["post-edit", "--block-on", "error"],
        add,
        "PostToolUse",
    );
    assert_eq!(code, 0, "{err}");
    let reason = block_reason(&out, "block");
    assert!(
        reason.starts_with("lspgate: this edit introduced 1 error:\nextra.ts:1:7 error"),
        "{reason}"
    );

    // A deleted module breaks its importer.
    let delete = "codex-apply-patch-delete.json";
    hook(&d, root, &["pre-edit"], delete, "PreToolUse");
    std::fs::remove_file(root.join("lib.ts")).unwrap();
    let (code, out, err) = hook(
        &d,
        root,
        &["post-edit", "--block-on", "error"],
        delete,
        "PostToolUse",
    );
    assert_eq!(code, 0, "{err}");
    let reason = block_reason(&out, "block");
    assert!(reason.contains("app.ts:1:"), "{reason}");
    assert!(reason.contains("./lib"), "{reason}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_and_cursor_get_their_own_answers() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = python_project();
    let root = ws.path();
    // Gemini: BeforeTool, `replace` with a path relative to the project, AfterTool.
    let replace = "gemini-replace.json";
    let (_, out, _) = hook(&d, root, &["pre-edit"], replace, "BeforeTool");
    assert_eq!(out, "");
    std::fs::write(root.join("lib.py"), LIB_TEXT).unwrap();
    let (code, out, err) = hook(&d, root, &["post-edit"], replace, "AfterTool");
    assert_eq!(code, 0, "{err}");
    let report = context_of(&out, "AfterTool");
    assert!(report.contains("app.py:3:10 error"), "{report} {err}");
    std::fs::write(root.join("lib.py"), LIB_BODY).unwrap();
    let (_, out, _) = hook(&d, root, &["post-edit"], replace, "AfterTool");
    assert_eq!(out, "", "fixing it says nothing");
    std::fs::write(root.join("lib.py"), LIB_TEXT).unwrap();
    let (_, out, _) = hook(
        &d,
        root,
        &["post-edit", "--block-on", "error"],
        replace,
        "AfterTool",
    );
    assert!(
        block_reason(&out, "deny").contains("app.py:3:10 error"),
        "{out}"
    );

    // Cursor: no pre-edit event; what lspgate knew before the write is its baseline.
    std::fs::write(root.join("lib.py"), LIB_BODY).unwrap();
    let after = "cursor-after-file-edit.json";
    let (_, out, _) = hook(&d, root, &["post-edit"], after, "afterFileEdit");
    assert_eq!(out, "", "fixing it says nothing");
    std::fs::write(root.join("lib.py"), LIB_TEXT).unwrap();
    let (code, out, err) = hook(
        &d,
        root,
        &["post-edit", "--block-on", "error"],
        after,
        "afterFileEdit",
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["additional_context"], "{out}");
    let said = v["additional_context"].as_str().unwrap();
    assert!(said.contains("app.py:3:10 error"), "{said}");
    assert!(said.contains("no answer that blocks"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_daemon_no_server_or_a_bad_event_is_silence_and_exit_0() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = python_project();
    let root = ws.path();
    let event = std::fs::read_to_string(repo().join("tests/hooks/claude-code-edit.json"))
        .unwrap()
        .replace("$ROOT", root.to_str().unwrap())
        .replace("$EVENT", "PostToolUse");
    std::fs::write(root.join("lib.py"), LIB_TEXT).unwrap();
    // No daemon can be had: its runtime folder is a file.
    let blocked = root.join("not-a-folder");
    std::fs::write(&blocked, "").unwrap();
    let (code, out, err) = hook_with(
        &d,
        root,
        &["post-edit"],
        &event,
        &[("XDG_RUNTIME_DIR", blocked.to_str().unwrap())],
    );
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(err.contains("no daemon"), "{err}");
    // Standalone: no daemon either.
    let (code, out, err) = hook_with(
        &d,
        root,
        &["post-edit"],
        &event,
        &[("LSPGATE_STANDALONE", "1")],
    );
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    // No server for the file written.
    std::fs::write(root.join("notes.txt"), "anything").unwrap();
    let txt = event.replace("lib.py", "notes.txt");
    let (code, out, err) = hook_with(&d, root, &["post-edit"], &txt, &[]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(err.contains("no language server serves"), "{err}");
    // Not JSON, or an event nobody writes.
    for bad in ["{not json", "{\"hello\": 1}", "[]"] {
        let (code, out, err) = hook_with(&d, root, &["post-edit"], bad, &[]);
        assert_eq!((code, out.as_str()), (0, ""), "{bad}: {err}");
        assert!(err.contains("lspgate hook:"), "{err}");
    }
    // A budget that is not a number is the default one, not a crash.
    let (code, out, err) = hook_with(&d, root, &["post-edit", "--budget", "nan"], &event, &[]);
    assert_eq!(code, 0, "{out} {err}");
    // A file outside the root is not read.
    let outside = event.replace(&format!("{}/lib.py", root.display()), "/etc/passwd");
    let (code, out, err) = hook_with(&d, root, &["post-edit"], &outside, &[]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_hook_compares_with_the_content_the_event_tells_and_asks_only_who_it_concerns() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = python_project();
    let root = ws.path();
    std::fs::write(
        root.join("other.py"),
        "from lib import total as t\n\nbad: int = 'x'\n",
    )
    .unwrap();
    std::fs::write(root.join("lib.py"), LIB_TEXT).unwrap();
    // Cursor's first hook on a daemon that knew nothing: the event's edits, undone, give the
    // file as it was; the servers are asked about that, so only the new error is reported, not
    // app.py's old one nor other.py's (both importers are asked: they mention `total`).
    // Through a symlink to the project, as Cursor may name it: the paths are the same files.
    let link = tempfile::Builder::new().prefix("link").tempdir().unwrap();
    let linked = link.path().join("proj");
    std::os::unix::fs::symlink(root, &linked).unwrap();
    let event = json!({"conversation_id": "c1", "hook_event_name": "afterFileEdit",
        "workspace_roots": [linked], "file_path": linked.join("lib.py"),
        "edits": [{"old_string": "-> int", "new_string": "-> str"},
                  {"old_string": "    return x\n", "new_string": "    return str(x)\n"}]});
    let (code, out, err) = hook_with(&d, root, &["post-edit"], &event.to_string(), &[]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    let said = v["additional_context"].as_str().unwrap();
    assert_eq!(
        said.lines()
            .skip(1)
            .map(|l| l.split(' ').next().unwrap())
            .collect::<Vec<_>>(),
        ["app.py:3:10"],
        "{said}"
    );
    assert!(
        said.starts_with("lspgate: this edit introduced 1 error:"),
        "{said}"
    );

    // A comment edit changes no top-level definition: only the file itself is asked.
    let commented = format!("# a note\n{LIB_TEXT}");
    let edit = |old: &str, new: &str| {
        json!({"session_id": "s", "cwd": root, "hook_event_name": "PostToolUse",
            "tool_name": "Edit", "tool_input": {"file_path": root.join("lib.py"),
            "old_string": old, "new_string": new}})
        .to_string()
    };
    std::fs::write(root.join("lib.py"), &commented).unwrap();
    let (_, out, err) = hook_with(
        &d,
        root,
        &["post-edit"],
        &edit("def total", "# a note\ndef total"),
        &[],
    );
    assert_eq!(out, "", "{err}");
    // A body edit of `total` that leaves what importers see of it (its hover: the inferred
    // signature) as it was: only the file is asked.
    std::fs::write(root.join("unrelated.py"), "import os\n").unwrap();
    let body = commented.replace("return str(x)", "return str(x + 1)");
    std::fs::write(root.join("lib.py"), &body).unwrap();
    let (_, out, err) = hook_with(
        &d,
        root,
        &["post-edit"],
        &edit("return str(x)", "return str(x + 1)"),
        &[],
    );
    assert_eq!(out, "", "{err}");
    // One that changes it (the inferred return type): the importers that mention `total` are
    // asked (app.py, and other.py, which imports it under another name), no others.
    let typed = body.replace("-> str:\n    return str(x + 1)", ":\n    return b''");
    std::fs::write(root.join("lib.py"), &typed).unwrap();
    let (_, out, err) = hook_with(
        &d,
        root,
        &["post-edit"],
        &edit("-> str:\n    return str(x + 1)", ":\n    return b''"),
        &[],
    );
    let said = context_of(&out, "PostToolUse");
    assert!(
        said.contains("app.py:3:10 error") && said.contains("Literal[b"),
        "{said} {err}"
    );
    let (_, events, _) = d.cli(root, &["events", "--json", "--kinds", "[\"hook\"]"]);
    let events: Value = serde_json::from_str(&events).unwrap();
    let checked: Vec<u64> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["data"]["checked"].as_u64().unwrap())
        .collect();
    assert_eq!(checked, [3, 1, 1, 3], "{events}");
}

/// Runs `lspgate hook ARGS` in `root`, writing `event` and then `more` zero bytes on its stdin
/// from a thread (the hook may stop reading: the write's failure is expected): how long it
/// took, its exit code, stdout and stderr.
fn hook_timed(
    d: &Daemon,
    root: &Path,
    args: &[&str],
    event: Vec<u8>,
    more: usize,
) -> (std::time::Duration, i32, String, String) {
    let began = std::time::Instant::now();
    let mut child = std::process::Command::new(LSPGATE)
        .current_dir(root)
        .arg("hook")
        .args(args)
        .env("PATH", test_path())
        .envs(d.env(&[]))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        if stdin.write_all(&event).is_err() {
            return;
        }
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..more >> 20 {
            if stdin.write_all(&zeros).is_err() {
                return;
            }
        }
    });
    let out = child.wait_with_output().unwrap();
    let took = began.elapsed();
    let _ = writer.join();
    (
        took,
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A Codex `apply_patch` event naming 50,000 files, and one past the bound on an event's size
/// followed by a gigabyte more, each answer within the budget (plus a margin for a loaded
/// machine), saying what was left out. The files were de-duplicated by comparing each with
/// each before the budget could count (15,000 files took 19.5 s with `--budget 3`), and an
/// event over 16 MiB was cut mid-JSON and answered with nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_past_the_bounds_is_answered_within_the_budget_saying_what_was_left_out() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = python_project();
    let root = ws.path();
    let budget = std::time::Duration::from_secs(3);
    let margin = std::time::Duration::from_secs(2);
    let codex = |patch: String| {
        json!({"session_id": "big", "turn_id": "t", "cwd": root,
            "hook_event_name": "PostToolUse", "tool_name": "apply_patch",
            "tool_input": {"command": patch}, "tool_response": "Exit code: 0"})
        .to_string()
        .into_bytes()
    };
    let mut patch = String::from(
        "*** Begin Patch\n*** Update File: lib.py\n@@\n-def total(x: int) -> int:\n+def total(x: int) -> str:\n",
    );
    for i in 0..50_000 {
        patch.push_str(&format!("*** Add File: gen/m{i}.py\n+x = {i}\n"));
    }
    patch.push_str("*** End Patch");
    std::fs::write(root.join("lib.py"), LIB_TEXT).unwrap();
    let (took, code, out, err) =
        hook_timed(&d, root, &["post-edit", "--budget", "3"], codex(patch), 0);
    assert_eq!(code, 0, "{err}");
    assert!(took < budget + margin, "took {took:?}: {err}");
    let report = context_of(&out, "PostToolUse");
    assert!(
        report.contains(
            "lspgate: not checked: 49001 of the 50001 files written (a hook checks 1000 at most"
        ),
        "{report}"
    );

    // Over 16 MiB, and a gigabyte behind it: not read whole, nor parsed; said.
    let body = "+x = 1\n".repeat(3 << 20);
    let big = codex(format!(
        "*** Begin Patch\n*** Add File: big.py\n{body}*** End Patch"
    ));
    assert!(big.len() > 16 << 20);
    let (took, code, out, err) =
        hook_timed(&d, root, &["post-edit", "--budget", "3"], big, 1 << 30);
    assert_eq!(code, 0, "{err}");
    assert!(took < budget + margin, "took {took:?}: {err}");
    let report = context_of(&out, "PostToolUse");
    assert!(
        report.starts_with("lspgate: not checked: the hook event is over 16 MiB"),
        "{report}"
    );

    // Within the bounds, a 2 MB old content told to the daemon reaches it (a request over
    // 1 MiB was refused, and the hook found "no daemon").
    let original = format!(
        "{}def total(x: int) -> int:\n    return x\n",
        "# padding\n".repeat(200_000)
    );
    let write = json!({"session_id": "w", "cwd": root, "hook_event_name": "PostToolUse",
        "tool_name": "Write", "tool_input": {"file_path": root.join("lib.py"), "content": LIB_TEXT},
        "tool_response": {"type": "update", "filePath": root.join("lib.py"), "originalFile": original}});
    let (_, code, out, err) = hook_timed(
        &d,
        root,
        &["post-edit", "--budget", "30"],
        write.to_string().into_bytes(),
        0,
    );
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("no daemon"), "{err}");
    let report = context_of(&out, "PostToolUse");
    assert!(report.contains("app.py:3:"), "{report}");
}
