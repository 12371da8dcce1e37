//! pyright through lspgate, driven by a real MCP client over stdio: every tool, fresh
//! diagnostics after on-disk rewrites, references in files never opened, non-ASCII positions,
//! `symbol` addressing, overlays that leave the disk alone, and error codes.

use crate::common;
use common::*;
use serde_json::json;

/// Pyright's own diagnostics (ruff, when installed, reports on the same files).
fn pyright_only(d: &serde_json::Value) -> serde_json::Value {
    let all = group_diags(&d["files"][0]["diagnostics"]);
    serde_json::Value::Array(
        all.into_iter()
            .filter(|x| x["source"] == "Pyright")
            .collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_reading_tools() {
    require("pyright-langserver");
    let ws = example("python");
    let before = snapshot(ws.path());
    let gate = Gate::start(ws.path(), &[], &[]).await;

    let names = gate.tool_names().await;
    for t in [
        "hover",
        "definition",
        "references",
        "document_symbols",
        "workspace_symbols",
        "signature_help",
        "completions",
        "call_hierarchy",
        "diagnostics",
    ] {
        assert!(names.contains(&t.to_string()), "{t} missing from {names:?}");
    }

    // The first references call after start is already complete, files never opened included.
    let (refs, text) = gate
        .ok(
            "references",
            json!({"file": "shop/pricing.py", "line": 4, "symbol": "compute"}),
        )
        .await;
    assert_eq!(refs["total"], 6, "{text}");
    assert_eq!(
        files_of(&refs["files"]),
        ["app.py", "shop/pricing.py", "shop/report.py"]
    );
    assert!(text.contains("shop/report.py\n  3:26 from shop.pricing import compute\n  7:16 return sum(compute(p, 7) for p in prices)"), "{text}");
    let (page, _) = gate
        .ok(
            "references",
            json!({"file": "shop/pricing.py", "line": 4, "symbol": "compute", "limit": 4}),
        )
        .await;
    assert_eq!(locs(&page["files"]).len(), 4, "{page}");
    assert_eq!(page["next_cursor"], "4");
    let (rest, _) = gate
        .ok(
            "references",
            json!({"file": "shop/pricing.py", "line": 4, "symbol": "compute", "cursor": "4"}),
        )
        .await;
    assert_eq!(locs(&rest["files"]).len(), 2, "{rest}");

    // Non-ASCII before the symbol: the emoji is 2 UTF-16 units but 1 column for agents.
    let line7 = "    label = \"Total: 😀\"; total = cart.total()";
    let method_col = col_of(line7, "cart.total") + 5;
    let (h, text) = gate
        .ok(
            "hover",
            json!({"file": "app.py", "line": 7, "column": method_col}),
        )
        .await;
    assert!(
        text.contains("def total") && text.contains("float"),
        "{text}"
    );
    assert_eq!(h["range"]["column"], method_col);
    assert_eq!(h["range"]["end_column"], method_col + 5);
    // `symbol` + `occurrence` addresses the same place; numeric strings are accepted.
    let (h2, _) = gate
        .ok(
            "hover",
            json!({"file": "app.py", "line": "7", "symbol": "total", "occurrence": "2"}),
        )
        .await;
    assert_eq!(h2, h);

    let (d, _) = gate
        .ok(
            "definition",
            json!({"file": "app.py", "line": 12, "symbol": "compute"}),
        )
        .await;
    let loc = &locs(&d["files"])[0];
    assert_eq!(
        (
            loc["file"].as_str(),
            loc["line"].as_u64(),
            loc["column"].as_u64()
        ),
        (Some("shop/pricing.py"), Some(4), Some(5))
    );
    assert_eq!(
        loc["text"],
        "def compute(price: float, quantity: int) -> float:"
    );
    let (d, _) = gate
        .ok(
            "definition",
            json!({"file": "app.py", "line": 5, "symbol": "cart", "kind": "type_definition"}),
        )
        .await;
    let loc = &locs(&d["files"])[0];
    assert_eq!(loc["file"], "shop/pricing.py");
    assert_eq!(loc["line"], 9);
    let (d, _) = gate
        .ok(
            "definition",
            json!({"file": "app.py", "line": 1, "symbol": "Cart", "kind": "declaration"}),
        )
        .await;
    assert_eq!(locs(&d["files"])[0]["line"], 9);

    let (syms, text) = gate
        .ok("document_symbols", json!({"file": "shop/pricing.py"}))
        .await;
    assert_eq!(syms["source"], "server");
    let cart = syms["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Cart")
        .unwrap();
    assert_eq!(
        (
            cart["kind"].as_str(),
            cart["at"][0].as_u64(),
            cart["at"][2].as_u64()
        ),
        (Some("class"), Some(9), Some(19))
    );
    assert!(
        cart["children"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "total" && c["kind"] == "method")
    );
    assert!(text.contains("class Cart 9-19"), "{text}");

    let (ws_syms, _) = gate
        .ok(
            "workspace_symbols",
            json!({"query": "Cart", "kind": "class"}),
        )
        .await;
    assert!(
        ws_syms["symbols"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "Cart" && s["file"] == "shop/pricing.py" && s["at"][0] == 9),
        "{ws_syms}"
    );

    let line12 =
        "    return compute(1.0, 2)  # deliberate type error: a float where an int is declared";
    let (sig, _) = gate
        .ok(
            "signature_help",
            json!({"file": "app.py", "line": 12, "column": col_of(line12, "2)")}),
        )
        .await;
    let s0 = &sig["signatures"][0];
    assert!(
        s0["label"].as_str().unwrap().contains("price: float"),
        "{sig}"
    );
    assert_eq!(
        s0["parameters"][s0["active_parameter"].as_u64().unwrap() as usize],
        "quantity: int"
    );

    let (calls, text) = gate
        .ok("call_hierarchy", json!({"file": "shop/pricing.py", "line": 4, "symbol": "compute", "direction": "incoming"}))
        .await;
    let callers: Vec<&str> = calls["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for c in ["total", "broken", "weekly"] {
        assert!(callers.contains(&c), "{c} not among callers: {text}");
    }
    let weekly = calls["calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "weekly")
        .unwrap();
    let site = &locs(&weekly["call_sites"])[0];
    assert_eq!(site["file"], "shop/report.py");
    assert_eq!(site["line"], 7);

    // Completions in an unsaved buffer: the disk never sees it.
    let app = std::fs::read_to_string(ws.path().join("app.py")).unwrap();
    let buffer = app.replace("    return f\"{label} {total:.2f}\"", "    cart.");
    let (comp, _) = gate
        .ok(
            "completions",
            json!({"file": "app.py", "line": 8, "column": 10, "source": buffer, "limit": 50}),
        )
        .await;
    let labels: Vec<&str> = comp["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i[0].as_str().unwrap())
        .collect();
    assert!(
        labels.contains(&"add") && labels.contains(&"total"),
        "{labels:?}"
    );

    gate.stop().await;
    assert_eq!(
        snapshot(ws.path()),
        before,
        "a reading tool changed the workspace"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_diagnostics_are_never_stale() {
    require("pyright-langserver");
    let ws = example("python");
    let app = ws.path().join("app.py");
    let gate = Gate::start(ws.path(), &[], &[]).await;

    let (d, text) = gate.ok("diagnostics", json!({"file": "app.py"})).await;
    let ours = pyright_only(&d);
    let diags = ours.as_array().unwrap();
    assert_eq!(diags.len(), 1, "{text}");
    assert_eq!(diags[0]["line"], 12);
    assert_eq!(diags[0]["severity"], "error");
    assert_eq!(diags[0]["code"], "reportReturnType");
    assert!(
        diags[0]["message"].as_str().unwrap().contains("\"int\""),
        "{text}"
    );
    assert!(
        text.contains("app.py:12:12 error [reportReturnType]"),
        "{text}"
    );

    // A same-size rewrite that keeps the mtime: the answer still follows the disk.
    let original = std::fs::read_to_string(&app).unwrap();
    let same_size = original.replace("def broken() -> int:", "def broken() -> str:");
    assert_eq!(same_size.len(), original.len());
    rewrite(&app, &same_size, true);
    let (d, text) = gate.ok("diagnostics", json!({"file": "app.py"})).await;
    let ours = pyright_only(&d);
    let msg = ours[0]["message"].as_str().unwrap_or("");
    assert!(
        msg.contains("\"str\""),
        "stale diagnostics after a same-size rewrite: {text}"
    );

    // Fixed on disk: the error is gone at once.
    rewrite(
        &app,
        &original.replace("def broken() -> int:", "def broken() -> float:"),
        false,
    );
    let (d, text) = gate.ok("diagnostics", json!({"file": "app.py"})).await;
    assert_eq!(pyright_only(&d).as_array().unwrap().len(), 0, "{text}");
    assert!(d.get("partial").is_none());

    // An overlay with an error is analysed but never written, and the disk wins afterwards.
    let on_disk = std::fs::read(&app).unwrap();
    let overlay = "x: int = 'text'\n";
    let (d, _) = gate
        .ok("diagnostics", json!({"file": "app.py", "source": overlay}))
        .await;
    assert_eq!(pyright_only(&d)[0]["line"], 1);
    assert_eq!(std::fs::read(&app).unwrap(), on_disk);
    let (d, _) = gate.ok("diagnostics", json!({"file": "app.py"})).await;
    assert_eq!(pyright_only(&d).as_array().unwrap().len(), 0);

    // Whole-workspace form lists the files reported on.
    let (all, _) = gate.ok("diagnostics", json!({})).await;
    assert!(
        all["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["file"] == "app.py")
    );

    // Errors carry their codes.
    let (code, _) = gate
        .err(
            "hover",
            json!({"file": "../outside.py", "line": 1, "column": 1}),
        )
        .await;
    assert_eq!(code, "outside_root");
    let (code, _) = gate
        .err(
            "hover",
            json!({"file": "/etc/passwd", "line": 1, "column": 1}),
        )
        .await;
    assert_eq!(code, "outside_root");
    let (code, _) = gate
        .err("hover", json!({"file": "nope.py", "line": 1, "column": 1}))
        .await;
    assert_eq!(code, "file_not_found");
    let (code, msg) = gate
        .err(
            "hover",
            json!({"file": "app.py", "line": 5, "symbol": "nothere"}),
        )
        .await;
    assert_eq!(code, "symbol_not_found");
    assert!(msg.contains("cart = Cart()"), "{msg}");
    let (code, _) = gate
        .err("hover", json!({"file": "app.py", "line": 0, "column": 1}))
        .await;
    assert_eq!(code, "invalid_params");
    let (code, _) = gate
        .err("hover", json!({"file": "app.py", "line": 500, "column": 1}))
        .await;
    assert_eq!(code, "invalid_params");
    let (code, _) = gate
        .err("hover", json!({"file": "app.py", "line": "x", "column": 1}))
        .await;
    assert_eq!(code, "invalid_params");
    let (code, msg) = gate
        .err(
            "definition",
            json!({"file": "app.py", "line": 12, "symbol": "compute", "kind": "implementation"}),
        )
        .await;
    assert_eq!(code, "not_supported", "{msg}");
    let (code, _) = gate
        .err(
            "hover",
            json!({"file": "README.txt", "line": 1, "column": 1}),
        )
        .await;
    assert_eq!(code, "file_not_found");
    gate.stop().await;
}

/// `serve -- pyright-langserver --stdio` (no config, no preset by name) still waits for pyright
/// to load its workspace: the first references call, made right after `tools/list`, finds all
/// 121 sites in 31 files. (Without the preset's readiness knowledge this answered from
/// lib.py alone when pyright paused while reading its configuration.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explicit_pyright_command_answers_completely_at_once() {
    require("pyright-langserver");
    let module = |n: usize| {
        format!(
            "from lib import compute\n\n\ndef run_{n:02}() -> int:\n    a = compute(1)\n    b = compute(2)\n    c = compute(3)\n    return a + b + c\n"
        )
    };
    let mut files = vec![
        (
            "lib.py".to_string(),
            "def compute(x: int) -> int:\n    return x * 2\n".to_string(),
        ),
        (
            "pyrightconfig.json".to_string(),
            "{\"include\": [\".\"]}\n".to_string(),
        ),
    ];
    files.extend((0..30).map(|n| (format!("mod_{n:02}.py"), module(n))));
    let ws = workspace(&files);
    // A slow `python` (pyright asks it for search paths while loading its configuration) makes
    // pyright fall silent for a while before it has found its source files.
    let slow = tempfile::tempdir().unwrap();
    for name in ["python", "python3"] {
        let shim = slow.path().join(name);
        std::fs::write(
            &shim,
            "#!/bin/sh\nsleep 0.6\nexec /usr/bin/python3 \"$@\"\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!("{}:{}", slow.path().display(), test_path());
    let gate = Gate::start_with_env(
        ws.path(),
        &[],
        &["pyright-langserver", "--stdio"],
        &[("PATH", &path)],
    )
    .await;
    assert!(gate.tool_names().await.contains(&"references".to_string()));
    let (refs, text) = gate
        .ok(
            "references",
            json!({"file": "lib.py", "line": 1, "column": 5}),
        )
        .await;
    assert_eq!(refs["total"], 121, "{text}");
}
