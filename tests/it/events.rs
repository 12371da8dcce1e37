//! The durable event log and resource subscriptions, through a real MCP client: an edit, an
//! undo, a plain write from the test and a server crash appear in order with increasing `seq`;
//! a new lspgate on the same root continues the log from the last cursor, losing and repeating
//! nothing; a client subscribed to a file's diagnostics hears when a plain write changes them,
//! and reading the resource then gives the new ones (pyright); two sessions at once through
//! the per-user daemon share one log and hear each other's changes; two processes on one
//! root log each change once.

use crate::common;
use common::*;
use serde_json::{Value, json};

/// Every event after `after`, paging through.
async fn events_after(gate: &Gate, after: i64) -> (Vec<Value>, i64) {
    let mut all = Vec::new();
    let mut cursor = after;
    loop {
        let (r, text) = gate
            .ok("events", json!({"after": cursor, "limit": 50}))
            .await;
        all.extend(r["events"].as_array().unwrap().iter().cloned());
        cursor = r["next"].as_i64().unwrap_or_else(|| panic!("{text}"));
        if r["more"] != true {
            return (all, cursor);
        }
    }
}

/// A resource's JSON content.
async fn read(gate: &Gate, uri: &str) -> Value {
    let r = gate
        .client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
        .await
        .unwrap();
    let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &r.contents[0] else {
        panic!("not text: {r:?}")
    };
    serde_json::from_str::<Value>(text).unwrap()
}

/// The position of the first event after `from` that `pick` accepts.
fn find(events: &[Value], from: usize, what: &str, pick: impl Fn(&Value) -> bool) -> usize {
    events
        .iter()
        .enumerate()
        .skip(from)
        .find(|(_, e)| pick(e))
        .map(|(i, _)| i)
        .unwrap_or_else(|| panic!("no {what} after event {from}: {events:#?}"))
}

