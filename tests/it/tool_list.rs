//! What a session offers and accepts: tool profiles (`serve --tools`, `tools = [...]` in
//! lspgate.toml), the conventions said once in the server's instructions, titles and
//! annotations on the wire, and unknown parameters refused by name, over MCP and on the CLI.

use crate::common;
use common::*;
use serde_json::{Value, json};

/// The navigation group, as the tools declare it.
fn navigation() -> Vec<&'static str> {
    let tools = lspgate::ops::tools::TOOLS.iter();
    tools
        .filter(|d| d.group == lspgate::ops::tools::Group::Navigation)
        .map(|d| d.name)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_offers_only_its_tools_and_refuses_the_rest() {
    require("pyright-langserver");
    let ws = example("python");
    let before = snapshot(ws.path());
    let gate = Gate::start(ws.path(), &["--tools", "navigation"], &[]).await;

    let mut names = gate.tool_names().await;
    names.sort();
    let navigation = navigation();
    assert!(navigation.len() >= 10 && navigation.contains(&"hover"));
    let mut expected: Vec<String> = navigation
        .iter()
        .chain(&["servers"])
        .map(|s| s.to_string())
        .collect();
    expected.sort();
    assert_eq!(names, expected);

    // Reading tools still answer.
    let (hover, _) = gate
        .ok(
            "hover",
            json!({"file": "app.py", "line": 12, "symbol": "compute"}),
        )
        .await;
    assert!(
        hover["contents"].as_str().unwrap().contains("def compute"),
        "{hover}"
    );
    // Tools outside the profile are refused, naming it; nothing is written.
    for (tool, args) in [
        (
            "rename",
            json!({"file": "app.py", "line": 12, "symbol": "compute", "new_name": "c", "apply": true}),
        ),
        ("diagnostics", json!({"file": "app.py"})),
        ("check", json!({})),
    ] {
        let (code, message) = gate.err(tool, args).await;
        assert_eq!(code, "invalid_params", "{tool}: {message}");
        assert!(
            message.contains(&format!("`{tool}`")) && message.contains("`navigation`"),
            "{tool}: {message}"
        );
    }
    assert_eq!(snapshot(ws.path()), before);
    gate.stop().await;

    // Groups and single tools combine; `servers` is always there; `activity` follows the
    // gates that run in the background.
    let gate = Gate::start(ws.path(), &["--tools", "hover,gates"], &[]).await;
    let mut names = gate.tool_names().await;
    names.sort();
    assert_eq!(
        names,
        [
            "activity",
            "check",
            "explain_failure",
            "hover",
            "run_task",
            "servers",
            "shrink",
            "what_if"
        ]
    );
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_config_sets_the_profile_and_the_flag_overrides_it() {
    require("pyright-langserver");
    let ws = example("python");
    std::fs::write(
        ws.path().join("lspgate.toml"),
        "tools = [\"diagnostics\", \"undo\"]\n",
    )
    .unwrap();
    let gate = Gate::start(ws.path(), &[], &[]).await;
    let mut names = gate.tool_names().await;
    names.sort();
    assert_eq!(names, ["diagnostics", "servers", "undo"]);
    let (code, message) = gate
        .err("hover", json!({"file": "app.py", "line": 7, "column": 38}))
        .await;
    assert_eq!(code, "invalid_params");
    assert!(message.contains("`diagnostics,undo`"), "{message}");
    gate.stop().await;

    let gate = Gate::start(ws.path(), &["--tools", "all"], &[]).await;
    assert!(gate.tool_names().await.contains(&"rename".to_string()));
    gate.stop().await;
}

#[test]
fn unknown_names_in_a_profile_stop_the_start() {
    let ws = workspace(&[("a.py", "x = 1\n")]);
    let (code, _, err) = lspgate_cli(ws.path(), &["serve", "--tools", "navigation,navgation"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`navgation`") && err.contains("groups: navigation, diagnostics"),
        "{err}"
    );
    std::fs::write(
        ws.path().join("lspgate.toml"),
        "\n\ntools = [\"hover\", \"hovr\"]\n",
    )
    .unwrap();
    let (code, _, err) = lspgate_cli(ws.path(), &["serve"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("lspgate.toml:3:") && err.contains("`hovr`"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_states_conventions_once_and_tools_carry_annotations() {
    require("pyright-langserver");
    let ws = example("python");
    let gate = Gate::start(ws.path(), &[], &[]).await;
    let info = gate.client.peer_info().expect("initialize result");
    assert_eq!(
        info.instructions.as_deref(),
        Some(lspgate::ops::tools::INSTRUCTIONS)
    );
    let tools = gate.client.list_all_tools().await.expect("tools/list");
    let hover = tools.iter().find(|t| t.name == "hover").unwrap();
    let rename = tools.iter().find(|t| t.name == "rename").unwrap();
    assert_eq!(hover.title.as_deref(), Some("Hover"));
    let a = hover.annotations.as_ref().unwrap();
    assert_eq!(
        (a.read_only_hint, a.open_world_hint),
        (Some(true), Some(false))
    );
    let a = rename.annotations.as_ref().unwrap();
    assert_eq!(
        (a.read_only_hint, a.destructive_hint, a.open_world_hint),
        (Some(false), Some(true), Some(false))
    );
    // Position conventions are in the instructions, not repeated per tool and parameter.
    let input = Value::Object((*hover.input_schema).clone());
    assert!(input["properties"]["column"].get("description").is_none());
    assert!(
        !hover
            .description
            .as_deref()
            .unwrap_or("")
            .contains("1-based")
    );
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_parameters_are_refused_by_name() {
    require("pyright-langserver");
    let ws = example("python");
    let before = snapshot(ws.path());
    let gate = Gate::start(ws.path(), &[], &[]).await;

    let (code, message) = gate
        .err("hover", json!({"file": "app.py", "line": 7, "colum": 38}))
        .await;
    assert_eq!(code, "invalid_params");
    assert!(
        message.contains("`colum`") && message.contains("column"),
        "{message}"
    );
    // Nested: an edit's own fields, a probe's.
    let (code, message) = gate
        .err(
            "edit",
            json!({"file": "app.py", "edits": [{"old_txt": "def broken", "new_text": "def b"}], "apply": true}),
        )
        .await;
    assert_eq!(code, "invalid_params");
    assert!(message.contains("`edits[0].old_txt`"), "{message}");
    let (code, message) = gate
        .err(
            "what_if",
            json!({"file": "app.py", "edits": [{"start_line": 12, "end_line": 12, "new_text": "    return 3\n"}],
                   "probe": {"line": 12, "colum": 5}}),
        )
        .await;
    assert_eq!(code, "invalid_params");
    assert!(message.contains("`probe.colum`"), "{message}");
    // `source` is for reading tools: a rename never applies an unsaved buffer.
    let (code, message) = gate
        .err(
            "rename",
            json!({"file": "app.py", "line": 12, "symbol": "compute", "new_name": "c", "source": "x = 1\n"}),
        )
        .await;
    assert_eq!(code, "invalid_params");
    assert!(message.contains("`source`"), "{message}");
    assert_eq!(snapshot(ws.path()), before);

    // `terse` and `raw` are known to every tool without being in every schema.
    let (out, text) = gate
        .ok(
            "hover",
            json!({"file": "app.py", "line": 7, "column": 38, "terse": true, "raw": true}),
        )
        .await;
    assert!(
        out["raw"].as_array().is_some_and(|r| !r.is_empty()),
        "{out}"
    );
    assert!(text.contains("--- raw ---"), "{text}");
    let (out, _) = gate.ok("servers", json!({"raw": false})).await;
    assert!(out["servers"].is_array());
    gate.stop().await;
}

#[test]
fn the_cli_call_runs_any_tool_and_refuses_unknown_parameters() {
    require("pyright-langserver");
    let ws = example("python");
    let (code, out, err) = lspgate_cli(
        ws.path(),
        &[
            "--json",
            "call",
            "hover",
            r#"{"file": "app.py", "line": 12, "symbol": "compute"}"#,
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["contents"].as_str().unwrap().contains("def compute"),
        "{v}"
    );

    let (code, _, err) = lspgate_cli(
        ws.path(),
        &[
            "call",
            "hover",
            r#"{"file": "app.py", "line": 12, "colum": 12}"#,
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.starts_with("invalid_params: unknown parameter `colum` for `hover`"),
        "{err}"
    );
    // The CLI's own flags are checked by the parser: a typo never reaches a tool.
    let (code, _, err) = lspgate_cli(ws.path(), &["hover", "app.py:12", "--symbl", "compute"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = lspgate_cli(ws.path(), &["call", "hovr", "{}"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown tool `hovr`"), "{err}");
}
