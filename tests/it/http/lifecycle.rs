//! The HTTP listener's lifecycle beside the daemon: a killed daemon replaced and a killed serve's
//! listener taken over, a daemon started with HTTP, a call in flight when the listener stops,
//! refused addresses and tokens, the limits over stdio, and a subscription hearing a plain write.

use super::*;

#[test]
fn a_daemon_killed_under_serve_http_is_replaced_and_a_killed_serve_takes_its_listener() {
    let env = Env::new(false);
    let ws = fixture_workspace();
    let mut s = env.serve_fixture(ws.path());
    let token = s.token().to_string();
    let mut m = Mcp::connect(&s.url, &token).unwrap();
    let r = m.call("servers", json!({})).unwrap();
    let first_server = r["structuredContent"]["servers"][0]["pid"]
        .as_u64()
        .unwrap();
    let daemon = env.status()["pid"].as_u64().unwrap();
    let old_session = m.session().unwrap().to_string();

    // SAFETY: a signal to the daemon this test started.
    unsafe { libc::kill(daemon as i32, libc::SIGKILL) };
    // A new daemon listens at the same URL and takes the same token; the old session is gone
    // with its daemon (404, MCP's word for "initialize again"), a new one works.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut m = loop {
        match Mcp::connect(&s.url, &token) {
            Ok(m) => break m,
            Err(e) => {
                assert!(
                    Instant::now() < deadline,
                    "no listener again: {e}\n{}",
                    s.stderr.lock().unwrap()
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    };
    let gone = Mcp::resume(&s.url, &token, &old_session)
        .unwrap()
        .call("servers", json!({}))
        .unwrap_err();
    assert!(gone.to_string().starts_with("HTTP 404"), "{gone}");
    let r = m.call("servers", json!({})).unwrap();
    assert_ne!(r["isError"], true, "{r}");
    let server = r["structuredContent"]["servers"][0]["pid"]
        .as_u64()
        .unwrap();
    assert_ne!(server, first_server, "a new daemon, a new server");
    assert_ne!(env.status()["pid"].as_u64().unwrap(), daemon);
    let file = s.token_file.clone().unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), token);
    // The serve command killed outright: the daemon sees its connection end and stops the
    // listener (port, token file) all the same.
    s.signal(libc::SIGKILL);
    s.wait(Duration::from_secs(20));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !refused(s.addr) || file.exists() {
        assert!(
            Instant::now() < deadline,
            "the listener outlived its serve command"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(env.status()["http"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_started_with_http_serves_its_root_beside_stdio_sessions() {
    require("pyright-langserver");
    let env = Env::new(false);
    let ws = workspace(&[
        ("pyproject.toml", "[project]\nname = \"d\"\n"),
        ("lib.py", "def compute(x: int) -> int:\n    return x\n"),
    ]);
    let token = "a-token-the-user-chose-0123";
    let mut cmd = env.lspgate(&[
        "daemon",
        "--root",
        ws.path().to_str().unwrap(),
        "--http",
        "127.0.0.1:0",
    ]);
    cmd.env("LSPGATE_TOKEN", token);
    let mut s = Served::start(cmd);
    assert!(s.token.is_none(), "a given token is not printed");
    assert!(!s.stderr.lock().unwrap().contains(token));
    assert!(env.token_files().is_empty(), "{:?}", env.token_files());

    let mut m = Mcp::connect(&s.url, token).unwrap();
    let r = m
        .call(
            "hover",
            json!({"file": "lib.py", "line": 1, "symbol": "compute"}),
        )
        .unwrap();
    assert_ne!(r["isError"], true, "{r}");
    let r = m.call("servers", json!({})).unwrap();
    let pyright = r["structuredContent"]["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "builtin/pyright")
        .and_then(|x| x["pid"].as_u64())
        .unwrap_or_else(|| panic!("pyright runs: {r}"));
    // A stdio session on the same root, with the same PATH, shares it.
    let stdio = env.stdio(ws.path(), &[]).await;
    let (servers, _) = stdio.ok("servers", json!({})).await;
    let theirs = servers["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "builtin/pyright")
        .and_then(|x| x["pid"].as_u64());
    assert_eq!(theirs, Some(pyright), "{servers}");
    assert_eq!(env.status()["http"][0]["held_by"], "daemon");

    // A second `daemon --http` refuses to run beside it.
    let (code, _, err) = env.cli(&["daemon", "--http", "127.0.0.1:0"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("already running"), "{err}");

    drop(stdio);
    let (code, _, err) = env.cli(&["daemon", "stop"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(s.wait(Duration::from_secs(30)), 0);
    assert!(refused(s.addr));
}

#[test]
fn a_call_in_flight_gets_its_answer_when_the_listener_stops() {
    let env = Env::new(true);
    let ws = fixture_workspace();
    let log = ws.path().join("fixture.log");
    let mut cmd = env.lspgate(&[
        "serve",
        "--root",
        ws.path().to_str().unwrap(),
        "--http",
        "127.0.0.1:0",
        "--timeout",
        "2",
        "--",
        FIXTURE,
        "--log",
        log.to_str().unwrap(),
    ]);
    cmd.current_dir(ws.path());
    let mut s = Served::start(cmd);
    let (url, token) = (s.url.clone(), s.token().to_string());
    // `hang` is never answered by the fixture: the call ends in lspgate's 2 s timeout.
    let call = std::thread::spawn(move || {
        let mut m = Mcp::connect(&url, &token).unwrap();
        m.call("hover", json!({"file": "b.txt", "line": 1, "column": 1}))
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("textDocument/hover")
    {
        assert!(
            Instant::now() < deadline,
            "the hover never reached the server"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    s.signal(libc::SIGTERM);
    let r = call
        .join()
        .unwrap()
        .expect("an answer, not a dropped connection");
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(r["structuredContent"]["error"]["code"], "timeout", "{r}");
    assert_eq!(s.wait(Duration::from_secs(20)), 0);
}

#[test]
fn refused_addresses_and_tokens() {
    let env = Env::new(true);
    let ws = fixture_workspace();
    let root = ws.path().to_str().unwrap();
    // Not loopback without --http-public.
    let (code, _, err) = env.cli(&[
        "serve",
        "--root",
        root,
        "--http",
        "0.0.0.0:0",
        "--",
        FIXTURE,
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--http-public"), "{err}");
    // A token too short to be one.
    let out = env
        .fixture_command(ws.path())
        .env("LSPGATE_TOKEN", "short")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 16"));
    // Long enough but easy to guess: 16 identical characters, a repeated pair.
    // (Spawned and waited for with a bound: a listener that took it would serve for ever.)
    for weak in ["aaaaaaaaaaaaaaaa", "abababababababababababab"] {
        let mut child = env
            .fixture_command(ws.path())
            .env("LSPGATE_TOKEN", weak)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let code = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status.code();
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("LSPGATE_TOKEN={weak} was taken: lspgate is serving with it");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!(code, Some(2), "{weak}: {err}");
        assert!(err.contains("LSPGATE_TOKEN is too easy to guess"), "{err}");
    }
    // A taken port.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let (code, _, err) = env.cli(&["serve", "--root", root, "--http", &addr, "--", FIXTURE]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot listen on"), "{err}");
    assert!(env.token_files().is_empty(), "{:?}", env.token_files());
}

#[tokio::test]
async fn initialize_reports_the_limits_over_stdio_too() {
    let ws = fixture_workspace();
    let gate = Gate::start(ws.path(), &["--max-frame", "100000"], &[FIXTURE]).await;
    let info = gate.client.peer_info().expect("the initialize result");
    let caps = serde_json::to_value(&info.capabilities).unwrap();
    let limits = &caps["experimental"]["lspgate"];
    assert_eq!(limits["max_frame"], 100000, "{caps}");
    assert_eq!(limits["max_output"], 20000, "{caps}");
    assert_eq!(limits["shapes"], 2, "{caps}");
}

/// Resources over HTTP, through the daemon's shared workspace: a Python client subscribed to a
/// file's diagnostics hears `resources/updated` after a plain write gives the file an error,
/// and reading the resource then gives it; `initialize` reports the heavy-call limit.
#[test]
fn an_http_client_subscribed_to_a_files_diagnostics_hears_a_plain_write() {
    let env = Env::new(false);
    let ws = fixture_workspace();
    let s = env.serve_fixture(ws.path());
    let uri = "lspgate://diagnostics/b.txt";
    let out = python(json!({
        "url": s.url, "headers": {"Authorization": format!("Bearer {}", s.token())},
        "calls": [["diagnostics", {"file": "b.txt"}]],
        "subscribe": {"uri": uri, "write": [ws.path().join("b.txt"), "hang here\nan ERROR now\n"]},
    }));
    let session = &out["sessions"][0];
    assert_eq!(session["ok"], true, "{session}");
    assert_eq!(
        session["capabilities"]["experimental"]["lspgate"]["max_inflight"], 2,
        "{session}"
    );
    assert_eq!(
        session["capabilities"]["resources"]["subscribe"], true,
        "{session}"
    );
    // Clean before the write, then told, then the error is there.
    assert_eq!(
        session["results"][0]["structured"]["files"][0]["diagnostics"],
        json!([]),
        "{session}"
    );
    assert_eq!(session["updated"][0], uri, "{session}");
    let read: Value = serde_json::from_str(session["read"].as_str().unwrap()).unwrap();
    let found = diags(&read["files"]);
    assert_eq!(found[0]["line"], 2, "{read}");
    assert_eq!(found[0]["message"], "found ERROR", "{read}");
}
