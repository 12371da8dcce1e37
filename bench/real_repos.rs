//! Benchmark on real repositories the bench fetches itself (nothing of them is committed):
//! Django 5.2 from its PyPI wheel (883 Python files, 87 JavaScript files) and rxjs 7.8.2 from
//! its npm package (TypeScript sources in `src/`); Go modules by name from the Go module proxy
//! (`go.rs`: cobra and golang.org/x/tools with gopls). `.tools/projects/` is reused when the test
//! setup already fetched them; otherwise `pip download` and `npm pack` fill
//! `target/bench-projects/`. Every measure runs on a fresh copy of the tree.
//!
//! Measured, in one table:
//! - cold `check` (a new lspgate, the CLI) against the server's own batch checker on the same
//!   files (`pyright --outputjson`; `tsc --noEmit -p .` with its incremental build info
//!   removed): wall time and CPU time of the whole process tree, runs interleaved, medians;
//! - warm `check` in one MCP session (the same check again; again after a one-line edit of a
//!   widely imported module) against the CLI run again (tsc with its build info);
//! - a new session's first `references` to a widely used class, and its first
//!   `workspace_symbols` for a class name (issue 16): time from spawning lspgate, and whether
//!   the answer is complete (and, for symbols, whether the class is first);
//! - the size in characters of `document_symbols` of a big module and of those `references`
//!   answers, default and terse.
//!
//! Django's check covers its Python files only (`*.js` declared plain text in a config given
//! with `--config`), as pyright's CLI does; rxjs's covers `src` and `dist/types`, what its
//! tsconfig.json covers. Run: `cargo bench --bench real_repos` (servers from `.tools/`, see
//! scripts/install-test-servers.sh). `BENCH_RUNS` sets the cold runs per checker (default 2),
//! `BENCH_ONLY` (`django`, `rxjs`, `cobra`, `tools`) runs one repository.
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and measurements fail loudly

mod common;
#[path = "real_repos/go.rs"]
mod go;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Gate, LSPGATE, tools_path};
use serde_json::{Value, json};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The project's tree: from the test setup's `.tools/projects`, else fetched.
fn project(name: &str) -> PathBuf {
    let cached = repo().join(".tools/projects").join(name);
    if cached.is_dir() {
        return cached;
    }
    let dir = repo().join("target/bench-projects");
    let dest = dir.join(name);
    if dest.is_dir() {
        return dest;
    }
    std::fs::create_dir_all(dir.join("download")).expect("creating target/bench-projects");
    let ok = match name {
        "django-5.2" => {
            let got = Command::new("python3")
                .args([
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--no-deps",
                    "--only-binary=:all:",
                ])
                .arg("django==5.2")
                .arg("-d")
                .arg(dir.join("download"))
                .status()
                .is_ok_and(|s| s.success());
            let wheel = std::fs::read_dir(dir.join("download"))
                .expect("reading the download folder")
                .filter_map(|e| e.ok().map(|e| e.path()))
                .find(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("django-5.2-"))
                });
            got && wheel.is_some_and(|w| {
                Command::new("python3")
                    .args(["-m", "zipfile", "-e"])
                    .arg(w)
                    .arg(&dest)
                    .status()
                    .is_ok_and(|s| s.success())
            })
        }
        "rxjs-7.8.2" => {
            let packed = Command::new("npm")
                .args(["pack", "--silent", "rxjs@7.8.2"])
                .current_dir(dir.join("download"))
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            std::fs::create_dir_all(&dest).expect("creating the project folder");
            packed
                && Command::new("tar")
                    .arg("-xzf")
                    .arg(dir.join("download/rxjs-7.8.2.tgz"))
                    .arg("-C")
                    .arg(&dest)
                    .arg("--strip-components=1")
                    .status()
                    .is_ok_and(|s| s.success())
        }
        _ => false,
    };
    assert!(ok, "could not fetch {name} (pip and npm are needed)");
    dest
}

/// A fresh copy of `src`.
fn copy(src: &Path) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("lspgate-bench-")
        .tempdir()
        .expect("creating a temporary folder");
    let ok = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", src.display()))
        .arg(dir.path())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "copying {}", src.display());
    dir
}

/// Wall and CPU time of a command and every process it started (this process reaps its
/// orphans: it is their subreaper), with its stdout.
struct Timed {
    wall: f64,
    cpu: f64,
    stdout: String,
}