fn kind(e: &Value, k: &str) -> bool {
    e["kind"] == k
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_undos_outside_writes_and_crashes_are_logged_in_order_across_restarts() {
    let ws = workspace(&[("a.py", "crash = 1\nother = 2\n"), ("b.py", "plain = 1\n")]);
    // The fixture counts its crashes in a file: outside the workspace, or the log would
    // rightly record its writes.
    let elsewhere = tempfile::tempdir().unwrap();
    let counter = elsewhere.path().join("crashes");
    let home = new_home();
    let server = [FIXTURE, "--crash-file", counter.to_str().unwrap()];
    let flags = ["--restart-backoff-ms", "1"];
    let gate = Gate::start_in(ws.path(), &flags, &server, &[], &home).await;

    // An edit that introduces an error (the fixture flags lines holding ERROR), and its undo.
    let (r, text) = gate
        .ok(
            "edit",
            json!({"file": "a.py", "edits": [{"old_text": "other = 2", "new_text": "other = ERROR"}], "apply": true}),
        )
        .await;
    let edit_id = r["edit_id"].as_i64().unwrap_or_else(|| panic!("{text}"));
    gate.ok("undo", json!({"edit_id": edit_id})).await;
    // Someone else writes a file; the next call delivers it.
    std::fs::write(ws.path().join("b.py"), "plain = 2\n").unwrap();
    gate.ok("servers", json!({})).await;
    // The server crashes under a call (and is restarted; the call is answered).
    let (_, text) = gate
        .ok(
            "hover",
            json!({"file": "a.py", "line": 1, "symbol": "crash"}),
        )
        .await;
    assert_eq!(text, "survived");

    let (events, cursor) = events_after(&gate, 0).await;
    let seqs: Vec<i64> = events.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    assert_eq!(cursor, *seqs.last().unwrap());
    for e in &events {
        assert!(e["time"].as_str().unwrap().ends_with('Z'), "{e}");
    }
    let started = find(&events, 0, "server_started", |e| {
        kind(e, "server_started") && e["data"]["server"] == "cli/lspgate-fixture-server"
    });
    assert_eq!(events[started]["data"]["root"], ".");
    let applied = find(&events, started, "edit_applied", |e| {
        kind(e, "edit_applied") && e["data"]["edit_id"] == edit_id
    });
    assert_eq!(events[applied]["data"]["files"], json!(["a.py"]));
    let written = find(&events, applied, "file_changed by lspgate", |e| {
        kind(e, "file_changed") && e["data"]["by"] == "lspgate"
    });
    assert_eq!(events[written]["data"]["files"], json!(["a.py"]));
    let broke = find(&events, applied, "diagnostics_changed to 1 error", |e| {
        kind(e, "diagnostics_changed") && e["data"]["file"] == "a.py" && e["data"]["errors"] == 1
    });
    let undone = find(&events, written.max(broke), "edit_undone", |e| {
        kind(e, "edit_undone") && e["data"]["edit_id"] == edit_id
    });
    find(&events, undone, "file_changed by lspgate (undo)", |e| {
        kind(e, "file_changed") && e["data"]["by"] == "lspgate"
    });
    find(&events, undone, "diagnostics_changed back to 0", |e| {
        kind(e, "diagnostics_changed") && e["data"]["file"] == "a.py" && e["data"]["errors"] == 0
    });
    let outside = find(&events, undone, "file_changed from outside", |e| {
        kind(e, "file_changed") && e["data"]["by"] == "outside"
    });
    assert_eq!(events[outside]["data"]["files"], json!(["b.py"]));
    // lspgate's own writes were never taken for someone else's.
    assert!(
        !events.iter().any(|e| kind(e, "file_changed")
            && e["data"]["by"] == "outside"
            && e["data"]["files"] != json!(["b.py"])),
        "{events:#?}"
    );
    let restarted = find(&events, outside, "server_restarted", |e| {
        kind(e, "server_restarted")
    });
    assert!(
        events[restarted]["data"]["reason"].as_str().is_some(),
        "{}",
        events[restarted]
    );
    // A filter keeps only what was asked, and its cursor passes the rest.
    let (r, _) = gate
        .ok(
            "events",
            json!({"after": 0, "kinds": ["edit_applied", "edit_undone"]}),
        )
        .await;
    let kinds: Vec<&str> = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["edit_applied", "edit_undone"]);
    assert_eq!(r["next"], cursor);
    let (code, msg) = gate.err("events", json!({"kinds": ["edit"]})).await;
    assert_eq!(code, "invalid_params", "{msg}");
    gate.stop().await;

    // A new lspgate on the same root: reading from the last cursor gives exactly what
    // happened since, in order, from the next seq on.
    let gate = Gate::start_in(ws.path(), &flags, &server, &[], &home).await;
    gate.ok(
        "edit",
        json!({"file": "b.py", "edits": [{"old_text": "plain = 2", "new_text": "plain = 3"}], "apply": true}),
    )
    .await;
    let (later, _) = events_after(&gate, cursor).await;
    let seqs: Vec<i64> = later.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    let expected: Vec<i64> = (cursor + 1..cursor + 1 + seqs.len() as i64).collect();
    assert_eq!(seqs, expected, "a gap or a repeat: {later:#?}");
    let stopped = find(&later, 0, "server_stopped", |e| kind(e, "server_stopped"));
    assert_eq!(later[stopped]["data"]["reason"], "lspgate stopped");
    let again = find(&later, stopped, "server_started", |e| {
        kind(e, "server_started")
    });
    find(&later, again, "edit_applied", |e| {
        kind(e, "edit_applied") && e["data"]["files"] == json!(["b.py"])
    });
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscribed_client_hears_when_a_plain_write_changes_a_files_diagnostics() {
    require("pyright-langserver");
    let ws = workspace(&[
        ("pyproject.toml", "[project]\nname = \"s\"\n"),
        ("lib.py", "def f(x: int) -> int:\n    return x\n"),
        ("app.py", "from lib import f\n\nf(1)\n"),
    ]);
    let gate = Gate::start(ws.path(), &[], &["pyright-langserver", "--stdio"]).await;
    let listed = gate.client.list_all_resources().await.unwrap();
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "lspgate://servers",
            "lspgate://diagnostics",
            "lspgate://events"
        ]
    );
    let templates = gate.client.list_all_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "lspgate://diagnostics/{file}");

    let uri = "lspgate://diagnostics/app.py";
    let before = read(&gate, uri).await;
    assert_eq!(before["files"][0]["diagnostics"], json!([]), "{before}");
    #[allow(deprecated)] // resources/subscribe: the MCP version rmcp's client speaks here
    gate.client
        .subscribe(rmcp::model::SubscribeRequestParams::new(uri))
        .await
        .unwrap();

    // A dependency changes under it, by a plain write: app.py's call no longer type-checks.
    let written = std::time::Instant::now();
    std::fs::write(
        ws.path().join("lib.py"),
        "def f(x: str) -> str:\n    return x\n",
    )
    .unwrap();
    assert_eq!(
        gate.wait_for_update(uri, 1, 60).await,
        1,
        "no resources/updated"
    );
    eprintln!(
        "pyright: resources/updated for app.py {:.0} ms after a plain write to lib.py",
        written.elapsed().as_secs_f64() * 1000.0
    );
    let after = read(&gate, uri).await;
    assert!(
        diags(&after["files"])
            .iter()
            .any(|d| d["severity"] == "error" && d["line"] == 3),
        "{after}"
    );
    // And back: the fix is heard too.
    std::fs::write(
        ws.path().join("lib.py"),
        "def f(x: int) -> int:\n    return x\n",
    )
    .unwrap();
    assert_eq!(
        gate.wait_for_update(uri, 2, 60).await,
        2,
        "no second update"
    );
    assert_eq!(read(&gate, uri).await["files"][0]["diagnostics"], json!([]));
    // The log says what happened: the outside write, then app.py's counts.
    let (r, _) = gate
        .ok(
            "events",
            json!({"kinds": ["file_changed", "diagnostics_changed"]}),
        )
        .await;
    let events = r["events"].as_array().unwrap();
    let outside = find(events, 0, "file_changed", |e| {
        e["data"]["by"] == "outside" && e["data"]["files"] == json!(["lib.py"])
    });
    find(events, outside, "app.py's new counts", |e| {
        kind(e, "diagnostics_changed") && e["data"]["file"] == "app.py" && e["data"]["errors"] == 1
    });
    // Servers come and go: the resource list may have changed.
    gate.ok("restart_server", json!({"name": "cli/pyright-langserver"}))
        .await;
    let mut lists = gate.recorder.lists_changed.subscribe();
    tokio::time::timeout(
        std::time::Duration::from_secs(30),
        lists.wait_for(|n| *n > 0),
    )
    .await
    .expect("no resources/list_changed")
    .unwrap();
    #[allow(deprecated)]
    gate.client
        .unsubscribe(rmcp::model::UnsubscribeRequestParams::new(uri))
        .await
        .unwrap();
    gate.stop().await;
}

