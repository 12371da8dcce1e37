//! lspgate against the fixture server, for what real servers can't be made to do on demand:
//! negotiate UTF-8, hang, crash, write garbage, flood, index for a long time, publish without
//! versions. Each test also shows lspgate stays up and answers afterwards.

use crate::common;
use common::*;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

fn log_of(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Waits until `cond` holds for the log, at most 10 s.
async fn log_shows(path: &Path, cond: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = log_of(path);
        if cond(&log) || Instant::now() > deadline {
            return log;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

const EMOJI_LINE: &str = "x = \"😀é\"; target = 1\n";
/// `ERROR` at code-point columns 11 to 16 (after an emoji and an accented letter).
const EMOJI_ERROR_LINE: &str = "y = \"😀é\"; ERROR\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn positions_follow_the_negotiated_encoding() {
    let ws = workspace(&[("a.py", format!("{EMOJI_LINE}{EMOJI_ERROR_LINE}"))]);
    // `target` is at code-point column 11: byte 14 in UTF-8, unit 11 in UTF-16.
    for (flag, expect) in [("--utf8", "at=0:14"), ("--utf16", "at=0:11")] {
        let gate = Gate::start(ws.path(), &[], &[FIXTURE, flag]).await;
        let (h, text) = gate
            .ok(
                "hover",
                json!({"file": "a.py", "line": 1, "symbol": "target"}),
            )
            .await;
        assert!(
            text.contains("word=target") && text.contains(expect),
            "{flag}: {text}"
        );
        assert!(h["contents"].as_str().unwrap().contains(expect));
        let (refs, _) = gate
            .ok(
                "references",
                json!({"file": "a.py", "line": 1, "column": 11}),
            )
            .await;
        let l = &locs(&refs["files"])[0];
        assert_eq!(
            (l["line"].as_u64(), l["column"].as_u64(), l["text"].as_str()),
            (Some(1), Some(11), Some(EMOJI_LINE.trim())),
            "{flag}: {refs}"
        );
        // Locations carry no end (shapes v2); a diagnostic's end is converted the same way.
        let (d, text) = gate.ok("diagnostics", json!({"file": "a.py"})).await;
        let found = diags(&d["files"]);
        assert_eq!(found.len(), 1, "{flag}: {text}");
        let e = &found[0];
        assert_eq!(
            (
                e["line"].as_u64(),
                e["column"].as_u64(),
                e["end_line"].as_u64(),
                e["end_column"].as_u64()
            ),
            (Some(2), Some(11), Some(2), Some(16)),
            "{flag}: {text}"
        );
        gate.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_offered_by_capability() {
    let ws = workspace(&[("a.py", "def alpha():\n    pass\n")]);
    let gate = Gate::start(ws.path(), &[], &[FIXTURE, "--no-symbols"]).await;
    let names = gate.tool_names().await;
    for t in [
        "hover",
        "definition",
        "references",
        "workspace_symbols",
        "diagnostics",
        "document_symbols",
    ] {
        assert!(names.contains(&t.to_string()), "{t} missing: {names:?}");
    }
    for t in ["signature_help", "completions", "call_hierarchy"] {
        assert!(
            !names.contains(&t.to_string()),
            "{t} offered without the capability: {names:?}"
        );
    }
    // No documentSymbol capability: lspgate's own scan, flagged as such.
    let (syms, text) = gate.ok("document_symbols", json!({"file": "a.py"})).await;
    assert_eq!(syms["source"], "fallback");
    assert_eq!(syms["symbols"][0]["name"], "alpha");
    assert!(text.contains("fallback"));
    // Called anyway: not_supported, not a crash.
    let (code, _) = gate
        .err(
            "completions",
            json!({"file": "a.py", "line": 1, "column": 1}),
        )
        .await;
    assert_eq!(code, "not_supported");
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_request_times_out_and_is_cancelled_in_the_server() {
    let ws = workspace(&[("a.py", "hang = 1\nok = 2\n")]);
    let log = ws.path().join("fixture.log");
    let gate = Gate::start(
        ws.path(),
        &["--timeout", "1"],
        &[FIXTURE, "--log", log.to_str().unwrap()],
    )
    .await;
    let r = gate
        .call(
            "hover",
            json!({"file": "a.py", "line": 1, "symbol": "hang"}),
        )
        .await;
    let e = &r.structured_content.as_ref().unwrap()["error"];
    assert_eq!(e["code"], "timeout", "{e}");
    // The bound that ended it is the one asked for (not the 30 s default).
    assert_eq!(e["data"]["after_ms"], 1000, "{e}");
    let l = log_shows(&log, |l| l.contains("$/cancelRequest")).await;
    assert!(l.contains("$/cancelRequest"), "{l}");
    let (_, text) = gate
        .ok("hover", json!({"file": "a.py", "line": 2, "symbol": "ok"}))
        .await;
    assert!(text.contains("word=ok"));
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_cancel_reaches_the_server() {
    let ws = workspace(&[("a.py", "hang = 1\nok = 2\n")]);
    let log = ws.path().join("fixture.log");
    let mut raw = Raw::start(ws.path(), &[], &[FIXTURE, "--log", log.to_str().unwrap()]).await;
    raw.initialize().await;
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "hover", "arguments": {"file": "a.py", "line": 1, "symbol": "hang"}}})
        .to_string(),
    )
    .await;
    let l = log_shows(&log, |l| l.contains("textDocument/hover")).await;
    assert!(l.contains("textDocument/hover"), "{l}");
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"test"}}"#).await;
    let l = log_shows(&log, |l| l.contains("$/cancelRequest")).await;
    assert!(l.contains("$/cancelRequest"), "{l}");
    // Still serving.
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
        "name": "hover", "arguments": {"file": "a.py", "line": 2, "symbol": "ok"}}})
        .to_string(),
    )
    .await;
    let r = raw.recv().await;
    assert_eq!(r["id"], 8, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("word=ok")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crashes_and_garbage_fail_fast_and_lspgate_stays_up() {
    for word in ["crash", "garbage"] {
        let ws = workspace(&[("a.py", &format!("{word} = 1\n"))]);
        let gate = Gate::start(ws.path(), &[], &[FIXTURE]).await;
        // Failing fast shows in the code: a call that waited for the server would end with
        // the request's bound, `timeout`, instead.
        let (code, msg) = gate
            .err("hover", json!({"file": "a.py", "line": 1, "symbol": word}))
            .await;
        assert_eq!(code, "server_failed", "{word}: {msg}");
        let (code, _) = gate
            .err("hover", json!({"file": "a.py", "line": 1, "column": 1}))
            .await;
        assert_eq!(code, "server_failed");
        assert!(
            !gate.tool_names().await.is_empty(),
            "lspgate stopped answering after {word}"
        );
        gate.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_notifications_does_not_block() {
    let ws = workspace(&[("a.py", "flood = 1\nok = 2\n")]);
    let gate = Gate::start(ws.path(), &[], &[FIXTURE]).await;
    let (_, text) = gate
        .ok(
            "hover",
            json!({"file": "a.py", "line": 1, "symbol": "flood"}),
        )
        .await;
    assert_eq!(text, "flooded");
    let (_, text) = gate
        .ok("hover", json!({"file": "a.py", "line": 2, "symbol": "ok"}))
        .await;
    assert!(text.contains("word=ok"));
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexing_is_waited_for_then_reported_as_partial() {
    let ws = workspace(&[("a.py", "target = 1\n"), ("b.py", "target = 2\n")]);
    // Indexing longer than the wait: the answer says it may be incomplete.
    let gate = Gate::start(
        ws.path(),
        &["--ready-timeout", "0.5"],
        &[FIXTURE, "--progress", "30000"],
    )
    .await;
    let (r, text) = gate
        .ok(
            "references",
            json!({"file": "a.py", "line": 1, "symbol": "target"}),
        )
        .await;
    assert_eq!(r["partial"], true, "{r}");
    assert!(r["reason"].as_str().unwrap().contains("indexing"), "{r}");
    assert!(text.starts_with("partial: "), "{text}");
    let (w, _) = gate
        .ok("workspace_symbols", json!({"query": "target"}))
        .await;
    assert_eq!(w["partial"], true);
    gate.stop().await;
    // Indexing within the wait: the answer waits for it and is not partial. The fixture logs
    // the end of its indexing before it reports it, so a request sent only after lspgate saw
    // the end comes after that line in the log.
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("fixture.log");
    let gate = Gate::start(
        ws.path(),
        &["--ready-timeout", "20"],
        &[FIXTURE, "--progress", "700", "--log", log.to_str().unwrap()],
    )
    .await;
    let (r, _) = gate
        .ok(
            "references",
            json!({"file": "a.py", "line": 1, "symbol": "target"}),
        )
        .await;
    assert!(r.get("partial").is_none(), "{r}");
    let l = log_of(&log);
    let (end, asked) = (
        l.find("progress end").expect("the fixture logs its end"),
        l.find("textDocument/references").expect("references asked"),
    );
    assert!(end < asked, "references asked while indexing: {l}");
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_documents_are_capped_and_synced_on_change() {
    let ws = workspace(&[
        ("a.py", "a = 1\n"),
        ("b.py", "b = 1\n"),
        ("c.py", "c = 1\n"),
    ]);
    let log = ws.path().join("fixture.log");
    let gate = Gate::start(
        ws.path(),
        &["--open-documents", "2"],
        &[FIXTURE, "--log", log.to_str().unwrap()],
    )
    .await;
    for f in ["a", "b", "c"] {
        gate.ok(
            "hover",
            json!({"file": format!("{f}.py"), "line": 1, "column": 1}),
        )
        .await;
    }
    let l = log_shows(&log, |l| l.contains("didClose")).await;
    assert_eq!(l.matches("textDocument/didClose").count(), 1, "{l}");
    assert_eq!(l.matches("textDocument/didOpen").count(), 3, "{l}");
    // A change on disk is sent (didChange + didSave) before the next answer.
    std::fs::write(ws.path().join("c.py"), "changed = 1\n").unwrap();
    let (_, text) = gate
        .ok("hover", json!({"file": "c.py", "line": 1, "column": 1}))
        .await;
    assert!(text.contains("word=changed"), "{text}");
    let l = log_of(&log);
    assert!(
        l.contains("textDocument/didChange") && l.contains("textDocument/didSave"),
        "{l}"
    );
    gate.stop().await;
}

/// A check keeps every file it opened open until it ends (closing them would make the server
/// analyse them again), then closes what is over the cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_keeps_its_files_open_until_it_ends() {
    let files: Vec<(String, String)> = (0..6)
        .map(|i| (format!("m{i}.py"), format!("v{i} = 1\n")))
        .collect();
    let ws = workspace(&files);
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("fixture.log");
    // One file at a time, so without the batch's room the cap would close files mid-check.
    let gate = Gate::start_with_env(
        ws.path(),
        &["--open-documents", "2"],
        &[FIXTURE, "--pull", "--log", log.to_str().unwrap()],
        &[("LSPGATE_CHECK_PARALLEL", "1")],
    )
    .await;
    let (report, text) = gate.ok("check", json!({})).await;
    assert_eq!(report["ok"], true, "{text}");
    let l = log_shows(&log, |l| l.matches("textDocument/didClose").count() >= 4).await;
    let last_open = l.rfind("textDocument/didOpen").unwrap();
    let first_close = l.find("textDocument/didClose").unwrap();
    assert!(first_close > last_open, "a file was closed mid-check: {l}");
    assert_eq!(l.matches("textDocument/didOpen").count(), 6, "{l}");
    assert_eq!(l.matches("textDocument/didClose").count(), 4, "{l}");
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_are_fresh_with_versioned_unversioned_and_pulled_reports() {
    for flag in ["--versioned", "--no-version", "--pull"] {
        let ws = workspace(&[("a.py", "ok = 1\nERROR here\n")]);
        let gate = Gate::start(ws.path(), &[], &[FIXTURE, flag]).await;
        let (d, text) = gate.ok("diagnostics", json!({"file": "a.py"})).await;
        let found = diags(&d["files"]);
        assert_eq!(found.len(), 1, "{flag}: {text}");
        assert_eq!(
            (found[0]["line"].as_u64(), found[0]["column"].as_u64()),
            (Some(2), Some(1))
        );
        assert_eq!(text, "a.py:2:1 error [E1]: found ERROR");
        for round in 0..3 {
            let body = if round % 2 == 0 {
                "ok = 1\nfine\n"
            } else {
                "ERROR\nERROR\n"
            };
            std::fs::write(ws.path().join("a.py"), body).unwrap();
            let (d, text) = gate.ok("diagnostics", json!({"file": "a.py"})).await;
            let n = diags(&d["files"]).len();
            assert_eq!(
                n,
                body.matches("ERROR").count(),
                "{flag} round {round}: {text}"
            );
            assert!(d.get("partial").is_none(), "{flag}: {d}");
        }
        gate.stop().await;
    }
}

/// A server that pushes a document's diagnostics only when that document changes: a change
/// to another document can make them stale, so the document is sent again before its
/// diagnostics are read (gopls, for one, need not push again for an importer whose
/// diagnostics it finds unchanged, and pushes those that changed only later).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_follow_a_change_to_another_document() {
    for flag in ["--versioned", "--no-version", "--pull"] {
        let ws = workspace(&[("a.py", "fine\n"), ("b.py", "NEEDS x\nNEEDS y\n")]);
        let gate = Gate::start(ws.path(), &[], &[FIXTURE, flag]).await;
        let count = |d: &serde_json::Value| diags(&d["files"]).len();
        let (d, text) = gate.ok("diagnostics", json!({"file": "b.py"})).await;
        assert_eq!(count(&d), 0, "{flag}: {text}");
        for (round, body) in ["BREAKS x\n", "fine\n", "BREAKS y\nBREAKS x\n"]
            .iter()
            .enumerate()
        {
            std::fs::write(ws.path().join("a.py"), body).unwrap();
            // The first round has the other document opened by a call of its own; the later
            // ones leave it to the disk's change reaching the server.
            if round == 0 {
                gate.ok("diagnostics", json!({"file": "a.py"})).await;
            }
            let (d, text) = gate.ok("diagnostics", json!({"file": "b.py"})).await;
            assert_eq!(
                count(&d),
                body.matches("BREAKS").count(),
                "{flag} round {round}: {text}"
            );
        }
        gate.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_server_process_outlives_lspgate() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    let log = ws.path().join("fixture.log");
    let mut raw = Raw::start(ws.path(), &[], &[FIXTURE, "--log", log.to_str().unwrap()]).await;
    raw.initialize().await;
    let l = log_shows(&log, |l| l.contains("pid ")).await;
    let pid: u32 = l
        .lines()
        .find_map(|l| l.strip_prefix("pid "))
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("no pid in {l}"));
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    drop(raw.stdin);
    let status = tokio::time::timeout(Duration::from_secs(10), raw.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success());
    let l = log_shows(&log, |l| l.contains("exit")).await;
    assert!(
        l.contains("shutdown") && l.contains("exit"),
        "no orderly shutdown: {l}"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while is_running(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!is_running(pid), "server {pid} outlived lspgate");
}

/// Whether a process exists and is not a zombie waiting to be reaped.
fn is_running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.split_whitespace().nth(2).is_none_or(|st| st != "Z"))
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_shows_the_requests_a_call_sent() {
    let ws = workspace(&[("a.py", "target = 1\n")]);
    let gate = Gate::start(ws.path(), &[], &[FIXTURE]).await;
    let (h, text) = gate
        .ok(
            "hover",
            json!({"file": "a.py", "line": 1, "symbol": "target", "raw": true}),
        )
        .await;
    let raw = h["raw"].as_array().unwrap();
    assert_eq!(raw.len(), 1, "{h}");
    assert_eq!(raw[0]["method"], "textDocument/hover");
    assert_eq!(
        raw[0]["params"]["position"],
        json!({"line": 0, "character": 0})
    );
    assert!(
        text.contains("--- raw ---") && text.contains("textDocument/hover"),
        "{text}"
    );
    let (plain, text) = gate
        .ok(
            "hover",
            json!({"file": "a.py", "line": 1, "symbol": "target"}),
        )
        .await;
    assert!(plain.get("raw").is_none() && !text.contains("--- raw ---"));
    gate.stop().await;
}

/// A young server is waited on until it has been quiet a moment, once: after that, the chatter
/// that comes with its answers does not count as activity, so calls in its first seconds are not
/// each held up by the startup quiet window (200 ms; the fixture answers at once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_settled_server_is_not_held_to_its_startup_quiet() {
    let ws = workspace(&[("a.py", "def hello():\n    pass\n\nhello()\n")]);
    // A startup quiet of 3 s: a warm call held to it again would take at least that long,
    // far beyond any slowness of a loaded machine.
    let gate = Gate::start_with_env(
        ws.path(),
        &[],
        &[FIXTURE, "--chatty"],
        &[("LSPGATE_STARTUP_QUIET_MS", "3000")],
    )
    .await;
    let refs = json!({"file": "a.py", "line": 1, "symbol": "hello"});
    gate.ok("references", refs.clone()).await;
    for _ in 0..3 {
        let t = Instant::now();
        let (r, text) = gate.ok("references", refs.clone()).await;
        assert_eq!(r["total"], 2, "{text}");
        assert!(
            t.elapsed() < Duration::from_millis(1500),
            "a warm call was held to the startup quiet: {:?}",
            t.elapsed()
        );
    }
    gate.stop().await;
}

/// The diagnostics resources hold every diagnostic, not the `diagnostics` tool's first page
/// (200): a change past it is a change of the resource.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_resources_hold_every_diagnostic() {
    let many: String = (0..250).map(|i| format!("x{i} = 1  # ERROR\n")).collect();
    let ws = workspace(&[("a.py", many.as_str())]);
    let gate = Gate::start(ws.path(), &[], &[FIXTURE]).await;
    let read = |uri: &'static str| {
        let client = &gate.client;
        async move {
            let r = client
                .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
                .await
                .unwrap();
            let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &r.contents[0]
            else {
                panic!("not text: {r:?}")
            };
            serde_json::from_str::<serde_json::Value>(text).unwrap()
        }
    };
    let count = |v: &serde_json::Value| -> usize { diags(&v["files"]).len() };
    let file = read("lspgate://diagnostics/a.py").await;
    assert_eq!(count(&file), 250, "{file}");
    let all = read("lspgate://diagnostics").await;
    assert_eq!(count(&all), 250, "{all}");
    gate.stop().await;
}
