//! Benchmark: per-call `hover` latency through lspgate (MCP over stdio) next to a bare LSP
//! client talking to the same server, on the instant fixture server and on pyright, plus
//! lspgate's own peak RSS. Figures are medians of one run, reported as ratios and added time.
//!
//! Run: `cargo bench --bench hover_latency` (pyright from `.tools/`, see scripts/).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const LSPGATE: &str = env!("CARGO_BIN_EXE_lspgate");
const FIXTURE: &str = env!("CARGO_BIN_EXE_lspgate-fixture-server");
const WARMUP: usize = 50;

fn calls() -> usize {
    std::env::var("BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

/// A bare LSP client: Content-Length frames over the child's pipes, nothing else.
struct Direct {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    id: i64,
}

impl Direct {
    fn start(cmd: &[String], root: &Path) -> Direct {
        let mut child = Command::new(&cmd[0])
            .args(&cmd[1..])
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn server");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut d = Direct {
            child,
            stdin,
            stdout,
            id: 0,
        };
        let root_uri = url::Url::from_directory_path(root).unwrap();
        d.request("initialize", json!({"processId": null, "rootUri": root_uri,
            "workspaceFolders": [{"uri": root_uri, "name": "root"}],
            "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"configuration": true}}}));
        d.notify("initialized", json!({}));
        d
    }

    fn send(&mut self, v: &Value) {
        let body = v.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{}", body.len(), body).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn read(&mut self) -> Value {
        let mut len = 0;
        loop {
            let mut line = String::new();
            self.stdout.read_line(&mut line).unwrap();
            let t = line.trim_end();
            if t.is_empty() {
                break;
            }
            if let Some(v) = t.strip_prefix("Content-Length:") {
                len = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; len];
        self.stdout.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    /// Sends a request and reads until its answer, answering the server's own requests.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let msg = self.read();
            if msg.get("method").is_some() {
                if let Some(sid) = msg.get("id") {
                    let result = if msg["method"] == "workspace/configuration" {
                        json!(vec![
                            Value::Null;
                            msg["params"]["items"].as_array().map_or(0, Vec::len)
                        ])
                    } else {
                        Value::Null
                    };
                    self.send(&json!({"jsonrpc": "2.0", "id": sid, "result": result}));
                }
                continue;
            }
            if msg["id"] == id {
                return msg;
            }
        }
    }
}

impl Drop for Direct {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// lspgate serving MCP over stdio, spoken to line by line.
struct Gate {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    id: i64,
}

impl Gate {
    fn start(server: &[String], root: &Path, path: &str) -> Gate {
        // BENCH_LSPGATE compares another build of lspgate (another profile, say) in the same run.
        let exe = std::env::var("BENCH_LSPGATE").unwrap_or_else(|_| LSPGATE.to_string());
        let mut child = Command::new(exe)
            .arg("serve")
            .arg("--root")
            .arg(root)
            .arg("--")
            .args(server)
            .env("PATH", path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn lspgate");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut g = Gate {
            child,
            stdin,
            stdout,
            id: 0,
        };
        g.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"}}),
        );
        g.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        g
    }

    fn send(&mut self, v: &Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            self.stdout.read_line(&mut line).unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }

    /// Peak resident memory of lspgate itself (not its servers), in KiB.
    fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(n: usize, mut f: impl FnMut()) -> Duration {
    for _ in 0..WARMUP {
        f();
    }
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f();
        samples.push(t.elapsed());
    }
    median(samples)
}

struct Row {
    server: &'static str,
    direct: Duration,
    gate: Duration,
    rss_kib: u64,
}

fn bench(
    server: &'static str,
    cmd: &[String],
    root: &Path,
    file: &str,
    line: u32,
    col: u32,
    path: &str,
) -> Row {
    let n = calls();
    let text = std::fs::read_to_string(root.join(file)).unwrap();
    let uri = url::Url::from_file_path(root.join(file)).unwrap();
    let mut direct = Direct::start(cmd, root);
    direct.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
    );
    let pos =
        json!({"textDocument": {"uri": uri}, "position": {"line": line - 1, "character": col - 1}});
    let direct_t = time(n, || {
        let r = direct.request("textDocument/hover", pos.clone());
        assert!(r.get("result").is_some(), "{r}");
    });
    drop(direct);

    let mut gate = Gate::start(cmd, root, path);
    let args = json!({"name": "hover", "arguments": {"file": file, "line": line, "column": col}});
    let gate_t = time(n, || {
        let r = gate.request("tools/call", args.clone());
        assert_eq!(r["result"]["isError"], false, "{r}");
    });
    let rss_kib = gate.peak_rss_kib();
    Row {
        server,
        direct: direct_t,
        gate: gate_t,
        rss_kib,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; nothing to parse.
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let path = format!(
        "{}:{}",
        repo.join(".tools/node_modules/.bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("a.py"),
        "def hello(name: str) -> str:\n    return name\n\nhello('x')\n",
    )
    .unwrap();

    let mut rows = vec![bench(
        "fixture (instant)",
        &[FIXTURE.to_string()],
        ws.path(),
        "a.py",
        4,
        2,
        &path,
    )];
    let pyright = std::env::split_paths(&path)
        .map(|d| d.join("pyright-langserver"))
        .find(|p| p.is_file());
    match pyright {
        Some(p) => {
            let cmd = vec![p.to_string_lossy().into_owned(), "--stdio".to_string()];
            rows.push(bench("pyright", &cmd, ws.path(), "a.py", 4, 2, &path));
        }
        None => eprintln!("pyright not found: run scripts/install-test-servers.sh to bench it"),
    }
    if cfg!(debug_assertions) {
        println!("(a debug build, as `cargo test` makes it: figures are not representative)");
    }
    println!(
        "hover latency, median of {} calls after {WARMUP} warm-up calls",
        calls()
    );
    println!(
        "| server | direct LSP client | lspgate (MCP stdio) | ratio | added per call | lspgate peak RSS |"
    );
    println!("|---|---|---|---|---|---|");
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    let fixture_added = rows
        .first()
        .map(|r| r.gate.as_secs_f64() - r.direct.as_secs_f64());
    let peak = rows.iter().map(|r| r.rss_kib).max().unwrap_or(0);
    for r in rows {
        let added = r.gate.as_secs_f64() - r.direct.as_secs_f64();
        println!(
            "| {} | {:.1} µs | {:.1} µs | {:.2}× | {:+.1} µs | {:.1} MiB |",
            r.server,
            r.direct.as_secs_f64() * 1e6,
            r.gate.as_secs_f64() * 1e6,
            r.gate.as_secs_f64() / r.direct.as_secs_f64(),
            added * 1e6,
            r.rss_kib as f64 / 1024.0
        );
    }
    if let Some(added) = fixture_added {
        println!(
            "target (at most 100 µs added per call, instant fixture): {} ({:+.1} µs)",
            verdict(added <= 100e-6),
            added * 1e6
        );
    }
    println!(
        "target (lspgate's peak RSS at most 8 MiB): {} ({:.1} MiB)",
        verdict(peak <= 8 * 1024),
        peak as f64 / 1024.0
    );
}
