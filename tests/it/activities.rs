//! Background activities through a real MCP client: a background `check` of a few hundred
//! generated files (pyright) answers an id at once, reports progress and ends with the
//! foreground call's report; `max_inflight` heavy calls fill the workspace and one more is
//! `busy`; a cancelled task leaves no process behind; an activity that lspgate's stop (clean,
//! or SIGKILL) interrupted reads `failed` with reason `interrupted` after the restart; and a
//! client that declared MCP tasks gets the same work as tasks.

use crate::common;
use common::*;
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    GetTaskParams, Implementation, TaskPayload,
};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// A workspace with tasks: `nap` (a shell that starts two sleeps of `marker` seconds and waits
/// for them: a process group to kill), `doze` (one sleep, no shell) and `hello`.
fn tasks_workspace(marker: &str) -> tempfile::TempDir {
    workspace(&[(
        "lspgate.toml",
        format!(
            "[[task]]\nname = \"nap\"\ncommand = [\"sh\", \"-c\", \"sleep {marker} & sleep {marker}; wait\"]\n\n\
             [[task]]\nname = \"doze\"\ncommand = [\"sleep\", \"{marker}\"]\n\n\
             [[task]]\nname = \"hello\"\ncommand = [\"echo\", \"hello\"]\n"
        ),
    )])
}

async fn start_trusted_in(root: &Path, home: &Path) -> Gate {
    trust(root, home);
    Gate::start_in(root, &[], &[], &[], home).await
}

