//! Benchmark: lspgate as a language server (`lspgate lsp`, issue 25) on a real workspace
//! (Django 5.2's source, from its wheel), against clients that each spawn pyright themselves,
//! in one run:
//!
//! - four LSP clients, started one after another, each a `lspgate lsp --root DJANGO --server
//!   pyright` process attached to a private per-user daemon: each client's time from its start
//!   to its first complete `textDocument/references` answer (to `cached_property`, hundreds of
//!   locations), then the resident memory of the daemon, its servers and the four relays;
//! - four clients each spawning `pyright-langserver --stdio`, the same client code: the same
//!   figures, and the memory of the four pyright trees;
//! - on warm connections, alternating `hover` and `references` at fixed positions through one
//!   `lspgate lsp` client and one direct client, the sides taking turns: medians and p90, and
//!   the latency lspgate adds at the median.
//!
//! A direct client knows nothing of pyright's readiness: asked at once, pyright answers with
//! what it has found so far. The client code asks again every 200 ms until the answer holds as
//! many locations as lspgate's first answer did (the figure it could not know by itself: the
//! direct side's time is a lower bound). Every client's final answer must hold the same count.
//!
//! - then one client hovering alone, and beside a second client that types into an unsaved
//!   buffer: what keeping one client's buffer out of another's answers costs.
//!
//! Run: `cargo bench --bench lsp_face` (pyright from `.tools/`, see scripts/; minutes).
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and measurements fail loudly

#[path = "lsp_face/client.rs"]
mod client;
mod common;

use client::*;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Bound on a warm request.
const WARM_TIMEOUT: Duration = Duration::from_secs(60);
/// Rounds in the latency part: four requests a side each (hover, references, hover,
/// references), the sides taking turns round by round: 200 requests a side.
const ROUNDS: usize = 50;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

#[derive(Default)]
struct Times {
    hover: Vec<f64>,
    local: Vec<f64>,
    wide: Vec<f64>,
}

impl Times {
    fn all(&self) -> Vec<f64> {
        self.hover
            .iter()
            .chain(&self.local)
            .chain(&self.wide)
            .copied()
            .collect()
    }
}

fn sorted(v: &[f64]) -> Vec<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Where the latency part asks.
struct Spots {
    hover: Value,
    /// A local variable: pyright searches its function only.
    local: Value,
    /// `cached_property`: pyright searches every file.
    wide: Value,
}

/// One round on a warm connection: hover, local references, hover, workspace-wide references,
/// each timed in ms into `times`.
fn round(c: &mut Client, at: &Spots, times: &mut Times) {
    let mut timed = |f: &mut dyn FnMut(&mut Client), into: &mut Vec<f64>| {
        let t = Instant::now();
        f(c);
        into.push(t.elapsed().as_secs_f64() * 1e3);
    };
    timed(&mut |c| c.hover(&at.hover, WARM_TIMEOUT), &mut times.hover);
    timed(
        &mut |c| {
            c.references(&at.local, WARM_TIMEOUT);
        },
        &mut times.local,
    );
    timed(&mut |c| c.hover(&at.hover, WARM_TIMEOUT), &mut times.hover);
    timed(
        &mut |c| {
            c.references(&at.wide, WARM_TIMEOUT);
        },
        &mut times.wide,
    );
}

