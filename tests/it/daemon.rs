//! The per-user daemon, through real `lspgate serve` sessions and CLI calls: sessions on one
//! root share one pyright, a session's overlay stays its own, a session ending leaves the
//! others working, two sessions editing one file serialize (one wins, the other is told),
//! idle servers and an idle daemon go away, a daemon killed mid-call leaves no server behind
//! and its sessions carry on with a new one (on pyright, the call it had taken fails and the
//! next one, sent as it died, is answered), and another user cannot connect.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

use lspgate::procfs::alive;

/// Whether process `pid` ends (or is a zombie) within `bound`, looked at every 50 ms.
async fn ends_within(pid: u32, bound: Duration) -> bool {
    let deadline = std::time::Instant::now() + bound;
    while alive(pid) {
        if std::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    true
}

fn python_workspace() -> tempfile::TempDir {
    workspace(&[
        ("pyproject.toml", "[project]\nname = \"d\"\n"),
        ("lib.py", "def compute(x: int) -> int:\n    return x\n"),
        (
            "app.py",
            "from lib import compute\n\nprint(compute(1))\nprint(compute(2))\n",
        ),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_on_one_root_share_servers_and_keep_their_own() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = python_workspace();
    let server = ["pyright-langserver", "--stdio"];
    let refs = json!({"file": "lib.py", "line": 1, "symbol": "compute"});
    let a = d.session(ws.path(), &server).await;
    let (r, text) = a.ok("references", refs.clone()).await;
    assert_eq!(r["total"], 4, "{text}");
    let b = d.session(ws.path(), &server).await;
    // The second session's first answer is complete, from the same (warm) pyright.
    let (r, text) = b.ok("references", refs.clone()).await;
    assert_eq!(r["total"], 4, "{text}");
    assert_ne!(r["partial"], true, "{text}");
    // Terse answers are a session's choice (its LSPGATE_TERSE), not the daemon's: a third
    // session asking for them gets them on the same workspace, the others keep theirs.
    let terse =
        Gate::start_with_env(ws.path(), &[], &server, &d.env(&[("LSPGATE_TERSE", "1")])).await;
    let (short, short_text) = terse.ok("references", refs.clone()).await;
    let (long, long_text) = b.ok("references", refs.clone()).await;
    assert_eq!(short, long);
    assert!(
        short_text.len() < long_text.len(),
        "{short_text}\n---\n{long_text}"
    );
    let mut asked = refs.clone();
    asked["terse"] = json!(false);
    assert_eq!(terse.ok("references", asked).await.1, long_text);
    terse.stop().await;
    let pa = pid_of(&a, "cli/pyright-langserver").await.unwrap();
    let pb = pid_of(&b, "cli/pyright-langserver").await.unwrap();
    assert_eq!(pa, pb, "one pyright for both sessions");
    // A CLI call attaches to the same servers.
    let (code, out, err) = d.cli(
        ws.path(),
        &["servers", "--json", "--", "pyright-langserver", "--stdio"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("\"pid\": {pa}")), "{out}");

    // A's overlay is A's own: B, asking about the same file at the same time, sees the disk.
    let bad = "def compute(x: int) -> int:\n    return \"no\"\n";
    for _ in 0..10 {
        let (ra, rb) = tokio::join!(
            a.ok("diagnostics", json!({"file": "lib.py", "source": bad})),
            b.ok("diagnostics", json!({"file": "lib.py"})),
        );
        assert!(
            !group_diags(&ra.0["files"][0]["diagnostics"]).is_empty(),
            "{}",
            ra.1
        );
        assert!(
            group_diags(&rb.0["files"][0]["diagnostics"]).is_empty(),
            "B saw A's overlay: {}",
            rb.1
        );
    }

    // Two sessions edit one file from the same version: one wins, the other is told, and the
    // file holds the winner's change only.
    let digest = {
        use sha2::Digest;
        let bytes = std::fs::read(ws.path().join("app.py")).unwrap();
        format!("{:x}", sha2::Sha256::digest(&bytes))
    };
    let edit = |new: &str| {
        json!({"file": "app.py", "edits": [{"old_text": "print(compute(2))", "new_text": new}],
               "expected_digest": digest, "apply": true})
    };
    let (ra, rb) = tokio::join!(
        a.call("edit", edit("print(compute(20))")),
        b.call("edit", edit("print(compute(200))")),
    );
    let failed: Vec<_> = [&ra, &rb]
        .into_iter()
        .filter(|r| r.is_error == Some(true))
        .collect();
    assert_eq!(
        failed.len(),
        1,
        "exactly one edit wins: {}\n{}",
        text_of(&ra),
        text_of(&rb)
    );
    assert!(
        text_of(failed[0]).starts_with("revision_conflict"),
        "{}",
        text_of(failed[0])
    );
    let now = std::fs::read_to_string(ws.path().join("app.py")).unwrap();
    let winner = if ra.is_error == Some(true) {
        "compute(200)"
    } else {
        "compute(20)"
    };
    assert!(
        now.contains(winner) && now.matches("print(compute(2").count() == 1,
        "{now}"
    );

    // A leaving leaves B working, on the same pyright.
    a.stop().await;
    let (r, text) = b.ok("references", refs.clone()).await;
    assert_eq!(r["total"], 4, "{text}");
    assert_eq!(pid_of(&b, "cli/pyright-langserver").await.unwrap(), pa);
    b.stop().await;
}

/// `daemon stop` returns once the daemon is gone, and what runs next starts a new one at once:
/// a call right after a stop used to find the old daemon (still stopping a server that takes a
/// second to exit) holding its lock, wait out the 30 s start bound, and run in its own process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_right_after_a_stop_attaches_to_a_new_daemon() {
    let d = Daemon::new();
    let ws = workspace(&[("a.txt", "hello\n")]);
    // A call that starts the server, and one that lists it.
    let hover = ["hover", "a.txt:1:1", "--", FIXTURE, "--slow-exit", "1000"];
    let servers = ["servers", "--", FIXTURE, "--slow-exit", "1000"];
    let (code, _, err) = d.cli(ws.path(), &hover);
    assert_eq!(code, 0, "{err}");
    let old = d.pid();
    let (code, _, err) = d.cli(Path::new("/"), &["daemon", "stop"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !alive(old),
        "`daemon stop` returned before the daemon was gone"
    );
    // At once, with no wait for the old daemon here.
    let (code, _, err) = d.cli(ws.path(), &hover);
    assert_eq!(code, 0, "{err}");
    assert!(
        !err.contains("no daemon"),
        "it ran in its own process: {err}"
    );
    let (code, out, err) = d.cli(ws.path(), &servers);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("lspgate-fixture-server"), "{out}");
    assert!(
        !err.contains("no daemon"),
        "it ran in its own process: {err}"
    );
    assert_ne!(d.pid(), old);
}

/// A daemon started while another still holds the lock (one stopping) exits at once; the
/// client starts another once the lock is free instead of waiting out its bound for a socket
/// that will not come.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_starts_a_daemon_again_once_a_stopping_one_lets_go() {
    let d = Daemon::new();
    let ws = workspace(&[("a.txt", "hello\n")]);
    let dir = d.runtime.path().join("lspgate");
    std::fs::create_dir_all(&dir).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    // The test plays the stopping daemon: it holds the lock for a second.
    let lock =
        std::fs::File::create(dir.join(format!("daemon-{}.lock", env!("CARGO_PKG_VERSION"))))
            .unwrap();
    use std::os::fd::AsRawFd;
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(1));
        drop(lock);
    });
    let (code, out, err) = d.cli(ws.path(), &["servers", "--", FIXTURE]);
    release.join().unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("lspgate-fixture-server"), "{out}");
    assert!(
        !err.contains("no daemon"),
        "it ran in its own process: {err}"
    );
    assert!(d.status().is_some(), "no daemon runs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_servers_and_an_idle_daemon_go_away() {
    let d = Daemon::new();
    let ws = workspace(&[("a.txt", "hello\n")]);
    let env = d.env(&[("LSPGATE_IDLE_SERVERS", "1"), ("LSPGATE_IDLE_EXIT", "2")]);
    let gate = Gate::start_with_env(ws.path(), &[], &[FIXTURE], &env).await;
    gate.ok("hover", json!({"file": "a.txt", "line": 1, "column": 1}))
        .await;
    let server = pid_of(&gate, "cli/lspgate-fixture-server").await.unwrap() as u32;
    let daemon = d.pid();
    // Unused for a second, the server stops (the session still open).
    let stopped = ends_within(server, Duration::from_secs(10)).await;
    assert!(stopped, "the idle server {server} still runs");
    // Asked again, it starts again.
    gate.ok("hover", json!({"file": "a.txt", "line": 1, "column": 1}))
        .await;
    gate.stop().await;
    // No session, no server: the daemon exits.
    let gone = ends_within(daemon, Duration::from_secs(10)).await;
    assert!(gone, "the idle daemon {daemon} still runs");
    assert!(!d.socket().exists(), "it took its socket with it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_killed_mid_call_leaves_nothing_behind_and_sessions_carry_on() {
    let d = Daemon::new();
    let ws = workspace(&[("a.txt", "hang here\nhello\n")]);
    let gate = d.session(ws.path(), &[FIXTURE]).await;
    gate.ok("hover", json!({"file": "a.txt", "line": 2, "column": 1}))
        .await;
    let server = pid_of(&gate, "cli/lspgate-fixture-server").await.unwrap() as u32;
    let daemon = d.pid();
    // A call that hangs in the server, and the daemon killed under it.
    let call = gate.call("hover", json!({"file": "a.txt", "line": 1, "column": 1}));
    let kill = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        // SAFETY: kill with a pid we read and a valid signal.
        unsafe { libc::kill(daemon as i32, libc::SIGKILL) };
    };
    let (r, ()) = tokio::join!(call, kill);
    assert_eq!(r.is_error, Some(true));
    assert!(text_of(&r).starts_with("server_failed"), "{}", text_of(&r));
    // The dead daemon's server went with it.
    let gone = ends_within(server, Duration::from_secs(5)).await;
    assert!(gone, "server {server} outlived its daemon");
    // The next call works, through a new daemon.
    let (h, text) = gate
        .ok("hover", json!({"file": "a.txt", "line": 2, "column": 1}))
        .await;
    assert!(!h["contents"].as_str().unwrap_or("").is_empty(), "{text}");
    assert_ne!(d.pid(), daemon);
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_user_cannot_connect() {
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        panic!("this test runs a client as `nobody`, which needs root (CI runs as root)");
    }
    let d = Daemon::new();
    let ws = workspace(&[("a.txt", "hello\n")]);
    let (code, _, err) = d.cli(ws.path(), &["hover", "a.txt:1:1", "--", FIXTURE]);
    assert_eq!(code, 0, "{err}");
    // Even with the folder and socket opened to everyone, the daemon checks who connects.
    use std::os::unix::fs::PermissionsExt;
    let dir = d.socket().parent().unwrap().to_path_buf();
    for p in [d.runtime.path(), dir.as_path(), d.socket().as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let probe = format!(
        "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({:?})\n\
         try:\n    s.sendall(b'{{\"version\": \"{}\", \"request\": \"status\"}}\\n')\n    \
         print(repr(s.recv(4096)))\nexcept ConnectionError:\n    print(repr(b''))",
        d.socket().display().to_string(),
        env!("CARGO_PKG_VERSION")
    );
    let out = std::process::Command::new("runuser")
        .args(["-u", "nobody", "--", "python3", "-c", &probe])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        said.trim(),
        "b''",
        "the daemon answered another user: {said}"
    );
    // lspgate itself will not use a folder others may enter…
    assert!(d.status().is_none());
    // …and, with it private again, the owner is served.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert!(d.status().is_some());
}

