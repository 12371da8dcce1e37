//! Gates with real servers and toolchains: `lspgate check` (exit codes, JSON, SARIF,
//! `--changed`), tasks parsed from cargo, gcc and nim, `explain_failure`, `shrink` (disk never
//! written), and `execute_command`.

mod common;
use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

#[test]
fn check_exit_codes_json_sarif_and_changed() {
    require("pyright-langserver");
    let ws = example("python");
    let app = ws.path().join("app.py");
    // The example's deliberate error: exit 1, the error in JSON and in SARIF.
    let (code, out, err) = lspgate_cli(ws.path(), &["check", "--json"]);
    assert_eq!(code, 1, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["version"], 1);
    assert_eq!(report["ok"], false);
    assert_eq!(report["summary"]["files"], 4, "{report}");
    assert_eq!(report["summary"]["errors"], 1);
    let issue = report["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["severity"] == "error")
        .unwrap();
    assert_eq!(
        (
            issue["file"].as_str(),
            issue["line"].as_u64(),
            issue["origin"].as_str()
        ),
        (Some("app.py"), Some(12), Some("lsp"))
    );

    let (code, out, _) = lspgate_cli(ws.path(), &["check", "--sarif"]);
    assert_eq!(code, 1);
    let sarif: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let results: Vec<&Value> = sarif["runs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["results"].as_array().unwrap())
        .collect();
    let r = results.iter().find(|r| r["level"] == "error").unwrap();
    assert_eq!(r["ruleId"], "reportReturnType");
    let loc = &r["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uri"], "app.py");
    assert_eq!(loc["region"]["startLine"], 12);

    // Fixed: exit 0.
    let fixed = std::fs::read_to_string(&app)
        .unwrap()
        .replace("def broken() -> int:", "def broken() -> float:");
    std::fs::write(&app, &fixed).unwrap();
    let (code, out, err) = lspgate_cli(ws.path(), &["check"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("ok: 4 files, 0 errors"), "{out}");

    // --changed: only what git says changed.
    git(ws.path(), &["init", "-q"]);
    git(ws.path(), &["add", "."]);
    git(ws.path(), &["commit", "-qm", "start"]);
    let report_py = ws.path().join("shop/report.py");
    let broken = std::fs::read_to_string(&report_py).unwrap() + "\nbad: int = 'x'\n";
    std::fs::write(&report_py, broken).unwrap();
    let (code, out, _) = lspgate_cli(ws.path(), &["check", "--changed", "--json"]);
    assert_eq!(code, 1, "{out}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["summary"]["files"], 1, "{report}");
    assert!(
        report["issues"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["file"] == "shop/report.py")
    );

    // Paths and globs narrow the scope.
    let (_, out, _) = lspgate_cli(ws.path(), &["check", "--json", "shop/*.py"]);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["summary"]["files"], 3, "{report}");
    let (code, _, err) = lspgate_cli(ws.path(), &["check", "nope.py"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn tasks_from_cargo_gcc_and_nim_are_parsed() {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path();
    std::fs::create_dir_all(dir.join("crate/src")).unwrap();
    std::fs::write(
        dir.join("crate/Cargo.toml"),
        "[package]\nname = \"t\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("crate/src/main.rs"),
        "fn main() {\n    let x: u32 = \"text\";\n    let _ = x;\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("main.c"),
        "int main(void) {\n  struct { int a; } s = 3;\n  return 0;\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("app.nim"), "var x: int = \"text\"\necho x\n").unwrap();
    std::fs::write(
        dir.join("lspgate.toml"),
            "[[task]]\nname = \"build\"\ncommand = [\"cargo\", \"check\", \"--quiet\", \"--message-format=json\", \"--manifest-path\", \"crate/Cargo.toml\"]\nparser = \"cargo-json\"\n\n\
             [[task]]\nname = \"cc\"\ncommand = [\"gcc\", \"-fsyntax-only\", \"main.c\"]\nparser = \"gcc\"\n\n\
             [[task]]\nname = \"nim\"\ncommand = [\"nim\", \"check\", \"--hints:off\", \"app.nim\"]\nparser = \"nim\"\n\n\
             [[task]]\nname = \"custom\"\ncommand = [\"sh\", \"-c\", \"echo 'FAIL main.c:3 custom failure'\"]\nparser = '^FAIL (?P<file>\\S+):(?P<line>\\d+) (?P<message>.*)$'\n"
    )
    .unwrap();
    let run = |name: &str| {
        let (code, out, err) = lspgate_cli(dir, &["--json", "run-task", name]);
        assert!(code == 0 || code == 1, "{name}: {err}");
        serde_json::from_str::<Value>(&out).unwrap_or_else(|e| panic!("{name}: {e}: {out} {err}"))
    };
    let build = run("build");
    assert_eq!(build["ok"], false, "{build}");
    let d = build["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "E0308")
        .unwrap_or_else(|| panic!("{build}"));
    assert_eq!(
        (d["file"].as_str(), d["line"].as_u64()),
        (Some("crate/src/main.rs"), Some(2))
    );
    assert_eq!(d["origin"], "build");

    let cc = run("cc");
    let d = &cc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["severity"] == "error")
        .cloned()
        .unwrap_or_else(|| panic!("{cc}"));
    assert_eq!(
        (d["file"].as_str(), d["line"].as_u64()),
        (Some("main.c"), Some(2))
    );

    require("nim");
    let nim = run("nim");
    let d = nim["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["severity"] == "error")
        .cloned()
        .unwrap_or_else(|| panic!("{nim}"));
    assert_eq!(
        (
            d["file"].as_str().map(|f| f.ends_with("app.nim")),
            d["line"].as_u64()
        ),
        (Some(true), Some(1)),
        "{nim}"
    );

    let custom = run("custom");
    assert_eq!(custom["diagnostics"][0]["message"], "custom failure");

    // check --task merges a task's findings with the servers'.
    let (code, out, _) = lspgate_cli(
        dir,
        &["check", "--json", "--task", "cc", "main.c", "--", FIXTURE],
    );
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert!(
        report["issues"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["origin"] == "cc"),
        "{report}"
    );
    let (code, _, err) = lspgate_cli(dir, &["run-task", "nothing"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no task `nothing`"));
}

/// A 200-line file of 20 functions with one type error deep inside `f13`.
fn big_file() -> String {
    let mut lines = Vec::new();
    for i in 0..20 {
        lines.push(format!("def f{i}(x: int) -> int:"));
        for j in 0..7 {
            lines.push(format!("    y{j} = x + {j}"));
        }
        lines.push(if i == 13 {
            "    return \"oops\"".to_string()
        } else {
            "    return x".to_string()
        });
        lines.push(String::new());
    }
    lines.join("\n") + "\n"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shrink_and_explain_failure() {
    require("pyright-langserver");
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("pyproject.toml"),
        "[project]\nname = \"s\"\n",
    )
    .unwrap();
    let text = big_file();
    assert_eq!(text.lines().count(), 200);
    std::fs::write(ws.path().join("big.py"), &text).unwrap();
    let start = snapshot(ws.path());
    let gate = Gate::start(ws.path(), &[], &[]).await;

    let (e, out) = gate.ok("explain_failure", json!({"file": "big.py"})).await;
    assert_eq!(e["ok"], false);
    assert!(e["verdict"].as_str().unwrap().lines().count() <= 5, "{out}");
    assert!(
        e["verdict"].as_str().unwrap().contains("in function `f13`"),
        "{out}"
    );
    assert_eq!(e["culprit"]["symbol"], "f13");
    assert_eq!(e["culprit"]["line"], 139);
    assert!(
        e["culprit"]["lines"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().contains("return \"oops\""))
    );

    let (s, out) = gate.ok("shrink", json!({"file": "big.py"})).await;
    assert_eq!(s["original_lines"], 200);
    let minimal = s["minimal_lines"].as_u64().unwrap();
    assert!(minimal <= 5, "{out}");
    assert!(
        s["minimal_source"]
            .as_str()
            .unwrap()
            .contains("return \"oops\""),
        "{out}"
    );
    assert_eq!(s["kept_error"]["code"], "reportReturnType");
    assert_eq!(snapshot(ws.path()), start, "shrink wrote to disk");
    // A bound that hits returns the best so far.
    let (s, _) = gate
        .ok("shrink", json!({"file": "big.py", "max_steps": 2}))
        .await;
    assert_eq!(s["partial"], true);
    assert!(s["minimal_lines"].as_u64().unwrap() < 200);

    std::fs::write(ws.path().join("fine.py"), "x: int = 1\n").unwrap();
    let (e, _) = gate.ok("explain_failure", json!({"file": "fine.py"})).await;
    assert_eq!(e["ok"], true);
    let (code, _) = gate.err("shrink", json!({"file": "fine.py"})).await;
    assert_eq!(code, "invalid_params");
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn execute_command_passes_a_servers_command_through() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "make me loud\n").unwrap();
    let gate = Gate::start(ws.path(), &[], &[FIXTURE, "--actions"]).await;
    let (servers, _) = gate.ok("servers", json!({})).await;
    assert_eq!(servers["servers"][0]["commands"], json!(["fixture.upper"]));
    // The server answers about the file only once it has it open.
    gate.ok("hover", json!({"file": "a.txt", "line": 1, "column": 1}))
        .await;
    let uri = url::Url::from_file_path(ws.path().join("a.txt").canonicalize().unwrap()).unwrap();
    let (r, text) = gate
        .ok("execute_command", json!({"server": "cli/lspgate-fixture-server", "command": "fixture.upper", "arguments": [uri.as_str(), 0]}))
        .await;
    assert_eq!(r["applied"]["applied"], true, "{text}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "MAKE ME LOUD\n"
    );
    let (code, _) = gate
        .err(
            "execute_command",
            json!({"server": "cli/lspgate-fixture-server", "command": "nope"}),
        )
        .await;
    assert_eq!(code, "not_supported");
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_over_mcp_reports_progress() {
    let ws = tempfile::tempdir().unwrap();
    for i in 0..5 {
        std::fs::write(
            ws.path().join(format!("f{i}.py")),
            if i == 3 { "ERROR here\n" } else { "fine\n" },
        )
        .unwrap();
    }
    let gate = Gate::start(ws.path(), &[], &[FIXTURE]).await;
    let r = gate.call_tracked("check", json!({}), Some("chk")).await;
    let report = r.structured_content.clone().unwrap();
    assert_eq!(report["ok"], false, "{report}");
    assert_eq!(report["summary"]["files"], 5);
    assert_eq!(report["issues"][0]["file"], "f3.py");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while gate.progress().len() < 5 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let progress = gate.progress();
    // One per file, up to the total, all before the result (rmcp's client puts its own token
    // on the request, and runs its handlers concurrently, so arrival order is not checked).
    let mut steps: Vec<f64> = progress
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    steps.sort_by(f64::total_cmp);
    assert_eq!(steps, [1.0, 2.0, 3.0, 4.0, 5.0], "{progress:?}");
    assert!(progress.iter().all(|p| p["total"] == 5.0));
    gate.stop().await;
}
