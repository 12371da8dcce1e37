//! Benchmark: the cost of never being stale. Through lspgate on pyright, the median `hover` on
//! a use of a function right after its module was rewritten on disk (by this process, not
//! through lspgate) next to a warm `hover` with no write, and next to a bare LSP client doing
//! the same (write, `didChangeWatchedFiles`, hover) on the same server; then lspgate's CPU and
//! memory while idle on a 5,000-file tree, with the watcher on and off, in the same run.
//!
//! Run: `cargo bench --bench freshness` (pyright from `.tools/`, see scripts/).
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and measurements fail loudly

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{Direct, Gate};
use serde_json::json;

const FIXTURE: &str = env!("CARGO_BIN_EXE_lspgate-fixture-server");

fn env_num(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

const LIB_A: &str = "def f(a: int) -> int:\n    return a\n";
const LIB_B: &str = "def f(a: str) -> int:\n    return 1\n";
const USER: &str = "from lib import f\n\nx = f(1)\n";

/// Median latencies of `hover(want)`: warm (no write), then right after each write of the
/// dependency (alternating its two versions; `told` runs after the write, in the timed part).
fn measure(
    root: &Path,
    n: usize,
    mut hover: impl FnMut(&str),
    mut told: impl FnMut(),
) -> (Duration, Duration) {
    for _ in 0..20 {
        hover("a: int");
    }
    let mut warm = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        hover("a: int");
        warm.push(t.elapsed());
    }
    let mut after = Vec::with_capacity(n);
    for i in 0..n {
        let (text, want) = if i % 2 == 0 {
            (LIB_B, "a: str")
        } else {
            (LIB_A, "a: int")
        };
        std::fs::write(root.join("lib.py"), text).unwrap();
        let t = Instant::now();
        told();
        hover(want);
        after.push(t.elapsed());
    }
    std::fs::write(root.join("lib.py"), LIB_A).unwrap();
    (median(warm), median(after))
}

/// Median hover latencies through lspgate: (warm, right after a write to the dependency).
fn through_lspgate(cmd: &[String], root: &Path, path: &str, n: usize) -> (Duration, Duration) {
    let mut gate = Gate::start(cmd, root, path);
    let args = json!({"name": "hover", "arguments": {"file": "use.py", "line": 3, "symbol": "f"}});
    let hover = |want: &str| {
        let r = gate.request("tools/call", args.clone());
        let text = r["result"]["content"][0]["text"].as_str().unwrap_or("");
        assert!(text.contains(want), "stale hover (wanted {want}): {r}");
    };
    measure(root, n, hover, || {})
}

/// The same with a bare LSP client that tells pyright of each write itself.
fn direct(cmd: &[String], root: &Path, n: usize) -> (Duration, Duration) {
    let mut d = Direct::start(cmd, root);
    let uri = url::Url::from_file_path(root.join("use.py")).unwrap();
    let lib = url::Url::from_file_path(root.join("lib.py")).unwrap();
    d.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": USER}}),
    );
    let pos = json!({"textDocument": {"uri": uri}, "position": {"line": 2, "character": 4}});
    let hover = |d: &mut Direct, want: &str| {
        let r = d.request("textDocument/hover", pos.clone());
        assert!(
            r.to_string().contains(want),
            "stale hover (wanted {want}): {r}"
        );
    };
    let d = std::cell::RefCell::new(d);
    measure(
        root,
        n,
        |want| hover(&mut d.borrow_mut(), want),
        || {
            d.borrow_mut().notify(
                "workspace/didChangeWatchedFiles",
                json!({"changes": [{"uri": lib, "type": 2}]}),
            )
        },
    )
}

struct Idle {
    /// From lspgate's start to its first answer (the watcher starts before the server).
    first_call: Duration,
    cpu_ms: f64,
    rss_kib: u64,
    watched: String,
}

