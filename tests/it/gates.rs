//! Gates with real servers and toolchains: `lspgate check` (exit codes, JSON, SARIF validated
//! against the SARIF 2.1.0 schema, `--changed`), honest gates (no server for the files in
//! scope, a server that fails to start, one that sends nothing or errors on some files, tasks
//! that cannot run or fail unparsed: `ok: false`, `unchecked`, exit 2), tasks parsed from
//! cargo, gcc and nim, `explain_failure`, `shrink` (disk never written), and `execute_command`.

use crate::common;
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
    assert_eq!(report["version"], 2);
    assert_eq!(report["ok"], false);
    assert_eq!(report["summary"]["files"], 4, "{report}");
    assert_eq!(report["summary"]["errors"], 1);
    let issues = diags(&report["files"]);
    let issue = issues.iter().find(|i| i["severity"] == "error").unwrap();
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
    assert_valid_sarif(&sarif);
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(
        sarif["runs"][0]["invocations"][0]["executionSuccessful"],
        true
    );
    assert_eq!(sarif["runs"][0]["invocations"][0]["exitCode"], 1);
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
        diags(&report["files"])
            .iter()
            .all(|i| i["file"] == "shop/report.py"),
        "{report}"
    );

    // Paths and globs narrow the scope.
    let (_, out, _) = lspgate_cli(ws.path(), &["check", "--json", "shop/*.py"]);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["summary"]["files"], 3, "{report}");
    let (code, _, err) = lspgate_cli(ws.path(), &["check", "nope.py"]);
    assert_eq!(code, 2, "{err}");
    // A glob that matches nothing checked nothing: that is not a pass.
    let (code, out, _) = lspgate_cli(ws.path(), &["check", "--json", "src/**/*.py"]);
    assert_eq!(code, 2, "{out}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["unchecked"][0]["cause"], "no_files", "{report}");
}

/// A repository's executable configuration: git runs its file system monitor on `git status`,
/// a filter driver on a file whose stat changed, and the `post-index-change` hook when the
/// index is refreshed. `check --changed` runs git, and none of them (a workspace is not trusted
/// to run code by holding a `.git` folder), yet still finds what changed.
#[test]
fn check_changed_runs_nothing_the_repository_configures() {
    require("pyright-langserver");
    let ws = example("python");
    git(ws.path(), &["init", "-q"]);
    std::fs::write(ws.path().join(".gitattributes"), "*.py filter=evil\n").unwrap();
    git(ws.path(), &["add", "."]);
    git(ws.path(), &["commit", "-qm", "start"]);
    let marks = tempfile::tempdir().unwrap();
    let mark = |n: &str| marks.path().join(n).display().to_string();
    let git_dir = ws.path().join(".git");
    let mut config = std::fs::read_to_string(git_dir.join("config")).unwrap();
    config.push_str(&format!(
        "[core]\n\tfsmonitor = \"touch {} #\"\n[filter \"evil\"]\n\tclean = \"touch {}; cat\"\n\trequired = true\n",
        mark("fsmonitor"),
        mark("filter")
    ));
    std::fs::write(git_dir.join("config"), config).unwrap();
    let hook = git_dir.join("hooks/post-index-change");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch {}\n", mark("hook"))).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A new stat with the same size makes git read app.py through the clean filter.
    let app = ws.path().join("app.py");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&app)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let report_py = ws.path().join("shop/report.py");
    let broken = std::fs::read_to_string(&report_py).unwrap() + "\nbad: int = 'x'\n";
    std::fs::write(&report_py, broken).unwrap();

    let (code, out, err) = lspgate_cli(ws.path(), &["check", "--changed", "--json"]);
    let ran: Vec<_> = std::fs::read_dir(marks.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(ran.is_empty(), "git ran the repository's {ran:?}");
    assert_eq!(code, 1, "{out}{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["summary"]["files"], 1, "{report}");
    assert_eq!(report["files"][0]["file"], "shop/report.py", "{report}");
    // The same repository does run them for a plain `git status`: the test can fail.
    git(ws.path(), &["status", "--porcelain"]);
    assert!(std::path::Path::new(&mark("fsmonitor")).exists());
}

/// A root holding one Python file: pyright checks it in its workspace pass, which it ends
/// without ever beginning its progress; the check takes as long as asking that file (it waited
/// 30 s for progress that never came, then went file by file).
#[test]
fn a_check_of_a_one_file_root_answers_at_once() {
    require("pyright-langserver");
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("only.py"), "x: int = 'a'\n").unwrap();
    let home = tempfile::tempdir().unwrap();
    let clock = std::time::Instant::now();
    let out = Command::new(LSPGATE)
        .current_dir(ws.path())
        .args(["check", "--json"])
        .env("PATH", test_path())
        .env("LSPGATE_HOME", home.path())
        .env("LSPGATE_STANDALONE", "1")
        .env("LSPGATE_LOG", "lspgate_engine::ops::gates=info")
        .output()
        .unwrap();
    let took = clock.elapsed();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["summary"]["errors"], 1, "{report}");
    assert!(
        stderr.contains("workspace diagnostics pass")
            && !stderr.contains("no workspace diagnostics pass"),
        "the pass did not end: {stderr}"
    );
    assert!(took < std::time::Duration::from_secs(10), "took {took:?}");
}

