//! `lspgate lsp` against clients that misbehave or lose their daemon: a garbage-sending client
//! cut off while the others go on, a killed daemon ending a session clearly, a buffer
//! reloaded from disk getting its diagnostics again, and the client's pipes handed to the
//! daemon (the relay reading nothing more, a killed relay ending the session).

use super::*;

/// The next LSP frame's message on `from`, or None at its end (or on a frame not LSP).
fn read_frame(from: &mut impl std::io::BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if from.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length:") {
            length = n.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    from.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// A hover on `compute` in `app` (`APP`'s line 3), as request `id`.
fn hover_compute(app: &std::path::Path, id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": uri_of(app)}, "position": {"line": 3, "character": 8}}})
}

/// One LSP frame.
fn frame(body: &Value) -> Vec<u8> {
    let body = body.to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbage_client_is_cut_off_and_the_others_go_on() {
    use std::io::Write;
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = python_workspace();
    let env = d.env(&[]);
    let gate = d.session(ws.path(), &[]).await;
    let steps = json!([
        {"do": "open", "file": "app.py"},
        {"do": "hover", "file": "app.py", "line": 4, "symbol": "compute", "label": "ready"},
        {"do": "wait_go", "name": "after"},
        {"do": "hover", "file": "app.py", "line": 4, "symbol": "compute", "label": "hover"},
        {"do": "edit", "file": "app.py", "text": "from lib import compute\n\ny: int = compute(1)\n"},
        {"do": "wait_diagnostics", "file": "app.py", "empty": true, "label": "fixed"},
        {"do": "stop"},
    ]);
    let mut a = LspClient::spawn(Driver::Nvim, &lspgate_lsp(), ws.path(), steps, &env);
    a.step("ready", 120).await;

    // The bad client: a proper initialize, its answer read, then a frame whose Content-Length
    // is not a number, then random bytes.
    let mut bad = std::process::Command::new(LSPGATE)
        .args(["lsp", "--root"])
        .arg(ws.path())
        .env("PATH", test_path())
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = bad.stdin.take().unwrap();
    let stdout = bad.stdout.take().unwrap();
    let root = uri_of(ws.path());
    stdin
        .write_all(&frame(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"processId": null, "rootUri": root, "capabilities": {}}}),
        ))
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut out = std::io::BufReader::new(stdout);
        while let Some(message) = read_frame(&mut out) {
            let _ = tx.send(message);
        }
    });
    let answer = loop {
        let m = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("lspgate lsp answers initialize");
        if m["id"] == 1 {
            break m;
        }
    };
    assert!(answer["result"]["capabilities"].is_object(), "{answer}");
    stdin
        .write_all(&frame(
            &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        ))
        .unwrap();
    let mut garbage = b"Content-Length: forty-two\r\n\r\n{\"jsonrpc\": \"2.0\"".to_vec();
    let mut x: u32 = 0x9e37_79b9;
    for _ in 0..65536 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        garbage.push(x as u8);
    }
    let _ = stdin.write_all(&garbage);
    // Cut off: the process ends (and so its stdout) within a bound, its stdin still open.
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = bad.try_wait().unwrap() {
            break Some(s);
        }
        if Instant::now() >= deadline {
            let _ = bad.kill();
            let _ = bad.wait();
            break None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    drop(stdin);
    reader.join().unwrap();
    let said: Vec<Value> = rx.try_iter().collect();
    assert!(
        status.is_some(),
        "lspgate lsp went on after garbage; it sent: {said:?}"
    );

    a.go("after");
    let obs = a.finish(90).await;
    obs.assert_clean();
    assert!(hover_text(obs.result("hover")).contains("def compute(x: int) -> int"));
    let (_, text) = gate
        .ok(
            "hover",
            json!({"file": "app.py", "line": 4, "symbol": "compute"}),
        )
        .await;
    assert!(text.contains("def compute(x: int) -> int"), "{text}");
    gate.stop().await;
}

/// `lspgate lsp` with a daemon, spoken to by hand: its stdin, a reader of its messages, and
/// its stderr (read to the end in a thread).
struct Hand {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    messages: std::sync::mpsc::Receiver<Value>,
    stderr: std::thread::JoinHandle<String>,
}