/// MCP 2026-07-28's `subscriptions/listen` (no `initialize`: `server/discover`, then a
/// long-lived request): the stream carries `resources/updated` for a file whose diagnostics a
/// plain write changed (the fixture flags lines holding ERROR).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_carries_diagnostics_updates() {
    use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
    let ws = workspace(&[("a.py", "fine = 1\n")]);
    let mut cmd = tokio::process::Command::new(LSPGATE);
    cmd.arg("serve")
        .arg("--root")
        .arg(ws.path())
        .arg("--")
        .arg(FIXTURE)
        .env("PATH", test_path())
        .env("LSPGATE_HOME", new_home())
        .env("LSPGATE_STANDALONE", "1");
    let transport = rmcp::transport::TokioChildProcess::new(cmd).unwrap();
    let client = rmcp::serve_client_with_lifecycle(
        (),
        transport,
        rmcp::ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .expect("server/discover");
    let uri = "lspgate://diagnostics/a.py";
    let filter = SubscriptionFilter::builder()
        .resource_subscription(uri)
        .resources_list_changed()
        .build();
    let mut stream = client.peer().listen(filter).await.expect("listen");
    assert_eq!(
        stream.acknowledged().resource_subscriptions,
        Some(vec![uri.to_string()])
    );
    std::fs::write(ws.path().join("a.py"), "fine = 1\nbad = ERROR\n").unwrap();
    let updated = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        loop {
            match stream.next().await.expect("stream") {
                Some(ServerNotification::ResourceUpdatedNotification(n)) => return n.params.uri,
                Some(_) => continue,
                None => panic!("the stream ended: {:?}", stream.end()),
            }
        }
    })
    .await
    .expect("no resources/updated on the stream");
    assert_eq!(updated, uri);
    let r = client
        .peer()
        .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
        .await
        .unwrap();
    let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &r.contents[0] else {
        panic!("not text")
    };
    let v: Value = serde_json::from_str(text).unwrap();
    assert_eq!(diags(&v["files"])[0]["line"], 2, "{v}");
    let _ = client.cancel().await;
}