fn children_cpu() -> f64 {
    // SAFETY: getrusage writes into the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// Waits (30 s at most) for every descendant this process has to reap: servers a session left
/// behind must not count in the next measure.
fn reap_all() {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        // SAFETY: reaps any finished child without blocking.
        let r = unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) };
        if r < 0 {
            return; // no children left
        }
        if r == 0 {
            if Instant::now() > deadline {
                eprintln!("real_repos: processes of an earlier measure still run");
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Ends a session as a client would (SIGTERM: lspgate shuts its servers down), then reaps.
fn stop(mut gate: Gate) {
    // SAFETY: signals the child this process spawned and has not yet reaped.
    unsafe { libc::kill(gate.child.id() as libc::pid_t, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline && matches!(gate.child.try_wait(), Ok(None)) {
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(gate);
    reap_all();
}

fn timed(cmd: &mut Command) -> Timed {
    reap_all();
    let before = children_cpu();
    let t = Instant::now();
    let out = cmd.stderr(Stdio::null()).output().expect("run");
    let wall = t.elapsed().as_secs_f64();
    // Orphans (a language server's own children) were handed to this process: reap them, so
    // their CPU time counts.
    reap_all();
    Timed {
        wall,
        cpu: children_cpu() - before,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One row of the table.
struct Row {
    repo: &'static str,
    measure: String,
    lspgate: String,
    theirs: String,
    ratio: String,
}

fn row(repo: &'static str, measure: &str, lspgate: String, theirs: String, ratio: String) -> Row {
    Row {
        repo,
        measure: measure.to_string(),
        lspgate,
        theirs,
        ratio,
    }
}

/// A tool call in an MCP session: its structured result, its text, and how long it took.
fn call(gate: &mut Gate, tool: &str, args: Value) -> (Value, String, f64) {
    let t = Instant::now();
    let r = gate.request("tools/call", json!({"name": tool, "arguments": args}));
    let secs = t.elapsed().as_secs_f64();
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (r["result"]["structuredContent"].clone(), text, secs)
}

struct Case {
    repo: &'static str,
    dir: &'static str,
    /// Whether its JavaScript is left out of the check (pyright's CLI checks Python only).
    python_only: bool,
    /// What lspgate's check covers (nothing: the whole workspace).
    paths: &'static [&'static str],
    /// The server's own checker, and what to remove before a cold run.
    cli: &'static [&'static str],
    cold_leftovers: &'static [&'static str],
    /// A widely used class: file, line, name.
    class: (&'static str, u32, &'static str),
    /// A big module to outline.
    outline: &'static str,
    /// A one-line edit for the warm check: file, text, replacement.
    edit: (&'static str, &'static str, &'static str),
    /// For re-checks (issue 27): a body-only edit of an annotated function in a widely
    /// imported module, then a signature change there that breaks its importers.
    body: (&'static str, &'static str, &'static str),
    signature: (&'static str, &'static str, &'static str),
}

const CASES: [Case; 2] = [
    Case {
        repo: "Django 5.2",
        dir: "django-5.2",
        python_only: true,
        paths: &[],
        cli: &["pyright", "--outputjson"],
        cold_leftovers: &[],
        class: ("django/utils/functional.py", 7, "cached_property"),
        outline: "django/db/models/query.py",
        edit: (
            "django/utils/functional.py",
            "    def __init__(self, func):",
            "    def __init__(self, func, owner_hint):",
        ),
        body: (
            "django/utils/functional.py",
            "        res = instance.__dict__[self.name] = self.func(instance)",
            "        value = self.func(instance)\n        res = instance.__dict__[self.name] = value",
        ),
        signature: (
            "django/utils/functional.py",
            "    def __init__(self, func):",
            "    def __init__(self, func, owner_hint):",
        ),
    },
    Case {
        repo: "rxjs 7.8.2",
        dir: "rxjs-7.8.2",
        python_only: false,
        paths: &["src", "dist/types"],
        cli: &["tsc", "--noEmit", "-p", "."],
        cold_leftovers: &["tsconfig.tsbuildinfo"],
        class: ("src/internal/Observable.ts", 15, "Observable"),
        outline: "src/internal/Observable.ts",
        edit: (
            "src/internal/util/isFunction.ts",
            "export function isFunction(value: any): value is (...args: any[]) => any {",
            "export function isFunction(value: any, strict: boolean): value is (...args: any[]) => any {",
        ),
        body: (
            "src/internal/util/lift.ts",
            "throw new TypeError('Unable to lift unknown Observable type');",
            "const why = 'Unable to lift unknown Observable type';\n    throw new TypeError(why);",
        ),
        signature: (
            "src/internal/util/lift.ts",
            "=> (() => void) | void\n):",
            "=> (() => void) | void,\n  name: string\n):",
        ),
    },
];

/// lspgate's flags for a case: a config declaring JavaScript plain text when the comparison
/// is with a Python-only checker.
fn config(case: &Case, root: &Path) -> Vec<String> {
    if !case.python_only {
        return Vec::new();
    }
    let file = root.join("bench-lspgate.toml");
    std::fs::write(&file, "[languages]\n\"*.js\" = \"plaintext\"\n")
        .expect("writing the bench config");
    vec!["--config".into(), file.to_string_lossy().into_owned()]
}

fn fmt_s(s: f64) -> String {
    format!("{s:.1} s")
}

fn main() {
    // SAFETY: makes this process the reaper of its descendants' orphans (see `timed`).
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    // `cargo test --all-targets` runs this too, without `--bench`: there it only makes sure the
    // projects are at hand (the measures take minutes and a debug build says nothing).
    if !std::env::args().any(|a| a == "--bench") && std::env::var_os("BENCH_RUNS").is_none() {
        for case in &CASES {
            project(case.dir);
        }
        println!("real_repos: projects at hand; `cargo bench --bench real_repos` measures");
        return;
    }
    let path = tools_path();
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let exe = std::env::var("BENCH_LSPGATE").unwrap_or_else(|_| LSPGATE.to_string());
    if cfg!(debug_assertions) {
        println!("(a debug build, as `cargo test` makes it: figures are not representative)");
    }
    let mut rows = Vec::new();
    // BENCH_ONLY=django or rxjs runs one repository.
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    // BENCH_PART=hints measures inlay hints alone; BENCH_PART=refs Go's warm references alone.
    let part = std::env::var("BENCH_PART").unwrap_or_default();
    for case in CASES.iter().filter(|c| c.dir.contains(only.as_str())) {
        let src = project(case.dir);
        if part == "hints" {
            hints(case, &src, &path, &mut rows);
            continue;
        }
        if part == "refs" {
            continue;
        }
        // Cold checks, interleaved: lspgate, the CLI, lspgate, the CLI, …
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        let mut found = (String::new(), String::new());
        for _ in 0..runs {
            let ws = copy(&src);
            let flags = config(case, ws.path());
            let r = timed(
                Command::new(&exe)
                    .args(&flags)
                    .args(["check", "--json"])
                    .args(case.paths)
                    .current_dir(ws.path())
                    // Cold: its own servers, not a per-user daemon's warm ones.
                    .env("LSPGATE_STANDALONE", "1")
                    .env("PATH", &path),
            );
            let report: Value = serde_json::from_str(&r.stdout).unwrap_or_default();
            found.0 = format!(
                "{} files, {} errors",
                report["summary"]["files"], report["summary"]["errors"]
            );
            ours.push((r.wall, r.cpu));
            let ws = copy(&src);
            for f in case.cold_leftovers {
                let _ = std::fs::remove_file(ws.path().join(f));
            }
            let r = timed(
                Command::new(case.cli[0])
                    .args(&case.cli[1..])
                    .current_dir(ws.path())
                    .env("PATH", &path),
            );
            found.1 = match serde_json::from_str::<Value>(&r.stdout) {
                Ok(v) => format!(
                    "{} files, {} errors",
                    v["summary"]["filesAnalyzed"], v["summary"]["errorCount"]
                ),
                Err(_) => format!(
                    "{} error lines",
                    r.stdout.lines().filter(|l| l.contains("error TS")).count()
                ),
            };
            theirs.push((r.wall, r.cpu));
        }
        let (ow, oc) = (
            median(ours.iter().map(|r| r.0).collect()),
            median(ours.iter().map(|r| r.1).collect()),
        );
        let (tw, tc) = (
            median(theirs.iter().map(|r| r.0).collect()),
            median(theirs.iter().map(|r| r.1).collect()),
        );
        rows.push(row(
            case.repo,
            &format!("cold check, wall (median of {runs}; {})", found.0),
            fmt_s(ow),
            format!("{} ({})", fmt_s(tw), found.1),
            format!("{:.2}×", ow / tw),
        ));
        rows.push(row(
            case.repo,
            "cold check, CPU of every process",
            fmt_s(oc),
            fmt_s(tc),
            format!("{:.2}×", oc / tc),
        ));

        // Warm: one session, the same check again, then after a one-line edit.
        let ws = copy(&src);
        let flags = config(case, ws.path());
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let scope = if case.paths.is_empty() {
            json!({"limit": 1})
        } else {
            json!({"paths": case.paths, "limit": 1})
        };
        let mut gate = Gate::start_with(&flags, &[], ws.path(), &path, &[]);
        let (_, _, first) = call(&mut gate, "check", scope.clone());
        let (_, _, again) = call(&mut gate, "check", scope.clone());
        let file = ws.path().join(case.edit.0);
        let text = std::fs::read_to_string(&file).expect("reading the file to edit");
        assert!(text.contains(case.edit.1), "{}: edit anchor", case.edit.0);
        std::fs::write(&file, text.replacen(case.edit.1, case.edit.2, 1))
            .expect("writing the edit");
        let (after, _, edited) = call(&mut gate, "check", scope);
        stop(gate);
        let tsc_warm = if case.cold_leftovers.is_empty() {
            None
        } else {
            // tsc's own warm run: its incremental build info from a first run.
            let ws = copy(&src);
            timed(
                Command::new(case.cli[0])
                    .args(&case.cli[1..])
                    .current_dir(ws.path())
                    .env("PATH", &path),
            );
            Some(
                timed(
                    Command::new(case.cli[0])
                        .args(&case.cli[1..])
                        .current_dir(ws.path())
                        .env("PATH", &path),
                )
                .wall,
            )
        };
        let warm_theirs = tsc_warm.unwrap_or(tw);
        let warm_label = if tsc_warm.is_some() {
            "run again with its build info"
        } else {
            "no warm mode: a run is cold"
        };
        rows.push(row(
            case.repo,
            &format!("warm check, same session (first there: {})", fmt_s(first)),
            fmt_s(again),
            format!("{} ({warm_label})", fmt_s(warm_theirs)),
            format!("{:.2}×", again / warm_theirs),
        ));
        rows.push(row(
            case.repo,
            &format!(
                "check after a one-line edit of `{}` ({} errors then)",
                case.edit.0, after["summary"]["errors"]
            ),
            fmt_s(edited),
            fmt_s(warm_theirs),
            format!("{:.2}×", edited / warm_theirs),
        ));

        recheck(case, &src, &path, &mut rows);
        hints(case, &src, &path, &mut rows);

        // A new session's first answers.
        let (file, line, name) = case.class;
        let ws = copy(&src);
        let t = Instant::now();
        let mut gate = Gate::start(&[], ws.path(), &path);
        let refs = json!({"file": file, "line": line, "symbol": name});
        let (r, text, _) = call(&mut gate, "references", refs.clone());
        let first_refs = t.elapsed().as_secs_f64();
        let complete = r["partial"] != true;
        let (_, terse, _) = call(
            &mut gate,
            "references",
            json!({"file": file, "line": line, "symbol": name, "terse": true}),
        );
        let refs_total = r["total"].clone();
        let (o, outline, _) = call(&mut gate, "document_symbols", json!({"file": case.outline}));
        let (_, outline_terse, _) = call(
            &mut gate,
            "document_symbols",
            json!({"file": case.outline, "terse": true}),
        );
        stop(gate);
        rows.push(row(
            case.repo,
            &format!("first `references` to `{name}` in a new session ({refs_total} found)"),
            format!(
                "{} ({})",
                fmt_s(first_refs),
                if complete { "complete" } else { "partial" }
            ),
            "n/a".into(),
            String::new(),
        ));
        rows.push(row(
            case.repo,
            &format!("`references` to `{name}`: characters, default / terse"),
            format!("{} / {}", text.chars().count(), terse.chars().count()),
            "n/a".into(),
            String::new(),
        ));
        rows.push(row(
            case.repo,
            &format!(
                "`document_symbols` of `{}` ({} symbols): characters, default / terse",
                case.outline, o["total"]
            ),
            format!(
                "{} / {}",
                outline.chars().count(),
                outline_terse.chars().count()
            ),
            "n/a".into(),
            String::new(),
        ));
        let ws = copy(&src);
        let t = Instant::now();
        let mut gate = Gate::start(&[], ws.path(), &path);
        let query = if case.dir.starts_with("django") {
            "QuerySet"
        } else {
            "Subject"
        };
        let (r, _, _) = call(&mut gate, "workspace_symbols", json!({"query": query}));
        let secs = t.elapsed().as_secs_f64();
        stop(gate);
        let top = &r["symbols"][0];
        rows.push(row(
            case.repo,
            &format!("first `workspace_symbols` for `{query}` in a new session"),
            format!(
                "{} ({}; first: {} {} in {})",
                fmt_s(secs),
                if r["partial"] == true {
                    "partial"
                } else {
                    "complete"
                },
                top["kind"].as_str().unwrap_or("?"),
                top["name"].as_str().unwrap_or("?"),
                top["file"].as_str().unwrap_or("?")
            ),
            "n/a".into(),
            String::new(),
        ));
    }
    if part.is_empty() || part == "refs" {
        go::run(&path, runs, &exe, part == "refs", &mut rows);
    }
    println!("| repository | measure | lspgate | server's own CLI | ratio |");
    println!("|---|---|---|---|---|");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {} |",
            r.repo, r.measure, r.lspgate, r.theirs, r.ratio
        );
    }
}

/// Applies `(file, old, new)` under `root`.
fn apply(root: &Path, (file, old, new): (&str, &str, &str)) {
    let path = root.join(file);
    let text = std::fs::read_to_string(&path).expect("reading the file to edit");
    assert!(text.contains(old), "{file}: edit anchor `{old}`");
    std::fs::write(&path, text.replacen(old, new, 1)).expect("writing the edit");
}

/// Error lines (file, line) of a check report.
fn error_lines(report: &Value) -> std::collections::BTreeSet<(String, u64)> {
    // CheckReport v2: `files: [{file, diagnostics: [{severity, items: [[line, …]]}]}]`.
    let list = |v: &Value| v.as_array().map(|a| a.to_vec()).unwrap_or_default();
    let mut out = std::collections::BTreeSet::new();
    for f in list(&report["files"]) {
        let file = f["file"].as_str().unwrap_or("").to_string();
        for g in list(&f["diagnostics"])
            .iter()
            .filter(|g| g["severity"] == "error")
        {
            for item in list(&g["items"]) {
                out.insert((file.clone(), item[0].as_u64().unwrap_or(0)));
            }
        }
    }
    out
}

/// Error lines (file, line) of tsc's output (`file(line,col): error TS…`).
fn tsc_error_lines(out: &str) -> std::collections::BTreeSet<(String, u64)> {
    out.lines()
        .filter(|l| l.contains("): error TS"))
        .filter_map(|l| {
            let (file, rest) = l.split_once('(')?;
            let line = rest.split(',').next()?.parse().ok()?;
            Some((file.to_string(), line))
        })
        .collect()
}

/// Re-checks in one session after a plain write (issue 27): a body-only edit, then a signature
/// change, each timed with reuse and with every file asked again (`LSPGATE_RECHECK=all`, as
/// before), against the CLI run after the same edit (tsc with its incremental build info).
fn recheck(case: &Case, src: &Path, path: &str, rows: &mut Vec<Row>) {
    let scope = if case.paths.is_empty() {
        json!({"limit": 100000})
    } else {
        json!({"paths": case.paths, "limit": 100000})
    };
    // (edited seconds, report) for the body edit and the signature change, per mode.
    let mut measured: Vec<(f64, Value, f64, Value)> = Vec::new();
    for every in [false, true] {
        let ws = copy(src);
        let flags = config(case, ws.path());
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let env: &[(&str, &str)] = if every {
            &[("LSPGATE_RECHECK", "all")]
        } else {
            &[]
        };
        let mut gate = Gate::start_with(&flags, &[], ws.path(), path, env);
        call(&mut gate, "check", scope.clone());
        call(&mut gate, "check", scope.clone());
        apply(ws.path(), case.body);
        let (body, _, body_secs) = call(&mut gate, "check", scope.clone());
        apply(ws.path(), case.signature);
        let (sig, _, sig_secs) = call(&mut gate, "check", scope.clone());
        stop(gate);
        measured.push((body_secs, body, sig_secs, sig));
    }
    let [
        (body_secs, body, sig_secs, sig),
        (body_all, body_ref, sig_all, sig_ref),
    ] = <[_; 2]>::try_from(measured).unwrap_or_else(|_| unreachable!("two modes"));
    let same = |a: &Value, b: &Value| {
        if error_lines(a) == error_lines(b) {
            "same errors"
        } else {
            "ERRORS DIFFER"
        }
    };
    // The CLI after the same edits, warm (tsc: its build info from a first run); pyright has
    // no warm mode.
    let (cli_body, cli_sig, cli_errors) = if case.cold_leftovers.is_empty() {
        (None, None, None)
    } else {
        let ws = copy(src);
        let run = || {
            timed(
                Command::new(case.cli[0])
                    .args(&case.cli[1..])
                    .current_dir(ws.path())
                    .env("PATH", path),
            )
        };
        run();
        apply(ws.path(), case.body);
        let b = run();
        apply(ws.path(), case.signature);
        let s = run();
        (Some(b.wall), Some(s.wall), Some(tsc_error_lines(&s.stdout)))
    };
    let reused = |r: &Value| r["summary"]["reused"].as_u64().unwrap_or(0);
    rows.push(row(
        case.repo,
        &format!(
            "re-check after a body-only edit of `{}` ({} files reused of {}; {} vs every file asked again)",
            case.body.0,
            reused(&body),
            body["summary"]["files"],
            same(&body, &body_ref)
        ),
        format!("{} (every file asked: {})", fmt_s3(body_secs), fmt_s3(body_all)),
        cli_body.map_or("n/a".into(), |t| format!("{} (after the same edit)", fmt_s3(t))),
        match cli_body {
            Some(t) => format!("{:.2}× ({:.2}× asking every file)", body_secs / t, body_all / t),
            None => format!("{:.2}× of asking every file", body_secs / body_all),
        },
    ));
    let vs_cli = match &cli_errors {
        Some(theirs) => {
            let ours = error_lines(&sig);
            if &ours == theirs {
                format!("; the same {} error lines as tsc", ours.len())
            } else {
                format!(
                    "; ERROR LINES DIFFER from tsc: {} ours only, {} tsc's only",
                    ours.difference(theirs).count(),
                    theirs.difference(&ours).count()
                )
            }
        }
        None => String::new(),
    };
    rows.push(row(
        case.repo,
        &format!(
            "re-check after a signature change of `{}` ({} errors; {} files reused; {} vs every file asked again{vs_cli})",
            case.signature.0,
            sig["summary"]["errors"],
            reused(&sig),
            same(&sig, &sig_ref)
        ),
        format!("{} (every file asked: {})", fmt_s3(sig_secs), fmt_s3(sig_all)),
        cli_sig.map_or("n/a".into(), |t| format!("{} (after the same edit)", fmt_s3(t))),
        match cli_sig {
            Some(t) => format!("{:.2}× ({:.2}× asking every file)", sig_secs / t, sig_all / t),
            None => format!("{:.2}× of asking every file", sig_secs / sig_all),
        },
    ));
}

/// One `inlay_hints` page of the outline file (its first 200 lines) against what an agent
/// would do without it: hover each hinted name, one call each (same session, warm).
fn hints(case: &Case, src: &Path, path: &str, rows: &mut Vec<Row>) {
    let ws = copy(src);
    let mut gate = Gate::start(&[], ws.path(), path);
    let page = json!({"file": case.outline});
    // The first call warms the server; the second is measured.
    call(&mut gate, "inlay_hints", page.clone());
    let (h, text, secs) = call(&mut gate, "inlay_hints", page);
    let mut names = Vec::new();
    for l in h["lines"].as_array().into_iter().flatten() {
        for hint in l["hints"].as_array().into_iter().flatten() {
            if hint[2] == "type" && hint[1].as_str().is_some_and(|s| s.starts_with(':')) {
                let col = hint[0].as_u64().unwrap_or(2).saturating_sub(1).max(1);
                names.push((l["line"].clone(), col));
            }
        }
    }
    let hints: usize = h["lines"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| l["hints"].as_array().map_or(0, Vec::len))
        .sum();
    let mut one_by_one = 0.0;
    for (line, column) in &names {
        let (_, _, s) = call(
            &mut gate,
            "hover",
            json!({"file": case.outline, "line": line, "column": column}),
        );
        one_by_one += s;
    }
    stop(gate);
    let how = h["derived"].as_str().map_or("the server's", |_| "derived");
    rows.push(row(
        case.repo,
        &format!(
            "`inlay_hints` of `{}` lines {}-{} ({hints} hints, {how}; {} characters) vs hovering its {} typed names one by one",
            case.outline,
            h["first_line"],
            h["last_line"],
            text.chars().count(),
            names.len()
        ),
        fmt_s3(secs),
        format!("{} (lspgate `hover` ×{})", fmt_s3(one_by_one), names.len()),
        if one_by_one > 0.0 {
            format!("{:.2}×", secs / one_by_one)
        } else {
            String::new()
        },
    ));
}

fn fmt_s3(s: f64) -> String {
    format!("{s:.3} s")
}