/// A daemon of another version is never reused: asked by a client of another version, it
/// leaves the socket and drains; the next session gets a daemon of its own version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_of_another_version_drains_for_a_new_one() {
    let d = Daemon::new();
    let ws = workspace(&[("a.txt", "hello\n")]);
    let (code, _, err) = d.cli(ws.path(), &["hover", "a.txt:1:1", "--", FIXTURE]);
    assert_eq!(code, 0, "{err}");
    let old = d.pid();
    let probe = format!(
        "import socket, json\ns = socket.socket(socket.AF_UNIX)\ns.connect({:?})\n\
         s.sendall(b'{{\"version\": \"0.0.0-other\", \"request\": \"status\"}}\\n')\n\
         print(s.makefile().readline())",
        d.socket().display().to_string()
    );
    let out = std::process::Command::new("python3")
        .args(["-c", &probe])
        .output()
        .unwrap();
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["ok"], false);
    assert_eq!(answer["error"], "version");
    // It drains (no session left) and exits; a client of this version gets a new daemon.
    let gone = ends_within(old, Duration::from_secs(10)).await;
    assert!(gone, "the old daemon {old} did not drain");
    let (code, _, err) = d.cli(ws.path(), &["hover", "a.txt:1:1", "--", FIXTURE]);
    assert_eq!(code, 0, "{err}");
    assert_ne!(d.pid(), old);
}