fn activity_id(r: &Value) -> String {
    let id = r["activity_id"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert_eq!(r.as_object().unwrap().len(), 1, "only the id: {r}");
    id.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heavy_calls_past_max_inflight_are_busy_and_cancelled_tasks_leave_no_process() {
    let m = marker();
    let ws = tasks_workspace(&m);
    let gate = Gate::start_trusted(ws.path(), &[], &[]).await;
    let info = gate.client.peer_info().expect("initialize result");
    let limits = &info.capabilities.experimental.as_ref().unwrap()["lspgate"];
    assert_eq!(limits["max_inflight"], 2, "{limits:?}");

    let (r, _) = gate
        .ok("run_task", json!({"name": "nap", "background": true}))
        .await;
    let first = activity_id(&r);
    let (r, _) = gate
        .ok("run_task", json!({"name": "nap", "background": true}))
        .await;
    let second = activity_id(&r);
    assert_ne!(first, second);
    // Both run (two sleeps each) before anything else is asked.
    assert_eq!(until_sleeping(&m, 4).await, 4);
    let (r, text) = gate.ok("activity", json!({"id": first})).await;
    assert_eq!(r["state"], "running", "{text}");
    assert_eq!(r["kind"], "run_task");

    // A third heavy call, foreground or background, is refused with what runs and when to retry.
    let call = gate.call("run_task", json!({"name": "hello"})).await;
    assert_eq!(call.is_error, Some(true), "{}", text_of(&call));
    let error = &call.structured_content.unwrap()["error"];
    assert_eq!(error["code"], "busy");
    assert_eq!(error["data"]["running"], 2);
    assert_eq!(error["data"]["max_inflight"], 2);
    assert!(error["data"]["retry_after_ms"].as_u64().unwrap() > 0);
    let ids: Vec<&str> = error["data"]["in_flight"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["activity_id"].as_str())
        .collect();
    assert_eq!(ids, [first.as_str(), second.as_str()]);
    let (code, _) = gate.err("check", json!({"background": true})).await;
    assert_eq!(code, "busy");

    // Cancelled: its process group is gone, and its place is free again.
    let (r, text) = gate
        .ok("activity", json!({"id": first, "cancel": true}))
        .await;
    assert_eq!(r["state"], "cancelled", "{text}");
    assert_eq!(r["reason"], "cancelled");
    assert_eq!(
        until_sleeping(&m, 2).await,
        2,
        "the first nap's sleeps live on"
    );
    let (r, text) = gate.ok("run_task", json!({"name": "hello"})).await;
    assert_eq!(r["stdout"], "hello\n", "{text}");
    gate.ok("activity", json!({"id": second, "cancel": true}))
        .await;
    assert_eq!(
        until_sleeping(&m, 0).await,
        0,
        "sleeps outlived their cancel"
    );
    // Cancelling what has ended changes nothing.
    let (r, _) = gate
        .ok("activity", json!({"id": first, "cancel": true}))
        .await;
    assert_eq!(r["state"], "cancelled");
    let (code, _) = gate.err("activity", json!({"id": "act-999999"})).await;
    assert_eq!(code, "activity_missing");

    let (r, _) = gate
        .ok(
            "events",
            json!({"kinds": ["activity_started", "activity_finished"]}),
        )
        .await;
    let seen: Vec<(String, String, String)> = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let d = &e["data"];
            (
                e["kind"].as_str().unwrap().to_string(),
                d["id"].as_str().unwrap().to_string(),
                d["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let ev = |k: &str, id: &str, s: &str| (k.to_string(), id.to_string(), s.to_string());
    assert_eq!(
        seen,
        [
            ev("activity_started", &first, "running"),
            ev("activity_started", &second, "running"),
            ev("activity_finished", &first, "cancelled"),
            ev("activity_finished", &second, "cancelled"),
        ]
    );
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_check_reports_progress_and_ends_with_the_foreground_report() {
    require("pyright-langserver");
    // Python files only: the explicit server is asked about every file in scope.
    let mut files: Vec<(String, String)> = Vec::new();
    let n = 300;
    for i in 0..n {
        let body = if i == 0 {
            "def f0(x: int) -> int:\n    return x\n".to_string()
        } else {
            format!(
                "from m{p} import f{p}\n\ndef f{i}(x: int) -> int:\n    return f{p}(x) + {i}\n",
                p = i - 1
            )
        };
        files.push((format!("m{i}.py"), body));
    }
    files.push((
        "broken.py".into(),
        "from m7 import f7\n\nf7(\"text\")\n".into(),
    ));
    let ws = workspace(&files);
    let gate = Gate::start(ws.path(), &[], &["pyright-langserver", "--stdio"]).await;

    let started = std::time::Instant::now();
    let (r, text) = gate.ok("check", json!({"background": true})).await;
    let answered = started.elapsed();
    let id = activity_id(&r);
    assert!(text.contains(&id), "{text}");
    let mut progressed = 0;
    // Polled until it ends; what it reports while it runs never goes past the total.
    let mut polls = 0;
    let done = loop {
        let (a, text) = gate.ok("activity", json!({"id": id})).await;
        if a["state"] != "running" {
            break a;
        }
        if let Some(p) = a["progress"].as_object() {
            assert!(p["done"].as_u64() <= p["total"].as_u64(), "{text}");
            progressed += 1;
        }
        polls += 1;
        assert!(polls < 3_000, "the background check never ended");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let ended = started.elapsed();
    assert_eq!(done["state"], "succeeded", "{done}");
    assert!(progressed > 0, "no progress reported in {polls} polls");
    let report = &done["result"];
    assert_eq!(report["version"], 2, "{report}");
    assert_eq!(report["summary"]["files"], n + 1, "{report}");
    assert_eq!(report["summary"]["errors"], 1, "{report}");
    assert_eq!(done["progress"]["done"], n + 1, "{done}");
    assert_eq!(done["progress"]["total"], n + 1);
    // The same report as the call in the foreground.
    let fg_started = std::time::Instant::now();
    let (fg, _) = gate.ok("check", json!({})).await;
    let fg_took = fg_started.elapsed();
    eprintln!(
        "background check of {} files: id after {:.1} ms, done after {:.2} s ({polls} polls, {progressed} with progress); the same check in the foreground (warm): {:.2} s",
        n + 1,
        answered.as_secs_f64() * 1000.0,
        ended.as_secs_f64(),
        fg_took.as_secs_f64()
    );
    assert_eq!(findings(report), findings(&fg));
    assert_eq!(report["ok"], fg["ok"]);
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_activity_running_when_lspgate_stops_reads_failed_interrupted_after_the_restart() {
    let m = marker();
    let ws = tasks_workspace(&m);
    let home = new_home();

    // A clean stop (stdin closed).
    let gate = start_trusted_in(ws.path(), &home).await;
    let (r, _) = gate
        .ok("run_task", json!({"name": "doze", "background": true}))
        .await;
    let first = activity_id(&r);
    assert_eq!(until_sleeping(&m, 1).await, 1);
    gate.stop().await;
    assert_eq!(until_sleeping(&m, 0).await, 0, "the task outlived lspgate");
    let gate = start_trusted_in(ws.path(), &home).await;
    let (r, text) = gate.ok("activity", json!({"id": first})).await;
    assert_eq!(
        (&r["state"], &r["reason"]),
        (&json!("failed"), &json!("interrupted")),
        "{text}"
    );
    assert_eq!(r["error"]["data"]["reason"], "interrupted");

    // lspgate killed outright: the next one to open the state database records it.
    let (r, _) = gate
        .ok("run_task", json!({"name": "doze", "background": true}))
        .await;
    let second = activity_id(&r);
    assert_eq!(until_sleeping(&m, 1).await, 1);
    let pid = gate.pid.unwrap();
    // SAFETY: kill of the lspgate this test started.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    drop(gate);
    assert_eq!(until_sleeping(&m, 0).await, 0, "the task outlived lspgate");
    let gate = start_trusted_in(ws.path(), &home).await;
    let (r, text) = gate.ok("activity", json!({"id": second})).await;
    assert_eq!(
        (&r["state"], &r["reason"]),
        (&json!("failed"), &json!("interrupted")),
        "{text}"
    );
    let (r, _) = gate
        .ok("events", json!({"kinds": ["activity_finished"]}))
        .await;
    let ended: Vec<(&str, &str)> = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["data"]["id"].as_str().unwrap(),
                e["data"]["reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ended,
        [
            (first.as_str(), "interrupted"),
            (second.as_str(), "interrupted")
        ]
    );
    gate.stop().await;
}

/// An MCP client that declared the tasks extension.
fn tasks_client() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::builder().enable_tasks().build(),
        Implementation::new("tasks-test", "0"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_declared_tasks_gets_background_calls_as_tasks() {
    let m = marker();
    let ws = tasks_workspace(&m);
    let home = new_home();
    trust(ws.path(), &home);
    let mut cmd = tokio::process::Command::new(LSPGATE);
    cmd.arg("serve")
        .arg("--root")
        .arg(ws.path())
        .env("PATH", test_path())
        .env("LSPGATE_HOME", &home)
        .env("LSPGATE_STANDALONE", "1");
    let transport = rmcp::transport::TokioChildProcess::new(cmd).unwrap();
    let client = tasks_client().serve(transport).await.unwrap();
    let call = |name: &str, args: Value| {
        let Value::Object(map) = args else {
            unreachable!()
        };
        CallToolRequestParams::new(name.to_string()).with_arguments(map)
    };
    let task_of = |r: CallToolResponse| match r {
        CallToolResponse::Task(t) => t.task.task_id,
        other => panic!("not a task: {other:?}"),
    };
    let until_done = |task: String| {
        let client = &client;
        async move {
            for _ in 0..600 {
                let t = client
                    .peer()
                    .get_task(GetTaskParams::new(task.clone()))
                    .await
                    .unwrap()
                    .task;
                if t.status().is_terminal() {
                    return t;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            panic!("task {task} never ended")
        }
    };

    // A background run_task as a task: its result is the foreground call's.
    let r = client
        .call_tool_once(call(
            "run_task",
            json!({"name": "hello", "background": true}),
        ))
        .await
        .unwrap();
    let task = until_done(task_of(r)).await;
    let TaskPayload::Completed { result } = task.payload else {
        panic!("not completed: {task:?}")
    };
    let fg = client
        .call_tool(call("run_task", json!({"name": "hello"})))
        .await
        .unwrap();
    let mut expected = fg.structured_content.unwrap();
    let mut got = result["structuredContent"].clone();
    for v in [&mut expected, &mut got] {
        assert_eq!(v["stdout"], "hello\n", "{v}");
    }
    assert_eq!(got, expected);

    // tasks/cancel stops the work: its processes go.
    let r = client
        .call_tool_once(call("run_task", json!({"name": "nap", "background": true})))
        .await
        .unwrap();
    let task = task_of(r);
    assert_eq!(until_sleeping(&m, 2).await, 2);
    client
        .peer()
        .cancel_task(CancelTaskParams::new(task.clone()))
        .await
        .unwrap();
    let ended = until_done(task).await;
    assert!(matches!(ended.payload, TaskPayload::Cancelled), "{ended:?}");
    assert_eq!(until_sleeping(&m, 0).await, 0, "sleeps outlived the task");
    // A call without `background` stays a plain call.
    let r = client
        .call_tool_once(call("run_task", json!({"name": "hello"})))
        .await
        .unwrap();
    assert!(matches!(r, CallToolResponse::Complete(_)), "{r:?}");
    let _ = client.cancel().await;
}

/// `max_inflight` from lspgate.toml: `initialize` reports it and a second heavy call is `busy`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_inflight_is_configurable() {
    let m = marker();
    let ws = workspace(&[(
        "lspgate.toml",
        format!("max_inflight = 1\n\n[[task]]\nname = \"doze\"\ncommand = [\"sleep\", \"{m}\"]\n"),
    )]);
    let gate = Gate::start_trusted(ws.path(), &[], &[]).await;
    let info = gate.client.peer_info().expect("initialize result");
    let limits = &info.capabilities.experimental.as_ref().unwrap()["lspgate"];
    assert_eq!(limits["max_inflight"], 1, "{limits:?}");
    let (r, _) = gate
        .ok("run_task", json!({"name": "doze", "background": true}))
        .await;
    let id = activity_id(&r);
    let (code, message) = gate.err("check", json!({})).await;
    assert_eq!(code, "busy", "{message}");
    assert!(message.contains("max_inflight 1"), "{message}");
    gate.ok("activity", json!({"id": id, "cancel": true})).await;
    assert_eq!(until_sleeping(&m, 0).await, 0);
    gate.stop().await;
}
