//! Answers that fit an agent (issue 15) on small workspaces, with real pyright: every list
//! pages (`diagnostics` without a file, `check`, `call_hierarchy`), a whole-workspace check's
//! first pass is pyright's own workspace diagnostics and finds what checking file by file
//! finds, and `serve` takes a server command without `--`.

use crate::common;
use common::*;
use serde_json::{Value, json};

/// Three modules with two type errors each (`int` declared, `str` given).
fn six_errors() -> tempfile::TempDir {
    let ws = workspace(&[("pyproject.toml", "[project]\nname = \"six\"\n")]);
    for m in ["a", "b", "c"] {
        std::fs::write(
            ws.path().join(format!("{m}.py")),
            "x: int = \"one\"\n\n\ndef f() -> int:\n    return \"two\"\n",
        )
        .unwrap();
    }
    ws
}

/// The LSP methods a call with `raw: true` sent to pyright.
fn methods(r: &Value) -> Vec<String> {
    r["raw"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["server"] == "builtin/pyright")
        .filter_map(|m| m["method"].as_str().map(str::to_string))
        .collect()
}

/// Every page of `tool` with `args` and `limit`, following `next_cursor`: each page's
/// `items`, and the `total` every page gave.
async fn pages(gate: &Gate, tool: &str, args: Value, limit: u64, items: &str) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut a = args.clone();
        a["limit"] = json!(limit);
        if let Some(c) = &cursor {
            a["cursor"] = json!(c);
        }
        let (r, text) = gate.ok(tool, a).await;
        let page = r[items].as_array().unwrap().clone();
        out.push(page);
        cursor = r["next_cursor"].as_str().map(str::to_string);
        if cursor.is_none() {
            break;
        }
        assert!(out.len() < 50, "no end to the pages: {text}");
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_page_with_limit_total_and_next_cursor() {
    require("pyright-langserver");
    let ws = six_errors();
    let gate = Gate::start(ws.path(), &[], &[]).await;

    // check: `summary` counts every issue, `files` holds a page of them.
    let (r, text) = gate.ok("check", json!({"limit": 4})).await;
    assert_eq!(r["summary"]["errors"], 6, "{text}");
    assert_eq!(
        (r["total"].as_u64(), diags(&r["files"]).len()),
        (Some(6), 4)
    );
    assert_eq!(r["next_cursor"], "4");
    assert!(text.contains("4 of 6 issues shown; cursor \"4\""), "{text}");
    // A file split between two pages is on both, with its part.
    let issues: Vec<Value> = pages(&gate, "check", json!({}), 4, "files")
        .await
        .into_iter()
        .flat_map(|page| diags(&Value::Array(page)))
        .collect();
    let (all, _) = gate.ok("check", json!({})).await;
    assert_eq!(issues, diags(&all["files"]));

    // diagnostics without a file (the check left every file open): pages of diagnostics, a
    // file split between two pages on both, with its part.
    let (r, text) = gate.ok("diagnostics", json!({"limit": 3})).await;
    assert_eq!(r["total"], 6, "{text}");
    let files: Vec<&str> = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["a.py", "b.py"], "{text}");
    assert_eq!(
        group_diags(&r["files"][1]["diagnostics"]).len(),
        1,
        "{text}"
    );
    let mut flat = Vec::new();
    for page in pages(&gate, "diagnostics", json!({}), 4, "files").await {
        for f in page {
            for d in group_diags(&f["diagnostics"]) {
                flat.push((f["file"].as_str().unwrap().to_string(), d["line"].clone()));
            }
        }
    }
    let lines: Vec<(String, Value)> = ["a.py", "b.py", "c.py"]
        .iter()
        .flat_map(|f| [(f.to_string(), json!(1)), (f.to_string(), json!(5))])
        .collect();
    assert_eq!(flat, lines);
    let (code, _) = gate.err("diagnostics", json!({"cursor": "not one"})).await;
    assert_eq!(code, "invalid_params");

    // call_hierarchy: who calls `f` (three callers), a page at a time.
    std::fs::write(
        ws.path().join("calls.py"),
        "from a import f\n\n\ndef one() -> int:\n    return f()\n\n\ndef two() -> int:\n    return f()\n\n\ndef three() -> int:\n    return f()\n",
    )
    .unwrap();
    let at = json!({"file": "a.py", "line": 4, "symbol": "f", "direction": "incoming"});
    let (r, text) = gate.ok("call_hierarchy", at.clone()).await;
    assert_eq!(r["total"], 3, "{text}");
    let callers: Vec<Value> = pages(&gate, "call_hierarchy", at, 2, "calls")
        .await
        .concat()
        .iter()
        .map(|c| c["name"].clone())
        .collect();
    assert_eq!(callers, [json!("one"), json!("two"), json!("three")]);
    gate.stop().await;
}

/// The first check of the whole workspace is one `workspace/diagnostic` pass in pyright (in
/// its workspace diagnostic mode, which the preset sets); later checks ask file by file what
/// pyright then knows. Both find what a check of each file by name finds, and an edit made
/// from outside is in the next check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_whole_check_is_pyrights_workspace_pass() {
    require("pyright-langserver");
    let ws = six_errors();
    let gate = Gate::start(ws.path(), &[], &[]).await;
    let (first, text) = gate.ok("check", json!({"raw": true})).await;
    assert!(
        methods(&first).contains(&"workspace/diagnostic".to_string()),
        "{text}"
    );
    assert!(
        !methods(&first).contains(&"textDocument/diagnostic".to_string()),
        "{text}"
    );
    assert_eq!(first["summary"]["files"], 3, "{text}");
    assert_eq!(first["summary"]["errors"], 6, "{text}");

    let (again, text) = gate.ok("check", json!({"raw": true})).await;
    assert!(
        !methods(&again).contains(&"workspace/diagnostic".to_string()),
        "{text}"
    );
    assert_eq!(findings(&again), findings(&first));
    let (named, _) = gate
        .ok("check", json!({"paths": ["a.py", "b.py", "c.py"]}))
        .await;
    assert_eq!(findings(&named), findings(&first));

    // Fixed from outside: one error fewer, at once.
    std::fs::write(
        ws.path().join("b.py"),
        "x: int = 1\n\n\ndef f() -> int:\n    return \"two\"\n",
    )
    .unwrap();
    let (after, text) = gate.ok("check", json!({})).await;
    assert_eq!(after["summary"]["errors"], 5, "{text}");
    gate.stop().await;
    let fresh = Gate::start(ws.path(), &[], &[]).await;
    let (want, _) = fresh.ok("check", json!({})).await;
    fresh.stop().await;
    assert_eq!(findings(&after), findings(&want));
}

/// The MCP Inspector's CLI drops `--`: `serve --root DIR CMD ARGS` serves CMD alone, as
/// `serve --root DIR -- CMD ARGS` does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_takes_a_server_command_without_dashes() {
    require("pyright-langserver");
    let ws = example("python");
    // Given after the options, as the Inspector passes it.
    let gate = Gate::start(ws.path(), &["pyright-langserver", "--stdio"], &[]).await;
    let (servers, _) = gate.ok("servers", json!({})).await;
    let list = servers["servers"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{servers}");
    assert_eq!(list[0]["name"], "cli/pyright-langserver");
    let (h, text) = gate
        .ok(
            "hover",
            json!({"file": "app.py", "line": 12, "symbol": "compute"}),
        )
        .await;
    assert!(
        h["contents"].as_str().unwrap().contains("compute"),
        "{text}"
    );
    gate.stop().await;
}