/// A root whose trusted config (`head`, then a task) has a task `doze` that sleeps `marker`
/// seconds (a `sleep` the test can find).
fn dozing_root(d: &Daemon, marker: &str, head: &str) -> tempfile::TempDir {
    let ws = workspace(&[(
        "lspgate.toml",
        format!("{head}\n[[task]]\nname = \"doze\"\ncommand = [\"sleep\", \"{marker}\"]\n"),
    )]);
    trust(ws.path(), d.home.path());
    ws
}

/// Background work belongs to the daemon's workspace, not to the session that started it: a
/// later session polls and cancels it; the daemon's stop interrupts what still runs; and the
/// event log reads on, from the same cursor, through a new daemon.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn activities_outlive_their_session_and_events_outlive_the_daemon() {
    let d = Daemon::new();
    let m = marker();
    let ws = dozing_root(&d, &m, "");
    let a = d.session(ws.path(), &[]).await;
    let (r, text) = a
        .ok("run_task", json!({"name": "doze", "background": true}))
        .await;
    let first = r["activity_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{text}"))
        .to_string();
    assert_eq!(until_sleeping(&m, 1).await, 1);
    let (r, _) = a.ok("events", json!({})).await;
    let cursor = r["next"].as_i64().unwrap();
    a.stop().await;

    // Another session finds it running, and cancels it.
    let b = d.session(ws.path(), &[]).await;
    let (r, text) = b.ok("activity", json!({"id": first})).await;
    assert_eq!(r["state"], "running", "{text}");
    let (r, text) = b.ok("activity", json!({"id": first, "cancel": true})).await;
    assert_eq!(r["state"], "cancelled", "{text}");
    assert_eq!(until_sleeping(&m, 0).await, 0);
    let (r, _) = b
        .ok("run_task", json!({"name": "doze", "background": true}))
        .await;
    let second = r["activity_id"].as_str().unwrap().to_string();
    assert_eq!(until_sleeping(&m, 1).await, 1);
    b.stop().await;
    // The daemon stops with it running.
    let daemon = d.pid();
    let (code, _, err) = d.cli(Path::new("/"), &["daemon", "stop"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        ends_within(daemon, Duration::from_secs(10)).await,
        "the daemon did not stop"
    );
    assert_eq!(
        until_sleeping(&m, 0).await,
        0,
        "the task outlived the daemon"
    );

    // A new daemon: the log goes on from the cursor, nothing lost or repeated.
    let c = d.session(ws.path(), &[]).await;
    assert_ne!(d.pid(), daemon);
    let (r, text) = c.ok("events", json!({"after": cursor})).await;
    let events = r["events"].as_array().unwrap();
    let seqs: Vec<i64> = events.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    let expected: Vec<i64> = (cursor + 1..cursor + 1 + seqs.len() as i64).collect();
    assert_eq!(seqs, expected, "{text}");
    let activities: Vec<(&str, &str, &str)> = events
        .iter()
        .filter(|e| e["kind"].as_str().unwrap().starts_with("activity_"))
        .map(|e| {
            (
                e["kind"].as_str().unwrap(),
                e["data"]["id"].as_str().unwrap(),
                e["data"]["state"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        activities,
        [
            ("activity_finished", first.as_str(), "cancelled"),
            ("activity_started", second.as_str(), "running"),
            ("activity_finished", second.as_str(), "failed"),
        ],
        "{text}"
    );
    let (r, text) = c.ok("activity", json!({"id": second})).await;
    assert_eq!(r["reason"], "interrupted", "{text}");
    c.stop().await;
}

/// Sessions on one root whose PATHs differ get a workspace each in the daemon, yet one count
/// of heavy calls (`max_inflight` is per root) and one set of activities: either session polls
/// and cancels what the other started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn activities_and_heavy_calls_are_the_roots_whatever_the_sessions_path() {
    let d = Daemon::new();
    let m = marker();
    let ws = dozing_root(&d, &m, "max_inflight = 1\n");
    let a = d.session(ws.path(), &[]).await;
    let extra = tempfile::tempdir().unwrap();
    let path = format!("{}:{}", extra.path().display(), test_path());
    let b = Gate::start_with_env(ws.path(), &[], &[], &d.env(&[("PATH", &path)])).await;
    let (r, text) = a
        .ok("run_task", json!({"name": "doze", "background": true}))
        .await;
    let id = r["activity_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{text}"))
        .to_string();
    assert_eq!(until_sleeping(&m, 1).await, 1);
    // B's heavy call waits its turn on the root.
    let (code, message) = b
        .err("run_task", json!({"name": "doze", "background": true}))
        .await;
    assert_eq!(code, "busy", "{message}");
    assert!(message.contains(&id), "{message}");
    // B sees A's activity running and stops it.
    let (r, text) = b.ok("activity", json!({"id": id})).await;
    assert_eq!(r["state"], "running", "{text}");
    let (r, text) = b.ok("activity", json!({"id": id, "cancel": true})).await;
    assert_eq!(r["state"], "cancelled", "{text}");
    assert_eq!(until_sleeping(&m, 0).await, 0);
    // Two workspaces on the root, as the daemon reports it.
    let status = d.status().expect("a daemon runs");
    assert_eq!(
        status["roots"].as_array().map(Vec::len),
        Some(2),
        "{status}"
    );
    a.stop().await;
    b.stop().await;
}

/// A session's tasks are found on and run with that session's PATH, not the PATH of the
/// daemon (which the first session started with its own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_run_with_the_sessions_path_in_the_daemon() {
    let d = Daemon::new();
    let tools = tempfile::tempdir().unwrap();
    let tool = tools.path().join("lint-tool");
    std::fs::write(
        &tool,
        "#!/bin/sh\necho \"a.c:1:5: error: found by lint-tool in $PWD\"\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ws = workspace(&[
        ("a.c", "int x;\n"),
        (
            "lspgate.toml",
            "[[task]]\nname = \"lint\"\ncommand = [\"lint-tool\"]\nparser = \"gcc\"\n",
        ),
    ]);
    trust(ws.path(), d.home.path());
    // The first session starts the daemon with a PATH that lacks the tool.
    let plain = d.session(ws.path(), &[]).await;
    let (code, _) = plain.err("run_task", json!({"name": "lint"})).await;
    assert_eq!(
        code, "invalid_params",
        "the daemon's own PATH has no lint-tool"
    );
    let path = format!("{}:{}", tools.path().display(), test_path());
    let with_tool = Gate::start_with_env(ws.path(), &[], &[], &d.env(&[("PATH", &path)])).await;
    let (r, text) = with_tool.ok("run_task", json!({"name": "lint"})).await;
    assert_eq!(r["exit_code"], 1, "{text}");
    let messages: Vec<String> = diags(&r["diagnostics"])
        .iter()
        .filter_map(|d| d["message"].as_str().map(str::to_string))
        .collect();
    assert!(
        messages.iter().any(|m| m.contains("found by lint-tool")),
        "{text}"
    );
    // Both sessions went through one daemon.
    let status = d.status().expect("a daemon runs");
    assert_eq!(status["sessions"], 2, "{status}");
    with_tool.stop().await;
    plain.stop().await;
}

