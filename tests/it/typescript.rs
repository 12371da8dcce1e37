//! typescript-language-server through lspgate over MCP stdio: every tool, all four kinds of
//! `definition`, references in files never opened, non-ASCII positions, fresh diagnostics.

use crate::common;
use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_tools() {
    require("typescript-language-server");
    let ws = example("typescript");
    let main = ws.path().join("src/main.ts");
    let gate = Gate::start(ws.path(), &[], &[]).await;

    let (d, text) = gate.ok("diagnostics", json!({"file": "src/main.ts"})).await;
    let found = diags(&d["files"]);
    assert_eq!(found.len(), 1, "{text}");
    assert_eq!(
        (found[0]["line"].as_u64(), found[0]["column"].as_u64()),
        (Some(5), Some(14))
    );
    assert_eq!(found[0]["code"], "2322");

    let (refs, text) = gate
        .ok(
            "references",
            json!({"file": "src/shapes.ts", "line": 13, "symbol": "totalArea"}),
        )
        .await;
    assert_eq!(refs["total"], 6, "{text}");
    assert_eq!(
        files_of(&refs["files"]),
        ["src/main.ts", "src/report.ts", "src/shapes.ts"]
    );

    // Ω is one UTF-16 unit, 🚀 two; agents count both as one column.
    let line3 = "const label = \"Ωmega 🚀\"; const shapes = [new Circle(1), new Circle(2)];";
    let (h, text) = gate
        .ok(
            "hover",
            json!({"file": "src/main.ts", "line": 3, "symbol": "Circle"}),
        )
        .await;
    assert!(text.contains("Circle"), "{text}");
    assert_eq!(h["range"]["column"], col_of(line3, "Circle(1)"));
    let (h2, _) = gate
        .ok(
            "hover",
            json!({"file": "src/main.ts", "line": 3, "symbol": "Circle", "occurrence": 2}),
        )
        .await;
    assert_eq!(h2["range"]["column"], col_of(line3, "Circle(2)"));

    let (d, _) = gate
        .ok(
            "definition",
            json!({"file": "src/main.ts", "line": 4, "symbol": "totalArea"}),
        )
        .await;
    let at = locs(&d["files"]);
    assert_eq!(at[0]["file"], "src/shapes.ts");
    assert_eq!(at[0]["line"], 13);
    assert_eq!(at[0]["column"], 17);
    // typescript-language-server offers no declarationProvider: said, not faked.
    let (code, _) = gate
        .err(
            "definition",
            json!({"file": "src/main.ts", "line": 4, "symbol": "totalArea", "kind": "declaration"}),
        )
        .await;
    assert_eq!(code, "not_supported");
    let (d, _) = gate
        .ok(
            "definition",
            json!({"file": "src/main.ts", "line": 3, "symbol": "label", "kind": "type_definition"}),
        )
        .await;
    assert!(d["files"].is_array());
    locs(&d["files"]);
    let (d, text) = gate
        .ok("definition", json!({"file": "src/shapes.ts", "line": 1, "symbol": "Shape", "kind": "implementation"}))
        .await;
    let at = locs(&d["files"]);
    assert_eq!(at[0]["line"], 5, "{text}");
    assert_eq!(at[0]["file"], "src/shapes.ts");

    let (syms, _) = gate
        .ok("document_symbols", json!({"file": "src/shapes.ts"}))
        .await;
    let names: Vec<&str> = syms["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"Shape") && names.contains(&"Circle") && names.contains(&"totalArea"),
        "{names:?}"
    );

    let (ws_syms, _) = gate
        .ok("workspace_symbols", json!({"query": "Circle"}))
        .await;
    assert!(
        ws_syms["symbols"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "Circle" && s["file"] == "src/shapes.ts")
    );

    let line4 = "export const sum: number = totalArea(shapes);";
    let (sig, _) = gate
        .ok(
            "signature_help",
            json!({"file": "src/main.ts", "line": 4, "column": col_of(line4, "shapes)")}),
        )
        .await;
    assert!(
        sig["signatures"][0]["label"]
            .as_str()
            .unwrap()
            .contains("totalArea(shapes: Shape[])"),
        "{sig}"
    );

    let original = std::fs::read_to_string(&main).unwrap();
    let buffer = original.replace("console.log(label, sum, wrong);", "new Circle(1).");
    let (comp, _) = gate
        .ok(
            "completions",
            json!({"file": "src/main.ts", "line": 6, "column": 15, "source": buffer}),
        )
        .await;
    let labels: Vec<&str> = comp["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i[0].as_str().unwrap())
        .collect();
    assert!(
        labels.contains(&"area") && labels.contains(&"radius"),
        "{labels:?}"
    );
    assert_eq!(std::fs::read_to_string(&main).unwrap(), original);

    let (calls, text) = gate
        .ok("call_hierarchy", json!({"file": "src/shapes.ts", "line": 13, "symbol": "totalArea", "direction": "incoming"}))
        .await;
    assert!(
        calls["calls"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "report" && c["file"] == "src/report.ts"),
        "{text}"
    );
    let (out, text) = gate
        .ok("call_hierarchy", json!({"file": "src/shapes.ts", "line": 13, "symbol": "totalArea", "direction": "outgoing"}))
        .await;
    assert!(
        out["calls"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "reduce"),
        "{text}"
    );

    // Fixed on disk: diagnostics follow.
    std::fs::write(
        &main,
        original.replace("export const wrong: string", "export const wrong: number"),
    )
    .unwrap();
    let (d, text) = gate.ok("diagnostics", json!({"file": "src/main.ts"})).await;
    assert_eq!(d["files"][0]["file"], "src/main.ts", "{text}");
    assert_eq!(diags(&d["files"]).len(), 0, "{text}");

    let (code, _) = gate
        .err(
            "references",
            json!({"file": "src/main.ts", "line": 4, "symbol": "nothing"}),
        )
        .await;
    assert_eq!(code, "symbol_not_found");
    gate.stop().await;
}

/// A check asks tsserver about files nobody opened only once their project is loaded: asked
/// earlier, tsserver answers "No Project", the file is opened instead, and
/// typescript-language-server then runs its own diagnostics of it beside lspgate's. Only the
/// one file per project that loads it is opened (seen in what lspgate sends the server).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_opens_no_file_beyond_one_per_project() {
    require("typescript-language-server");
    let mut files: Vec<(String, String)> = (0..80)
        .map(|i| {
            (
                format!("src/m{i:02}.ts"),
                format!("export const v{i}: number = {i};\n"),
            )
        })
        .collect();
    files.push(("src/bad.ts".into(), "export const s: string = 1;\n".into()));
    files.push((
        "tsconfig.json".into(),
        r#"{"compilerOptions": {"strict": true, "noEmit": true}}"#.into(),
    ));
    let ws = workspace(&files);
    // The server, behind a script that keeps what lspgate sends it.
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("sent.log");
    let real = repo().join(".tools/node_modules/.bin/typescript-language-server");
    let wrapper = bin.path().join("typescript-language-server");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/bash\nexec '{}' \"$@\" < <(tee -a '{}')\n",
            real.display(),
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!("{}:{}", bin.path().display(), test_path());
    // No TypeScript beside the wrapper: the server would load the workspace's own, which it
    // does only in a trusted workspace.
    let home = new_home();
    trust(ws.path(), &home);
    let gate = Gate::start_in(ws.path(), &[], &[], &[("PATH", &path)], &home).await;
    let (report, text) = gate.ok("check", json!({})).await;
    assert_eq!(report["summary"]["files"], 81, "{text}");
    assert_eq!(report["summary"]["errors"], 1, "{text}");
    assert_eq!(report["files"][0]["file"], "src/bad.ts", "{text}");
    assert_eq!(diags(&report["files"]).len(), 1, "{text}");
    let sent = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        sent.matches("\"textDocument/didOpen\"").count(),
        1,
        "files opened: {:?}",
        sent.match_indices("\"uri\":\"file://")
            .map(|(i, _)| &sent[i..(i + 120).min(sent.len())])
            .collect::<Vec<_>>()
    );
    gate.stop().await;
}
