//! The LSP face benches' client side (`lsp_face`, `lsp_mux`): a bare LSP client over a
//! child's pipes, answering the server's own requests; a client's time to its first complete
//! `references`; four clients one after another; CPU, memory and settling of process trees;
//! a private lspgate daemon.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::common;

/// The module every client opens, and the symbol asked about.
pub(crate) const MODULE: &str = "django/utils/functional.py";
/// Bound on a client's first complete `references` (pyright on Django, 2 cores).
pub(crate) const FIRST_TIMEOUT: Duration = Duration::from_secs(300);
/// An LSP client over a child's pipes: Content-Length frames; a reader thread answers the
/// server's own requests at once and hands responses over.
pub(crate) struct Client {
    pub child: Child,
    pub stdin: Arc<Mutex<ChildStdin>>,
    pub responses: Receiver<Value>,
    pub id: i64,
    /// When its process was spawned.
    pub started: Instant,
}

pub(crate) fn write_frame(w: &Mutex<ChildStdin>, v: &Value) {
    let body = v.to_string();
    let mut w = w.lock().unwrap();
    // A client already gone (its server exited) is noticed by the reader.
    let _ = write!(w, "Content-Length: {}\r\n\r\n{}", body.len(), body);
    let _ = w.flush();
}

pub(crate) fn read_frame(r: &mut impl BufRead) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let t = line.trim_end();
        if t.is_empty() {
            break;
        }
        if let Some(v) = t.strip_prefix("Content-Length:") {
            len = v.trim().parse().ok();
        }
    }
    let mut body = vec![0; len?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// What a client answers to the server's own requests.
pub(crate) fn answer(msg: &Value) -> Value {
    match msg["method"].as_str() {
        Some("workspace/configuration") => {
            json!(vec![
                Value::Null;
                msg["params"]["items"].as_array().map_or(0, Vec::len)
            ])
        }
        Some("workspace/workspaceFolders") => Value::Null,
        Some("workspace/applyEdit") => json!({"applied": false}),
        _ => Value::Null,
    }
}

impl Client {
    /// Spawns `cmd` in `root` with `env` and initializes it (UTF-16 positions).
    pub(crate) fn start(cmd: &[String], root: &Path, env: &[(String, String)]) -> Client {
        let started = Instant::now();
        let mut child = Command::new(&cmd[0])
            .args(&cmd[1..])
            .current_dir(root)
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
        let stdin = Arc::new(Mutex::new(child.stdin.take().unwrap()));
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, responses) = channel();
        let writer = stdin.clone();
        std::thread::spawn(move || {
            while let Some(msg) = read_frame(&mut stdout) {
                if msg.get("method").is_some() {
                    if let Some(id) = msg.get("id") {
                        write_frame(
                            &writer,
                            &json!({"jsonrpc": "2.0", "id": id, "result": answer(&msg)}),
                        );
                    }
                } else if tx.send(msg).is_err() {
                    break;
                }
            }
        });
        let mut c = Client {
            child,
            stdin,
            responses,
            id: 0,
            started,
        };
        let root_uri = url::Url::from_directory_path(root).unwrap();
        let init = c.request(
            "initialize",
            json!({"processId": std::process::id(), "rootUri": root_uri,
            "workspaceFolders": [{"uri": root_uri, "name": "django"}],
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "window": {"workDoneProgress": true},
                "workspace": {"configuration": true, "workspaceFolders": true},
                "textDocument": {
                    "hover": {"contentFormat": ["markdown", "plaintext"]},
                    "references": {},
                    "publishDiagnostics": {}
                }
            }}),
            FIRST_TIMEOUT,
        );
        assert!(init.get("result").is_some(), "initialize: {init}");
        c.notify("initialized", json!({}));
        c
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn notify(&mut self, method: &str, params: Value) {
        write_frame(
            &self.stdin,
            &json!({"jsonrpc": "2.0", "method": method, "params": params}),
        );
    }

    /// Sends a request and waits for its response (the whole message: result or error).
    pub(crate) fn request(&mut self, method: &str, params: Value, timeout: Duration) -> Value {
        self.id += 1;
        let id = self.id;
        write_frame(
            &self.stdin,
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.responses.recv_timeout(left) {
                Ok(msg) if msg["id"] == id => return msg,
                Ok(_) => continue,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no answer to {method} within {}s", timeout.as_secs())
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the server went away during {method}")
                }
            }
        }
    }

    pub(crate) fn open(&mut self, root: &Path, rel: &str) {
        let path = root.join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri(&path), "languageId": "python", "version": 1,
                "text": text}}),
        );
    }

    /// `references` at `at`: the number of locations.
    pub(crate) fn references(&mut self, at: &Value, timeout: Duration) -> usize {
        let mut params = at.clone();
        params["context"] = json!({"includeDeclaration": true});
        let r = self.request("textDocument/references", params, timeout);
        assert!(r.get("error").is_none(), "references: {r}");
        r["result"].as_array().map_or(0, Vec::len)
    }

    pub(crate) fn hover(&mut self, at: &Value, timeout: Duration) {
        let r = self.request("textDocument/hover", at.clone(), timeout);
        assert!(r.get("error").is_none(), "hover: {r}");
        assert!(!r["result"].is_null(), "an empty hover: {r}");
    }

    /// `shutdown` and `exit`, then the process is waited for (killed if it lingers).
    pub(crate) fn stop(mut self) {
        let id = self.id + 1;
        write_frame(
            &self.stdin,
            &json!({"jsonrpc": "2.0", "id": id, "method": "shutdown"}),
        );
        let _ = self.responses.recv_timeout(Duration::from_secs(10));
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Drop kills it.
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn uri(path: &Path) -> String {
    url::Url::from_file_path(path).unwrap().to_string()
}

/// A client's first complete `references`.
pub(crate) struct First {
    /// From the client's start (spawn) to the complete answer.
    pub time: Duration,
    /// Locations in the complete answer.
    pub count: usize,
    /// Locations in the answer to the first request, and how many requests it took.
    pub first_count: usize,
    pub tries: usize,
}

/// Starts a client, opens `MODULE`, asks `references` at `at` until the answer holds `want`
/// locations (with no `want`, its first answer is taken).
pub(crate) fn first_complete(
    cmd: &[String],
    root: &Path,
    env: &[(String, String)],
    at: &Value,
    want: Option<usize>,
) -> (Client, First) {
    let mut c = Client::start(cmd, root, env);
    c.open(root, MODULE);
    let mut tries = 0;
    let mut first_count = None;
    loop {
        let left = FIRST_TIMEOUT.saturating_sub(c.started.elapsed());
        let count = c.references(at, left);
        tries += 1;
        first_count.get_or_insert(count);
        if want.is_none_or(|w| count >= w) {
            let first = First {
                time: c.started.elapsed(),
                count,
                first_count: first_count.unwrap(),
                tries,
            };
            return (c, first);
        }
        assert!(
            c.started.elapsed() < FIRST_TIMEOUT,
            "{count} of {want:?} references after {}s",
            FIRST_TIMEOUT.as_secs()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// CPU time (user + system) of these processes, in clock ticks.
pub(crate) fn cpu_ticks(pids: &[u32]) -> u64 {
    pids.iter()
        .map(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
            let f: Vec<&str> = rest.split_whitespace().collect();
            let tick = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            tick(11) + tick(12)
        })
        .sum()
}

/// Waits until the process trees under `roots` have used (almost) no CPU for 3 s, at most
/// `max`: servers done with their background work. The seconds it took.
pub(crate) fn settle(roots: &[u32], max: Duration) -> f64 {
    let t = Instant::now();
    let pids = || -> Vec<u32> { roots.iter().flat_map(|p| common::tree(*p)).collect() };
    let mut last = cpu_ticks(&pids());
    let mut quiet = 0;
    while t.elapsed() < max && quiet < 6 {
        std::thread::sleep(Duration::from_millis(500));
        let now = cpu_ticks(&pids());
        // At most 2 ticks (20 ms) in half a second: idle timers only.
        quiet = if now.saturating_sub(last) <= 2 {
            quiet + 1
        } else {
            0
        };
        last = now;
    }
    t.elapsed().as_secs_f64()
}

/// Every process of these trees with its resident memory, largest first.
pub(crate) fn breakdown(pids: &[u32]) -> Vec<(String, u64)> {
    let mut seen = HashSet::new();
    let mut out: Vec<(String, u64)> = pids
        .iter()
        .filter(|p| seen.insert(**p))
        .map(|p| {
            let comm = std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
            (format!("{} ({p})", comm.trim()), common::rss_kib([*p]))
        })
        .filter(|(_, k)| *k > 0)
        .collect();
    out.sort_by_key(|p| std::cmp::Reverse(p.1));
    out
}

/// Whether this process runs pyright (its command line names it).
pub(crate) fn is_pyright(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| String::from_utf8_lossy(&c).contains("pyright"))
}

pub(crate) fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The private per-user daemon: its environment, and `daemon stop` when dropped.
pub(crate) struct Daemon {
    pub runtime: tempfile::TempDir,
    pub home: tempfile::TempDir,
    pub path: String,
}

impl Daemon {
    pub(crate) fn new(path: &str) -> Daemon {
        use std::os::unix::fs::PermissionsExt;
        let runtime = tempfile::tempdir().unwrap();
        std::fs::set_permissions(runtime.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        Daemon {
            runtime,
            home: tempfile::tempdir().unwrap(),
            path: path.to_string(),
        }
    }

    pub(crate) fn env(&self) -> Vec<(String, String)> {
        vec![
            ("PATH".into(), self.path.clone()),
            ("LSPGATE_STANDALONE".into(), "0".into()),
            (
                "XDG_RUNTIME_DIR".into(),
                self.runtime.path().display().to_string(),
            ),
            (
                "LSPGATE_HOME".into(),
                self.home.path().display().to_string(),
            ),
            // A safety net: a bench that fails midway leaves no daemon for long.
            ("LSPGATE_IDLE_EXIT".into(), "120".into()),
        ]
    }

    pub(crate) fn cli(&self, args: &[&str]) -> std::process::Output {
        Command::new(common::LSPGATE)
            .args(args)
            .current_dir("/")
            .envs(self.env())
            .output()
            .unwrap()
    }

    pub(crate) fn status(&self) -> Value {
        let out = self.cli(&["daemon", "status", "--json"]);
        serde_json::from_slice(&out.stdout).unwrap_or_default()
    }

    pub(crate) fn pid(&self) -> Option<u32> {
        self.status()["pid"].as_u64().map(|p| p as u32)
    }

    /// The servers it runs: name and pid.
    pub(crate) fn servers(&self) -> Vec<(String, u32)> {
        let status = self.status();
        let mut out = Vec::new();
        for root in status["roots"].as_array().into_iter().flatten() {
            for s in root["servers"].as_array().into_iter().flatten() {
                if let (Some(name), Some(pid)) = (s["name"].as_str(), s["pid"].as_u64()) {
                    out.push((name.to_string(), pid as u32));
                }
            }
        }
        out
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.cli(&["daemon", "stop"]);
    }
}

/// Four clients, one after another, each kept open: their first complete answers.
pub(crate) fn four(
    cmd: &[String],
    root: &Path,
    env: &[(String, String)],
    at: &Value,
    mut want: Option<usize>,
    name: &str,
) -> (Vec<Client>, Vec<First>) {
    let mut clients = Vec::new();
    let mut firsts = Vec::new();
    for i in 1..=4 {
        let (c, f) = first_complete(cmd, root, env, at, want);
        println!(
            "  {name} client {i}: {} locations in {:.2} s ({} request(s); the first answer held {})",
            f.count,
            f.time.as_secs_f64(),
            f.tries,
            f.first_count
        );
        want.get_or_insert(f.count);
        clients.push(c);
        firsts.push(f);
    }
    (clients, firsts)
}

/// The position of `word` on the first line starting with `line_start` (0-based, UTF-16 on
/// ASCII lines), as LSP parameters on `rel`.
pub(crate) fn position(root: &Path, rel: &str, line_start: &str, word: &str) -> Value {
    let text = std::fs::read_to_string(root.join(rel)).unwrap();
    let (line, l) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.trim_start().starts_with(line_start))
        .unwrap_or_else(|| panic!("no line starting {line_start:?} in {rel}"));
    let character = l.find(word).unwrap();
    json!({"textDocument": {"uri": uri(&root.join(rel))},
        "position": {"line": line, "character": character}})
}

/// `lspgate lsp` on `root` with pyright, as the benches' clients start it: generous bounds
/// (pyright on Django on 2 cores).
pub(crate) fn gate_cmd(root: &Path) -> Vec<String> {
    [super::common::LSPGATE, "lsp", "--root"]
        .iter()
        .map(|s| s.to_string())
        .chain([root.display().to_string()])
        .chain(
            [
                "--server",
                "pyright",
                "--timeout",
                "300",
                "--ready-timeout",
                "300",
            ]
            .map(String::from),
        )
        .collect()
}
