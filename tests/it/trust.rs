//! Trust in a workspace's own lspgate.toml (protocol §5), through a real MCP client and the CLI:
//! untrusted, its server and task commands do not run (a marker file each would create proves
//! it): the built-in pyright keeps serving Python in its server's place, saying once that it
//! waits, and what only it would serve answers `untrusted_config` with the command to trust
//! it, while `[languages]` still applies; after `lspgate trust` they run and its server takes
//! Python over, in a session already running too; a changed file is untrusted again; a file
//! named with `--config` is trusted by that act.
//! And a `tcp` server off loopback is refused at load unless `allow_remote`.
//!
//! The same trust covers what the repository runs or weakens without commands of its own
//! (issue 22): an untrusted file may not raise `max_inflight` or `[timeouts]` past the
//! defaults; a task preset's extra args (`make --eval …`) are refused; rust-analyzer starts with
//! build scripts, proc macros and check on save off (or not at all beside a
//! `.cargo/config.toml`); and `lspgate trust` of a workspace without lspgate.toml lifts all
//! that.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A workspace whose lspgate.toml has a server (for Python, which a built-in serves too, and
/// `marklang`, which none does) and a task whose commands touch a marker file (outside the
/// workspace) before doing their work, and a `[languages]` declaration (`*.mark`).
struct Marked {
    ws: tempfile::TempDir,
    _markers: tempfile::TempDir,
    server_marker: PathBuf,
    task_marker: PathBuf,
}

fn marked() -> Marked {
    let markers = tempfile::tempdir().unwrap();
    let server_marker = markers.path().join("server-ran");
    let task_marker = markers.path().join("task-ran");
    let config = format!(
        "[[server]]\nname = \"local/marked\"\ncommand = \"/bin/sh\"\n\
         args = [\"-c\", \"touch '{}'; exec '{FIXTURE}'\"]\nlanguages = [\"python\", \"marklang\"]\n\n\
         [[task]]\nname = \"mark\"\ncommand = [\"/bin/sh\", \"-c\", \"touch '{}'\"]\n\n\
         [languages]\n\"*.mark\" = \"marklang\"\n",
        server_marker.display(),
        task_marker.display()
    );
    let ws = workspace(&[
        ("a.py", "target: int = \"one\"\n"),
        ("c.mark", "other = 2\n"),
        ("lspgate.toml", config.as_str()),
    ]);
    Marked {
        ws,
        _markers: markers,
        server_marker,
        task_marker,
    }
}

/// The structured error of a failed call.
async fn error_of(gate: &Gate, tool: &str, args: Value) -> Value {
    let r = gate.call(tool, args.clone()).await;
    assert_eq!(
        r.is_error,
        Some(true),
        "{tool} {args} should fail: {}",
        text_of(&r)
    );
    r.structured_content.unwrap()["error"].clone()
}