/// A CLI `check` run in the daemon is admitted as the MCP tool call is: with `max_inflight` 1
/// and a heavy call running on the root, it is told `busy` (it used to run beside it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_check_waits_its_turn_as_a_tool_call_does() {
    let d = Daemon::new();
    let m = marker();
    let ws = dozing_root(&d, &m, "max_inflight = 1\n");
    std::fs::write(ws.path().join("a.txt"), "hello\n").unwrap();
    let a = d.session(ws.path(), &[]).await;
    let (r, text) = a
        .ok("run_task", json!({"name": "doze", "background": true}))
        .await;
    let id = r["activity_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{text}"))
        .to_string();
    assert_eq!(until_sleeping(&m, 1).await, 1);
    let (code, out, err) = d.cli(ws.path(), &["check", "--", FIXTURE]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.starts_with("busy: "), "{err}");
    assert!(err.contains(&id), "{err}");
    let (code, out, _) = d.cli(ws.path(), &["check", "--json", "--", FIXTURE]);
    assert_eq!(code, 2, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}"));
    assert_eq!(v["error"]["code"], "busy", "{out}");
    a.ok("activity", json!({"id": id, "cancel": true})).await;
    assert_eq!(until_sleeping(&m, 0).await, 0);
    // Its turn come, it checks.
    let (code, out, err) = d.cli(ws.path(), &["check", "--", FIXTURE]);
    assert_eq!(code, 0, "{out}{err}");
    a.stop().await;
}