/// Two sessions at once through the per-user daemon share one log: one session's edit, a
/// plain write from the test and the other session's undo appear, once and in order, to both;
/// the session that subscribed to the file hears the other session's edit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_daemon_sessions_share_one_log_and_hear_each_others_changes() {
    two_daemon_sessions(None).await;
}

/// The same when the two sessions' PATHs differ: the daemon gives each a workspace of its own
/// (servers found on different PATHs may differ), each with a watcher; still one log, each
/// change in it once, and the edit of one session not logged as an outside change by the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_sessions_with_different_paths_log_each_change_once() {
    let extra = tempfile::tempdir().unwrap();
    two_daemon_sessions(Some(format!("{}:{}", extra.path().display(), test_path()))).await;
}

/// Sessions A and B on one root through a daemon of their own; B with `b_path` as its PATH.
async fn two_daemon_sessions(b_path: Option<String>) {
    let runtime = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(runtime.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let home = new_home();
    let env = [
        ("LSPGATE_STANDALONE", "0"),
        ("XDG_RUNTIME_DIR", runtime.path().to_str().unwrap()),
        ("LSPGATE_IDLE_EXIT", "30"),
    ];
    let ws = workspace(&[("a.py", "one = 1\n"), ("b.py", "two = 2\n")]);
    let a = Gate::start_in(ws.path(), &[], &[FIXTURE], &env, &home).await;
    let mut b_env = env.to_vec();
    if let Some(path) = &b_path {
        b_env.push(("PATH", path));
    }
    let b = Gate::start_in(ws.path(), &[], &[FIXTURE], &b_env, &home).await;
    let (start, _) = events_after(&a, 0).await;
    let cursor = start.last().map_or(0, |e| e["seq"].as_i64().unwrap());

    let uri = "lspgate://diagnostics/a.py";
    #[allow(deprecated)]
    b.client
        .subscribe(rmcp::model::SubscribeRequestParams::new(uri))
        .await
        .unwrap();
    // Session A edits a.py: B, subscribed, hears it.
    let (r, text) = a
        .ok(
            "edit",
            json!({"file": "a.py", "edits": [{"old_text": "one = 1", "new_text": "one = ERROR"}], "apply": true}),
        )
        .await;
    let edit_id = r["edit_id"].as_i64().unwrap_or_else(|| panic!("{text}"));
    assert_eq!(b.wait_for_update(uri, 1, 30).await, 1, "B heard nothing");
    let seen = read(&b, uri).await;
    assert_eq!(diags(&seen["files"])[0]["line"], 1, "{seen}");
    // A plain write from the test, then B undoes A's edit.
    std::fs::write(ws.path().join("b.py"), "two = 3\n").unwrap();
    b.ok("undo", json!({"edit_id": edit_id})).await;
    assert_eq!(b.wait_for_update(uri, 2, 30).await, 2, "B missed the undo");

    let (from_a, next_a) = events_after(&a, cursor).await;
    let (from_b, next_b) = events_after(&b, cursor).await;
    assert_eq!(from_a, from_b, "one log for both sessions");
    assert_eq!(next_a, next_b);
    let seqs: Vec<i64> = from_a.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    let applied = find(&from_a, 0, "edit_applied", |e| {
        kind(e, "edit_applied") && e["data"]["edit_id"] == edit_id
    });
    let mine = find(&from_a, applied, "file_changed by lspgate", |e| {
        kind(e, "file_changed") && e["data"]["by"] == "lspgate"
    });
    assert_eq!(from_a[mine]["data"]["files"], json!(["a.py"]));
    let outside = find(&from_a, applied, "file_changed from outside", |e| {
        kind(e, "file_changed") && e["data"]["by"] == "outside"
    });
    assert_eq!(from_a[outside]["data"]["files"], json!(["b.py"]));
    find(&from_a, outside, "edit_undone", |e| {
        kind(e, "edit_undone") && e["data"]["edit_id"] == edit_id
    });
    // Each change is logged once, whichever session (or the watcher) delivered it.
    let outside_writes = from_a
        .iter()
        .filter(|e| kind(e, "file_changed") && e["data"]["by"] == "outside")
        .count();
    assert_eq!(outside_writes, 1, "{from_a:#?}");
    let applied_count = from_a.iter().filter(|e| kind(e, "edit_applied")).count();
    assert_eq!(applied_count, 1, "{from_a:#?}");
    // A's edit and B's undo wrote a.py twice: each logged once, and by lspgate.
    let a_py = |by: &str| {
        from_a
            .iter()
            .filter(|e| {
                kind(e, "file_changed")
                    && e["data"]["by"] == by
                    && e["data"]["files"]
                        .as_array()
                        .unwrap()
                        .contains(&json!("a.py"))
            })
            .count()
    };
    assert_eq!((a_py("lspgate"), a_py("outside")), (2, 0), "{from_a:#?}");
    // The daemon gave the sessions one workspace, or (PATHs differing) one each.
    let status = std::process::Command::new(LSPGATE)
        .args(["daemon", "status", "--json"])
        .env("PATH", test_path())
        .env("LSPGATE_HOME", &home)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let status: Value = serde_json::from_slice(&status.stdout).unwrap_or_default();
    let workspaces = status["roots"].as_array().map_or(0, Vec::len);
    assert_eq!(workspaces, 1 + usize::from(b_path.is_some()), "{status}");
    a.stop().await;
    b.stop().await;
    let _ = std::process::Command::new(LSPGATE)
        .args(["daemon", "stop"])
        .env("PATH", test_path())
        .env("LSPGATE_HOME", &home)
        .envs(env.iter().copied())
        .output();
}

/// Two lspgate processes on one root (two standalone sessions; an old daemon draining beside a
/// new one), each with a watcher, write one log: each change is in it once, and one process's
/// edit is not logged as an outside change by the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_on_one_root_log_each_change_once() {
    let ws = workspace(&[("a.py", "one = 1\n"), ("b.py", "two = 2\n")]);
    let home = new_home();
    let a = Gate::start_in(ws.path(), &[], &[FIXTURE], &[], &home).await;
    let b = Gate::start_in(ws.path(), &[], &[FIXTURE], &[], &home).await;
    // A call each starts their servers, and with them their watchers.
    for g in [&a, &b] {
        g.ok("diagnostics", json!({"file": "a.py"})).await;
    }
    let (_, cursor) = events_after(&a, 0).await;
    a.ok(
        "edit",
        json!({"file": "a.py", "edits": [{"old_text": "one = 1", "new_text": "one = 2"}], "apply": true}),
    )
    .await;
    std::fs::write(ws.path().join("b.py"), "two = 3\n").unwrap();
    // Each process takes in what its watcher saw at its next call.
    for g in [&a, &b] {
        g.ok("diagnostics", json!({"file": "b.py"})).await;
    }
    let (events, _) = events_after(&b, cursor).await;
    let logged = |file: &str| -> Vec<String> {
        events
            .iter()
            .filter(|e| {
                kind(e, "file_changed")
                    && e["data"]["files"]
                        .as_array()
                        .unwrap()
                        .contains(&json!(file))
            })
            .map(|e| e["data"]["by"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(logged("a.py"), ["lspgate"], "{events:#?}");
    assert_eq!(logged("b.py"), ["outside"], "{events:#?}");
    a.stop().await;
    b.stop().await;
}
