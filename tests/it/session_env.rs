//! A session's environment through the per-user daemon, as its own shell would have it: two
//! sessions whose explicit server reads a variable they set differently get a server each, and
//! each sees its own value; sessions differing only in per-terminal variables share one
//! pyright; `run_task` runs with the calling session's variables even on a shared workspace;
//! `daemon status` names the variable that sets two workspaces of one root apart.

use crate::common;
use common::*;
use serde_json::json;

/// What the fixture answers to a hover on `env_NAME`: its own `NAME=value`.
async fn server_sees(gate: &Gate, name: &str) -> String {
    let (_, text) = gate
        .ok(
            "hover",
            json!({"file": "a.txt", "line": 1, "symbol": format!("env_{name}")}),
        )
        .await;
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_whose_variables_differ_get_a_server_each() {
    let d = Daemon::new();
    let ws = workspace(&[("a.txt", "env_PROBE env_VIRTUAL_ENV env_SHLVL\n")]);
    let one = d
        .session_with(
            ws.path(),
            &[FIXTURE],
            &[("PROBE", "one"), ("VIRTUAL_ENV", "/venv/one")],
        )
        .await;
    let two = d
        .session_with(
            ws.path(),
            &[FIXTURE],
            &[("PROBE", "two"), ("VIRTUAL_ENV", "/venv/two")],
        )
        .await;
    assert!(server_sees(&one, "PROBE").await.contains("PROBE=one"));
    assert!(server_sees(&two, "PROBE").await.contains("PROBE=two"));
    assert!(
        server_sees(&two, "VIRTUAL_ENV")
            .await
            .contains("VIRTUAL_ENV=/venv/two")
    );
    let (a, b) = (
        pid_of(&one, "cli/lspgate-fixture-server").await,
        pid_of(&two, "cli/lspgate-fixture-server").await,
    );
    assert!(a.is_some() && a != b, "{a:?} {b:?}");
    // `daemon status` names what sets the two workspaces of the root apart (names only).
    let status = d.status().expect("a daemon runs");
    let roots = status["roots"].as_array().unwrap();
    assert_eq!(roots.len(), 2, "{status}");
    for r in roots {
        let differs: Vec<&str> = r["env_differs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(differs, ["PROBE", "VIRTUAL_ENV"], "{status}");
    }
    assert!(
        !status.to_string().contains("/venv/two"),
        "values are not shown"
    );

    // A third session differing from the first only in per-terminal variables shares its server.
    let three = d
        .session_with(
            ws.path(),
            &[FIXTURE],
            &[
                ("PROBE", "one"),
                ("VIRTUAL_ENV", "/venv/one"),
                ("SHLVL", "7"),
                ("TERM_SESSION_ID", "w7t0p0"),
            ],
        )
        .await;
    assert_eq!(pid_of(&three, "cli/lspgate-fixture-server").await, a);
    for g in [one, two, three] {
        g.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_differing_in_per_terminal_variables_share_one_pyright() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = workspace(&[("app.py", "def compute(x: int) -> int:\n    return x\n")]);
    let one = d
        .session_with(
            ws.path(),
            &[],
            &[("SHLVL", "1"), ("TERM_SESSION_ID", "a"), ("PROBE", "x")],
        )
        .await;
    let two = d
        .session_with(
            ws.path(),
            &[],
            &[("SHLVL", "4"), ("TERM_SESSION_ID", "b"), ("PROBE", "y")],
        )
        .await;
    for g in [&one, &two] {
        g.ok(
            "hover",
            json!({"file": "app.py", "line": 1, "symbol": "compute"}),
        )
        .await;
    }
    let (a, b) = (
        pid_of(&one, "builtin/pyright").await,
        pid_of(&two, "builtin/pyright").await,
    );
    assert!(a.is_some() && a == b, "{a:?} {b:?}");
    one.stop().await;
    two.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_task_runs_with_the_calling_sessions_variables() {
    let d = Daemon::new();
    let ws = workspace(&[(
        "lspgate.toml",
        "[[task]]\nname = \"probe\"\ncommand = [\"sh\", \"-c\", \"printf '%s' \\\"$PROBE\\\"\"]\n",
    )]);
    trust(ws.path(), d.home.path());
    // PROBE is read by no server: the two sessions share one workspace, yet each task runs
    // with its own session's value, as that session's shell would run it.
    let one = d.session_with(ws.path(), &[], &[("PROBE", "one")]).await;
    let two = d.session_with(ws.path(), &[], &[("PROBE", "two")]).await;
    let (r, text) = two.ok("run_task", json!({"name": "probe"})).await;
    assert_eq!(r["stdout"], "two", "{text}");
    let (r, text) = one.ok("run_task", json!({"name": "probe"})).await;
    assert_eq!(r["stdout"], "one", "{text}");
    assert_eq!(
        d.status().expect("a daemon runs")["roots"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    one.stop().await;
    two.stop().await;
}