/// The processes whose environment points at this test's daemon folder, less the `serve`
/// sessions: the daemon and its servers, as `ps` would show them.
fn daemon_processes(d: &Daemon) -> Vec<(u32, String)> {
    let ours = format!("XDG_RUNTIME_DIR={}", d.runtime.path().display());
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if !env.split(|b| *b == 0).any(|v| v == ours.as_bytes()) || !alive(pid) {
            continue;
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .unwrap_or_default()
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        if !cmdline.contains(" serve ") {
            found.push((pid, cmdline));
        }
    }
    found
}

/// `daemon stop` with an MCP session attached stops the daemon and its servers, and returns
/// once they are gone: the session starts no daemon until it needs one (its next call, which
/// a new daemon answers). It used to start one at once, and `stop` waited 30 s and failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_stops_with_a_session_attached_until_its_next_call() {
    let d = Daemon::new();
    let ws = workspace(&[("a.txt", "hello\n")]);
    let server = [FIXTURE, "--slow-exit", "500"];
    let gate = d.session(ws.path(), &server).await;
    let hover = json!({"file": "a.txt", "line": 1, "column": 1});
    gate.ok("hover", hover.clone()).await;
    let fixture = pid_of(&gate, "cli/lspgate-fixture-server").await.unwrap() as u32;
    let daemon = d.pid();
    assert!(
        daemon_processes(&d).iter().any(|(p, _)| *p == fixture),
        "{:?}",
        daemon_processes(&d)
    );
    let began = std::time::Instant::now();
    let (code, out, err) = d.cli(Path::new("/"), &["daemon", "stop"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
    assert!(
        !alive(daemon),
        "`daemon stop` returned with the daemon running"
    );
    assert!(
        !alive(fixture),
        "`daemon stop` returned with its server running"
    );
    // Nothing of the daemon's comes back while the session sits idle.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(daemon_processes(&d), [], "a daemon or server runs");
    assert!(d.status().is_none(), "status says a daemon runs");
    assert!(out.contains("stopped"), "it says so: {out}");
    // The session's next call starts a new daemon, which answers it.
    let (h, text) = gate.ok("hover", hover).await;
    assert!(!h["contents"].as_str().unwrap_or("").is_empty(), "{text}");
    let new = d.pid();
    assert_ne!(new, daemon);
    assert!(daemon_processes(&d).iter().any(|(p, _)| *p == new));
    gate.stop().await;
}

/// A client of the daemon's socket that speaks its typed protocol itself (no lspgate process
/// in between): sends a `call` hello, reads the answer, then hands back the call's lines.
async fn typed_call(
    d: &Daemon,
    session: &Value,
    tool: &str,
    args: Value,
) -> tokio::io::Lines<tokio::io::BufReader<tokio::net::UnixStream>> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut stream = tokio::net::UnixStream::connect(d.socket()).await.unwrap();
    let hello = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "request": "call",
        "session": session,
        "tool": tool,
        "args": args,
    });
    stream
        .write_all(format!("{hello}\n").as_bytes())
        .await
        .unwrap();
    let mut lines = tokio::io::BufReader::new(stream).lines();
    let answer: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(answer["ok"], true, "{answer}");
    lines
}

