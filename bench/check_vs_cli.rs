//! Benchmark: `lspgate check` over a generated workspace of N Python files (default 1,000; one
//! type error) next to pyright's own CLI checker on the same tree: wall times from one run and
//! their ratio, and whether both found the same errors.
//!
//! Run: `cargo bench --bench check_vs_cli` (pyright from `.tools/`, see scripts/).
//! `BENCH_FILES` sets N.
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and measurements fail loudly

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use common::LSPGATE;

fn files() -> usize {
    std::env::var("BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

fn generate(dir: &Path, n: usize) {
    std::fs::write(dir.join("pyproject.toml"), "[project]\nname = \"bench\"\n").unwrap();
    std::fs::create_dir_all(dir.join("pkg")).unwrap();
    std::fs::write(dir.join("pkg/__init__.py"), "").unwrap();
    for i in 0..n {
        let import = if i > 0 {
            format!("from pkg.m{} import f{}\n", i - 1, i - 1)
        } else {
            String::new()
        };
        let call = if i > 0 {
            format!("    return f{}(x) + 1\n", i - 1)
        } else {
            "    return x\n".to_string()
        };
        let bad = if i == n / 2 { "\nwrong: str = 1\n" } else { "" };
        std::fs::write(
            dir.join(format!("pkg/m{i}.py")),
            format!("{import}\n\ndef f{i}(x: int) -> int:\n{call}{bad}"),
        )
        .unwrap();
    }
}

fn main() {
    let path = common::tools_path();
    let n = files();
    let ws = tempfile::tempdir().unwrap();
    generate(ws.path(), n);

    let t = Instant::now();
    let ours = Command::new(LSPGATE)
        .env("LSPGATE_STANDALONE", "1")
        .args(["check", "--json"])
        .current_dir(ws.path())
        .env("PATH", &path)
        .output()
        .expect("run lspgate");
    let ours_time = t.elapsed();
    let report: serde_json::Value = serde_json::from_slice(&ours.stdout).unwrap_or_default();

    let t = Instant::now();
    let theirs = Command::new("pyright")
        .args(["--outputjson"])
        .current_dir(ws.path())
        .env("PATH", &path)
        .output();
    let theirs_time = t.elapsed();
    if cfg!(debug_assertions) {
        println!("(a debug build, as `cargo test` makes it: figures are not representative)");
    }
    println!("check over {n} files (one run each)");
    println!("| checker | wall time | errors found |");
    println!("|---|---|---|");
    println!(
        "| lspgate check (pyright behind it) | {:.2} s | {} |",
        ours_time.as_secs_f64(),
        report["summary"]["errors"]
    );
    match theirs {
        Ok(out) => {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            println!(
                "| pyright CLI | {:.2} s | {} |",
                theirs_time.as_secs_f64(),
                v["summary"]["errorCount"]
            );
            let ratio = ours_time.as_secs_f64() / theirs_time.as_secs_f64();
            println!("ratio lspgate / pyright CLI: {ratio:.2}×");
            println!(
                "target (no slower than the server's own CLI): {}",
                if ratio <= 1.0 { "met" } else { "MISSED" }
            );
        }
        Err(e) => println!("| pyright CLI | not run: {e} | |"),
    }
}