fn trust_command(root: &Path) -> String {
    format!(
        "lspgate trust --root {}",
        root.canonicalize().unwrap().display()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_config_runs_nothing_until_trusted_and_again_after_a_change() {
    require("pyright-langserver");
    let m = marked();
    let root = m.ws.path();
    let home = new_home();
    let gate = Gate::start_in(root, &[], &[], &[], &home).await;

    // Python: the built-in pyright answers in its server's place, and the first answer says
    // once that the file's server waits.
    let (d, text) = gate.ok("diagnostics", json!({"file": "a.py"})).await;
    let found = diags(&d["files"]);
    assert!(
        found
            .iter()
            .any(|d| d["source"] == "Pyright" && d["severity"] == "error"),
        "{text}"
    );
    let notes = d["notes"].as_array().cloned().unwrap_or_default();
    assert_eq!(notes.len(), 1, "{text}");
    let note = notes[0].as_str().unwrap();
    assert!(
        note.contains("defines `local/marked`, which waits for `lspgate trust --root")
            && note.contains("builtin/pyright serves python"),
        "{note}"
    );
    assert!(text.starts_with("note: "), "{text}");
    let (d, text) = gate.ok("diagnostics", json!({"file": "a.py"})).await;
    assert!(d.get("notes").is_none(), "once a session: {text}");
    let (_, text) = gate
        .ok(
            "hover",
            json!({"file": "a.py", "line": 1, "symbol": "target"}),
        )
        .await;
    assert!(text.contains("target: int"), "{text}");

    // Asking for what only its server serves, or its task: untrusted_config, with the command
    // to trust it.
    let e = error_of(
        &gate,
        "hover",
        json!({"file": "c.mark", "line": 1, "column": 1}),
    )
    .await;
    assert_eq!(e["code"], "untrusted_config", "{e}");
    assert_eq!(e["data"]["trust"], trust_command(root), "{e}");
    assert_eq!(e["data"]["reason"], "new", "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("local/marked"),
        "{e}"
    );
    let e = error_of(&gate, "run_task", json!({"name": "mark"})).await;
    assert_eq!(e["code"], "untrusted_config", "{e}");
    let e = error_of(&gate, "check", json!({"tasks": ["mark"]})).await;
    assert_eq!(e["code"], "untrusted_config", "{e}");
    // A check says which files it could not check and why; c.mark is `marklang` by the
    // config's [languages], which applies untrusted. Python is checked, by pyright.
    let (r, text) = gate.ok("check", json!({})).await;
    assert_eq!(r["ok"], false, "{text}");
    let u = &r["unchecked"][0];
    assert_eq!(
        (
            u["cause"].as_str(),
            u["server"].as_str(),
            u["file"].as_str()
        ),
        (
            Some("untrusted_config"),
            Some("local/marked"),
            Some("c.mark")
        ),
        "{text}"
    );
    assert_eq!(diags(&r["files"])[0]["file"], "a.py", "{text}");
    // `servers` shows it, untrusted and waiting, rather than hiding it.
    let (s, text) = gate.ok("servers", json!({})).await;
    let marked_server = server_row(&s, "local/marked");
    assert_eq!(marked_server["state"], "untrusted", "{text}");
    assert!(
        marked_server["last_error"]
            .as_str()
            .unwrap()
            .contains(&trust_command(root)),
        "{text}"
    );
    assert!(
        marked_server["note"]
            .as_str()
            .unwrap()
            .contains("builtin/pyright serves python"),
        "{text}"
    );
    let pyright = server_row(&s, "builtin/pyright");
    assert!(pyright["pid"].is_u64(), "{text}");
    assert!(
        pyright["note"]
            .as_str()
            .unwrap()
            .starts_with("serves python until lspgate.toml is trusted"),
        "{text}"
    );
    assert!(
        !m.server_marker.exists(),
        "the untrusted server command ran"
    );
    assert!(!m.task_marker.exists(), "the untrusted task ran");
    // The CLI refuses the same way, and doctor says it.
    let (code, out, err) = lspgate_cli_with(root, &["check"], &home, &test_path());
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("which is not trusted"), "{out}");
    let (code, out, err) = lspgate_cli_with(root, &["run-task", "mark"], &home, &test_path());
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.starts_with("untrusted_config: "), "{err}");
    let (code, out, _) = lspgate_cli_with(root, &["doctor"], &home, &test_path());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("is NOT TRUSTED (never trusted)"), "{out}");
    assert!(out.contains("untrusted local/marked"), "{out}");
    assert!(!m.server_marker.exists() && !m.task_marker.exists());

    // Trusted: the session already running may now start them.
    let (code, out, err) = lspgate_cli_with(
        root,
        &["trust", "--root", &root.to_string_lossy()],
        &home,
        &test_path(),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("server local/marked: /bin/sh -c") && out.contains("task mark: /bin/sh -c"),
        "trust shows what it allows: {out}"
    );
    let (_, text) = gate
        .ok(
            "hover",
            json!({"file": "a.py", "line": 1, "symbol": "target"}),
        )
        .await;
    assert!(text.contains("word=target"), "{text}");
    assert!(m.server_marker.exists(), "the trusted server did not start");
    // It took Python over: pyright stood down, and nothing waits any more.
    let (s, text) = gate.ok("servers", json!({})).await;
    assert_eq!(server_row(&s, "builtin/pyright")["state"], "idle", "{text}");
    assert!(
        server_row(&s, "local/marked").get("note").is_none(),
        "{text}"
    );
    let (r, text) = gate.ok("check", json!({})).await;
    assert!(
        r["unchecked"].as_array().is_none_or(|u| u.is_empty()),
        "{text}"
    );
    assert!(r["notes"].as_array().is_none_or(|n| n.is_empty()), "{text}");
    let (r, text) = gate.ok("run_task", json!({"name": "mark"})).await;
    assert_eq!(r["ok"], true, "{text}");
    assert!(m.task_marker.exists(), "the trusted task did not run");
    gate.stop().await;

    // Changed: untrusted again, and says so.
    std::fs::remove_file(&m.server_marker).unwrap();
    std::fs::remove_file(&m.task_marker).unwrap();
    let config = root.join("lspgate.toml");
    let text = std::fs::read_to_string(&config).unwrap() + "# one more line\n";
    std::fs::write(&config, text).unwrap();
    let gate = Gate::start_in(root, &[], &[], &[], &home).await;
    let e = error_of(
        &gate,
        "hover",
        json!({"file": "c.mark", "line": 1, "column": 1}),
    )
    .await;
    assert_eq!(e["code"], "untrusted_config", "{e}");
    assert_eq!(e["data"]["reason"], "changed", "{e}");
    let e = error_of(&gate, "run_task", json!({"name": "mark"})).await;
    assert_eq!(e["code"], "untrusted_config", "{e}");
    gate.stop().await;
    assert!(!m.server_marker.exists(), "the changed server command ran");
    assert!(!m.task_marker.exists(), "the changed task ran");

    // --revoke forgets a trust.
    lspgate_cli_with(root, &["trust"], &home, &test_path());
    let (code, out, _) = lspgate_cli_with(root, &["trust", "--revoke"], &home, &test_path());
    assert_eq!(code, 0, "{out}");
    let (code, _, err) = lspgate_cli_with(root, &["run-task", "mark"], &home, &test_path());
    assert_eq!(code, 1);
    assert!(err.starts_with("untrusted_config: "), "{err}");
    assert!(!m.task_marker.exists());
}