/// The daemon serves typed requests, not command lines: a session said by its spec (root,
/// server, environment, settings) and one tool call. `check` sends its progress before its
/// report; a session that cannot be opened is said so (`unopened`); a client that goes away
/// mid-call takes the call with it (the task it ran ends).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_serves_typed_calls_and_drops_those_whose_client_left() {
    let d = Daemon::new();
    let m = marker();
    let ws = dozing_root(&d, &m, "");
    for i in 0..4 {
        std::fs::write(ws.path().join(format!("a{i}.txt")), "hello\n").unwrap();
    }
    // A CLI call starts the daemon.
    let (code, _, err) = d.cli(ws.path(), &["hover", "a0.txt:1:1", "--", FIXTURE]);
    assert_eq!(code, 0, "{err}");
    let session = json!({
        "root": ws.path(),
        "server": [FIXTURE],
        "env": {"PATH": test_path()},
        "tools": "all",
        "settings": {
            "install": false, "max_output": 20000, "timeout": 30.0, "ready_timeout": 15.0,
            "diagnostics_timeout": 15.0, "restart": {"limit": 3}, "restart_backoff_ms": 100,
            "open_documents": 200,
        },
    });
    let mut lines = typed_call(&d, &session, "check", json!({})).await;
    let mut progress = 0;
    let last = loop {
        let line: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        match line["line"].as_str() {
            Some("progress") => progress += 1,
            _ => break line,
        }
    };
    assert_eq!(last["line"], "done", "{last}");
    assert_eq!(last["structured"]["version"], 2, "{last}");
    assert!(progress > 0, "no progress before the report: {last}");

    let mut elsewhere = session.clone();
    elsewhere["root"] = json!("/no/such/root");
    let mut lines = typed_call(&d, &elsewhere, "hover", json!({})).await;
    let line: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(line["line"], "unopened", "{line}");
    assert!(line["error"]["code"].is_string(), "{line}");

    let lines = typed_call(&d, &session, "run_task", json!({"name": "doze"})).await;
    assert_eq!(until_sleeping(&m, 1).await, 1, "the task runs");
    drop(lines);
    assert_eq!(
        until_sleeping(&m, 0).await,
        0,
        "the call went on after its client left"
    );
}

