//! Benchmark: `lspgate lsp` against lspmux 0.3.0 (the LSP multiplexer, ra-multiplex's
//! successor) on Django 5.2's source, both sharing one pyright between four LSP clients, in
//! one run: each client's time from its start to its first complete `textDocument/references`
//! (to `cached_property`, hundreds of locations), started one after another and kept open, then
//! the resident memory of the servers, the multiplexer (lspgate's daemon, lspmux's server) and
//! the four client processes (`lspgate lsp` relays, `lspmux client` shims), with and without
//! the clients, resident (RSS) and proportional (PSS); ratios lspgate /
//! lspmux.
//!
//! lspmux takes pyright's first message for its `initialize` response, and pyright logs first:
//! pyright runs behind `bench/lsp_face/initialize_first.py`, which holds its output back until
//! that response (the shim's memory is left out of lspmux's figures). lspmux forwards a
//! request as soon as it comes, so its client asks again every 200 ms until the answer holds as
//! many locations as lspgate's (the lspgate side waits for pyright to be ready and answers once,
//! complete): its time is a lower bound.
//!
//! Run: `LSPMUX=/path/to/lspmux cargo bench --bench lsp_mux` (`cargo install lspmux --version
//! 0.3.0 --locked --root DIR`; pyright from `.tools/`; minutes).
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and measurements fail loudly

#[path = "lsp_face/client.rs"]
#[allow(dead_code)] // the `lsp_face` bench uses the rest
mod client;
mod common;

use client::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// lspmux's server, stopped when dropped, with its private configuration.
struct Mux {
    child: std::process::Child,
    _config: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl Mux {
    fn start(lspmux: &str, path: &str) -> Mux {
        let config = tempfile::tempdir().unwrap();
        // A port of its own: another lspmux on this machine keeps the default one.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = config.path().join("lspmux");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("config.toml"),
            format!(
                "instance_timeout = 300\ngc_interval = 10\nlisten = [\"127.0.0.1\", {port}]\n\
                 connect = [\"127.0.0.1\", {port}]\nlog_filters = \"warn\"\npass_environment = []\n"
            ),
        )
        .unwrap();
        let env = vec![
            ("PATH".to_string(), path.to_string()),
            (
                "XDG_CONFIG_HOME".to_string(),
                config.path().display().to_string(),
            ),
        ];
        let child = Command::new(lspmux)
            .arg("server")
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {lspmux} server: {e}"));
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "lspmux server did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Mux {
            child,
            _config: config,
            env,
        }
    }
}

impl Drop for Mux {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether this process is the shim: a Python running it (the `lspmux client`s name it too).
fn is_shim(pid: u32) -> bool {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    comm.trim().starts_with("python")
        && std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains("initialize_first.py"))
}