#[test]
fn a_config_named_with_config_is_trusted_by_that_act() {
    let m = marked();
    let home = new_home();
    let (code, out, err) = lspgate_cli_with(
        m.ws.path(),
        &["--config", "lspgate.toml", "run-task", "mark"],
        &home,
        &test_path(),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(m.task_marker.exists());
    // `lspgate trust` records the root's own file only.
    let (code, _, err) = lspgate_cli_with(
        m.ws.path(),
        &["--config", "lspgate.toml", "trust"],
        &home,
        &test_path(),
    );
    assert_eq!(code, 2, "{err}");
    // An invalid file is not trusted.
    std::fs::write(m.ws.path().join("lspgate.toml"), "[[server]\n").unwrap();
    let (code, _, err) = lspgate_cli_with(m.ws.path(), &["trust"], &home, &test_path());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("lspgate.toml:1: ") && err.contains("nothing was trusted"),
        "{err}"
    );
}

#[test]
fn a_tcp_server_off_loopback_is_refused_at_load_unless_allowed() {
    let config = |address: &str, extra: &str| {
        format!(
            "[[server]]\nname = \"remote/x\"\ntransport = \"tcp\"\naddress = \"{address}\"\nlanguages = [\"python\"]\n{extra}"
        )
    };
    // Documentation addresses (TEST-NET-1): nothing is ever connected to in this test.
    let ws = workspace(&[
        ("a.py", "x = 1\n"),
        ("lspgate.toml", config("192.0.2.7:9000", "").as_str()),
    ]);
    let home = new_home();
    for args in [&["servers"][..], &["check"], &["serve"]] {
        let (code, out, err) = lspgate_cli_with(ws.path(), args, &home, &test_path());
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(
            err.contains(
                "lspgate.toml:4: server `remote/x`: tcp address `192.0.2.7:9000` is not loopback"
            ) && err.contains("allow_remote = true"),
            "{args:?}: {err}"
        );
    }
    // Allowed: the config loads (untrusted, so nothing connects) and lists the server.
    std::fs::write(
        ws.path().join("lspgate.toml"),
        config("192.0.2.7:9000", "allow_remote = true\n"),
    )
    .unwrap();
    let (code, out, err) = lspgate_cli_with(ws.path(), &["--json", "servers"], &home, &test_path());
    assert_eq!(code, 0, "{out}{err}");
    let s: Value = serde_json::from_str(&out).unwrap();
    let remote = s["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "remote/x")
        .cloned()
        .unwrap();
    assert_eq!(remote["state"], "untrusted", "{out}");
    assert_eq!(
        remote["command"], "tcp://192.0.2.7:9000 (untrusted)",
        "{out}"
    );
}

/// The `max_inflight` lspgate reported in `initialize`.
fn max_inflight_of(gate: &Gate) -> Value {
    let info = gate.client.peer_info().expect("initialize result");
    info.capabilities.experimental.as_ref().unwrap()["lspgate"]["max_inflight"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_config_may_lower_limits_but_not_raise_them() {
    let ws = workspace(&[
        ("a.py", "x = 1\n"),
        (
            "lspgate.toml",
            "max_inflight = 1000000\n\n[timeouts]\nreferences = 86400\nhover = 5\n",
        ),
    ]);
    let root = ws.path();
    let home = new_home();
    let gate = Gate::start_in(root, &[], &[], &[], &home).await;
    assert_eq!(max_inflight_of(&gate), 2, "capped at the default");
    gate.stop().await;
    // Said in the log and by doctor.
    let (_, out, err) = lspgate_cli_with(root, &["doctor"], &home, &test_path());
    assert!(
        err.contains("max_inflight 1000000 capped at 2")
            && err.contains("references = 86400 capped at 30 s"),
        "{err}"
    );
    assert!(
        out.contains("config: ") && out.contains("max_inflight 1000000 capped at 2"),
        "{out}"
    );
    assert!(!out.contains("hover = 5 capped"), "lowering is fine: {out}");
    // Trusted: as written.
    trust(root, &home);
    let gate = Gate::start_in(root, &[], &[], &[], &home).await;
    assert_eq!(max_inflight_of(&gate), 1_000_000);
    gate.stop().await;
    let (_, out, err) = lspgate_cli_with(root, &["doctor"], &home, &test_path());
    assert!(
        !out.contains("capped") && !err.contains("capped"),
        "{out}{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_preset_args_are_refused_until_the_workspace_is_trusted() {
    let markers = tempfile::tempdir().unwrap();
    let pwned = markers.path().join("pwned");
    let ws = workspace(&[("Makefile", "all:\n\t@echo built\n")]);
    let root = ws.path();
    let home = new_home();
    let gate = Gate::start_in(root, &[], &[], &[], &home).await;
    let eval = format!("--eval=pwn: ; touch '{}'", pwned.display());
    let args = json!({"name": "make", "args": [eval, "pwn"]});
    let e = error_of(&gate, "run_task", args.clone()).await;
    assert_eq!(e["code"], "untrusted_config", "{e}");
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains("run_task `make` with extra args is refused")
            && message.contains(&trust_command(root)),
        "{e}"
    );
    assert_eq!(e["data"]["trust"], trust_command(root), "{e}");
    assert!(!pwned.exists(), "the args ran");
    // The preset itself runs as ever.
    let (r, text) = gate.ok("run_task", json!({"name": "make"})).await;
    assert_eq!(r["ok"], true, "{text}");
    // The CLI too.
    let (code, _, err) = lspgate_cli_with(
        root,
        &["call", "run_task", &args.to_string()],
        &home,
        &test_path(),
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("untrusted_config: "), "{err}");
    assert!(!pwned.exists(), "the args ran");

    // `lspgate trust` with no lspgate.toml trusts the root; the running session sees it.
    let (code, out, err) = lspgate_cli_with(
        root,
        &["trust", "--root", &root.to_string_lossy()],
        &home,
        &test_path(),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("trusted the workspace"), "{out}");
    assert!(out.contains("builtin/rust-analyzer"), "{out}");
    let (r, text) = gate.ok("run_task", args.clone()).await;
    assert_eq!(r["ok"], true, "{text}");
    assert!(pwned.exists(), "trusted, the args did not run");
    gate.stop().await;

    // Revoked: refused again.
    std::fs::remove_file(&pwned).unwrap();
    let (code, out, _) = lspgate_cli_with(root, &["trust", "--revoke"], &home, &test_path());
    assert_eq!(code, 0, "{out}");
    let (code, _, err) = lspgate_cli_with(
        root,
        &["call", "run_task", &args.to_string()],
        &home,
        &test_path(),
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("untrusted_config: "), "{err}");
    assert!(!pwned.exists());
}

/// A folder holding a `rust-analyzer` that logs everything lspgate sends it to `log` (then
/// serves as the fixture server does).
fn fake_rust_analyzer(log: &Path) -> tempfile::TempDir {
    let bin = tempfile::tempdir().unwrap();
    let exe = bin.path().join("rust-analyzer");
    std::fs::write(
        &exe,
        format!("#!/bin/sh\ntee -a '{}' | exec '{FIXTURE}'\n", log.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// The `initializationOptions` of every `initialize` in `log`, in order.
fn initializations(log: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.split("Content-Length:")
        .filter_map(|m| {
            let body = m.split_once("\r\n\r\n")?.1;
            serde_json::Deserializer::from_str(body)
                .into_iter::<Value>()
                .next()?
                .ok()
        })
        .filter(|m| m["method"] == "initialize")
        .map(|m| m["params"]["initializationOptions"].clone())
        .collect()
}

fn server_row(s: &Value, name: &str) -> Value {
    s["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no {name}: {s}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_analyzer_runs_no_build_script_or_proc_macro_until_the_workspace_is_trusted() {
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("rust-analyzer.log");
    let bin = fake_rust_analyzer(&log);
    let path = format!("{}:{}", bin.path().display(), test_path());
    let ws = workspace(&[
        (
            "Cargo.toml",
            "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
        ),
        ("build.rs", "fn main() {}\n"),
        ("src/main.rs", "fn main() {\n    let answer = 42;\n}\n"),
    ]);
    let root = ws.path();
    let home = new_home();
    let gate = Gate::start_in(root, &[], &[], &[("PATH", path.as_str())], &home).await;
    let (s, text) = gate.ok("servers", json!({})).await;
    let ra = server_row(&s, "builtin/rust-analyzer");
    let note = ra["note"].as_str().unwrap_or_else(|| panic!("{text}"));
    assert!(
        note.contains("build scripts, proc macros and check on save off")
            && note.contains(&trust_command(root)),
        "{text}"
    );
    assert!(
        text.contains("(untrusted workspace: build scripts, proc macros and check on save off)"),
        "{text}"
    );
    gate.call(
        "hover",
        json!({"file": "src/main.rs", "line": 2, "symbol": "answer"}),
    )
    .await;
    let inits = initializations(&log);
    assert_eq!(inits.len(), 1, "{inits:?}");
    assert_eq!(
        inits[0]["cargo"]["buildScripts"]["enable"], false,
        "{inits:?}"
    );
    assert_eq!(inits[0]["procMacro"]["enable"], false, "{inits:?}");
    assert_eq!(inits[0]["checkOnSave"], false, "{inits:?}");
    let (code, out, _) = lspgate_cli_with(root, &["doctor"], &home, &path);
    assert!(
        out.contains("workspace: NOT TRUSTED")
            && out.contains("restricted: untrusted workspace: build scripts"),
        "{code} {out}"
    );

    // doctor started one too, restricted as well.
    let before = initializations(&log);
    assert!(before.len() == 2 && before[1] == before[0], "{before:?}");

    // Trusted (no lspgate.toml): the next call starts it again with all its features.
    trust(root, &home);
    let (s, text) = gate.ok("servers", json!({})).await;
    assert!(
        server_row(&s, "builtin/rust-analyzer")["note"].is_null(),
        "{text}"
    );
    gate.call(
        "hover",
        json!({"file": "src/main.rs", "line": 2, "symbol": "answer"}),
    )
    .await;
    let after = initializations(&log);
    assert_eq!(after.len(), before.len() + 1, "{after:?}");
    assert!(
        after[before.len()].is_null(),
        "the preset as it is: {after:?}"
    );
    gate.stop().await;

    // A repository with a .cargo/config.toml (its rustc-wrapper would run with `cargo
    // metadata`): rust-analyzer does not start at all untrusted.
    std::fs::remove_file(&log).unwrap();
    let ws = workspace(&[
        (
            "Cargo.toml",
            "[package]\nname = \"y\"\nversion = \"0.1.0\"\n",
        ),
        (
            ".cargo/config.toml",
            "[build]\nrustc-wrapper = \"./evil\"\n",
        ),
        ("src/main.rs", "fn main() {}\n"),
    ]);
    let gate = Gate::start_in(ws.path(), &[], &[], &[("PATH", path.as_str())], &home).await;
    let e = error_of(
        &gate,
        "hover",
        json!({"file": "src/main.rs", "line": 1, "column": 4}),
    )
    .await;
    assert_eq!(e["code"], "untrusted_config", "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains(".cargo/config.toml"),
        "{e}"
    );
    let (s, text) = gate.ok("servers", json!({})).await;
    assert_eq!(
        server_row(&s, "builtin/rust-analyzer")["state"],
        "untrusted",
        "{text}"
    );
    gate.stop().await;
    assert!(!log.exists(), "rust-analyzer started");
}
