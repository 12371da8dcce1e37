//! The Go part of the real-repositories bench (issue 41): cobra 1.8.1 and golang.org/x/tools
//! v0.40.0, fetched by module name from the Go module proxy (`go mod download -json`, the
//! read-only `Dir` copied to `target/bench-projects/`), with gopls from `.tools/go/bin`.
//!
//! - cold `check` (a new lspgate and gopls) against `go vet ./...`, each with a new build
//!   cache and a new gopls cache (nothing of an earlier run reused), interleaved, medians;
//! - a new session's first `workspace_symbols` for a struct and first `references` to it:
//!   time from spawning lspgate, and whether the answer is complete;
//! - warm `references` to that struct through lspgate (MCP over stdio) against a direct gopls
//!   client on the same tree, the sides taking turns: medians.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::{Value, json};

use super::common::{Direct, Gate};
use super::{Row, call, copy, fmt_s, median, repo, row, stop, timed};

struct Module {
    repo: &'static str,
    module: &'static str,
    version: &'static str,
    /// A widely used struct: its file and name (its line is found in the file).
    class: (&'static str, &'static str),
}

const MODULES: [Module; 2] = [
    Module {
        repo: "cobra 1.8.1",
        module: "github.com/spf13/cobra",
        version: "v1.8.1",
        class: ("command.go", "Command"),
    },
    Module {
        repo: "x/tools 0.40.0",
        module: "golang.org/x/tools",
        version: "v0.40.0",
        class: ("go/packages/packages.go", "Package"),
    },
];

