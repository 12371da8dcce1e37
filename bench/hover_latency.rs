//! Benchmark: per-call `hover` latency through lspgate (MCP over stdio) next to a bare LSP
//! client talking to the same server, on the instant fixture server and on pyright, plus
//! lspgate's own peak RSS. Figures are medians of one run, reported as ratios and added time.
//!
//! Run: `cargo bench --bench hover_latency` (pyright from `.tools/`, see scripts/).
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and measurements fail loudly

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{Direct, Gate};
use serde_json::json;
const FIXTURE: &str = env!("CARGO_BIN_EXE_lspgate-fixture-server");
const WARMUP: usize = 50;

fn calls() -> usize {
    std::env::var("BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
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

#[allow(clippy::too_many_arguments)]
fn bench(
    server: &'static str,
    cmd: &[String],
    root: &Path,
    file: &str,
    line: u32,
    col: u32,
    path: &str,
    env: &[(&str, &str)],
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

    let mut gate = Gate::start_with_env(cmd, root, path, env);
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
    let path = common::tools_path();
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
        &[],
    )];
    match common::on_path(&path, "pyright-langserver", &["--stdio"]) {
        Some(cmd) => {
            rows.push(bench("pyright", &cmd, ws.path(), "a.py", 4, 2, &path, &[]));
            // The same through the per-user daemon: the session relays to it (one more hop).
            let runtime = tempfile::tempdir().unwrap();
            {
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(
                    runtime.path(),
                    std::fs::Permissions::from_mode(0o700),
                );
            }
            let rt = runtime.path().to_str().unwrap_or_default();
            let env = [("LSPGATE_STANDALONE", "0"), ("XDG_RUNTIME_DIR", rt)];
            rows.push(bench(
                "pyright, through the daemon",
                &cmd,
                ws.path(),
                "a.py",
                4,
                2,
                &path,
                &env,
            ));
            let _ = std::process::Command::new(common::LSPGATE)
                .args(["daemon", "stop"])
                .env("XDG_RUNTIME_DIR", rt)
                .status();
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