impl Hand {
    fn start(root: &std::path::Path, env: &[(&str, &str)]) -> Hand {
        Hand::spawn(&["--root".as_ref(), root.as_os_str()], env)
    }

    /// `lspgate lsp` with `args`.
    fn spawn(args: &[&std::ffi::OsStr], env: &[(&str, &str)]) -> Hand {
        let mut child = std::process::Command::new(LSPGATE)
            .arg("lsp")
            .args(args)
            .env("PATH", test_path())
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut err = child.stderr.take().unwrap();
        let (tx, messages) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut out = std::io::BufReader::new(stdout);
            while let Some(message) = read_frame(&mut out) {
                let _ = tx.send(message);
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut err, &mut s);
            s
        });
        Hand {
            child,
            stdin,
            messages,
            stderr,
        }
    }

    fn send(&mut self, message: Value) {
        use std::io::Write;
        self.stdin.write_all(&frame(&message)).unwrap();
    }

    /// Opens `app` (its text `APP`).
    fn open_app(&mut self, app: &std::path::Path) {
        self.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri_of(app), "languageId": "python", "version": 1, "text": APP}}}));
    }

    /// Hovers `compute` in `app` as request `id`: the answer, which must name it.
    fn hover_compute(&mut self, app: &std::path::Path, id: u64) -> Value {
        self.send(hover_compute(app, id));
        let h = self.answer(id);
        assert!(h["result"].to_string().contains("compute"), "{h}");
        h
    }

    /// The answer to request `id` (within 90 s).
    fn answer(&mut self, id: u64) -> Value {
        loop {
            let m = self
                .messages
                .recv_timeout(Duration::from_secs(90))
                .unwrap_or_else(|_| panic!("no answer to request {id}"));
            if m["id"] == id && m.get("method").is_none() {
                return m;
            }
        }
    }

    /// Its exit code and stderr, once it has exited (within `secs`, its stdin still open).
    async fn exited(mut self, secs: u64) -> (Option<i32>, String) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return (s.code(), self.stderr.join().unwrap());
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "still running after {secs} s: {}",
                    self.stderr.join().unwrap()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The daemon killed under an `lspgate lsp` session: the session cannot go on in another
/// daemon (the documents the client opened went with it), so the process says so and exits
/// 1 at once, as a crashed server would (it exited 0, saying nothing, as if the client had
/// ended it); a client that ends its session (`shutdown`, `exit`) still gets exit 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_killed_under_an_lsp_session_ends_it_clearly() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = python_workspace();
    let env = d.env(&[]);
    let root = uri_of(ws.path());
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": root, "capabilities": {}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "initialized", "params": {}});

    let mut ends = Hand::start(ws.path(), &env);
    ends.send(init.clone());
    assert!(ends.answer(1)["result"]["capabilities"].is_object());
    ends.send(initialized.clone());
    ends.send(json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
    ends.answer(2);
    ends.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    let (code, err) = ends.exited(20).await;
    assert_eq!(code, Some(0), "{err}");

    let mut hand = Hand::start(ws.path(), &env);
    hand.send(init);
    assert!(hand.answer(1)["result"]["capabilities"].is_object());
    hand.send(initialized);
    let app = ws.path().join("app.py");
    hand.open_app(&app);
    hand.hover_compute(&app, 2);
    let daemon = d.pid();
    // SAFETY: a signal to the daemon this test started.
    unsafe { libc::kill(daemon as i32, libc::SIGKILL) };
    let (code, err) = hand.exited(20).await;
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("the lspgate daemon stopped under this session"),
        "{err}"
    );
}

/// `:edit!` (Neovim closes the document and opens it again with the disk's text) keeps the
/// document's diagnostics coming: the client gets them again after the reload, and after a
/// later change on disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reloaded_buffer_gets_its_diagnostics_again() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = python_workspace();
    let env = d.env(&[]);
    let a = LspClient::spawn(
        Driver::Nvim,
        &lspgate_lsp(),
        ws.path(),
        json!([
            {"do": "open", "file": "app.py"},
            {"do": "wait_diagnostics", "file": "app.py", "match": TYPE_ERROR, "label": "first"},
            {"do": "reload", "file": "app.py"},
            {"do": "wait_diagnostics", "file": "app.py", "match": TYPE_ERROR, "label": "reloaded", "timeout_ms": 30000},
            {"do": "reload", "file": "app.py"},
            {"do": "wait_diagnostics", "file": "app.py", "match": TYPE_ERROR, "label": "twice", "timeout_ms": 30000},
            {"do": "stop"},
        ]),
        &env,
    );
    let a = a.finish(120).await;
    a.assert_clean();
    for label in ["first", "reloaded", "twice"] {
        assert!(!a.result(label).is_null(), "{label}\n{}", a.dump());
    }
}