/// Go's environment for the bench: the test setup's GOPATH (its module cache), the proxy for
/// what it lacks, and `cache` as the build cache and gopls's cache.
fn go_env(cache: &Path) -> Vec<(String, String)> {
    let tools = repo().join(".tools/go");
    [
        ("GOPATH", tools.display().to_string()),
        ("GOFLAGS", "-modcacherw".into()),
        ("GOSUMDB", "off".into()),
        ("GOTOOLCHAIN", "local".into()),
        ("GOCACHE", cache.join("go-build").display().to_string()),
        ("XDG_CACHE_HOME", cache.display().to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn with_env<'a>(cmd: &'a mut Command, env: &[(String, String)], path: &str) -> &'a mut Command {
    cmd.env("PATH", path)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// The module's tree, fetched once into `target/bench-projects/` (cobra from the test setup's
/// `.tools/projects` when there).
fn project(m: &Module, path: &str) -> PathBuf {
    let name = format!(
        "{}-{}",
        m.module.rsplit('/').next().unwrap_or(m.module),
        m.version
    );
    let cached = repo().join(".tools/projects/cobra-1.8.1");
    if m.module.ends_with("cobra") && cached.is_dir() {
        return cached;
    }
    let dest = repo().join("target/bench-projects").join(&name);
    if dest.join("go.mod").is_file() {
        return dest;
    }
    let scratch = tempfile::tempdir().expect("a scratch folder");
    let env = go_env(scratch.path());
    let out = with_env(
        Command::new("go").args([
            "mod",
            "download",
            "-json",
            &format!("{}@{}", m.module, m.version),
        ]),
        &env,
        path,
    )
    .current_dir(scratch.path())
    .output()
    .expect("running go mod download");
    let info: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let dir = info["Dir"].as_str().unwrap_or_else(|| {
        panic!(
            "go mod download {}@{}: {}",
            m.module,
            m.version,
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let part = dest.with_extension("part");
    let _ = std::fs::remove_dir_all(&part);
    std::fs::create_dir_all(dest.parent().expect("a parent")).expect("target/bench-projects");
    let ok = Command::new("cp")
        .args(["-r", dir])
        .arg(&part)
        .status()
        .is_ok_and(|s| s.success())
        && Command::new("chmod")
            .args(["-R", "u+w"])
            .arg(&part)
            .status()
            .is_ok_and(|s| s.success())
        && with_env(Command::new("go").args(["mod", "download"]), &env, path)
            .current_dir(&part)
            .status()
            .is_ok_and(|s| s.success());
    assert!(ok, "could not fetch {} {}", m.module, m.version);
    std::fs::rename(&part, &dest).expect("moving the fetched tree in place");
    dest
}

/// The 1-based line and 0-based column of `type NAME struct` in `file`.
fn declared(root: &Path, file: &str, name: &str) -> (u32, u32) {
    let text = std::fs::read_to_string(root.join(file)).expect("reading the struct's file");
    let needle = format!("type {name} struct");
    text.lines()
        .enumerate()
        .find(|(_, l)| l.starts_with(&needle))
        .map(|(n, _)| (n as u32 + 1, 5))
        .unwrap_or_else(|| panic!("no `{needle}` in {file}"))
}

/// Measures every module; `runs` cold runs per side; with `refs_only`, warm references alone.
pub(crate) fn run(path: &str, runs: usize, exe: &str, refs_only: bool, rows: &mut Vec<Row>) {
    let gopls = repo().join(".tools/go/bin/gopls");
    assert!(
        gopls.is_file(),
        "{} is missing: run scripts/install-test-servers.sh",
        gopls.display()
    );
    let path = format!("{}:{path}", repo().join(".tools/go/bin").display());
    let path = path.as_str();
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    for m in MODULES
        .iter()
        .filter(|m| only.is_empty() || m.repo.contains(only.as_str()))
    {
        let src = project(m, path);
        if !refs_only {
            cold(m, &src, path, runs, exe, rows);
            first_answers(m, &src, path, rows);
        }
        warm_references(m, &src, path, &gopls, rows);
    }
}

fn cold(m: &Module, src: &Path, path: &str, runs: usize, exe: &str, rows: &mut Vec<Row>) {
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut found = (String::new(), String::new());
    for _ in 0..runs {
        let ws = copy(src);
        let cache = tempfile::tempdir().expect("a cache folder");
        let r = timed(
            with_env(
                Command::new(exe).args(["check", "--json"]),
                &go_env(cache.path()),
                path,
            )
            .current_dir(ws.path())
            .env("LSPGATE_STANDALONE", "1"),
        );
        let report: Value = serde_json::from_str(&r.stdout).unwrap_or_default();
        found.0 = format!(
            "{} files, {} errors, {} warnings",
            report["summary"]["files"], report["summary"]["errors"], report["summary"]["warnings"]
        );
        ours.push((r.wall, r.cpu));
        let ws = copy(src);
        let cache = tempfile::tempdir().expect("a cache folder");
        let started = Instant::now();
        let out = with_env(
            Command::new("go").args(["vet", "./..."]),
            &go_env(cache.path()),
            path,
        )
        .current_dir(ws.path())
        .output()
        .expect("running go vet");
        let wall = started.elapsed().as_secs_f64();
        let said = String::from_utf8_lossy(&out.stderr);
        found.1 = format!(
            "{} lines, exit {}",
            said.lines().filter(|l| !l.starts_with('#')).count(),
            out.status.code().unwrap_or(-1)
        );
        theirs.push(wall);
    }
    let ow = median(ours.iter().map(|r| r.0).collect());
    let tw = median(theirs);
    rows.push(row(
        m.repo,
        &format!(
            "cold check against `go vet ./...`, new caches, wall (median of {runs}; {})",
            found.0
        ),
        fmt_s(ow),
        format!("{} ({})", fmt_s(tw), found.1),
        format!("{:.2}×", ow / tw),
    ));
}

fn first_answers(m: &Module, src: &Path, path: &str, rows: &mut Vec<Row>) {
    let (file, name) = m.class;
    let ws = copy(src);
    let cache = tempfile::tempdir().expect("a cache folder");
    let env = go_env(cache.path());
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let t = Instant::now();
    let mut gate = Gate::start_with_env(&[], ws.path(), path, &env);
    let (r, _, _) = call(&mut gate, "workspace_symbols", json!({"query": name}));
    let secs = t.elapsed().as_secs_f64();
    let top = &r["symbols"][0];
    let (line, _) = declared(ws.path(), file, name);
    let (refs, _, took) = call(
        &mut gate,
        "references",
        json!({"file": file, "line": line, "symbol": name}),
    );
    stop(gate);
    let state = |v: &Value| {
        if v["partial"] == true {
            "partial"
        } else {
            "complete"
        }
    };
    rows.push(row(
        m.repo,
        &format!("first `workspace_symbols` for `{name}` in a new session, new caches"),
        format!(
            "{} ({}; first: {} {} in {})",
            fmt_s(secs),
            state(&r),
            top["kind"].as_str().unwrap_or("?"),
            top["name"].as_str().unwrap_or("?"),
            top["file"].as_str().unwrap_or("?")
        ),
        "n/a".into(),
        String::new(),
    ));
    rows.push(row(
        m.repo,
        &format!("then `references` to `{name}` ({} found)", refs["total"]),
        format!("{} ({})", fmt_s(took), state(&refs)),
        "n/a".into(),
        String::new(),
    ));
}

/// How long both sides are asked, untimed, before the warm references are timed.
const WARM_UP: std::time::Duration = std::time::Duration::from_secs(5);

fn warm_references(m: &Module, src: &Path, path: &str, gopls: &Path, rows: &mut Vec<Row>) {
    let (file, name) = m.class;
    let ws = copy(src);
    let copied = Instant::now();
    let cache = tempfile::tempdir().expect("a cache folder");
    let env = go_env(cache.path());
    let (line, column) = declared(ws.path(), file, name);
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut gate = Gate::start_with_env(&[], ws.path(), path, &pairs);
    let args = json!({"file": file, "line": line, "symbol": name, "limit": 1000});
    let (r, _, _) = call(&mut gate, "references", args.clone());
    let ours_total = r["total"].as_u64().unwrap_or(0);
    // The direct client: gopls under the same environment, the file opened, asked until its
    // answer holds as many locations as lspgate's (it loads packages first).
    let mut cmd = vec!["env".to_string(), format!("PATH={path}")];
    cmd.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
    cmd.push(gopls.display().to_string());
    let mut direct = Direct::start(&cmd, ws.path());
    let uri = url::Url::from_file_path(ws.path().join(file)).expect("a file URI");
    let text = std::fs::read_to_string(ws.path().join(file)).expect("reading the file");
    direct.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "go", "version": 1, "text": text}}),
    );
    let params = json!({"textDocument": {"uri": uri},
        "position": {"line": line - 1, "character": column},
        "context": {"includeDeclaration": true}});
    let mut theirs_total = 0;
    let deadline = Instant::now() + std::time::Duration::from_secs(300);
    while Instant::now() < deadline {
        let a = direct.request("textDocument/references", params.clone());
        theirs_total = a["result"].as_array().map_or(0, Vec::len) as u64;
        if theirs_total >= ours_total {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // Warm means settled and started: the copy's files changed within `SETTLE` are read afresh
    // at each call (a write in the same clock tick could share their version), and a new
    // session's first seconds hold its start's work (the first answers are the row above). Both
    // sides are asked, untimed, until then and for `WARM_UP` at least.
    let warm_until = (copied + lspgate::watch::SETTLE).max(Instant::now()) + WARM_UP;
    while Instant::now() < warm_until {
        call(&mut gate, "references", args.clone());
        direct.request("textDocument/references", params.clone());
    }
    let n: usize = std::env::var("BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let (_, _, s) = call(&mut gate, "references", args.clone());
        ours.push(s);
        let t = Instant::now();
        direct.request("textDocument/references", params.clone());
        theirs.push(t.elapsed().as_secs_f64());
    }
    stop(gate);
    drop(direct);
    let (o, t) = (median(ours), median(theirs));
    rows.push(row(
        m.repo,
        &format!(
            "warm `references` to `{name}`, median of {n} (lspgate {ours_total}, direct {theirs_total} locations)"
        ),
        format!("{:.1} ms", o * 1e3),
        format!("{:.1} ms (a direct gopls client)", t * 1e3),
        format!("{:.2}×", o / t),
    ));
}
