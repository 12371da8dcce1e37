//! `diagnostics` without a file is the workspace's truth (issue 23), with real pyright: on a
//! fresh root where nothing was opened it lists every file with problems (what `check` finds),
//! paged, over MCP and the CLI; a plain write that fixes a file takes it off the list; a file
//! of a language whose server is not installed makes the answer `partial`, with a reason.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// Twelve modules with one type error each (`m00.py` … `m11.py`) and three clean ones.
fn twelve_errors() -> tempfile::TempDir {
    let ws = workspace(&[("pyproject.toml", "[project]\nname = \"twelve\"\n")]);
    for i in 0..12 {
        std::fs::write(
            ws.path().join(format!("m{i:02}.py")),
            "def f() -> int:\n    return 1\n\n\nx: int = \"one\"\n",
        )
        .unwrap();
    }
    for name in ["clean_a.py", "clean_b.py", "pkg/clean_c.py"] {
        let path = ws.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "y: int = 1\n").unwrap();
    }
    ws
}

/// The files of a `diagnostics` answer, in order.
fn files(r: &Value) -> Vec<String> {
    r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap().to_string())
        .collect()
}

fn expected(skip: Option<usize>) -> Vec<String> {
    (0..12)
        .filter(|i| Some(*i) != skip)
        .map(|i| format!("m{i:02}.py"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_file_with_problems_on_a_fresh_root_paged() {
    require("pyright-langserver");
    let ws = twelve_errors();
    let gate = Gate::start(ws.path(), &[], &[]).await;

    // Nothing was opened: the first call checks the workspace (pyright's workspace pass).
    let clock = Instant::now();
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    let mut first = None;
    loop {
        let mut args = json!({"limit": 5});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let (r, text) = gate.ok("diagnostics", args).await;
        first.get_or_insert(clock.elapsed());
        assert_eq!(r["total"], 12, "{text}");
        assert_eq!(r.get("partial"), None, "{text}");
        for f in r["files"].as_array().unwrap() {
            let d = group_diags(&f["diagnostics"]);
            assert_eq!(d.len(), 1, "{text}");
            assert_eq!(
                (d[0]["line"].as_u64(), d[0]["severity"].as_str()),
                (Some(5), Some("error")),
                "{text}"
            );
        }
        pages.push(files(&r));
        cursor = r["next_cursor"].as_str().map(str::to_string);
        if cursor.is_none() {
            break;
        }
        assert!(pages.len() < 5, "no end to the pages: {text}");
    }
    let first = first.unwrap_or_default();
    assert_eq!(
        pages.iter().map(Vec::len).collect::<Vec<_>>(),
        [5, 5, 2],
        "{pages:?}"
    );
    assert_eq!(pages.concat(), expected(None));

    // Served from what the server knows: a second call right after is quick.
    let clock = Instant::now();
    let (r, text) = gate.ok("diagnostics", json!({})).await;
    let second = clock.elapsed();
    assert_eq!(files(&r), expected(None), "{text}");

    // The same files `check` reports.
    let clock = Instant::now();
    let (c, text) = gate.ok("check", json!({})).await;
    let check = clock.elapsed();
    let mut checked: Vec<String> = diags(&c["files"])
        .iter()
        .map(|i| i["file"].as_str().unwrap().to_string())
        .collect();
    checked.dedup();
    assert_eq!(checked, expected(None), "{text}");
    eprintln!(
        "diagnostics without a file, 15 files: first page {first:?} (server start and workspace pass), second call {second:?}, check {check:?} ({:.2}× check)",
        second.as_secs_f64() / check.as_secs_f64().max(1e-6)
    );
    assert!(second < first, "second {second:?}, first {first:?}");
    assert!(second < Duration::from_secs(5), "second {second:?}");

    // A plain write that fixes one file: the next call no longer lists it.
    std::fs::write(ws.path().join("m03.py"), "x: int = 1\n").unwrap();
    let (r, text) = gate.ok("diagnostics", json!({})).await;
    assert_eq!(files(&r), expected(Some(3)), "{text}");
    assert_eq!(r["total"], 11, "{text}");
    assert_eq!(r.get("partial"), None, "{text}");
    gate.stop().await;
}

#[test]
fn the_cli_lists_every_file_with_problems() {
    require("pyright-langserver");
    let ws = twelve_errors();
    let (code, out, err) = lspgate_cli(ws.path(), &["diagnostics", "--json"]);
    let r: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    assert_eq!(files(&r), expected(None), "{out}{err}");
    assert_eq!(r["total"], 12, "{out}");
    assert_eq!(r.get("partial"), None, "{out}");
    assert_eq!(code, 0, "{out}{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_language_without_its_server_makes_the_answer_partial() {
    require("pyright-langserver");
    // pyright and node, no Go server.
    let path = format!(
        "{}:/usr/bin:/bin",
        repo().join(".tools/node_modules/.bin").display()
    );
    assert!(
        std::env::split_paths(&path).all(|d| !d.join("gopls").exists()),
        "gopls is on {path}: this test needs a PATH without a Go server"
    );
    let ws = workspace(&[
        ("a.py", "x: int = \"one\"\n"),
        ("b.py", "y: int = 1\n"),
        (
            "main.go",
            "package main\n\nfunc main() {\n\tvar x int = \"one\"\n}\n",
        ),
    ]);
    let gate = Gate::start_with_env(ws.path(), &[], &[], &[("PATH", &path)]).await;
    let (r, text) = gate.ok("diagnostics", json!({})).await;
    assert_eq!(files(&r), ["a.py"], "{text}");
    assert_eq!(r["partial"], true, "{text}");
    let reason = r["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("main.go") && reason.contains("gopls"),
        "{text}"
    );
    gate.stop().await;
}

/// A whole-workspace `diagnostics` does a check's work: a heavy call, `busy` past
/// `max_inflight`; one file's diagnostics and the `lspgate://diagnostics` resource (which a
/// subscription must be able to read) are not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_file_it_is_a_heavy_call() {
    require("pyright-langserver");
    let m = marker();
    let ws = workspace(&[
        (
            "lspgate.toml".to_string(),
            format!(
                "max_inflight = 1\n\n[[task]]\nname = \"doze\"\ncommand = [\"sleep\", \"{m}\"]\n"
            ),
        ),
        ("a.py".to_string(), "x: int = \"one\"\n".to_string()),
    ]);
    let gate = Gate::start_trusted(ws.path(), &[], &[]).await;
    let (r, _) = gate
        .ok("run_task", json!({"name": "doze", "background": true}))
        .await;
    let id = r["activity_id"].as_str().unwrap().to_string();
    let (code, message) = gate.err("diagnostics", json!({})).await;
    assert_eq!(code, "busy", "{message}");
    let (r, text) = gate.ok("diagnostics", json!({"file": "a.py"})).await;
    assert_eq!(files(&r), ["a.py"], "{text}");
    let read = gate
        .client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "lspgate://diagnostics",
        ))
        .await
        .unwrap();
    let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("not text: {read:?}")
    };
    let r: Value = serde_json::from_str(text).unwrap();
    assert_eq!(files(&r), ["a.py"], "{text}");
    gate.ok("activity", json!({"id": id, "cancel": true})).await;
    let (r, text) = gate.ok("diagnostics", json!({})).await;
    assert_eq!(files(&r), ["a.py"], "{text}");
    assert_eq!(until_sleeping(&m, 0).await, 0);
    gate.stop().await;
}