/// `lspgate lsp` hands its client's pipes to the daemon and reads nothing more itself: the
/// daemon holds the client's stdin and the relay's read count stands still over 20 hovers.
/// What the relay read ahead of the handover is served: the client's `initialize` (its root
/// taken from it) and a hover sent with it in one write, answered `-32002` as any request
/// before the initialize answer is. A relay killed by its editor ends the session: the
/// daemon lets the client's pipes go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_is_handed_to_the_daemon_and_the_relay_only_waits() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = python_workspace();
    let env = d.env(&[]);
    let app = ws.path().join("app.py");
    let mut hand = Hand::spawn(&[], &env);
    let mut burst = frame(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": uri_of(ws.path()), "capabilities": {}}}));
    burst.extend(frame(&hover_compute(&app, 2)));
    {
        use std::io::Write;
        hand.stdin.write_all(&burst).unwrap();
    }
    let mut answered = std::collections::BTreeMap::new();
    while answered.len() < 2 {
        let m = hand
            .messages
            .recv_timeout(Duration::from_secs(90))
            .unwrap_or_else(|_| panic!("answers so far: {answered:?}"));
        if let Some(id) = m["id"].as_u64().filter(|_| m.get("method").is_none()) {
            answered.insert(id, m);
        }
    }
    assert!(
        answered[&1]["result"]["capabilities"].is_object(),
        "{answered:?}"
    );
    assert_eq!(answered[&2]["error"]["code"], -32002, "{answered:?}");
    hand.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    hand.open_app(&app);
    hand.hover_compute(&app, 3);

    let relay = hand.child.id();
    let pipe = std::fs::read_link(format!("/proc/{relay}/fd/0")).unwrap();
    let daemon = d.pid();
    let held = |pid: u32| {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .any(|l| l == pipe)
    };
    assert!(
        held(daemon),
        "the daemon does not hold the client's stdin ({pipe:?})"
    );
    let read_by_relay = || {
        let io = std::fs::read_to_string(format!("/proc/{relay}/io")).unwrap();
        io.lines()
            .find_map(|l| l.strip_prefix("rchar:"))
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap()
    };
    let before = read_by_relay();
    for id in 4..24 {
        hand.hover_compute(&app, id);
    }
    // 20 requests relayed would be read twice over (the client's, the daemon's answers).
    let read = read_by_relay() - before;
    assert!(
        read < 1000,
        "the relay read {read} bytes while its client talked"
    );

    hand.child.kill().unwrap();
    hand.child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while held(daemon) {
        assert!(
            Instant::now() < deadline,
            "the daemon kept the client's pipes after its relay was killed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// No daemon can be had (its runtime folder is a file): `lspgate lsp` serves its client in
/// its own process, at once, and its answers are pyright's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_daemon_the_client_is_served_in_process() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = python_workspace();
    let blocked = ws.path().join("not-a-folder");
    std::fs::write(&blocked, "").unwrap();
    let mut env = d.env(&[]);
    env.retain(|(k, _)| *k != "XDG_RUNTIME_DIR");
    env.push(("XDG_RUNTIME_DIR", blocked.to_str().unwrap()));
    let app = ws.path().join("app.py");
    let mut hand = Hand::start(ws.path(), &env);
    hand.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": uri_of(ws.path()), "capabilities": {}}}));
    assert!(hand.answer(1)["result"]["capabilities"].is_object());
    hand.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    hand.open_app(&app);
    hand.hover_compute(&app, 2);
    hand.send(json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}));
    hand.answer(3);
    hand.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    let (code, err) = hand.exited(20).await;
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("serving in this process"), "{err}");
}
