//! The command line calls the same operations as the MCP tools: text by default, `--json` for
//! scripts, exit codes, a server command after `--`, and the quick start's self-install.

use crate::common;
use common::*;
use std::process::Command;

#[test]
fn tool_subcommands_against_pyright() {
    require("pyright-langserver");
    let ws = example("python");
    let (code, out, err) = lspgate_cli(ws.path(), &["diagnostics", "app.py"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("app.py:12:12 error [reportReturnType]"),
        "{out}"
    );

    let (code, out, err) = lspgate_cli(
        ws.path(),
        &[
            "references",
            "shop/pricing.py:4",
            "--symbol",
            "compute",
            "--terse",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.trim(),
        "app.py 1:32 12:12\nshop/pricing.py 4:5 19:20\nshop/report.py 3:26 7:16"
    );

    let (code, out, err) = lspgate_cli(
        ws.path(),
        &["--json", "definition", "app.py:12", "--symbol", "compute"],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let loc = &locs(&v["files"])[0];
    assert_eq!(
        (loc["file"].as_str(), loc["line"].as_u64()),
        (Some("shop/pricing.py"), Some(4)),
        "{v}"
    );

    let (code, out, err) = lspgate_cli(ws.path(), &["hover", "app.py:7:38"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("def total"), "{out}");

    // Errors: code on stderr, exit 1; --json puts the error object on stdout.
    let (code, _, err) = lspgate_cli(ws.path(), &["hover", "../x.py:1:1"]);
    assert_eq!(code, 1);
    assert!(err.starts_with("outside_root: "), "{err}");
    let (code, out, _) = lspgate_cli(
        ws.path(),
        &["--json", "hover", "app.py:5", "--symbol", "zzz"],
    );
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["error"]["code"], "symbol_not_found");
    let (code, _, err) = lspgate_cli(ws.path(), &["hover", "app.py"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn explicit_server_command_and_help() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "one ERROR two\n").unwrap();
    let (code, out, err) = lspgate_cli(ws.path(), &["diagnostics", "notes.txt", "--", FIXTURE]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "notes.txt:1:5 error [E1]: found ERROR");
    let (code, out, _) = lspgate_cli(ws.path(), &["--help"]);
    assert_eq!(code, 0);
    for word in [
        "serve",
        "hover",
        "references",
        "diagnostics",
        "install",
        "doctor",
    ] {
        assert!(out.contains(word), "--help lacks {word}: {out}");
    }
    // A language nobody serves: no_server, with what would serve it.
    let (code, _, err) = lspgate_cli(ws.path(), &["diagnostics", "notes.txt"]);
    assert_eq!(code, 1);
    assert!(err.starts_with("no_server: "), "{err}");
}

/// The README's quick start: with no pyright anywhere, `--install` fetches it into lspgate's
/// own data folder and answers.
#[test]
fn install_on_first_use() {
    let ws = example("python");
    let home = tempfile::tempdir().unwrap();
    // PATH as it is, less every folder that has a pyright.
    let dirs: Vec<_> = std::env::split_paths(&std::env::var("PATH").unwrap_or_default())
        .filter(|d| !d.join("pyright-langserver").exists())
        .collect();
    let path_without_tools = std::env::join_paths(dirs).unwrap();
    let out = Command::new(LSPGATE)
        .env("LSPGATE_STANDALONE", "1")
        .current_dir(ws.path())
        .args(["--install", "diagnostics", "app.py"])
        .env("PATH", &path_without_tools)
        .env("LSPGATE_HOME", home.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("app.py:12:12 error"), "{stdout}");
    assert!(
        home.path()
            .join("servers/pyright/node_modules/.bin/pyright-langserver")
            .exists()
    );
}

/// `lspgate install pyright` puts it in lspgate's own folder, and `doctor` then finds it there,
/// with a version and capabilities from a real `initialize`.
#[test]
fn install_subcommand_then_doctor() {
    let ws = example("python");
    let home = tempfile::tempdir().unwrap();
    let dirs: Vec<_> = std::env::split_paths(&std::env::var("PATH").unwrap_or_default())
        .filter(|d| !d.join("pyright-langserver").exists())
        .collect();
    let path = std::env::join_paths(dirs).unwrap();
    let run = |args: &[&str]| {
        Command::new(LSPGATE)
            .env("LSPGATE_STANDALONE", "1")
            .current_dir(ws.path())
            .args(args)
            .env("PATH", &path)
            .env("LSPGATE_HOME", home.path())
            .output()
            .unwrap()
    };
    let before = run(&["doctor"]);
    let text = String::from_utf8_lossy(&before.stdout);
    assert!(text.contains("python (4 files):"), "{text}");
    assert!(
        text.contains("lspgate install pyright"),
        "doctor should say how to install: {text}"
    );
    assert_eq!(before.status.code(), Some(1));

    let out = run(&["install", "pyright"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("servers/pyright/node_modules/.bin/pyright-langserver")
    );

    let after = run(&["doctor", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&after.stdout).unwrap();
    let python = v["languages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["language"] == "python")
        .unwrap();
    let pyright = &python["servers"][0];
    assert_eq!(pyright["name"], "builtin/pyright");
    assert_eq!(pyright["ok"], true, "{v}");
    assert!(
        pyright["capabilities"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "references")
    );

    let bad = run(&["install", "no-such-server"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// Every tool is a subcommand generated from the tool table, with the tool's parameters as
/// arguments: the ones the hand-written command line lacked included.
#[test]
fn generated_subcommands_reach_every_tool() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "make me loud\n").unwrap();
    let fixture = [FIXTURE, "--actions"];
    let run = |args: &[&str]| lspgate_cli(ws.path(), &[args, &["--"], &fixture[..]].concat());

    let (code, out, err) = run(&["restart-server", "cli/lspgate-fixture-server"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("cli/lspgate-fixture-server"), "{out}");

    // The fixture's command upper-cases a line of a document it has open; opened by no one
    // here, it changes nothing, and says so.
    let uri = url::Url::from_file_path(ws.path().join("a.txt").canonicalize().unwrap()).unwrap();
    let arguments = serde_json::json!([uri.as_str(), 0]).to_string();
    let (code, out, err) = run(&[
        "--json",
        "execute-command",
        "cli/lspgate-fixture-server",
        "fixture.upper",
        "--arguments",
        &arguments,
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v.get("result").is_some(), "{out}");
    let (code, _, err) = run(&[
        "execute-command",
        "cli/lspgate-fixture-server",
        "no.such.command",
    ]);
    assert_eq!(code, 1);
    assert!(err.starts_with("not_supported: "), "{err}");

    // A parameter the tool does not take is a usage error (exit 2), as is a missing one.
    let (code, _, err) = run(&["undo", "1", "--colum", "3"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = run(&["execute-command", "cli/lspgate-fixture-server"]);
    assert_eq!(code, 2, "{err}");
}

/// A command for a server that cannot start answers why that server cannot (here: not
/// installed, with how to install it), not that it is not running.
#[test]
fn execute_command_says_why_its_server_cannot_start() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.py"), "x = 1\n").unwrap();
    let home = tempfile::tempdir().unwrap();
    // A PATH with none of the test servers.
    let (code, _, err) = lspgate_cli_with(
        ws.path(),
        &[
            "execute-command",
            "builtin/pyright",
            "pyright.organizeimports",
        ],
        home.path(),
        "/usr/bin:/bin",
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("no_server: "), "{err}");
    assert!(err.contains("pyright-langserver is not installed"), "{err}");
}

/// `check` pages only when asked to: CI reads the whole report (and SARIF), an agent's shell a
/// page with `--limit`.
#[test]
fn check_reports_every_issue_unless_limited() {
    require("pyright-langserver");
    let ws = tempfile::tempdir().unwrap();
    for m in ["a", "b"] {
        std::fs::write(
            ws.path().join(format!("{m}.py")),
            "x: int = \"one\"\ny: int = \"two\"\n",
        )
        .unwrap();
    }
    let (code, out, err) = lspgate_cli(ws.path(), &["check", "--json"]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["total"].as_u64(), diags(&v["files"]).len()),
        (Some(4), 4)
    );
    let (code, out, err) = lspgate_cli(ws.path(), &["check", "--json", "--limit", "3"]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(diags(&v["files"]).len(), 3, "{v}");
    assert_eq!(v["next_cursor"], "3");
    let (_, out, _) = lspgate_cli(ws.path(), &["check", "--sarif", "--limit", "1"]);
    let sarif: serde_json::Value = serde_json::from_str(&out).unwrap();
    let results: usize = sarif["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["results"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(results, 4, "SARIF holds every issue: {out}");
}

/// `lspgate TOOL --help` says what each option is (a parameter's description in the tool's
/// schema, the one MCP clients get, or the command line's own where the schema is lean), and
/// every subcommand lists only the options that apply to it.
#[test]
fn help_says_what_options_are_and_lists_only_those_that_apply() {
    let ws = tempfile::tempdir().unwrap();
    let help = |args: &[&str]| {
        let (code, out, err) = lspgate_cli(ws.path(), args);
        assert_eq!(code, 0, "{args:?}: {err}");
        out
    };
    let hover = help(&["hover", "--help"]);
    let symbol = hover
        .lines()
        .find(|l| l.trim_start().starts_with("--symbol"))
        .unwrap_or_else(|| panic!("{hover}"));
    assert!(symbol.contains("whole-word"), "{hover}");
    // Every description in the tool table's schemas is the help of its option.
    let golden = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/tools.json"),
    )
    .unwrap();
    let tools: serde_json::Value = serde_json::from_str(&golden).unwrap();
    let tools = tools
        .as_array()
        .or_else(|| tools["tools"].as_array())
        .unwrap();
    let mut described = 0;
    for tool in tools {
        let name = tool["name"].as_str().unwrap().replace('_', "-");
        let text = help(&[&name, "--help"]);
        let props = tool["inputSchema"]["properties"].as_object().unwrap();
        for (param, schema) in props {
            if let Some(d) = schema["description"].as_str() {
                assert!(
                    text.contains(d),
                    "{name} --help lacks {param}'s `{d}`:\n{text}"
                );
                described += 1;
            }
        }
    }
    assert!(
        described > 5,
        "the schemas describe parameters: {described}"
    );
    // Server and output options are not `trust`'s, nor `daemon stop`'s.
    let trust = help(&["trust", "--help"]);
    assert!(trust.contains("--root"), "{trust}");
    for flag in [
        "--open-documents",
        "--install",
        "--timeout",
        "--json",
        "--raw",
    ] {
        assert!(!trust.contains(flag), "trust --help lists {flag}:\n{trust}");
    }
    let stop = help(&["daemon", "stop", "--help"]);
    for flag in ["--root", "--install", "--open-documents"] {
        assert!(
            !stop.contains(flag),
            "daemon stop --help lists {flag}:\n{stop}"
        );
    }
    let serve = help(&["serve", "--help"]);
    for flag in ["--install", "--restart", "--open-documents", "--timeout"] {
        assert!(serve.contains(flag), "serve --help lacks {flag}:\n{serve}");
    }
    assert!(!serve.contains("--terse"), "{serve}");
    // A flag is refused after a subcommand it does not apply to; every spelling that
    // applies still works, before the subcommand's name or after it.
    let (code, _, err) = lspgate_cli(ws.path(), &["trust", "--install"]);
    assert_eq!(code, 2, "{err}");
    std::fs::write(ws.path().join("a.txt"), "hello\n").unwrap();
    for args in [
        &["--json", "--open-documents", "5", "servers", "--", FIXTURE][..],
        &[
            "servers",
            "--json",
            "--timeout",
            "5",
            "--restart",
            "never",
            "--",
            FIXTURE,
        ],
        &["--timeout", "5", "servers", "--json", "--", FIXTURE],
    ] {
        let (code, out, err) = lspgate_cli(ws.path(), args);
        assert_eq!(code, 0, "{args:?}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}"));
        assert!(v["servers"].is_array(), "{out}");
    }
}

/// `lspgate check` is the `check` tool call, as an MCP client makes it: `--raw` adds the LSP
/// exchange to its report (it used to be dropped), with check's own exit code.
#[test]
fn check_goes_the_way_of_every_call() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "one ERROR two\n").unwrap();
    let (code, out, err) = lspgate_cli(ws.path(), &["check", "--raw", "--json", "--", FIXTURE]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}"));
    assert_eq!(v["total"], 1, "{out}");
    let raw = v["raw"]
        .as_array()
        .unwrap_or_else(|| panic!("no raw exchange: {out}"));
    assert!(
        raw.iter().any(|r| r["method"].is_string()),
        "the raw exchange holds the requests sent: {out}"
    );
    // As `call` has it.
    let (code, out, err) = lspgate_cli(
        ws.path(),
        &["--json", "call", "check", r#"{"raw": true}"#, "--", FIXTURE],
    );
    assert_eq!(code, 0, "{err}");
    let call: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(call["raw"].is_array(), "{out}");
    // Text too, after the report.
    let (code, out, err) = lspgate_cli(ws.path(), &["check", "--raw", "--", FIXTURE]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("--- raw ---"), "{out}");
}
