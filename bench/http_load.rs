//! Load bench on loopback: CLIENTS MCP clients × CALLS mixed calls each (hover, references,
//! diagnostics, document symbols, servers, events) over Streamable HTTP, beside the same calls over
//! stdio, all through one per-user daemon (the default deployment: a stdio client speaks to a
//! `lspgate serve` relay, an HTTP client to the daemon's listener). Reports errors, p50/p99/max
//! latency and throughput per row; exits 1 on any error or when the time bound is reached.
//! The HTTP clients are a raw HTTP/1.1 client (tests/it/raw_http), one keep-alive connection and
//! one MCP session each, so the figures are lspgate's and not an SDK's. While the HTTP clients
//! run at once, a writer rewrites a file (plain writes) and each client follows the event log
//! from its own cursor: a gap or a repeat in the seqs it reads is an error (no lost event).
//!
//! Run: `cargo bench --bench http_load` (the fixture server: instant answers), or with
//! `BENCH_SERVER=pyright` (pyright from `.tools/`). `BENCH_CALLS` (500), `BENCH_CLIENTS` (8),
//! `BENCH_SECONDS` (300, the bound on the whole run).
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and measurements fail loudly

mod common;
#[path = "../tests/it/raw_http/mod.rs"]
mod raw_http;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Gate, LSPGATE};
use serde_json::{Value, json};

const FIXTURE: &str = env!("CARGO_BIN_EXE_lspgate-fixture-server");
const WARMUP: usize = 20;

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The mixed calls, cycled through.
fn mix(server: &str) -> Vec<(&'static str, Value)> {
    if server == "pyright" {
        vec![
            (
                "hover",
                json!({"file": "app0.py", "line": 3, "symbol": "compute"}),
            ),
            (
                "references",
                json!({"file": "lib.py", "line": 1, "symbol": "compute"}),
            ),
            ("diagnostics", json!({"file": "app1.py"})),
            ("document_symbols", json!({"file": "lib.py"})),
            ("servers", json!({})),
            ("events", json!({})),
        ]
    } else {
        vec![
            ("hover", json!({"file": "a0.txt", "line": 1, "column": 1})),
            (
                "references",
                json!({"file": "a1.txt", "line": 2, "column": 4}),
            ),
            ("diagnostics", json!({"file": "a2.txt"})),
            ("document_symbols", json!({"file": "a3.txt"})),
            ("servers", json!({})),
            ("events", json!({})),
        ]
    }
}

/// The workspace and the server command.
fn setup(server: &str, dir: &Path) -> Vec<String> {
    if server == "pyright" {
        std::fs::write(dir.join("pyproject.toml"), "[project]\nname = \"load\"\n").unwrap();
        std::fs::write(
            dir.join("lib.py"),
            "def compute(x: int) -> int:\n    return x * 2\n",
        )
        .unwrap();
        for i in 0..10 {
            std::fs::write(
                dir.join(format!("app{i}.py")),
                "from lib import compute\n\nprint(compute(1))\nprint(compute(2))\n",
            )
            .unwrap();
        }
        common::on_path(&common::tools_path(), "pyright-langserver", &["--stdio"])
            .expect("pyright-langserver in .tools: run scripts/install-test-servers.sh")
    } else {
        for i in 0..8 {
            std::fs::write(
                dir.join(format!("a{i}.txt")),
                "hello world\nan ERROR here\nhello again\n",
            )
            .unwrap();
        }
        vec![FIXTURE.to_string()]
    }
}

/// What one client saw, and when its measured calls began and ended.
#[derive(Default)]
struct Run {
    samples: Vec<Duration>,
    errors: Vec<String>,
    span: Option<(Instant, Instant)>,
    /// Events read through `events`, each exactly once and in seq order.
    events: usize,
}

/// Follows the event log from a cursor: every event after it, once, in order.
#[derive(Default)]
struct Follower {
    cursor: i64,
}

impl Follower {
    fn args(&self) -> Value {
        json!({"after": self.cursor, "limit": 1000})
    }

    /// Checks one `events` answer: seqs follow the cursor without a gap or a repeat (the log
    /// is not pruned in a run this size); how many events it read.
    fn take(&mut self, result: &Value) -> Result<usize, String> {
        let r = &result["structuredContent"];
        let events = r["events"]
            .as_array()
            .ok_or_else(|| format!("no events: {r}"))?;
        for e in events {
            let seq = e["seq"].as_i64().unwrap_or(-1);
            if seq != self.cursor + 1 {
                return Err(format!(
                    "seq {seq} after {}: an event lost or repeated",
                    self.cursor
                ));
            }
            self.cursor = seq;
        }
        let next = r["next"].as_i64().unwrap_or(-1);
        if next < self.cursor {
            return Err(format!(
                "next {next} behind the last seq read {}",
                self.cursor
            ));
        }
        if r["more"] != true && next != self.cursor {
            return Err(format!("next {next} skips events after {}", self.cursor));
        }
        Ok(events.len())
    }
}

