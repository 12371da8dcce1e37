//! clangd through lspgate over MCP stdio: every tool it serves, references from its background
//! index (files never opened), non-ASCII positions, fresh diagnostics.

use crate::common;
use common::*;
use serde_json::json;

/// clangd indexes unopened files only from a compile_commands.json with absolute directories.
fn with_compile_commands(dir: &std::path::Path) {
    let d = dir.display();
    let cdb = format!(
        r#"[{{"directory": "{d}", "file": "main.c", "arguments": ["cc", "-std=c11", "-Wall", "-c", "main.c"]}},
{{"directory": "{d}", "file": "util.c", "arguments": ["cc", "-std=c11", "-Wall", "-c", "util.c"]}}]"#
    );
    std::fs::write(dir.join("compile_commands.json"), cdb).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clangd_tools() {
    require("clangd");
    let ws = example("c");
    with_compile_commands(ws.path());
    let gate = Gate::start(ws.path(), &[], &[]).await;

    let (refs, text) = gate
        .ok(
            "references",
            json!({"file": "util.h", "line": 10, "symbol": "add"}),
        )
        .await;
    assert_eq!(
        files_of(&refs["files"]),
        ["main.c", "util.c", "util.h"],
        "{text}"
    );

    let line5 = "  const char *greeting = \"héllo 🌍\"; int total = add(1, 2);";
    let (h, text) = gate
        .ok(
            "hover",
            json!({"file": "main.c", "line": 5, "symbol": "add"}),
        )
        .await;
    assert!(text.contains("int add(int a, int b)"), "{text}");
    assert_eq!(h["range"]["column"], col_of(line5, "add(1"));

    let (d, text) = gate.ok("diagnostics", json!({"file": "main.c"})).await;
    let found = diags(&d["files"]);
    let errors: Vec<_> = found.iter().filter(|d| d["severity"] == "error").collect();
    assert_eq!(errors.len(), 1, "{text}");
    assert_eq!(
        (errors[0]["line"].as_u64(), errors[0]["column"].as_u64()),
        (Some(6), Some(16))
    );

    let (d, _) = gate
        .ok(
            "definition",
            json!({"file": "main.c", "line": 5, "symbol": "add", "kind": "declaration"}),
        )
        .await;
    let l = &locs(&d["files"])[0];
    assert_eq!(l["file"], "util.h", "{d}");
    assert_eq!(l["line"], 10, "{d}");
    let (d, _) = gate
        .ok(
            "definition",
            json!({"file": "main.c", "line": 5, "symbol": "add"}),
        )
        .await;
    assert_eq!(locs(&d["files"])[0]["file"], "util.c", "{d}");
    let (d, _) = gate
        .ok(
            "definition",
            json!({"file": "main.c", "line": 6, "symbol": "p", "kind": "type_definition"}),
        )
        .await;
    let l = &locs(&d["files"])[0];
    assert_eq!(l["file"], "util.h", "{d}");
    assert_eq!(l["line"], 4, "{d}");

    let (syms, _) = gate.ok("document_symbols", json!({"file": "util.h"})).await;
    let names: Vec<&str> = syms["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"add") && names.contains(&"point"),
        "{names:?}"
    );

    let (ws_syms, text) = gate.ok("workspace_symbols", json!({"query": "add"})).await;
    assert!(
        ws_syms["symbols"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "add"),
        "{text}"
    );

    let line6 = "  struct point p = add(3, 4); /* deliberate type error */";
    let (sig, _) = gate
        .ok(
            "signature_help",
            json!({"file": "main.c", "line": 6, "column": col_of(line6, "4)")}),
        )
        .await;
    let s0 = &sig["signatures"][0];
    assert!(
        s0["label"].as_str().unwrap().contains("add(int a, int b)"),
        "{sig}"
    );
    assert_eq!(s0["active_parameter"], 1);

    let main = std::fs::read_to_string(ws.path().join("main.c")).unwrap();
    let buffer = main.replace("  return 0;", "  p.");
    let (comp, _) = gate
        .ok(
            "completions",
            json!({"file": "main.c", "line": 8, "column": 5, "source": buffer}),
        )
        .await;
    let labels: Vec<String> = comp["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i[0].as_str().unwrap().trim().to_string())
        .collect();
    assert!(
        labels.iter().any(|l| l == "x") && labels.iter().any(|l| l == "y"),
        "{labels:?}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("main.c")).unwrap(),
        main
    );

    let (calls, text) = gate
        .ok(
            "call_hierarchy",
            json!({"file": "util.c", "line": 3, "symbol": "add", "direction": "incoming"}),
        )
        .await;
    let main_call = calls["calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "main")
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(locs(&main_call["call_sites"]).len(), 2, "{text}");

    std::fs::write(
        ws.path().join("main.c"),
        main.replace("struct point p = add(3, 4);", "struct point p = {3, 4};  "),
    )
    .unwrap();
    let (d, text) = gate.ok("diagnostics", json!({"file": "main.c"})).await;
    assert!(
        diags(&d["files"]).iter().all(|d| d["severity"] != "error"),
        "{text}"
    );
    gate.stop().await;
}

/// clangd reads its compilation database only for a file it opens: the first workspace-wide
/// question of a fresh session, with nothing open, still finds what a file nobody opened
/// defines (lspgate opens a file of the database and waits for the index), not partial.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_workspace_symbols_finds_what_unopened_files_define() {
    require("clangd");
    let ws = example("c");
    std::fs::write(
        ws.path().join("extra.c"),
        "int foo_bar_only_here(int x) { return x + 1; }\n",
    )
    .unwrap();
    let d = ws.path().display();
    let entry = |f: &str| {
        format!(r#"{{"directory": "{d}", "file": "{f}", "arguments": ["cc", "-c", "{f}"]}}"#)
    };
    std::fs::write(
        ws.path().join("compile_commands.json"),
        format!(
            "[{}, {}, {}]",
            entry("main.c"),
            entry("util.c"),
            entry("extra.c")
        ),
    )
    .unwrap();
    let gate = Gate::start(ws.path(), &[], &[]).await;
    let (r, text) = gate
        .ok("workspace_symbols", json!({"query": "foo_bar"}))
        .await;
    assert_ne!(r["partial"], true, "{text}");
    let found: Vec<(&str, &str)> = r["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["file"].as_str().unwrap()))
        .collect();
    assert!(found.contains(&("foo_bar_only_here", "extra.c")), "{text}");
    gate.stop().await;
}

/// Without a compile_commands.json clangd knows only the open files: a workspace-wide answer
/// says so instead of passing off what it knows as everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_compilation_database_workspace_answers_are_partial() {
    require("clangd");
    let ws = example("c");
    let _ = std::fs::remove_file(ws.path().join("compile_commands.json"));
    let gate = Gate::start(ws.path(), &[], &[]).await;
    let (r, text) = gate.ok("workspace_symbols", json!({"query": "add"})).await;
    assert_eq!(r["partial"], true, "{text}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("compile_commands.json"),
        "{text}"
    );
    let (r, text) = gate
        .ok(
            "references",
            json!({"file": "util.h", "line": 10, "symbol": "add"}),
        )
        .await;
    assert_eq!(r["partial"], true, "{text}");

    // With one, the same questions are complete.
    with_compile_commands(ws.path());
    gate.ok("restart_server", json!({"name": "builtin/clangd"}))
        .await;
    let (r, text) = gate
        .ok(
            "references",
            json!({"file": "util.h", "line": 10, "symbol": "add"}),
        )
        .await;
    assert_ne!(r["partial"], true, "{text}");
    gate.stop().await;
}