fn main() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let Some(lspmux) = std::env::var("LSPMUX")
        .ok()
        .filter(|p| Path::new(p).is_file())
    else {
        println!(
            "lsp_mux: set LSPMUX to an lspmux 0.3.0 executable (cargo install lspmux --version \
             0.3.0 --locked --root DIR); skipped"
        );
        return;
    };
    let path = format!(
        "{}:{}",
        repo.join(".tools/venv/bin").display(),
        common::tools_path()
    );
    if !common::pyright_bench_runs("lsp_mux", &path) {
        return;
    }
    // The real path (a worktree's `.tools` is a symlink), as the earlier runs measured.
    let root = common::django(&repo).canonicalize().unwrap();
    let refs_at = position(&root, MODULE, "class cached_property", "cached_property");
    println!("Django 5.2 at {}", root.display());

    // Four clients through `lspgate lsp`, attached to a private daemon.
    let daemon = Daemon::new(&path);
    let gate_cmd = gate_cmd(&root);
    println!("four clients through `lspgate lsp` (one daemon):");
    let (gates, gate_first) = four(&gate_cmd, &root, &daemon.env(), &refs_at, None, "lspgate");
    let want = gate_first[0].count;
    let daemon_pid = daemon.pid().expect("a daemon runs");
    let gate_pids: Vec<u32> = gates
        .iter()
        .flat_map(|c| common::tree(c.pid()))
        .chain(common::tree(daemon_pid))
        .collect();
    let gate_rss = common::rss_kib(gate_pids.clone());
    let gate_pss = common::pss_kib(gate_pids.clone());
    // The servers and the multiplexer alone (issue 39's measure): the daemon and what it runs.
    let gate_served = common::rss_kib(common::tree(daemon_pid));
    let gate_procs = breakdown(&gate_pids);
    for c in gates {
        c.stop();
    }
    drop(daemon);

    // Four clients through lspmux.
    let mux = Mux::start(&lspmux, &path);
    let pyright = common::on_path(&path, "pyright-langserver", &["--stdio"]).unwrap();
    let shim = repo.join("bench/lsp_face/initialize_first.py");
    let mux_cmd: Vec<String> = [lspmux.clone(), "client".into(), "--server-path".into()]
        .into_iter()
        .chain([shim.display().to_string(), "--".into()])
        .chain(pyright)
        .collect();
    println!("four clients through lspmux (one server):");
    let (muxes, mux_first) = four(&mux_cmd, &root, &mux.env, &refs_at, Some(want), "lspmux");
    let mux_pids: Vec<u32> = muxes
        .iter()
        .flat_map(|c| common::tree(c.pid()))
        .chain(common::tree(mux.child.id()))
        .collect();
    let shim_rss = common::rss_kib(mux_pids.iter().copied().filter(|p| is_shim(*p)));
    let mux_rss = common::rss_kib(mux_pids.clone()) - shim_rss;
    let shim_pss = common::pss_kib(mux_pids.iter().copied().filter(|p| is_shim(*p)));
    let mux_pss = common::pss_kib(mux_pids.clone()) - shim_pss;
    let mux_served = common::rss_kib(common::tree(mux.child.id())) - shim_rss;
    let mux_procs = breakdown(&mux_pids);
    for c in muxes {
        c.stop();
    }
    drop(mux);

    let counts: Vec<usize> = gate_first
        .iter()
        .chain(&mux_first)
        .map(|f| f.count)
        .collect();
    assert!(want > 50, "only {want} references: not the symbol meant");
    assert!(
        counts.iter().all(|c| *c == want),
        "complete answers differ: {counts:?}"
    );

    let secs = |f: &First| f.time.as_secs_f64();
    println!();
    println!(
        "Django 5.2, pyright; four LSP clients started one after another sharing one pyright; \
         first complete `references` to `cached_property` ({want} locations)"
    );
    println!("| measure | `lspgate lsp` (one daemon) | lspmux 0.3.0 (one server) | ratio |");
    println!("|---|---|---|---|");
    let mut later_met = true;
    for i in 0..4 {
        let (g, m) = (secs(&gate_first[i]), secs(&mux_first[i]));
        println!(
            "| client {} first complete `references` | {g:.2} s | {m:.2} s ({} request(s)) | {:.2}× |",
            i + 1,
            mux_first[i].tries,
            g / m
        );
        if i > 0 {
            later_met &= g <= m;
        }
    }
    let mem = gate_rss as f64 / mux_rss as f64;
    let served = gate_served as f64 / mux_served as f64;
    println!(
        "| resident memory once the 4th has answered: servers and multiplexer | {:.0} MiB | {:.0} MiB | {served:.2}× |",
        mib(gate_served),
        mib(mux_served),
    );
    println!(
        "| resident memory once the 4th has answered: servers, multiplexer, clients | {:.0} MiB | {:.0} MiB (+{:.0} MiB of shim left out) | {mem:.2}× |",
        mib(gate_rss),
        mib(mux_rss),
        mib(shim_rss)
    );
    println!(
        "| proportional memory (PSS: a page shared by several of the processes counted once) | {:.0} MiB | {:.0} MiB (+{:.0} MiB of shim left out) | {:.2}× |",
        mib(gate_pss),
        mib(mux_pss),
        mib(shim_pss),
        gate_pss as f64 / mux_pss as f64
    );
    println!();
    for (name, procs) in [("lspgate", &gate_procs), ("lspmux", &mux_procs)] {
        let list: Vec<String> = procs
            .iter()
            .map(|(n, k)| format!("{n} {:.1} MiB", mib(*k)))
            .collect();
        println!("  {name}: {}", list.join(", "));
    }
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    println!();
    println!(
        "memory of the servers and multiplexer, lspgate / lspmux: {served:.2}× (target ≤ 1×: {}; \
         with the clients {mem:.2}×); clients 2–4 no slower than lspmux's: {}",
        verdict(served <= 1.0),
        verdict(later_met)
    );
}