/// What another client's unsaved buffer costs this one (its requests wait while the server is
/// shown that buffer, so no answer of theirs reflects it): `hover`s of `c` timed alone, then
/// while a second `lspgate lsp` client edits `MODULE` without saving every 150 ms (the face
/// asks for that buffer's diagnostics after each change) and hovers in it. Medians and p90 in
/// ms: (alone, beside the typist).
fn beside_a_typist(
    c: &mut Client,
    cmd: &[String],
    root: &Path,
    env: &[(String, String)],
    at: &Spots,
) -> ((f64, f64), (f64, f64)) {
    const HOVERS: usize = 200;
    let stats = |v: &[f64]| {
        let s = sorted(v);
        (percentile(&s, 0.5), percentile(&s, 0.9))
    };
    let timed = |c: &mut Client| {
        (0..HOVERS)
            .map(|_| {
                let t = Instant::now();
                c.hover(&at.hover, WARM_TIMEOUT);
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect::<Vec<f64>>()
    };
    let alone = timed(c);
    let mut typist = Client::start(cmd, root, env);
    typist.open(root, MODULE);
    let text = std::fs::read_to_string(root.join(MODULE)).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let beside = std::thread::scope(|s| {
        s.spawn(|| {
            let mut version = 1;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                version += 1;
                typist.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri(&root.join(MODULE)), "version": version},
                           "contentChanges": [{"text": format!("{text}\nunsaved_{version} = {version}\n")}]}),
                );
                typist.hover(&at.hover, WARM_TIMEOUT);
                std::thread::sleep(Duration::from_millis(150));
            }
        });
        let beside = timed(c);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        beside
    });
    typist.stop();
    (stats(&alone), stats(&beside))
}