/// lspgate over the fixture server on a big tree: the first call (which starts the watcher),
/// then CPU used and memory held while nothing happens for `secs`.
fn idle(tree: &Path, path: &str, secs: u64, watch: &str) -> Idle {
    let cmd = vec![FIXTURE.to_string()];
    let t = Instant::now();
    let mut gate = Gate::start_with_env(&cmd, tree, path, &[("LSPGATE_WATCH", watch)]);
    let r = gate.request(
        "tools/call",
        json!({"name": "hover", "arguments": {"file": "d0/f0.py", "line": 1, "column": 1}}),
    );
    let first_call = t.elapsed();
    assert_eq!(r["result"]["isError"], false, "{r}");
    let r = gate.request("tools/call", json!({"name": "servers", "arguments": {}}));
    let watched = r["result"]["structuredContent"]["watcher"]
        .as_str()
        .unwrap_or("not started")
        .to_string();
    let before = gate.cpu_ticks();
    std::thread::sleep(Duration::from_secs(secs));
    let cpu_ms = (gate.cpu_ticks() - before) as f64 * 10.0;
    Idle {
        first_call,
        cpu_ms,
        rss_kib: gate.rss_kib(),
        watched,
    }
}

fn main() {
    let path = common::tools_path();
    let n = env_num("BENCH_CALLS", 200).min(500);
    let files = env_num("BENCH_FILES", 5_000);
    let secs = if n < 100 { 1 } else { 10 };
    if cfg!(debug_assertions) {
        println!("(a debug build, as `cargo test` makes it: figures are not representative)");
    }

    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("lib.py"), LIB_A).unwrap();
    std::fs::write(ws.path().join("use.py"), USER).unwrap();
    match common::on_path(&path, "pyright-langserver", &["--stdio"]) {
        Some(cmd) => {
            let (g_warm, g_after) = through_lspgate(&cmd, ws.path(), &path, n);
            let (d_warm, d_after) = direct(&cmd, ws.path(), n);
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            println!("hover on a use of `f` (pyright), median of {n} calls");
            println!("| client | warm, no write | right after a write to f's module | ratio |");
            println!("|---|---|---|---|");
            println!(
                "| bare LSP client (sends didChangeWatchedFiles itself) | {:.2} ms | {:.2} ms | {:.2}× |",
                ms(d_warm),
                ms(d_after),
                ms(d_after) / ms(d_warm)
            );
            println!(
                "| lspgate (watcher; the test only writes the file) | {:.2} ms | {:.2} ms | {:.2}× |",
                ms(g_warm),
                ms(g_after),
                ms(g_after) / ms(g_warm)
            );
            println!(
                "lspgate's cost of freshness after a write: {:+.2} ms over the bare client's",
                ms(g_after) - ms(d_after)
            );
        }
        None => println!("pyright not found: run scripts/install-test-servers.sh to bench it"),
    }

    // A tree of `files` Python files in folders of 20.
    let tree = tempfile::tempdir().unwrap();
    for i in 0..files {
        let dir = tree.path().join(format!("d{}", i / 20));
        if i % 20 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::write(dir.join(format!("f{}.py", i % 20)), format!("x{i} = {i}\n")).unwrap();
    }
    let on = idle(tree.path(), &path, secs, "on");
    let off = idle(tree.path(), &path, secs, "off");
    println!(
        "lspgate idle on {files} files in {} folders, {secs} s",
        files.div_ceil(20)
    );
    println!("| watcher | start to first answer | CPU while idle | RSS |");
    println!("|---|---|---|---|");
    for (name, r) in [("on", &on), ("off", &off)] {
        println!(
            "| {name} | {:.1} ms | {:.0} ms | {:.1} MiB |",
            r.first_call.as_secs_f64() * 1e3,
            r.cpu_ms,
            r.rss_kib as f64 / 1024.0
        );
    }
    println!("watcher status: {}", on.watched);
    println!(
        "the watcher's cost: {:+.1} MiB resident, {:+.0} ms CPU over {secs} s idle, {:+.1} ms to the first answer",
        (on.rss_kib as f64 - off.rss_kib as f64) / 1024.0,
        on.cpu_ms - off.cpu_ms,
        (on.first_call.as_secs_f64() - off.first_call.as_secs_f64()) * 1e3
    );
}