/// The ways a check can fail to check, seen from the CLI (text, `--json`, `--sarif`): each
/// exits 2 with `ok: false` and the reason in `unchecked`, never 0.
fn could_not_check(dir: &Path, args: &[&str], home: &Path, path: &str) -> Value {
    let (code, out, err) = lspgate_cli_with(dir, &[&["check"], args].concat(), home, path);
    assert_eq!(code, 2, "text: {out}{err}");
    assert!(
        out.contains("COULD NOT CHECK") && out.contains("not checked: "),
        "{out}"
    );
    let (code, out, err) =
        lspgate_cli_with(dir, &[&["check", "--json"], args].concat(), home, path);
    assert_eq!(code, 2, "json: {out}{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["ok"], false, "{report}");
    assert!(
        !report["unchecked"].as_array().unwrap().is_empty(),
        "{report}"
    );
    let (code, out, err) =
        lspgate_cli_with(dir, &[&["check", "--sarif"], args].concat(), home, path);
    assert_eq!(code, 2, "sarif: {out}{err}");
    let sarif: Value = serde_json::from_str(&out).unwrap();
    assert_valid_sarif(&sarif);
    let run = &sarif["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "lspgate");
    let invocation = &run["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false, "{sarif}");
    assert_eq!(invocation["exitCode"], 2);
    let notes = invocation["toolExecutionNotifications"].as_array().unwrap();
    assert_eq!(
        notes.len(),
        report["unchecked"].as_array().unwrap().len(),
        "{sarif}"
    );
    for (n, u) in notes.iter().zip(report["unchecked"].as_array().unwrap()) {
        assert_eq!(n["descriptor"]["id"], u["cause"]);
        assert_eq!(n["message"]["text"], u["reason"]);
    }
    report
}

/// A PATH without any Python language server (pyright, basedpyright, pylsp, ruff).
const BARE_PATH: &str = "/usr/bin:/bin";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_server_for_the_files_in_scope_is_not_a_pass() {
    for c in [
        "pyright-langserver",
        "basedpyright-langserver",
        "pylsp",
        "ruff",
    ] {
        assert!(
            std::env::split_paths(BARE_PATH).all(|d| !d.join(c).exists()),
            "{c} is on {BARE_PATH}: this test needs a PATH without Python servers"
        );
    }
    let ws = workspace(&[
        ("a.py", "x: int = 'a'\n"),
        ("b.py", "y = 1\n"),
        (
            "notes.txt",
            "plain text: no server is known for it, so it is not in scope\n",
        ),
    ]);
    let home = new_home();
    let report = could_not_check(ws.path(), &[], &home, BARE_PATH);
    assert_eq!(report["summary"]["files"], 0, "{report}");
    assert_eq!(report["summary"]["unchecked"], 2, "{report}");
    let u = &report["unchecked"];
    assert_eq!(u.as_array().unwrap().len(), 1, "aggregated: {report}");
    assert_eq!(
        (
            u[0]["server"].as_str(),
            u[0]["cause"].as_str(),
            u[0]["language"].as_str(),
            u[0]["files"].as_u64()
        ),
        (
            Some("builtin/pyright"),
            Some("no_server"),
            Some("python"),
            Some(2)
        )
    );
    assert_eq!(u[0]["examples"], json!(["a.py", "b.py"]));
    assert!(
        u[0]["reason"]
            .as_str()
            .unwrap()
            .contains("install it with `lspgate install pyright`"),
        "{report}"
    );
    // A file named on the command line is in scope even when no server is known for it.
    let report = could_not_check(ws.path(), &["notes.txt"], &home, BARE_PATH);
    assert_eq!(report["unchecked"][0]["file"], "notes.txt", "{report}");
    assert_eq!(report["unchecked"][0]["cause"], "no_server");
    // A workspace with nothing a server is known for: nothing was checked, and it says so.
    let empty = workspace(&[("notes.txt", "hello\n")]);
    let report = could_not_check(empty.path(), &[], &home, BARE_PATH);
    assert_eq!(report["unchecked"][0]["cause"], "no_files", "{report}");

    // The same over MCP.
    let gate = Gate::start_with_env(ws.path(), &[], &[], &[("PATH", BARE_PATH)]).await;
    let (r, text) = gate.ok("check", json!({})).await;
    assert_eq!(r["ok"], false, "{text}");
    assert_eq!(r["unchecked"][0]["cause"], "no_server", "{text}");
    assert!(text.contains("COULD NOT CHECK: 0 files"), "{text}");
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_checks_nothing() {
    let ws = workspace(&[
        ("a.py", "x = 1\n"),
        ("b.py", "y = 2\n"),
        ("c.py", "z = 3\n"),
        (
            "lspgate.toml",
            &format!(
                "[[server]]\nname = \"local/broken\"\ncommand = \"{FIXTURE}\"\nargs = [\"--fail-init\"]\nlanguages = [\"python\"]\n"
            ),
        ),
    ]);
    let home = new_home();
    let report = could_not_check(
        ws.path(),
        &["--config", "lspgate.toml"],
        &home,
        &test_path(),
    );
    let broken: Vec<&Value> = report["unchecked"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["server"] == "local/broken")
        .collect();
    assert_eq!(
        broken.len(),
        1,
        "one entry for the server and cause: {report}"
    );
    assert_eq!(broken[0]["cause"], "server_failed");
    assert_eq!(broken[0]["files"], 3);
    assert!(
        broken[0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("local/broken: 3 files not checked: local/broken could not start"),
        "{report}"
    );
    assert_eq!(report["summary"]["files"], 0, "{report}");

    let gate = Gate::start_trusted(ws.path(), &[], &[]).await;
    let (r, text) = gate.ok("check", json!({})).await;
    assert_eq!(r["ok"], false, "{text}");
    assert_eq!(r["unchecked"][0]["server"], "local/broken", "{text}");
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_a_server_says_nothing_about_or_refuses_are_unchecked() {
    // Push: 8 files get no diagnostics at all (one entry, five examples), 3 are fine.
    let mut files: Vec<(String, String)> = (0..8)
        .map(|i| (format!("quiet{i}.py"), "SILENT\n".to_string()))
        .collect();
    files.extend((0..3).map(|i| (format!("fine{i}.py"), "ok\n".to_string())));
    let ws = workspace(&files);
    let home = new_home();
    let report = could_not_check(
        ws.path(),
        &["--diagnostics-timeout", "1", "--", FIXTURE],
        &home,
        &test_path(),
    );
    assert_eq!(report["summary"]["files"], 3, "{report}");
    assert_eq!(report["summary"]["unchecked"], 8, "{report}");
    let u = &report["unchecked"][0];
    assert_eq!(report["unchecked"].as_array().unwrap().len(), 1, "{report}");
    assert_eq!(u["cause"], "not_fresh");
    assert_eq!(u["files"], 8);
    assert_eq!(u["examples"].as_array().unwrap().len(), 5, "{report}");
    assert_eq!(
        u["reason"],
        "cli/lspgate-fixture-server: 8 files sent no diagnostics within 1 s"
    );

    // Pull: the server refuses two files; what it found in another is still reported.
    let ws = workspace(&[
        ("r1.py", "REFUSE\n"),
        ("r2.py", "REFUSE\n"),
        ("bad.py", "ERROR here\n"),
    ]);
    let gate = Gate::start(ws.path(), &[], &[FIXTURE, "--pull"]).await;
    let (r, text) = gate.ok("check", json!({})).await;
    assert_eq!(r["ok"], false, "{text}");
    assert_eq!(r["summary"]["errors"], 1, "{text}");
    assert_eq!(r["summary"]["files"], 1, "{text}");
    assert_eq!(r["unchecked"][0]["cause"], "server_error", "{text}");
    assert_eq!(r["unchecked"][0]["files"], 2, "{text}");
    assert!(
        r["unchecked"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("fixture refuses this file"),
        "{text}"
    );
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_cannot_run_or_fails_unparsed_is_not_a_pass() {
    let ws = workspace(&[
        ("a.py", "ok\n"),
        (
            "lspgate.toml",
            "[[task]]\nname = \"broken\"\ncommand = [\"sh\", \"-c\", \"echo 'something went wrong' >&2; exit 3\"]\nparser = \"gcc\"\n\n\
             [[task]]\nname = \"absent\"\ncommand = [\"no-such-tool-anywhere\"]\n\n\
             [[task]]\nname = \"fine\"\ncommand = [\"true\"]\n\n\
             [[task]]\nname = \"finds\"\ncommand = [\"sh\", \"-c\", \"echo 'a.py:1:1: error: bad' >&2; exit 1\"]\nparser = \"gcc\"\n",
        ),
    ]);
    let home = new_home();
    let cli = |args: &[&str]| {
        let all = [&["--config", "lspgate.toml"], args, &["--", FIXTURE]].concat();
        lspgate_cli_with(ws.path(), &all, &home, &test_path())
    };
    let report = could_not_check(
        ws.path(),
        &[
            "--config",
            "lspgate.toml",
            "--task",
            "broken",
            "--task",
            "absent",
            "--",
            FIXTURE,
        ],
        &home,
        &test_path(),
    );
    let by_task = |name: &str| {
        report["unchecked"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["task"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name}: {report}"))
    };
    let broken = by_task("broken");
    assert_eq!(broken["cause"], "task_failed");
    let why = broken["reason"].as_str().unwrap();
    assert!(
        why.contains("exited with 3")
            && why.contains("parser `gcc`")
            && why.contains("something went wrong"),
        "{why}"
    );
    let absent = by_task("absent");
    assert_eq!(absent["cause"], "task_not_run");
    assert!(
        absent["reason"]
            .as_str()
            .unwrap()
            .starts_with("task `absent`: cannot run `no-such-tool-anywhere`"),
        "{absent}"
    );
    // The files were checked all the same (the fixture serves every language: a.py and
    // lspgate.toml).
    assert_eq!(report["summary"]["files"], 2, "{report}");
    // A task that passes, and one that fails with what its parser shows: 0 and 1.
    let (code, out, err) = cli(&["check", "--task", "fine"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = cli(&["check", "--json", "--task", "finds"]);
    assert_eq!(code, 1, "{out}{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(diags(&report["files"])[0]["origin"], "finds", "{report}");
    assert!(report.get("unchecked").is_none(), "{report}");

    let gate = Gate::start_trusted(ws.path(), &[], &[FIXTURE]).await;
    let (r, text) = gate.ok("check", json!({"tasks": ["broken"]})).await;
    assert_eq!(r["ok"], false, "{text}");
    assert_eq!(r["unchecked"][0]["task"], "broken", "{text}");
    assert!(
        text.contains("not checked: task `broken` exited with 3"),
        "{text}"
    );
    gate.stop().await;
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
        // Named with --config: trusted by that act.
        let (code, out, err) = lspgate_cli(
            dir,
            &["--config", "lspgate.toml", "--json", "run-task", name],
        );
        assert!(code == 0 || code == 1, "{name}: {err}");
        serde_json::from_str::<Value>(&out).unwrap_or_else(|e| panic!("{name}: {e}: {out} {err}"))
    };
    let build = run("build");
    assert_eq!(build["ok"], false, "{build}");
    let d = diags(&build["diagnostics"])
        .into_iter()
        .find(|d| d["code"] == "E0308")
        .unwrap_or_else(|| panic!("{build}"));
    assert_eq!(
        (d["file"].as_str(), d["line"].as_u64()),
        (Some("crate/src/main.rs"), Some(2))
    );
    assert_eq!(d["origin"], "build");

    let cc = run("cc");
    let d = diags(&cc["diagnostics"])
        .into_iter()
        .find(|d| d["severity"] == "error")
        .unwrap_or_else(|| panic!("{cc}"));
    assert_eq!(
        (d["file"].as_str(), d["line"].as_u64()),
        (Some("main.c"), Some(2))
    );

    require("nim");
    let nim = run("nim");
    let d = diags(&nim["diagnostics"])
        .into_iter()
        .find(|d| d["severity"] == "error")
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
    assert_eq!(
        diags(&custom["diagnostics"])[0]["message"],
        "custom failure"
    );

    // check --task merges a task's findings with the servers'.
    let (code, out, _) = lspgate_cli(
        dir,
        &[
            "--config",
            "lspgate.toml",
            "check",
            "--json",
            "--task",
            "cc",
            "main.c",
            "--",
            FIXTURE,
        ],
    );
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert!(
        diags(&report["files"]).iter().any(|i| i["origin"] == "cc"),
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
    assert_eq!(report["files"][0]["file"], "f3.py", "{report}");
    let progress = gate.wait_for_progress(6).await;
    // The total at once, then one per file, up to the total, all before the result (rmcp's client puts its own token
    // on the request, and runs its handlers concurrently, so arrival order is not checked).
    let mut steps: Vec<f64> = progress
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    steps.sort_by(f64::total_cmp);
    assert_eq!(steps, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], "{progress:?}");
    assert!(progress.iter().all(|p| p["total"] == 5.0));
    gate.stop().await;
}

/// The harness's schema checks can fail: a wrong type, a missing field, a SARIF log a consumer
/// would reject.
#[test]
fn the_schema_checks_can_fail() {
    let schema =
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    assert_eq!(conforms(&schema, &schema, &json!({"n": 1}), ""), Ok(()));
    assert!(conforms(&schema, &schema, &json!({"n": "1"}), "").is_err());
    assert!(conforms(&schema, &schema, &json!({}), "").is_err());
    let minimal = json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}}]});
    assert_eq!(sarif_errors(&minimal), Ok(()));
    let nameless = json!({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]});
    assert!(sarif_errors(&nameless).is_err());
    let bad_level = json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
        "results": [{"level": "fatal", "message": {"text": "m"}}]}]});
    assert!(sarif_errors(&bad_level).is_err());
}

/// `shrink` takes a candidate's errors only from an answer for that candidate: a server that
/// leaves some versions unanswered (the fixture's `FLAKY`) makes it keep lines, never take the
/// previous candidate's push as the answer; the kept error is the one the final file has; a
/// file the server never answers for is a `timeout`, not a made-up reduction.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shrink_judges_only_answers_for_each_candidate() {
    let ws = tempfile::tempdir().unwrap();
    let mut text = String::from("FLAKY\n");
    for i in 0..12 {
        text.push_str(&format!("line {i}\n"));
    }
    text.push_str("ERROR here\n");
    std::fs::write(ws.path().join("a.txt"), &text).unwrap();
    std::fs::write(ws.path().join("b.txt"), "SILENT\nERROR here\n").unwrap();
    let gate = Gate::start(ws.path(), &["--diagnostics-timeout", "0.5"], &[FIXTURE]).await;
    let (s, out) = gate.ok("shrink", json!({"file": "a.txt"})).await;
    let minimal = s["minimal_source"].as_str().unwrap();
    assert!(minimal.contains("ERROR here"), "{out}");
    assert_eq!(s["kept_error"]["message"], "found ERROR", "{out}");
    assert!(s["minimal_lines"].as_u64().unwrap() < 14, "{out}");

    let (code, message) = gate.err("shrink", json!({"file": "b.txt"})).await;
    assert_eq!(code, "timeout", "{message}");
    gate.stop().await;
}