/// A session on a real pyright whose daemon dies under it: the call the daemon had taken fails
/// (`server_failed`), and the next call, sent when the daemon could no longer read it (frozen,
/// then killed: the moment between a `kill -9` and the socket closing, made to last), is
/// answered by a new daemon. It used to fail with the first, as "in flight" when the daemon
/// went away, though the new daemon started for the session's following call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_call_after_a_daemon_died_is_answered_by_a_new_one() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = python_workspace();
    let gate = d
        .session(ws.path(), &["pyright-langserver", "--stdio"])
        .await;
    let hover = json!({"file": "app.py", "line": 3, "symbol": "compute"});
    let daemon = d.pid() as i32;
    // The first hover starts pyright: still in flight when the daemon stops reading.
    let first = gate.call("hover", hover.clone());
    let next = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        // SAFETY: signals to the daemon this test started.
        unsafe { libc::kill(daemon, libc::SIGSTOP) };
        let kill = async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            unsafe { libc::kill(daemon, libc::SIGKILL) };
        };
        let (r, ()) = tokio::join!(gate.call("hover", hover.clone()), kill);
        r
    };
    let (first, next) = tokio::join!(first, next);
    assert_eq!(first.is_error, Some(true), "{}", text_of(&first));
    assert!(
        text_of(&first).starts_with("server_failed"),
        "{}",
        text_of(&first)
    );
    assert_ne!(next.is_error, Some(true), "{}", text_of(&next));
    let said = first_text(&next);
    assert!(said.contains("compute") && said.contains("int"), "{said}");
    assert_ne!(d.pid() as i32, daemon);
    // And the one after, on the same daemon.
    let (h, text) = gate.ok("hover", hover).await;
    assert!(
        h["contents"].as_str().unwrap_or("").contains("int"),
        "{text}"
    );
    gate.stop().await;
}

fn first_text(r: &rmcp::model::CallToolResult) -> String {
    r.structured_content
        .as_ref()
        .and_then(|s| s["contents"].as_str())
        .unwrap_or_default()
        .to_string()
}
