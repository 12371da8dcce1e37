//! MCP over Streamable HTTP (protocol §5), through real clients: the Python MCP SDK's Streamable
//! HTTP client (tests/http_client.py, in `.tools/mcp-venv`), the MCP Inspector's CLI (in
//! `.tools/inspector`) and, for exact status codes and headers, a raw HTTP/1.1 client
//! (tests/it/raw_http). Tools work with the token; no token, a wrong one, a foreign Origin or
//! Host are refused (401 with a Bearer challenge, 403); the body limit, CORS, the token file;
//! two HTTP clients and a stdio session on one root share one pyright through the daemon; a
//! daemon killed under `serve --http` is replaced at the same address with the same token, and
//! a `serve --http` killed takes its listener with it;
//! `daemon --http` serves its root; a call in flight gets its answer when the listener stops;
//! the bounds a hostile client meets (`http/bounds.rs`), and tokens too easy to guess.

mod bounds;
mod lifecycle;
use crate::common;
use crate::raw_http;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use raw_http::{Conn, Mcp};
use serde_json::{Value, json};

/// A private runtime folder (daemon socket, token files) and data folder for one test.
struct Env {
    runtime: tempfile::TempDir,
    home: tempfile::TempDir,
    standalone: bool,
}

impl Env {
    fn new(standalone: bool) -> Env {
        let runtime = tempfile::tempdir().unwrap();
        std::fs::set_permissions(runtime.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        Env {
            runtime,
            home: tempfile::tempdir().unwrap(),
            standalone,
        }
    }

    fn vars(&self) -> Vec<(String, String)> {
        vec![
            ("PATH".into(), test_path()),
            (
                "LSPGATE_STANDALONE".into(),
                if self.standalone { "1" } else { "0" }.into(),
            ),
            (
                "XDG_RUNTIME_DIR".into(),
                self.runtime.path().display().to_string(),
            ),
            (
                "LSPGATE_HOME".into(),
                self.home.path().display().to_string(),
            ),
            // A safety net: a test that fails midway leaves no daemon for long.
            ("LSPGATE_IDLE_EXIT".into(), "30".into()),
        ]
    }

    /// `lspgate serve --root ROOT --http 127.0.0.1:0 -- FIXTURE`, run in the root.
    fn fixture_command(&self, root: &Path) -> Command {
        let mut cmd = self.lspgate(&[
            "serve",
            "--root",
            root.to_str().unwrap(),
            "--http",
            "127.0.0.1:0",
            "--",
            FIXTURE,
        ]);
        cmd.current_dir(root);
        cmd
    }

    /// `fixture_command`, once it listens.
    fn serve_fixture(&self, root: &Path) -> Served {
        Served::start(self.fixture_command(root))
    }

    fn lspgate(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(LSPGATE);
        cmd.args(args)
            .envs(self.vars())
            .env_remove("LSPGATE_TOKEN")
            .env_remove("LSPGATE_HTTP_ORIGINS")
            .env_remove("LSPGATE_HTTP_HOSTS");
        cmd
    }

    /// `lspgate ARGS` to the end: exit code, stdout, stderr.
    fn cli(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.lspgate(args).current_dir("/").output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn status(&self) -> Value {
        let (code, out, err) = self.cli(&["daemon", "status", "--json"]);
        assert_eq!(code, 0, "daemon status: {err}");
        serde_json::from_str(&out).unwrap()
    }

    fn token_files(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.runtime.path().join("lspgate"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.to_string_lossy().ends_with(".token"))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A stdio session (`lspgate serve`, rmcp's client) in this environment.
    async fn stdio(&self, root: &Path, server: &[&str]) -> Gate {
        let vars = self.vars();
        let env: Vec<(&str, &str)> = vars
            .iter()
            .filter(|(k, _)| k != "PATH")
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        Gate::start_in(root, &[], server, &env, self.home.path()).await
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        if !self.standalone {
            let _ = self.cli(&["daemon", "stop"]);
        }
    }
}

/// An lspgate process serving HTTP (`serve --http` or `daemon --http`), its stderr collected.
struct Served {
    child: Child,
    url: String,
    addr: SocketAddr,
    /// The token printed on stderr (`None` when it came from LSPGATE_TOKEN).
    token: Option<String>,
    token_file: Option<PathBuf>,
    stderr: Arc<Mutex<String>>,
}

impl Served {
    /// Starts `cmd` and waits for it to say where it listens.
    fn start(mut cmd: Command) -> Served {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let pipe = child.stderr.take().unwrap();
        let all = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { return };
                all.lock().unwrap().push_str(&format!("{line}\n"));
                let _ = tx.send(line);
            }
        });
        let (mut url, mut token, mut token_file, mut from_env) = (None, None, None, false);
        let deadline = Instant::now() + Duration::from_secs(60);
        while url.is_none() || (token.is_none() && !from_env) {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = rx.recv_timeout(left) else {
                let _ = child.kill();
                panic!(
                    "lspgate did not say where it listens:\n{}",
                    stderr.lock().unwrap()
                );
            };
            if let Some(rest) = line.strip_prefix("lspgate: MCP over HTTP at ") {
                url = rest.split_whitespace().next().map(String::from);
            } else if let Some(rest) = line.strip_prefix("lspgate: bearer token ") {
                if rest == "from LSPGATE_TOKEN" {
                    from_env = true;
                } else {
                    let mut words = rest.split_whitespace();
                    token = words.next().map(String::from);
                    token_file = rest
                        .split_once("(also in ")
                        .map(|(_, f)| PathBuf::from(f.trim_end_matches(')')));
                }
            }
        }
        let url = url.unwrap();
        let (addr, path) = raw_http::split_url(&url);
        assert_eq!(path, "/mcp");
        Served {
            child,
            url,
            addr,
            token,
            token_file,
            stderr,
        }
    }

    fn token(&self) -> &str {
        self.token.as_deref().expect("a generated token")
    }

    fn host(&self) -> String {
        self.addr.to_string()
    }

    fn signal(&self, sig: i32) {
        // SAFETY: a signal to a child of this test.
        unsafe { libc::kill(self.child.id() as i32, sig) };
    }

    /// Waits (bounded) for the process to exit; its exit code.
    fn wait(&mut self, within: Duration) -> i32 {
        let deadline = Instant::now() + within;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code().unwrap_or(-1);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "lspgate did not exit within {within:?}:\n{}",
                    self.stderr.lock().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

/// POSTs an `initialize` with `headers` (Host, Content-Type and Accept added unless given).
fn post_init(s: &Served, headers: &[(&str, &str)]) -> raw_http::Response {
    let host = s.host();
    let mut all: Vec<(&str, &str)> = Vec::new();
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        all.push(("Host", &host));
    }
    all.push(("Content-Type", "application/json"));
    all.push(("Accept", "application/json, text/event-stream"));
    all.extend_from_slice(headers);
    Conn::connect(s.addr)
        .unwrap()
        .request("POST", "/mcp", &all, INIT.as_bytes())
        .unwrap()
}

fn fixture_workspace() -> tempfile::TempDir {
    workspace(&[
        ("a.txt", "hello world\nan ERROR here\n"),
        ("b.txt", "hang here\n"),
    ])
}

/// The Python MCP SDK's client (tests/http_client.py) with `plan`; its report.
fn python(plan: Value) -> Value {
    let out = python_child(plan).wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| {
        panic!(
            "the Python client said no JSON ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn python_child(plan: Value) -> Child {
    let py = repo().join(".tools/mcp-venv/bin/python");
    assert!(
        py.is_file(),
        "the Python MCP client is not installed: run scripts/install-test-servers.sh"
    );
    Command::new(py)
        .arg(repo().join("tests/http_client.py"))
        .arg(plan.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The MCP Inspector's CLI over HTTP: exit code and everything it printed.
fn inspector(url: &str, args: &[&str]) -> (i32, String) {
    let bin = repo().join(".tools/inspector/node_modules/.bin/mcp-inspector");
    assert!(
        bin.is_file(),
        "the MCP Inspector is not installed: run scripts/install-test-servers.sh"
    );
    let out = Command::new(bin)
        .args(["--cli", url, "--transport", "http"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn refused(addr: SocketAddr) -> bool {
    std::net::TcpStream::connect(addr).is_err()
}

#[test]
fn the_gate_refuses_what_it_must_with_the_right_status() {
    let env = Env::new(true);
    let ws = fixture_workspace();
    let mut cmd = env.lspgate(&[
        "serve",
        "--root",
        ws.path().to_str().unwrap(),
        "--http",
        "127.0.0.1:0",
        "--max-frame",
        "65536",
        "--http-origin",
        "https://ide.example",
        "--",
        FIXTURE,
    ]);
    cmd.current_dir(ws.path());
    let mut s = Served::start(cmd);
    let token = s.token().to_string();
    let bearer = format!("Bearer {token}");

    // The generated token: 64 hex digits, in a 0600 file of the private runtime folder.
    assert_eq!(token.len(), 64);
    let file = s.token_file.clone().expect("a token file");
    assert!(
        file.starts_with(env.runtime.path().join("lspgate")),
        "{file:?}"
    );
    let meta = std::fs::symlink_metadata(&file).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), token);

    // No token, a wrong one, another scheme: 401 with a Bearer challenge.
    let r = post_init(&s, &[]);
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(
        r.header("www-authenticate"),
        Some("Bearer realm=\"lspgate\"")
    );
    // The token with its last character changed (to one it does not end with).
    let last = if token.ends_with('0') { '1' } else { '0' };
    let wrong = format!("Bearer {}{last}", &token[..63]);
    for auth in [wrong.as_str(), "Bearer x", &format!("Basic {token}")] {
        let r = post_init(&s, &[("Authorization", auth)]);
        assert_eq!(r.status, 401, "{auth}: {}", r.text());
        assert!(
            r.header("www-authenticate").unwrap().starts_with("Bearer"),
            "{auth}"
        );
    }
    assert!(
        post_init(&s, &[("Authorization", &wrong)])
            .header("www-authenticate")
            .unwrap()
            .contains("invalid_token")
    );

    // With the token: a foreign Host or Origin is still 403.
    let r = post_init(
        &s,
        &[("Host", "rebind.evil.example"), ("Authorization", &bearer)],
    );
    assert_eq!(r.status, 403, "{}", r.text());
    let r = post_init(
        &s,
        &[
            ("Origin", "https://evil.example"),
            ("Authorization", &bearer),
        ],
    );
    assert_eq!(r.status, 403, "{}", r.text());
    assert_eq!(r.header("access-control-allow-origin"), None);
    // A loopback Origin, and the one --http-origin names, are served (and told so for CORS).
    for origin in ["http://localhost:5173", "https://ide.example"] {
        let r = post_init(&s, &[("Origin", origin), ("Authorization", &bearer)]);
        assert_eq!(r.status, 200, "{origin}: {}", r.text());
        assert_eq!(r.header("access-control-allow-origin"), Some(origin));
        assert!(
            r.header("access-control-expose-headers")
                .unwrap()
                .contains("Mcp-Session-Id")
        );
    }
    // Their preflights are answered without the token, and reach nothing else; a foreign
    // origin's is refused.
    let preflight = |origin: &str| {
        Conn::connect(s.addr)
            .unwrap()
            .request(
                "OPTIONS",
                "/mcp",
                &[
                    ("Host", &s.host()),
                    ("Origin", origin),
                    ("Access-Control-Request-Method", "POST"),
                    (
                        "Access-Control-Request-Headers",
                        "authorization, content-type",
                    ),
                ],
                b"",
            )
            .unwrap()
    };
    let r = preflight("https://ide.example");
    assert_eq!(r.status, 204);
    assert!(
        r.header("access-control-allow-headers")
            .unwrap()
            .contains("Authorization")
    );
    assert!(
        r.header("access-control-allow-methods")
            .unwrap()
            .contains("POST")
    );
    assert_eq!(preflight("https://evil.example").status, 403);

    // Every request is checked, whatever its method or path.
    let mut c = Conn::connect(s.addr).unwrap();
    let host = s.host();
    for (method, path) in [
        ("GET", "/mcp"),
        ("DELETE", "/mcp"),
        ("GET", "/"),
        ("POST", "/other"),
    ] {
        let r = c.request(method, path, &[("Host", &host)], b"").unwrap();
        assert_eq!(r.status, 401, "{method} {path}");
    }
    let r = c
        .request(
            "GET",
            "/other",
            &[("Host", &host), ("Authorization", &bearer)],
            b"",
        )
        .unwrap();
    assert_eq!(r.status, 404);

    // A body over the frame limit: 413; the connection's next request is served.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(70_000)
    );
    let r = Conn::connect(s.addr)
        .unwrap()
        .request(
            "POST",
            "/mcp",
            &[
                ("Host", &host),
                ("Authorization", &bearer),
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            big.as_bytes(),
        )
        .unwrap();
    assert_eq!(r.status, 413, "{}", r.text());

    // With the token, a whole session: the limits in `initialize`, a tool.
    let mut m = Mcp::connect(&s.url, &token).unwrap();
    assert_eq!(
        m.init["capabilities"]["experimental"]["lspgate"]["max_frame"], 65536,
        "{}",
        m.init
    );
    assert_eq!(m.init["serverInfo"]["name"], "lspgate");
    let hover = m
        .call("hover", json!({"file": "a.txt", "line": 1, "column": 1}))
        .unwrap();
    assert_ne!(hover["isError"], true, "{hover}");
    assert!(
        hover["structuredContent"]["contents"]
            .as_str()
            .unwrap()
            .contains("word=hello")
    );
    assert_eq!(m.close().unwrap(), 202);

    // SIGTERM: a clean exit, the port closed, the token file gone.
    s.signal(libc::SIGTERM);
    assert_eq!(s.wait(Duration::from_secs(20)), 0);
    assert!(refused(s.addr));
    assert!(!file.exists(), "the token file outlived the listener");
}

#[test]
fn python_client_works_with_the_token_and_is_refused_without() {
    let env = Env::new(false);
    let ws = fixture_workspace();
    let s = env.serve_fixture(ws.path());
    let auth = json!({"Authorization": format!("Bearer {}", s.token())});
    let calls = json!([
        ["hover", {"file": "a.txt", "line": 1, "column": 1}],
        ["diagnostics", {"file": "a.txt"}],
        ["servers", {}],
    ]);

    // MCP 2025 sessions (initialize), two at once, and MCP 2026-07-28 (discover, stateless).
    for (mode, sessions) in [("initialize", 2), ("discover", 1)] {
        let out = python(json!({"url": s.url, "headers": auth, "mode": mode,
            "sessions": sessions, "list_tools": true, "calls": calls}));
        let all = out["sessions"].as_array().unwrap();
        assert_eq!(all.len(), sessions);
        for session in all {
            assert_eq!(session["ok"], true, "{mode}: {session}");
            assert_eq!(
                session["capabilities"]["experimental"]["lspgate"]["max_frame"], 2097152,
                "{mode}: {session}"
            );
            assert_eq!(
                session["capabilities"]["experimental"]["lspgate"]["shapes"], 2,
                "{mode}: {session}"
            );
            let tools: Vec<&str> = session["tools"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .collect();
            assert!(
                tools.contains(&"hover") && tools.contains(&"diagnostics"),
                "{tools:?}"
            );
            let r = session["results"].as_array().unwrap();
            assert!(
                r.iter().all(|x| x["is_error"] == false),
                "{mode}: {session}"
            );
            assert!(r[0]["text"].as_str().unwrap().contains("word=hello"));
            assert_eq!(
                diags(&r[1]["structured"]["files"])[0]["message"],
                "found ERROR"
            );
        }
        if mode == "discover" {
            assert_eq!(all[0]["protocol"], "2026-07-28");
        }
        assert!(
            out["statuses"]
                .as_array()
                .unwrap()
                .iter()
                .all(|st| st[1].as_u64().unwrap() < 300),
            "{mode}: {}",
            out["statuses"]
        );
    }

    // Refused: the session fails, and the first answer says why with the right status.
    let first_status = |headers: Value| {
        let out = python(json!({"url": s.url, "headers": headers, "calls": calls}));
        let session = &out["sessions"][0];
        assert_eq!(session["ok"], false, "{headers}: {session}");
        out["statuses"][0].clone()
    };
    let st = first_status(json!({}));
    assert_eq!(st[1], 401, "{st}");
    assert_eq!(st[2], "Bearer realm=\"lspgate\"");
    let st = first_status(json!({"Authorization": "Bearer not-the-token-at-all"}));
    assert_eq!(st[1], 401, "{st}");
    assert!(st[2].as_str().unwrap().contains("invalid_token"), "{st}");
    let mut with_origin = auth.clone();
    with_origin["Origin"] = json!("https://evil.example");
    assert_eq!(first_status(with_origin)[1], 403);
    let mut with_host = auth.clone();
    with_host["Host"] = json!("evil.example");
    assert_eq!(first_status(with_host)[1], 403);
}

#[test]
fn inspector_cli_works_with_the_token_and_is_refused_without() {
    let env = Env::new(true);
    let ws = fixture_workspace();
    let s = env.serve_fixture(ws.path());
    let auth = format!("Authorization: Bearer {}", s.token());

    let (code, out) = inspector(&s.url, &["--method", "tools/list", "--header", &auth]);
    assert_eq!(code, 0, "{out}");
    let list: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"hover") && names.contains(&"servers"),
        "{names:?}"
    );
    let (code, out) = inspector(
        &s.url,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "hover",
            "--tool-arg",
            "file=a.txt",
            "--tool-arg",
            "line=1",
            "--tool-arg",
            "column=7",
            "--header",
            &auth,
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("word=world"), "{out}");

    // Refusals: the CLI fails and shows what lspgate answered (the body of each status).
    let (code, out) = inspector(&s.url, &["--method", "tools/list"]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("Unauthorized: send the bearer token"), "{out}");
    let (code, out) = inspector(
        &s.url,
        &[
            "--method",
            "tools/list",
            "--header",
            "Authorization: Bearer wrong-token-wrong-token",
        ],
    );
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("Unauthorized: wrong bearer token"), "{out}");
    let (code, out) = inspector(
        &s.url,
        &[
            "--method",
            "tools/list",
            "--header",
            &auth,
            "--header",
            "Origin: https://evil.example",
        ],
    );
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("Forbidden: this Origin"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_http_clients_and_a_stdio_session_share_one_pyright() {
    require("pyright-langserver");
    let env = Env::new(false);
    let ws = workspace(&[
        ("pyproject.toml", "[project]\nname = \"d\"\n"),
        ("lib.py", "def compute(x: int) -> int:\n    return x\n"),
        (
            "app.py",
            "from lib import compute\n\nprint(compute(1))\nprint(compute(2))\n",
        ),
    ]);
    let server = ["pyright-langserver", "--stdio"];
    let mut cmd = env.lspgate(&[
        "serve",
        "--root",
        ws.path().to_str().unwrap(),
        "--http",
        "127.0.0.1:0",
        "--",
    ]);
    cmd.args(server).current_dir(ws.path());
    let mut s = Served::start(cmd);
    let token_file = s.token_file.clone().unwrap();

    // The stdio session first (through the same daemon): it starts pyright.
    let stdio = env.stdio(ws.path(), &server).await;
    let refs = json!({"file": "lib.py", "line": 1, "symbol": "compute"});
    let (r, text) = stdio.ok("references", refs.clone()).await;
    assert_eq!(r["total"], 4, "{text}");
    let (servers, _) = stdio.ok("servers", json!({})).await;
    let pid = servers["servers"][0]["pid"]
        .as_u64()
        .expect("pyright's pid");

    // Two HTTP sessions at once, held open while the daemon is asked about them.
    let go = tempfile::tempdir().unwrap();
    let go_file = go.path().join("go");
    let mut py = python_child(json!({
        "url": s.url, "headers": {"Authorization": format!("Bearer {}", s.token())},
        "sessions": 2, "calls": [["references", refs], ["servers", {}]],
        "hold": go_file,
    }));
    let mut out = BufReader::new(py.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready", "{line}");
    let status = env.status();
    let http = status["http"].as_array().unwrap();
    assert_eq!(http.len(), 1, "{status}");
    assert_eq!(http[0]["url"], s.url.as_str());
    assert_eq!(http[0]["sessions"], 2, "{status}");
    assert_eq!(http[0]["held_by"], "serve");
    // The stdio session is still open beside them and sees the same pyright.
    let (servers, _) = stdio.ok("servers", json!({})).await;
    assert_eq!(servers["servers"][0]["pid"], pid);
    std::fs::write(&go_file, "").unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    assert!(py.wait().unwrap().success());
    let report: Value = serde_json::from_str(&line).unwrap();
    for session in report["sessions"].as_array().unwrap() {
        assert_eq!(session["ok"], true, "{session}");
        let r = &session["results"];
        assert_eq!(r[0]["structured"]["total"], 4, "{session}");
        assert_eq!(r[0]["structured"]["partial"], Value::Null, "{session}");
        assert_eq!(
            r[1]["structured"]["servers"][0]["pid"], pid,
            "one pyright for the HTTP and stdio sessions"
        );
    }
    let roots = status["roots"].as_array().unwrap();
    assert_eq!(roots.len(), 1, "one shared workspace: {status}");
    assert_eq!(roots[0]["servers"].as_array().unwrap().len(), 1, "{status}");

    // The serve command ends: its listener goes (port, token file), the stdio session stays.
    s.signal(libc::SIGTERM);
    assert_eq!(s.wait(Duration::from_secs(20)), 0);
    assert!(refused(s.addr));
    assert!(!token_file.exists());
    assert_eq!(env.status()["http"], json!([]));
    let (r, text) = stdio.ok("references", refs).await;
    assert_eq!(r["total"], 4, "{text}");
    let (servers, _) = stdio.ok("servers", json!({})).await;
    assert_eq!(servers["servers"][0]["pid"], pid);
}