impl Run {
    fn sample(&mut self, started: Instant, took: Duration) {
        self.samples.push(took);
        let end = started + took;
        self.span = Some(match self.span {
            Some((s, _)) => (s, end),
            None => (started, end),
        });
    }
}

/// One row of the report: every client's samples together.
struct Row {
    label: String,
    calls: usize,
    errors: Vec<String>,
    p50: Duration,
    p99: Duration,
    max: Duration,
    wall: Duration,
}

fn row(label: String, runs: Vec<Run>) -> Row {
    // From the first measured call's start to the last one's end, over all clients.
    let first = runs.iter().filter_map(|r| r.span).map(|s| s.0).min();
    let last = runs.iter().filter_map(|r| r.span).map(|s| s.1).max();
    let wall = match (first, last) {
        (Some(a), Some(b)) => b - a,
        _ => Duration::ZERO,
    };
    let mut samples: Vec<Duration> = runs.iter().flat_map(|r| r.samples.clone()).collect();
    let errors: Vec<String> = runs.into_iter().flat_map(|r| r.errors).collect();
    samples.sort();
    let at = |q: f64| {
        samples
            .get(((samples.len() as f64 * q) as usize).min(samples.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    Row {
        label,
        calls: samples.len(),
        errors,
        p50: at(0.50),
        p99: at(0.99),
        max: samples.last().copied().unwrap_or_default(),
        wall,
    }
}

/// Whether a tools/call result failed.
fn failed(result: &Value) -> Option<String> {
    if result["isError"] == true || result.is_null() {
        Some(result.to_string().chars().take(300).collect())
    } else {
        None
    }
}

fn http_client(
    url: &str,
    token: &str,
    calls: &[(&'static str, Value)],
    n: usize,
    deadline: Instant,
) -> Run {
    let mut run = Run::default();
    let mut m = match raw_http::Mcp::connect(url, token) {
        Ok(m) => m,
        Err(e) => {
            run.errors.push(format!("connect: {e}"));
            return run;
        }
    };
    let mut log = Follower::default();
    for i in 0..WARMUP + n {
        if Instant::now() > deadline {
            run.errors.push("the time bound was reached".into());
            break;
        }
        let (tool, args) = &calls[i % calls.len()];
        let args = if *tool == "events" {
            log.args()
        } else {
            args.clone()
        };
        let t = Instant::now();
        let r = m.call(tool, args);
        let took = t.elapsed();
        match r {
            Ok(result) => {
                if let Some(e) = failed(&result) {
                    run.errors.push(format!("{tool}: {e}"));
                } else if *tool == "events" {
                    match log.take(&result) {
                        Ok(k) => run.events += k,
                        Err(e) => run.errors.push(format!("events: {e}")),
                    }
                }
            }
            Err(e) => run.errors.push(format!("{tool}: {e}")),
        }
        if i >= WARMUP {
            run.sample(t, took);
        }
    }
    let _ = m.close();
    run
}

fn stdio_client(
    server: &[String],
    root: &Path,
    env: &[(&str, &str)],
    calls: &[(&'static str, Value)],
    n: usize,
    deadline: Instant,
) -> Run {
    let mut run = Run::default();
    let mut g = Gate::start_with_env(server, root, &common::tools_path(), env);
    for i in 0..WARMUP + n {
        if Instant::now() > deadline {
            run.errors.push("the time bound was reached".into());
            break;
        }
        let (tool, args) = &calls[i % calls.len()];
        let t = Instant::now();
        let r = g.request("tools/call", json!({"name": tool, "arguments": args}));
        let took = t.elapsed();
        if let Some(e) = failed(&r["result"]) {
            run.errors.push(format!("{tool}: {e} {}", r["error"]));
        }
        if i >= WARMUP {
            run.sample(t, took);
        }
    }
    run
}

/// `lspgate serve --http 127.0.0.1:0` attached to the daemon: the child, URL and token.
fn serve_http(server: &[String], root: &Path, env: &[(&str, &str)]) -> (Child, String, String) {
    let mut child = Command::new(LSPGATE)
        .args(["serve", "--root"])
        .arg(root)
        .args(["--http", "127.0.0.1:0", "--"])
        .args(server)
        .env("PATH", common::tools_path())
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn lspgate serve --http");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let (mut url, mut token) = (None, None);
    while url.is_none() || token.is_none() {
        let Some(Ok(line)) = lines.next() else {
            panic!("lspgate serve --http did not say where it listens");
        };
        if let Some(rest) = line.strip_prefix("lspgate: MCP over HTTP at ") {
            url = rest.split_whitespace().next().map(String::from);
        } else if let Some(rest) = line.strip_prefix("lspgate: bearer token ") {
            token = rest.split_whitespace().next().map(String::from);
        }
    }
    // Keep draining stderr so the child never blocks on it.
    std::thread::spawn(move || for _ in lines {});
    (child, url.unwrap(), token.unwrap())
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let server_kind = std::env::var("BENCH_SERVER").unwrap_or_else(|_| "fixture".into());
    let n = env_num("BENCH_CALLS", 500) as usize;
    let clients = env_num("BENCH_CLIENTS", 8) as usize;
    let deadline = Instant::now() + Duration::from_secs(env_num("BENCH_SECONDS", 300));
    let ws = tempfile::tempdir().unwrap();
    let server = setup(&server_kind, ws.path());
    let calls = mix(&server_kind);

    // A daemon of the bench's own: a private runtime folder and data folder.
    let runtime = tempfile::tempdir().unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(runtime.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let home = tempfile::tempdir().unwrap();
    let (rt, hm) = (
        runtime.path().display().to_string(),
        home.path().display().to_string(),
    );
    let env = [
        ("LSPGATE_STANDALONE", "0"),
        ("XDG_RUNTIME_DIR", rt.as_str()),
        ("LSPGATE_HOME", hm.as_str()),
        ("LSPGATE_IDLE_EXIT", "60"),
    ];
    let (mut http, url, token) = serve_http(&server, ws.path(), &env);
    eprintln!("serving at {url}; {clients} clients × {n} calls, server {server_kind}");

    let mut rows = Vec::new();
    let one = stdio_client(&server, ws.path(), &env, &calls, n, deadline);
    rows.push(row("stdio, 1 client".into(), vec![one]));
    let one = http_client(&url, &token, &calls, n, deadline);
    rows.push(row("HTTP, 1 client".into(), vec![one]));
    // While they run, someone else writes a file the calls read, every 20 ms.
    let writing = std::sync::atomic::AtomicBool::new(true);
    let mut writes = 0;
    let runs: Vec<Run> = std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let mut k = 0;
            while writing.load(std::sync::atomic::Ordering::Acquire) {
                let text = if k % 2 == 0 {
                    "fine\n"
                } else {
                    "an ERROR now\n"
                };
                let _ = std::fs::write(
                    ws.path()
                        .join(calls[2].1["file"].as_str().unwrap_or("w.txt")),
                    text,
                );
                k += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            k
        });
        let handles: Vec<_> = (0..clients)
            .map(|_| s.spawn(|| http_client(&url, &token, &calls, n, deadline)))
            .collect();
        let runs = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect();
        writing.store(false, std::sync::atomic::Ordering::Release);
        writes = writer.join().unwrap_or_default();
        runs
    });
    let read: Vec<usize> = runs.iter().map(|r| r.events).collect();
    rows.push(row(format!("HTTP, {clients} clients at once"), runs));
    let runs: Vec<Run> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|_| s.spawn(|| stdio_client(&server, ws.path(), &env, &calls, n, deadline)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    rows.push(row(format!("stdio, {clients} clients at once"), runs));

    // SAFETY: a signal to the child this bench started.
    unsafe { libc::kill(http.id() as i32, libc::SIGTERM) };
    let _ = http.wait();
    let _ = Command::new(LSPGATE)
        .args(["daemon", "stop"])
        .envs(env.iter().copied())
        .output();

    println!(
        "\n{server_kind}: mixed calls (hover, references, diagnostics, document_symbols, servers, events) through the daemon\n"
    );
    println!("| clients | calls | errors | p50 | p99 | max | calls/s |");
    println!("|---|---|---|---|---|---|---|");
    let mut errors = 0;
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.0} |",
            r.label,
            r.calls,
            r.errors.len(),
            ms(r.p50),
            ms(r.p99),
            ms(r.max),
            r.calls as f64 / r.wall.as_secs_f64()
        );
        errors += r.errors.len();
        for e in r.errors.iter().take(3) {
            eprintln!("  {}: {e}", r.label);
        }
    }
    println!(
        "\nevents while {clients} HTTP clients ran and {writes} plain writes landed: read per client {read:?}, \
         each client's seqs gapless and unrepeated"
    );
    if errors > 0 {
        std::process::exit(1);
    }
}