fn main() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let path = format!(
        "{}:{}",
        repo.join(".tools/venv/bin").display(),
        common::tools_path()
    );
    if !common::pyright_bench_runs("lsp_face", &path) {
        return;
    }
    // The real path (a worktree's `.tools` is a symlink), as the earlier runs measured.
    let root = common::django(&repo).canonicalize().unwrap();
    let refs_at = position(&root, MODULE, "class cached_property", "cached_property");
    let mut local_at = position(&root, MODULE, "self.real_func = func", "= func");
    local_at["position"]["character"] =
        json!(local_at["position"]["character"].as_u64().unwrap() + 2);
    let spots = Spots {
        hover: refs_at.clone(),
        local: local_at,
        wide: refs_at.clone(),
    };

    // Four clients through `lspgate lsp`, attached to a private daemon.
    let daemon = Daemon::new(&path);
    let gate_cmd = gate_cmd(&root);
    println!("Django 5.2 at {}", root.display());
    println!("four clients through `lspgate lsp` (one daemon):");
    let (mut gates, gate_first) = four(&gate_cmd, &root, &daemon.env(), &refs_at, None, "lspgate");
    let want = gate_first[0].count;
    let daemon_pid = daemon.pid().expect("a daemon runs");
    let gate_pids = |gates: &[Client]| -> Vec<u32> {
        gates
            .iter()
            .flat_map(|c| common::tree(c.pid()))
            .chain(common::tree(daemon_pid))
            .collect()
    };
    let gate_rss = common::rss_kib(gate_pids(&gates));
    let servers = daemon.servers();
    // What the servers other than pyright hold (`--server pyright` fronts pyright alone).
    let others = |servers: &[(String, u32)]| -> u64 {
        common::rss_kib(
            servers
                .iter()
                .filter(|(n, _)| !n.ends_with("/pyright"))
                .flat_map(|(_, p)| common::tree(*p)),
        )
    };
    let gate_others = others(&servers);
    let gate_settle = settle(&gate_pids(&gates), Duration::from_secs(300));
    let gate_rss_settled = common::rss_kib(gate_pids(&gates));
    let gate_others_settled = others(&servers);
    let server_list: Vec<String> = servers
        .iter()
        .map(|(n, p)| format!("{n} {:.0} MiB", mib(common::rss_kib(common::tree(*p)))))
        .collect();
    let gate_procs = breakdown(&gate_pids(&gates));
    let mut pyrights: Vec<u32> = gate_pids(&gates)
        .into_iter()
        .filter(|p| is_pyright(*p))
        .collect();
    // Only the first stays, for the latency part.
    for c in gates.drain(1..) {
        c.stop();
    }

    // Four clients each spawning pyright.
    let direct_cmd = common::on_path(&path, "pyright-langserver", &["--stdio"]).unwrap();
    let direct_env = vec![("PATH".to_string(), path.clone())];
    println!("four clients each spawning pyright-langserver:");
    let (mut directs, direct_first) = four(
        &direct_cmd,
        &root,
        &direct_env,
        &refs_at,
        Some(want),
        "direct",
    );
    let direct_pids = |directs: &[Client]| -> Vec<u32> {
        directs.iter().flat_map(|c| common::tree(c.pid())).collect()
    };
    let direct_rss = common::rss_kib(direct_pids(&directs));
    let direct_settle = settle(&direct_pids(&directs), Duration::from_secs(300));
    let direct_rss_settled = common::rss_kib(direct_pids(&directs));
    let direct_procs = breakdown(&direct_pids(&directs));
    pyrights.extend(direct_pids(&directs).into_iter().filter(|p| is_pyright(*p)));
    for c in directs.drain(1..) {
        c.stop();
    }

    // Latency on warm connections: both sides idle first, then in turns.
    let mut gate = gates.pop().unwrap();
    let mut direct = directs.pop().unwrap();
    let latency_settle = settle(
        &[daemon_pid, gate.pid(), direct.pid()],
        Duration::from_secs(300),
    );
    println!("both sides idle after {latency_settle:.0} s; latency part:");
    let (mut gt, mut dt) = (Times::default(), Times::default());
    // Warm-up, not counted.
    for _ in 0..5 {
        round(&mut gate, &spots, &mut Times::default());
        round(&mut direct, &spots, &mut Times::default());
    }
    let gate_refs = gate.references(&refs_at, WARM_TIMEOUT);
    let direct_refs = direct.references(&refs_at, WARM_TIMEOUT);
    let local_refs = (
        gate.references(&spots.local, WARM_TIMEOUT),
        direct.references(&spots.local, WARM_TIMEOUT),
    );
    for i in 0..ROUNDS {
        if i % 2 == 0 {
            round(&mut gate, &spots, &mut gt);
            round(&mut direct, &spots, &mut dt);
        } else {
            round(&mut direct, &spots, &mut dt);
            round(&mut gate, &spots, &mut gt);
        }
    }
    let typing = beside_a_typist(&mut gate, &gate_cmd, &root, &daemon.env(), &spots);
    gate.stop();
    direct.stop();
    drop(daemon);
    std::thread::sleep(Duration::from_millis(500));
    // The pyright processes this run started that still exist.
    let strays: Vec<u32> = pyrights
        .iter()
        .copied()
        .filter(|p| Path::new(&format!("/proc/{p}")).exists() && is_pyright(*p))
        .collect();

    // Every complete answer the same.
    let counts: Vec<usize> = gate_first
        .iter()
        .chain(&direct_first)
        .map(|f| f.count)
        .collect();
    assert!(want > 50, "only {want} references: not the symbol meant");
    assert!(
        counts.iter().all(|c| *c == want) && gate_refs == want && direct_refs == want,
        "complete answers differ: first {counts:?}, warm {gate_refs} / {direct_refs}"
    );
    assert_eq!(local_refs.0, local_refs.1, "local references differ");

    // The figures.
    let secs = |f: &First| f.time.as_secs_f64();
    println!();
    println!(
        "Django 5.2 (883 Python files), pyright; four LSP clients started one after another; \
         first complete `references` to `cached_property` ({want} locations)"
    );
    println!(
        "| measure | through `lspgate lsp` (one daemon) | 4 clients each spawning pyright | ratio |"
    );
    println!("|---|---|---|---|");
    for i in 0..4 {
        let (g, d) = (secs(&gate_first[i]), secs(&direct_first[i]));
        println!(
            "| client {} first complete `references` | {g:.2} s | {d:.2} s | {:.2}× |",
            i + 1,
            g / d
        );
    }
    println!(
        "| resident memory once the 4th has answered | {:.0} MiB | {:.0} MiB | {:.2}× |",
        mib(gate_rss),
        mib(direct_rss),
        gate_rss as f64 / direct_rss as f64
    );
    println!(
        "| resident memory once idle ({gate_settle:.0} s / {direct_settle:.0} s later) | {:.0} MiB | {:.0} MiB | {:.2}× |",
        mib(gate_rss_settled),
        mib(direct_rss_settled),
        gate_rss_settled as f64 / direct_rss_settled as f64
    );
    println!(
        "| the same, lspgate without the servers other than pyright | {:.0} MiB / {:.0} MiB | | {:.2}× / {:.2}× |",
        mib(gate_rss - gate_others),
        mib(gate_rss_settled - gate_others_settled),
        (gate_rss - gate_others) as f64 / direct_rss as f64,
        (gate_rss_settled - gate_others_settled) as f64 / direct_rss_settled as f64
    );
    println!();
    println!(
        "servers the daemon runs for the root, once idle: {}",
        server_list.join(", ")
    );
    println!("processes, once idle (RSS):");
    for (name, procs) in [("lspgate", &gate_procs), ("direct", &direct_procs)] {
        let list: Vec<String> = procs
            .iter()
            .map(|(n, k)| format!("{n} {:.1} MiB", mib(*k)))
            .collect();
        println!("  {name}: {}", list.join(", "));
    }
    println!();
    println!(
        "warm latency, ms: {ROUNDS} rounds a side of hover, references (local), hover, references \
         (workspace-wide), the sides taking turns round by round"
    );
    println!(
        "| request | direct median | direct p90 | lspgate median | lspgate p90 | added at the median |"
    );
    println!("|---|---|---|---|---|---|");
    let row = |name: &str, d: &[f64], g: &[f64]| {
        let (d, g) = (sorted(d), sorted(g));
        let added = percentile(&g, 0.5) - percentile(&d, 0.5);
        println!(
            "| {name} | {:.3} | {:.3} | {:.3} | {:.3} | {added:+.3} |",
            percentile(&d, 0.5),
            percentile(&d, 0.9),
            percentile(&g, 0.5),
            percentile(&g, 0.9)
        );
        added
    };
    let hover_added = row(
        &format!("hover ({} calls)", gt.hover.len()),
        &dt.hover,
        &gt.hover,
    );
    let local_added = row(
        &format!(
            "references, a local ({} locations, {} calls)",
            local_refs.0,
            gt.local.len()
        ),
        &dt.local,
        &gt.local,
    );
    let wide_added = row(
        &format!(
            "references, `cached_property` ({want} locations, {} calls)",
            gt.wide.len()
        ),
        &dt.wide,
        &gt.wide,
    );
    let all_added = row("all 200", &dt.all(), &gt.all());

    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    let mem = gate_rss as f64 / direct_rss as f64;
    let second = secs(&gate_first[1]) / secs(&gate_first[0]);
    let met = |added: f64| verdict(added <= 0.5);
    println!();
    println!(
        "memory, lspgate / direct, once the 4th has answered: {mem:.2}× (target ≤ 0.35×: {}); once idle: {:.2}×",
        verdict(mem <= 0.35),
        gate_rss_settled as f64 / direct_rss_settled as f64
    );
    println!(
        "second client's first complete `references` / first client's, through lspgate: {second:.3}× (target ≤ 0.2×: {})",
        verdict(second <= 0.2)
    );
    println!(
        "latency added at the median (target ≤ 0.5 ms): hover {hover_added:+.3} ms ({}), local \
         references {local_added:+.3} ms ({}), workspace-wide references {wide_added:+.3} ms \
         ({}), all 200 {all_added:+.3} ms ({})",
        met(hover_added),
        met(local_added),
        met(wide_added),
        met(all_added)
    );
    println!(
        "hover added at the median, issue 39's target (≤ 0.3 ms): {hover_added:+.3} ms ({})",
        verdict(hover_added <= 0.3)
    );
    let ((alone_p50, alone_p90), (beside_p50, beside_p90)) = typing;
    println!(
        "hover beside a client typing into an unsaved buffer of the same module (its buffer is \
         kept from this client's answers): median {beside_p50:.3} ms, p90 {beside_p90:.3} ms, \
         against {alone_p50:.3} / {alone_p90:.3} ms alone ({:.2}× at the median)",
        beside_p50 / alone_p50
    );
    if strays.is_empty() {
        println!("no pyright-langserver process of this run left");
    } else {
        println!("pyright-langserver processes of this run left: {strays:?}");
    }
}
