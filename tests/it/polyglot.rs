//! One lspgate process serving a polyglot workspace (Python with a nested package root,
//! TypeScript, C, shell scripts with and without an extension) with no config; then with a
//! config that overrides a preset; then with servers that cannot start; a TCP server; restarts,
//! `--warm`, and the `lspgate://servers` resource.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn diag_lines(d: &Value) -> Vec<(u64, String)> {
    diags(&d["files"])
        .iter()
        .map(|x| {
            (
                x["line"].as_u64().unwrap(),
                x["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_language_is_answered_by_its_own_server() {
    for s in [
        "pyright-langserver",
        "typescript-language-server",
        "clangd",
        "bash-language-server",
        "shellcheck",
    ] {
        require(s);
    }
    let ws = example("polyglot");
    let gate = Gate::start(ws.path(), &[], &[]).await;

    // Each language's own server: its hover on a known symbol, its error on a known line.
    let cases = [
        (
            "backend/app.py",
            Some(("greet", "def greet(name: str) -> str")),
            5,
            "\"int\"",
        ),
        ("packages/billing/billing.py", None, 5, "\"str\""),
        (
            "web/src/index.ts",
            Some(("double", "function double(n: number): number")),
            5,
            "not assignable",
        ),
        (
            "native/calc.c",
            Some(("square", "int square(int x)")),
            4,
            "char *",
        ),
    ];
    for (file, hover, line, error) in cases {
        if let Some((symbol, signature)) = hover {
            let (h, _) = gate
                .ok(
                    "hover",
                    json!({"file": file, "line": line, "symbol": symbol}),
                )
                .await;
            assert!(
                h["contents"].as_str().unwrap().contains(signature),
                "{file}: {h}"
            );
        }
        let (d, text) = gate.ok("diagnostics", json!({"file": file})).await;
        assert!(
            diag_lines(&d)
                .iter()
                .any(|(l, m)| *l == line && m.contains(error)),
            "{file}: {text}"
        );
    }

    // Shell: by extension, and by shebang for an extension-less script; shellcheck via the server.
    for file in ["scripts/deploy.sh", "scripts/release"] {
        let (d, text) = gate.ok("diagnostics", json!({"file": file})).await;
        let found = diags(&d["files"]);
        let codes: Vec<&str> = found.iter().filter_map(|x| x["code"].as_str()).collect();
        assert!(codes.contains(&"SC2086"), "{file}: {text}");
    }
    let (syms, _) = gate
        .ok("document_symbols", json!({"file": "scripts/deploy.sh"}))
        .await;
    assert_eq!(syms["source"], "server");
    assert!(
        syms["symbols"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "deploy"),
        "{syms}"
    );

    // One pyright per root: the nested package got its own.
    let (servers, text) = gate.ok("servers", json!({})).await;
    let list = servers["servers"].as_array().unwrap();
    let pyright_roots: Vec<&str> = list
        .iter()
        .filter(|s| s["name"] == "builtin/pyright")
        .map(|s| s["root"].as_str().unwrap())
        .collect();
    assert!(
        pyright_roots.contains(&".") && pyright_roots.contains(&"packages/billing"),
        "{text}"
    );
    let ts = list
        .iter()
        .find(|s| s["name"] == "builtin/typescript-language-server")
        .unwrap();
    assert_eq!(ts["root"], "web");
    for name in [
        "builtin/pyright",
        "builtin/typescript-language-server",
        "builtin/clangd",
        "builtin/bash-language-server",
    ] {
        let s = list
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing: {text}"));
        assert!(
            matches!(s["state"].as_str(), Some("ready" | "indexing")),
            "{name}: {s}"
        );
        assert!(s["pid"].as_u64().is_some(), "{name}: {s}");
        assert!(
            s["capabilities"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c == "hover"),
            "{name}: {s}"
        );
    }

    // The same list as a resource.
    let res = gate
        .client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "lspgate://servers",
        ))
        .await
        .unwrap();
    let body = match &res.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("{other:?}"),
    };
    let v: Value = serde_json::from_str(&body).unwrap();
    assert!(
        v["servers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "builtin/clangd")
    );
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_for_python_merge_their_diagnostics() {
    require("pyright-langserver");
    require("ruff");
    let ws = example("python");
    let gate = Gate::start(ws.path(), &[], &[]).await;
    let buffer = "import os\nx: int = \"a\"\n";
    let (d, text) = gate
        .ok("diagnostics", json!({"file": "app.py", "source": buffer}))
        .await;
    let found = diags(&d["files"]);
    let sources: Vec<&str> = found.iter().filter_map(|x| x["source"].as_str()).collect();
    assert!(
        found.iter().any(|x| x["line"] == 1 && x["code"] == "F401"),
        "ruff's unused import missing: {text}"
    );
    assert!(
        found
            .iter()
            .any(|x| x["line"] == 2 && x["code"] == "reportAssignmentType"),
        "pyright's error missing: {text}"
    );
    assert!(
        sources.contains(&"Ruff") || sources.contains(&"ruff"),
        "{sources:?}"
    );
    // Queries go to the first server that supports them: pyright's hover, not ruff's.
    let (h, _) = gate
        .ok(
            "hover",
            json!({"file": "app.py", "line": 12, "symbol": "compute"}),
        )
        .await;
    assert!(
        h["contents"].as_str().unwrap().contains("def compute"),
        "{h}"
    );
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_entry_overrides_a_preset() {
    require("pyright-langserver");
    let ws = example("polyglot");
    std::fs::write(
        ws.path().join("lspgate.toml"),
        format!(
            "[[server]]\nname = \"builtin/clangd\"\ncommand = \"{FIXTURE}\"\nlanguages = [\"c\"]\n"
        ),
    )
    .unwrap();
    let gate = Gate::start_trusted(ws.path(), &[], &[]).await;
    let (_, text) = gate
        .ok(
            "hover",
            json!({"file": "native/calc.c", "line": 4, "symbol": "square"}),
        )
        .await;
    assert!(
        text.contains("word=square"),
        "the override did not serve C: {text}"
    );
    let (_, text) = gate
        .ok(
            "hover",
            json!({"file": "backend/app.py", "line": 5, "symbol": "greet"}),
        )
        .await;
    assert!(text.contains("def greet"), "{text}");
    let (servers, _) = gate.ok("servers", json!({})).await;
    let clangd = servers["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "builtin/clangd")
        .unwrap();
    assert_eq!(clangd["origin"], "config");
    assert!(
        clangd["command"]
            .as_str()
            .unwrap()
            .contains("lspgate-fixture-server")
    );
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_servers_do_not_break_the_others() {
    require("pyright-langserver");
    let ws = example("polyglot");
    std::fs::write(
        ws.path().join("lspgate.toml"),
        format!(
            "[[server]]\nname = \"local/ghost\"\ncommand = \"no-such-language-server\"\nlanguages = [\"c\"]\n\n\
             [[server]]\nname = \"local/crasher\"\ncommand = \"{FIXTURE}\"\nargs = [\"--fail-init\"]\nlanguages = [\"typescript\"]\n"
        ),
    )
    .unwrap();
    let gate = Gate::start_trusted(ws.path(), &[], &[]).await;
    let r = gate
        .call(
            "hover",
            json!({"file": "native/calc.c", "line": 1, "column": 5}),
        )
        .await;
    assert_eq!(r.is_error, Some(true), "{r:?}");
    let e = &r.structured_content.as_ref().unwrap()["error"];
    assert_eq!(e["code"], "server_failed", "{e}");
    assert!(
        e["data"]["fix"].as_str().unwrap().contains("lspgate.toml"),
        "{e}"
    );
    assert_eq!(e["data"]["command"], "no-such-language-server");
    let r = gate
        .call("diagnostics", json!({"file": "web/src/index.ts"}))
        .await;
    let e = &r.structured_content.as_ref().unwrap()["error"];
    assert_eq!(e["code"], "server_failed", "{e}");
    assert!(
        e["data"]["stderr_tail"]
            .as_str()
            .unwrap()
            .contains("told to fail"),
        "{e}"
    );
    // Python is unaffected.
    let (d, text) = gate
        .ok("diagnostics", json!({"file": "backend/app.py"}))
        .await;
    assert!(!diag_lines(&d).is_empty(), "{text}");
    let (h, _) = gate
        .ok(
            "hover",
            json!({"file": "backend/app.py", "line": 5, "symbol": "greet"}),
        )
        .await;
    assert!(h["contents"].as_str().unwrap().contains("def greet"), "{h}");
    let (servers, text) = gate.ok("servers", json!({})).await;
    let states: Vec<(String, String)> = servers["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        states.contains(&("local/ghost".into(), "failed".into())),
        "{text}"
    );
    assert!(
        states.contains(&("local/crasher".into(), "failed".into())),
        "{text}"
    );
    assert!(
        states.contains(&("builtin/pyright".into(), "ready".into())),
        "{text}"
    );
    gate.stop().await;
}

#[test]
fn an_invalid_config_is_rejected_at_start_with_its_line() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("lspgate.toml"),
        "[[server]]\nname = \"pyright\"\ncommand = \"x\"\nlanguages = [\"python\"]\n",
    )
    .unwrap();
    let out = std::process::Command::new(LSPGATE)
        .env("LSPGATE_STANDALONE", "1")
        .args(["serve", "--root"])
        .arg(ws.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("lspgate.toml:2: ") && err.contains("namespace/name"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_already_listening_on_tcp() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.py"), "target = 1\n").unwrap();
    let port_file = ws.path().join("port");
    let mut server = std::process::Command::new(FIXTURE)
        .args(["--listen", "127.0.0.1:0", "--port-file"])
        .arg(&port_file)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let port = loop {
        if let Ok(p) = std::fs::read_to_string(&port_file)
            && !p.is_empty()
        {
            break p;
        }
        assert!(Instant::now() < deadline, "fixture did not listen");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::fs::write(
        ws.path().join("lspgate.toml"),
        format!("[[server]]\nname = \"remote/fixture\"\ntransport = \"tcp\"\naddress = \"127.0.0.1:{port}\"\nlanguages = [\"python\"]\n"),
    )
    .unwrap();
    let gate = Gate::start_trusted(ws.path(), &[], &[]).await;
    let (_, text) = gate
        .ok(
            "hover",
            json!({"file": "a.py", "line": 1, "symbol": "target"}),
        )
        .await;
    assert!(text.contains("word=target"), "{text}");
    gate.stop().await;
    let _ = server.kill();
    let _ = server.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_and_warm_start() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.py"), "target = 1\n").unwrap();
    let gate = Gate::start(ws.path(), &[], &[FIXTURE]).await;
    let (before, _) = gate.ok("servers", json!({})).await;
    let pid = before["servers"][0]["pid"].as_u64().unwrap();
    let (after, text) = gate
        .ok(
            "restart_server",
            json!({"name": "cli/lspgate-fixture-server"}),
        )
        .await;
    let s = &after["servers"][0];
    assert_eq!(s["restarts"], 1, "{text}");
    assert_eq!(s["state"], "ready", "{text}");
    assert_ne!(s["pid"].as_u64().unwrap(), pid);
    let (_, text) = gate
        .ok(
            "hover",
            json!({"file": "a.py", "line": 1, "symbol": "target"}),
        )
        .await;
    assert!(text.contains("word=target"));
    let (code, _) = gate
        .err("restart_server", json!({"name": "nobody/here"}))
        .await;
    assert_eq!(code, "invalid_params");
    gate.stop().await;

    // --warm starts the servers for the languages found, before any call.
    require("pyright-langserver");
    let py = example("python");
    let gate = Gate::start(py.path(), &["--warm"], &[]).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (servers, text) = gate.ok("servers", json!({})).await;
        let pyright = servers["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "builtin/pyright")
            .cloned()
            .unwrap();
        if pyright["pid"].is_u64() {
            break;
        }
        assert!(Instant::now() < deadline, "pyright not warmed: {text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_settings_env_and_capability_allowlist_reach_the_server() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.py"), "target = 1\n").unwrap();
    let log = ws.path().join("fixture.log");
    std::fs::write(
        ws.path().join("lspgate.toml"),
        format!(
            "[[server]]\nname = \"local/fixture\"\ncommand = \"{FIXTURE}\"\n\
             args = [\"--log\", \"{}\", \"--ask-config\", \"python.analysis\"]\n\
             languages = [\"python\"]\ncapabilities = [\"hover\", \"diagnostics\"]\n\
             env = {{ FIXTURE_HELLO = \"from-config\" }}\n\
             settings = {{ python = {{ analysis = {{ typeCheckingMode = \"strict\" }} }} }}\n",
            log.display()
        ),
    )
    .unwrap();
    let gate = Gate::start_trusted(ws.path(), &[], &[]).await;
    let (_, text) = gate
        .ok(
            "hover",
            json!({"file": "a.py", "line": 1, "symbol": "target"}),
        )
        .await;
    assert!(text.contains("word=target"), "{text}");
    // The allowlist hides what the server offers but the config did not allow.
    let (code, _) = gate
        .err(
            "references",
            json!({"file": "a.py", "line": 1, "symbol": "target"}),
        )
        .await;
    assert_eq!(code, "not_supported");
    let names = gate.tool_names().await;
    assert!(
        names.contains(&"hover".to_string()) && !names.contains(&"references".to_string()),
        "{names:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let l = loop {
        let l = std::fs::read_to_string(&log).unwrap_or_default();
        if l.contains("config ") || Instant::now() > deadline {
            break l;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(
        l.contains(r#"config [{"typeCheckingMode":"strict"}]"#),
        "{l}"
    );
    assert!(l.contains("env FIXTURE_HELLO=from-config"), "{l}");
    gate.stop().await;
}
