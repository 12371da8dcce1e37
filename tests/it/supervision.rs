//! Surviving misbehaving servers, through a real MCP client over stdio: crashes mid-request
//! (once and a hundred times), crash streaks that give up, oversized messages, memory caps,
//! per-kind timeouts, signals, and a real pyright killed by pid.

use crate::common;
use common::*;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// Server pids the fixture logged (`pid N` at each start).
fn pids(log: &Path) -> Vec<u32> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("pid ")?.trim().parse().ok())
        .collect()
}

fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.split_whitespace().nth(2).is_none_or(|st| st != "Z"))
        .unwrap_or(false)
}

async fn none_running(pids: &[u32]) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if pids.iter().all(|p| !running(*p)) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_request_is_survived_a_hundred_times() {
    let ws = workspace(&[("a.py", "crash = 1\nother = 2\n")]);
    let log = ws.path().join("fixture.log");
    let counter = ws.path().join("crashes");
    let gate = Gate::start(
        ws.path(),
        &["--restart", "always", "--restart-backoff-ms", "1"],
        &[
            FIXTURE,
            "--log",
            log.to_str().unwrap(),
            "--crash-file",
            counter.to_str().unwrap(),
        ],
    )
    .await;
    for i in 0..100 {
        let (_, text) = gate
            .ok(
                "hover",
                json!({"file": "a.py", "line": 1, "symbol": "crash"}),
            )
            .await;
        assert_eq!(text, "survived", "call {i}");
    }
    let (servers, text) = gate.ok("servers", json!({})).await;
    let s = &servers["servers"][0];
    assert_eq!(s["restarts"], 100, "{text}");
    assert_eq!(s["state"], "ready");
    // Every process got the document again: one didOpen per process.
    let l = std::fs::read_to_string(&log).unwrap();
    assert_eq!(l.matches("textDocument/didOpen").count(), 101);
    let all = pids(&log);
    assert_eq!(all.len(), 101);
    assert!(
        none_running(&all[..100]).await,
        "crashed servers left behind"
    );
    // The client heard about the restarts.
    let messages = gate.messages();
    assert!(
        messages.iter().any(|m| m["data"]["message"]
            .as_str()
            .is_some_and(|t| t.contains("restarted"))),
        "{messages:?}"
    );
    gate.stop().await;
    assert!(none_running(&all).await, "a server outlived lspgate");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_streak_past_the_limit_gives_up_with_the_reason() {
    let ws = workspace(&[("a.py", "crash = 1\nother = 2\n")]);
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("fixture.log");
    let gate = Gate::start(
        ws.path(),
        &["--restart", "2", "--restart-backoff-ms", "10"],
        &[FIXTURE, "--log", log.to_str().unwrap()],
    )
    .await;
    let mut last = String::new();
    for _ in 0..3 {
        let (code, msg) = gate
            .err(
                "hover",
                json!({"file": "a.py", "line": 1, "symbol": "crash"}),
            )
            .await;
        assert_eq!(code, "server_failed");
        last = msg;
    }
    assert!(
        last.contains("given up") && last.contains("--restart 2"),
        "{last}"
    );
    // Given up, it fails at once: no process is started for these calls.
    let started = pids(&log).len();
    for _ in 0..5 {
        let (code, msg) = gate
            .err(
                "hover",
                json!({"file": "a.py", "line": 2, "symbol": "other"}),
            )
            .await;
        assert_eq!(code, "server_failed");
        assert!(msg.contains("given up"), "{msg}");
    }
    assert_eq!(
        pids(&log).len(),
        started,
        "a given-up server was started again"
    );
    let (servers, _) = gate.ok("servers", json!({})).await;
    assert_eq!(servers["servers"][0]["state"], "failed");
    assert!(
        servers["servers"][0]["last_error"]
            .as_str()
            .unwrap()
            .contains("given up")
    );
    assert!(
        gate.messages().iter().any(|m| m["level"] == "error"),
        "{:?}",
        gate.messages()
    );
    // And in the event log, in any case: the restarts, then the give-up once, with its reason.
    let (r, text) = gate
        .ok(
            "events",
            json!({"kinds": ["server_restarted", "server_failed"]}),
        )
        .await;
    let kinds: Vec<&str> = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["server_restarted", "server_restarted", "server_failed"],
        "{text}"
    );
    let failed = &r["events"][2]["data"];
    assert!(
        failed["reason"].as_str().unwrap().contains("given up"),
        "{failed}"
    );
    assert_eq!(failed["server"], "cli/lspgate-fixture-server");
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_message_is_a_crash_and_lspgate_stays_responsive() {
    let ws = workspace(&[("a.py", "huge = 1\nok = 2\n")]);
    let gate = Gate::start(
        ws.path(),
        &["--restart", "always", "--restart-backoff-ms", "10"],
        &[FIXTURE],
    )
    .await;
    let (code, msg) = gate
        .err(
            "hover",
            json!({"file": "a.py", "line": 1, "symbol": "huge"}),
        )
        .await;
    assert_eq!(code, "server_failed");
    assert!(msg.contains("over the limit"), "{msg}");
    let (_, text) = gate
        .ok("hover", json!({"file": "a.py", "line": 2, "symbol": "ok"}))
        .await;
    assert!(text.contains("word=ok"));
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_over_its_memory_cap_is_restarted_saying_so() {
    let ws = workspace(&[("a.py", "grow = 1\nok = 2\n")]);
    std::fs::write(
        ws.path().join("lspgate.toml"),
        format!("[[server]]\nname = \"local/fixture\"\ncommand = \"{FIXTURE}\"\nlanguages = [\"python\"]\nmax_memory = 100\n"),
    )
    .unwrap();
    let gate = Gate::start_trusted(ws.path(), &["--restart-backoff-ms", "10"], &[]).await;
    let _ = gate
        .call("hover", json!({"file": "a.py", "line": 2, "symbol": "ok"}))
        .await;
    // The kill may land before or after the answer (and again on the retry): either is right.
    let r = gate
        .call(
            "hover",
            json!({"file": "a.py", "line": 1, "symbol": "grow"}),
        )
        .await;
    let text = text_of(&r);
    assert!(text == "grew" || text.contains("max_memory"), "{text}");
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (servers, text) = gate.ok("servers", json!({})).await;
        let s = servers["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "local/fixture")
            .cloned()
            .unwrap();
        if s["restarts"].as_u64().unwrap_or(0) >= 1 && s["state"] == "ready" {
            assert!(
                s["last_error"].as_str().unwrap().contains("max_memory"),
                "{text}"
            );
            break;
        }
        assert!(Instant::now() < deadline, "not restarted: {text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gate.messages().iter().any(|m| {
        m["data"]["message"]
            .as_str()
            .is_some_and(|t| t.contains("max_memory"))
    }));
    let (_, text) = gate
        .ok("hover", json!({"file": "a.py", "line": 2, "symbol": "ok"}))
        .await;
    assert!(text.contains("word=ok"));
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_are_set_per_request_kind() {
    let ws = workspace(&[("a.py", "hang = 1\n")]);
    std::fs::write(
        ws.path().join("lspgate.toml"),
        format!("[[server]]\nname = \"local/fixture\"\ncommand = \"{FIXTURE}\"\nlanguages = [\"python\"]\n\n[timeouts]\nhover = 0.5\n"),
    )
    .unwrap();
    let gate = Gate::start_trusted(ws.path(), &["--timeout", "60"], &[]).await;
    let r = gate
        .call(
            "hover",
            json!({"file": "a.py", "line": 1, "symbol": "hang"}),
        )
        .await;
    let e = &r.structured_content.as_ref().unwrap()["error"];
    assert_eq!(e["code"], "timeout", "{e}");
    // hover's own bound ended it, not --timeout 60.
    assert_eq!(e["data"]["after_ms"], 500, "{e}");
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_server_survives_sigterm_or_sigkill_of_lspgate() {
    for signal in ["TERM", "INT", "KILL"] {
        let ws = workspace(&[("a.py", "x = 1\n")]);
        let log = ws.path().join("fixture.log");
        let mut raw = Raw::start(ws.path(), &[], &[FIXTURE, "--log", log.to_str().unwrap()]).await;
        raw.initialize().await;
        let deadline = Instant::now() + Duration::from_secs(10);
        while pids(&log).is_empty() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let server = pids(&log);
        assert_eq!(server.len(), 1);
        let lspgate = raw.child.id().unwrap();
        std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(lspgate.to_string())
            .status()
            .unwrap();
        let _ = tokio::time::timeout(Duration::from_secs(10), raw.child.wait())
            .await
            .unwrap();
        assert!(
            none_running(&server).await,
            "server outlived lspgate's SIG{signal}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_killed_by_pid_mid_session_comes_back() {
    require("pyright-langserver");
    let ws = example("python");
    let gate = Gate::start(ws.path(), &["--restart-backoff-ms", "50"], &[]).await;
    let (refs, _) = gate
        .ok(
            "references",
            json!({"file": "shop/pricing.py", "line": 4, "symbol": "compute"}),
        )
        .await;
    assert_eq!(refs["total"], 6);
    let (servers, _) = gate.ok("servers", json!({})).await;
    let pyright = servers["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "builtin/pyright")
        .unwrap();
    let pid = pyright["pid"].as_u64().unwrap();
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    // The next calls answer correctly, from the restarted process.
    let (h, text) = gate
        .ok(
            "hover",
            json!({"file": "app.py", "line": 12, "symbol": "compute"}),
        )
        .await;
    assert!(
        h["contents"].as_str().unwrap().contains("def compute"),
        "{text}"
    );
    let (refs, text) = gate
        .ok(
            "references",
            json!({"file": "shop/pricing.py", "line": 4, "symbol": "compute"}),
        )
        .await;
    assert_eq!(refs["total"], 6, "{text}");
    let (d, text) = gate.ok("diagnostics", json!({"file": "app.py"})).await;
    assert!(
        group_diags(&d["files"][0]["diagnostics"])
            .iter()
            .any(|x| x["code"] == "reportReturnType"),
        "{text}"
    );
    let (servers, _) = gate.ok("servers", json!({})).await;
    let pyright = servers["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "builtin/pyright")
        .unwrap();
    assert_eq!(pyright["restarts"], 1);
    assert_ne!(pyright["pid"].as_u64().unwrap(), pid);
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_modified_is_retried() {
    let ws = workspace(&[("a.py", "modified = 1\n")]);
    let gate = Gate::start(ws.path(), &[], &[FIXTURE]).await;
    let (_, text) = gate
        .ok(
            "hover",
            json!({"file": "a.py", "line": 1, "symbol": "modified"}),
        )
        .await;
    assert_eq!(text, "settled");
    gate.stop().await;
}
