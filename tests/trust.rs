//! Trust in a workspace's own lspgate.toml (SPEC §5), through a real MCP client and the CLI:
//! untrusted, its server and task commands do not run (a marker file each would create proves
//! it) and what asks for them answers `untrusted_config` with the command to trust it, while
//! `[languages]` still applies; after `lspgate trust` they run, in a session already running
//! too; a changed file is untrusted again; a file named with `--config` is trusted by that act.
//! And a `tcp` server off loopback is refused at load unless `allow_remote`.

mod common;
use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A workspace whose lspgate.toml has a server and a task whose commands touch a marker file
/// (outside the workspace) before doing their work, and a `[languages]` declaration.
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
         args = [\"-c\", \"touch '{}'; exec '{FIXTURE}'\"]\nlanguages = [\"python\"]\n\n\
         [[task]]\nname = \"mark\"\ncommand = [\"/bin/sh\", \"-c\", \"touch '{}'\"]\n\n\
         [languages]\n\"*.pyx\" = \"python\"\n",
        server_marker.display(),
        task_marker.display()
    );
    let ws = workspace(&[
        ("a.py", "target = 1\n"),
        ("b.pyx", "other = 2\n"),
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
    let m = marked();
    let root = m.ws.path();
    let home = new_home();
    let gate = Gate::start_in(root, &[], &[], &[], &home).await;

    // Asking for its server or its task: untrusted_config, with the command to trust it.
    let e = error_of(
        &gate,
        "hover",
        json!({"file": "a.py", "line": 1, "column": 1}),
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
    // A check says which files it could not check and why; b.pyx is Python by the config's
    // [languages], which applies untrusted.
    let (r, text) = gate.ok("check", json!({})).await;
    assert_eq!(r["ok"], false, "{text}");
    let u = &r["unchecked"][0];
    assert_eq!(
        (
            u["cause"].as_str(),
            u["server"].as_str(),
            u["files"].as_u64()
        ),
        (Some("untrusted_config"), Some("local/marked"), Some(2)),
        "{text}"
    );
    assert_eq!(u["examples"], json!(["a.py", "b.pyx"]), "{text}");
    // `servers` shows it, untrusted, rather than hiding it.
    let (s, text) = gate.ok("servers", json!({})).await;
    let marked_server = s["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "local/marked")
        .cloned()
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(marked_server["state"], "untrusted", "{text}");
    assert!(
        marked_server["last_error"]
            .as_str()
            .unwrap()
            .contains(&trust_command(root)),
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
        json!({"file": "a.py", "line": 1, "column": 1}),
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
