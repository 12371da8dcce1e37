//! Benchmark: four agent sessions on one real workspace (Django 5.2's source, fetched by the
//! test setup into `.tools/projects`, else by this bench from PyPI), through the per-user daemon
//! and as four `--standalone` processes, in the same run: each session's time to its first
//! complete `references` answer (the first session starts cold, the next three after it), and
//! the total resident memory of lspgate and its servers once all four have answered.
//!
//! Run: `cargo bench --bench sessions` (pyright from `.tools/`, see scripts/).
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and measurements fail loudly

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{Gate, django, rss_kib, tree};
use serde_json::json;

struct Run {
    /// Time from each session's start to its first complete answer.
    first: Vec<Duration>,
    /// lspgate (sessions, daemon) and servers, KiB.
    rss_kib: u64,
}

/// Four sessions: one, then three more once it has answered.
fn four(root: &Path, path: &str, env: &[(&str, &str)], daemon: bool, runtime: &Path) -> Run {
    let cmd = vec!["pyright-langserver".to_string(), "--stdio".to_string()];
    let line = std::fs::read_to_string(root.join("django/utils/functional.py"))
        .unwrap()
        .lines()
        .position(|l| l.starts_with("class cached_property"))
        .unwrap()
        + 1;
    let ask = move |g: &mut Gate| {
        let r = g.request(
            "tools/call",
            json!({"name": "references", "arguments": {"file": "django/utils/functional.py",
                "line": line, "symbol": "cached_property", "limit": 1}}),
        );
        let s = &r["result"]["structuredContent"];
        assert_eq!(r["result"]["isError"], false, "{r}");
        assert_ne!(s["partial"], true, "an incomplete first answer: {r}");
        assert!(s["total"].as_u64().unwrap_or(0) > 100, "{r}");
    };
    let start = |env: Vec<(String, String)>| {
        let t = Instant::now();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let mut g = Gate::start_with_env(&cmd, root, path, &env);
        ask(&mut g);
        (g, t.elapsed())
    };
    let owned: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let (first_gate, first) = start(owned.clone());
    let rest: Vec<(Gate, Duration)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let env = owned.clone();
                s.spawn(move || start(env))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut gates = vec![first_gate];
    let mut firsts = vec![first];
    for (g, t) in rest {
        gates.push(g);
        firsts.push(t);
    }
    // Every process of the sessions and (with the daemon) the daemon's, each counted once: the
    // session that started the daemon is its parent.
    let mut pids: Vec<u32> = gates.iter().flat_map(|g| tree(g.child.id())).collect();
    if daemon {
        let out = std::process::Command::new(common::LSPGATE)
            .args(["daemon", "status", "--json"])
            .env("XDG_RUNTIME_DIR", runtime)
            .output()
            .unwrap();
        let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        if let Some(pid) = status["pid"].as_u64() {
            pids.extend(tree(pid as u32));
        }
    }
    let rss = rss_kib(pids);
    if daemon {
        let _ = std::process::Command::new(common::LSPGATE)
            .args(["daemon", "stop"])
            .env("XDG_RUNTIME_DIR", runtime)
            .status();
    }
    drop(gates);
    Run {
        first: firsts,
        rss_kib: rss,
    }
}

fn main() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let path = common::tools_path();
    if !common::pyright_bench_runs("sessions", &path) {
        return;
    }
    let root = django(&repo);
    let runtime = tempfile::tempdir().unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(runtime.path(), std::fs::Permissions::from_mode(0o700));
    }
    let rt = runtime.path().to_str().unwrap().to_string();
    let daemon = four(
        &root,
        &path,
        &[("LSPGATE_STANDALONE", "0"), ("XDG_RUNTIME_DIR", &rt)],
        true,
        runtime.path(),
    );
    let alone = four(
        &root,
        &path,
        &[("LSPGATE_STANDALONE", "1")],
        false,
        runtime.path(),
    );
    let secs = |d: &Duration| d.as_secs_f64();
    let warm = |r: &Run| r.first[1..].iter().map(secs).fold(0.0, f64::max);
    println!(
        "4 sessions on Django 5.2 (883 Python files), pyright; first complete `references` to cached_property"
    );
    println!("| mode | session 1 (cold) | sessions 2-4 (slowest) | lspgate + servers RSS |");
    println!("|---|---|---|---|");
    for (name, r) in [("daemon (shared)", &daemon), ("4 × --standalone", &alone)] {
        println!(
            "| {name} | {:.2} s | {:.2} s | {:.0} MiB |",
            secs(&r.first[0]),
            warm(r),
            r.rss_kib as f64 / 1024.0
        );
    }
    let mem = daemon.rss_kib as f64 / alone.rss_kib as f64;
    let time = warm(&daemon) / warm(&alone);
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    println!(
        "memory, daemon / standalone: {mem:.2}× (target ≤ 0.35×: {})",
        verdict(mem <= 0.35)
    );
    println!(
        "a later session's first answer, daemon / standalone: {time:.2}× (target ≤ 0.2×: {})",
        verdict(time <= 0.2)
    );
}
