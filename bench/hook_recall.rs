//! Benchmark: how many of the errors an agent's edit introduces the harness hooks name (issue
//! 38), on a copy of Django 5.2 with pyright warm in the per-user daemon. Edits of six kinds
//! (`hook_recall/cases.rs`: a body-only change, an error in the written file, a signature other
//! modules call, a rename or delete of an imported name, a comment, a fix of the session's
//! previous error) sent as Claude Code sends them: one `lspgate hook` process per event, the
//! pre-edit hook before each `Edit`, the post-edit hook after it, a `Bash` call's hooks as the
//! session's next answers (what the importers' background check found late comes with them),
//! the turn-end gate (`hook stop`), then the edit undone with its own hooks. The truth is
//! pyright's CLI before and after each edit (`hook_recall/truth.rs`); each finding matched by
//! file, severity, first line of its message and the text of its line, repeats counted.
//!
//! Prints, per kind and in all: recall of the post-edit answer alone and with the later
//! answers, the gate's recall, false positives, whether comment edits were silent, p50/p95 of
//! the hooks and the post-edit's ratio to `lspgate diagnostics FILE` after the same write; then
//! each miss and each false positive.
//!
//! Run: `cargo bench --bench hook_recall` (pyright from `.tools/`, see scripts/). Knobs:
//! `BENCH_KINDS=body,local,...` (a subset), `BENCH_PER_KIND=N` (the first N of each kind: a
//! quick smoke run), `BENCH_LATER_WAIT` (seconds the later answers are waited for, default 30),
//! `BENCH_WARM_WAIT` (seconds the session start's baseline pass is waited for, default 900),
//! `BENCH_LOG` (the daemon's `LSPGATE_LOG`, default `lspgate=info`; with `BENCH_KEEP_LOG=FILE`).
//! Skipped under `cargo test`'s smoke run, as the other pyright benches are.

#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and measurements fail loudly

#[path = "hook_recall/cases.rs"]
mod cases;
mod common;
#[path = "hook_recall/report.rs"]
mod report;
use report::{drain, report};
#[path = "hook_recall/truth.rs"]
mod truth;

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cases::{CASES, Case, KINDS, Kind};
use truth::{Item, Key, Truth};

struct Env {
    path: String,
    runtime: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Env {
    /// Runs `lspgate ARGS` in `root` with `stdin`: its wall time and stdout.
    fn run(&self, root: &Path, args: &[&str], stdin: &str) -> (Duration, String) {
        let t = Instant::now();
        let mut child = Command::new(common::LSPGATE)
            .current_dir(root)
            .env("PATH", &self.path)
            .env("XDG_RUNTIME_DIR", self.runtime.path())
            .env("LSPGATE_HOME", self.home.path())
            .env("LSPGATE_STANDALONE", "0")
            .env("LSPGATE_IDLE_EXIT", "600")
            .env(
                "LSPGATE_LOG",
                std::env::var("BENCH_LOG").unwrap_or_else(|_| "lspgate=info".into()),
            )
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("lspgate runs");
        if let Some(mut i) = child.stdin.take() {
            let _ = i.write_all(stdin.as_bytes());
        }
        let out = child.wait_with_output().expect("lspgate ends");
        (
            t.elapsed(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.home.path().join("daemon.log")).unwrap_or_default()
    }
}

/// A named finding: which part of an answer, and what it says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Introduced,
    Present,
    Later,
    Gate,
}

/// A finding of a server other than pyright (ruff's codes): not scored against pyright's
/// truth, listed.
struct Other {
    part: Part,
    code: String,
    item: Item,
}

struct Named {
    part: Part,
    item: Item,
}

/// The findings an answer names (`file:line:col severity message [code]` lines), by part:
/// pyright's, and other servers'.
fn parse_all(root: &Path, stdout: &str) -> (Vec<Named>, Vec<Other>) {
    let stdout = stdout.trim();
    if stdout.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let v: serde_json::Value = serde_json::from_str(stdout).unwrap_or_default();
    let report = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .or(v["reason"].as_str())
        .unwrap_or("");
    let line_re =
        regex::Regex::new(r"^(\S+):(\d+):(\d+) (error|warning|info|hint) (.*)$").expect("a regex");
    let code_re = regex::Regex::new(r" \[([A-Za-z0-9_-]+)\]$").expect("a regex");
    let mut part = None;
    let (mut out, mut other) = (Vec::new(), Vec::new());
    for l in report.lines() {
        if l.starts_with("lspgate: ") {
            part = if l.contains("this edit introduced") {
                Some(Part::Introduced)
            } else if l.contains("after the edit (") {
                Some(Part::Present)
            } else if l.contains("since your edit of") {
                Some(Part::Later)
            } else if l.contains("your edits this session introduced") {
                Some(Part::Gate)
            } else {
                None
            };
            continue;
        }
        let (Some(p), Some(c)) = (part, line_re.captures(l)) else {
            continue;
        };
        let file = c[1].to_string();
        let line: usize = c[2].parse().unwrap_or(0);
        let code = code_re
            .captures(&c[5])
            .map(|k| k[1].to_string())
            .unwrap_or_default();
        let message = code_re.replace(&c[5], "").trim_end_matches('…').to_string();
        let item = Item {
            text: truth::line_text(root, &file, line),
            file,
            line,
            severity: c[4].to_string(),
            message: truth::first_line(&message),
        };
        if code.is_empty() || code.starts_with("report") {
            out.push(Named { part: p, item });
        } else {
            other.push(Other {
                part: p,
                code,
                item,
            });
        }
    }
    (out, other)
}

/// Matches `named` against `truth`: the hits, and what was named that the truth has not.
fn score<'a>(
    truth: &mut HashMap<Key, usize>,
    named: impl IntoIterator<Item = &'a Named>,
) -> (usize, Vec<Item>) {
    let (mut hits, mut fps) = (0, Vec::new());
    for n in named {
        match truth.get_mut(&n.item.key()) {
            Some(k) if *k > 0 => {
                *k -= 1;
                hits += 1;
            }
            _ => fps.push(n.item.clone()),
        }
    }
    (hits, fps)
}

fn counted(items: &[Item]) -> HashMap<Key, usize> {
    let mut m = HashMap::new();
    for i in items {
        *m.entry(i.key()).or_default() += 1;
    }
    m
}

/// One edit's figures.
#[derive(Default)]
struct Outcome {
    truth: usize,
    post_hits: usize,
    later_hits: usize,
    post_fps: Vec<Item>,
    later_fps: Vec<Item>,
    gate_truth: usize,
    gate_hits: usize,
    gate_fps: Vec<Item>,
    undo_fps: Vec<Item>,
    misses: Vec<Item>,
    gate_misses: Vec<Item>,
    silent: Option<bool>,
    pre: Vec<Duration>,
    post: Vec<Duration>,
    diag: Vec<Duration>,
    gate: Duration,
    later_after: Option<Duration>,
    not_checked: usize,
    /// Other servers' findings (ruff), not scored.
    others: Vec<String>,
}

fn note_others(to: &mut Vec<String>, when: &str, others: Vec<Other>) {
    for o in others {
        let part = match o.part {
            Part::Introduced => "introduced",
            Part::Present => "present",
            Part::Later => "later",
            Part::Gate => "gate",
        };
        to.push(format!(
            "({when}, {part}) {}:{} {} {} [{}]",
            o.item.file, o.item.line, o.item.severity, o.item.message, o.code
        ));
    }
}

/// What pyright's CLI said at `item`'s line (same file, same text) before and after the
/// edit: why a finding may not be in the truth.
fn explain(t: &Truth, item: &Item) -> Vec<String> {
    let mut out = Vec::new();
    for (when, list) in [
        ("original", Some(&t.original)),
        ("broken", t.broken.as_ref()),
        ("after", Some(&t.after)),
    ] {
        for i in list.into_iter().flatten() {
            if i.file == item.file && i.text == item.text {
                out.push(format!("pyright CLI {when}: {}", i.message));
            }
        }
    }
    if !t.files.contains(&item.file) {
        out.push("(a file the truth did not check)".into());
    }
    out
}

fn edit_event(
    root: &Path,
    stage: &str,
    session: &str,
    module: &str,
    old: &str,
    new: &str,
) -> String {
    serde_json::json!({
        "session_id": session, "cwd": root, "hook_event_name": stage, "tool_name": "Edit",
        "tool_input": {"file_path": root.join(module), "old_string": old, "new_string": new},
    })
    .to_string()
}

fn bash_event(root: &Path, stage: &str, session: &str) -> String {
    serde_json::json!({
        "session_id": session, "cwd": root, "hook_event_name": stage, "tool_name": "Bash",
        "tool_input": {"command": "git status --short"},
    })
    .to_string()
}

fn percentile(d: &[Duration], p: f64) -> Duration {
    let mut d = d.to_vec();
    if d.is_empty() {
        return Duration::ZERO;
    }
    d.sort();
    d[((d.len() - 1) as f64 * p).round() as usize]
}

fn secs(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64())
}

fn knob(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let path = format!(
        "{}:{}",
        repo.join(".tools/venv/bin").display(),
        common::tools_path()
    );
    if !common::pyright_bench_runs("hook_recall", &path) {
        return;
    }
    let per_kind = knob("BENCH_PER_KIND", 100) as usize;
    let kinds: Option<Vec<String>> = std::env::var("BENCH_KINDS")
        .ok()
        .map(|v| v.split(',').map(|s| s.trim().to_lowercase()).collect());
    let mut picked: Vec<&Case> = Vec::new();
    for k in KINDS {
        let wanted = kinds
            .as_ref()
            .is_none_or(|ks| ks.iter().any(|w| format!("{k:?}").to_lowercase() == *w));
        if wanted {
            picked.extend(CASES.iter().filter(|c| c.kind == k).take(per_kind));
        }
    }
    let source = common::django(&repo);
    let scratch = tempfile::Builder::new()
        .prefix("hook-recall")
        .tempdir()
        .expect("a temporary folder");
    let copy = |name: &str| {
        let to = scratch.path().join(name);
        let ok = Command::new("cp")
            .arg("-r")
            .arg(&source)
            .arg(&to)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "copying Django");
        to
    };
    let root = copy("django-5.2");
    let truth_root = copy("truth");
    for c in &picked {
        let text = std::fs::read_to_string(root.join(c.module)).expect("the module");
        let first = c.setup.unwrap_or(c.old);
        assert_eq!(text.matches(first).count(), 1, "{}: {first:?}", c.name);
        if let Some(s) = c.setup {
            let broken = text.replacen(s, c.old, 1);
            assert_eq!(broken.matches(c.old).count(), 1, "{}: {:?}", c.name, c.old);
        }
    }
    // The truth first, in a copy of its own, with nothing else running.
    let cache = repo.join("target/bench-projects/hook-recall-truth");
    let _ = std::fs::create_dir_all(&cache);
    let t = Instant::now();
    let truths: Vec<Truth> = picked
        .iter()
        .map(|c| truth_of(c, &truth_root, &path, &cache))
        .collect();
    println!(
        "truth (pyright's CLI, the written file and the files mentioning the edit's names): \
         {:.0} s ({:.0} s of it this run)",
        truths.iter().map(|t| t.secs).sum::<f64>(),
        t.elapsed().as_secs_f64()
    );
    let env = Env {
        path,
        runtime: tempfile::tempdir().expect("a runtime folder"),
        home: tempfile::tempdir().expect("a home folder"),
    };
    {
        use std::os::unix::fs::PermissionsExt;
        let _ =
            std::fs::set_permissions(env.runtime.path(), std::fs::Permissions::from_mode(0o700));
    }
    warm(
        &env,
        &root,
        picked.first().map_or("django/utils/text.py", |c| c.module),
    );
    let later_wait = Duration::from_secs(knob("BENCH_LATER_WAIT", 30));
    let mut outcomes = Vec::new();
    for (i, (c, t)) in picked.iter().zip(&truths).enumerate() {
        let o = run_case(&env, &root, c, t, i, later_wait);
        println!(
            "  [{}] {} ({}): truth {}, post-edit {} + later {}, fp {}; gate {}/{} fp {}; \
             post {} s ({} unchecked note), diag {} s",
            i + 1,
            c.name,
            c.kind.label(),
            o.truth,
            o.post_hits,
            o.later_hits,
            o.post_fps.len() + o.later_fps.len() + o.undo_fps.len(),
            o.gate_hits,
            o.gate_truth,
            o.gate_fps.len(),
            o.post.first().map_or("-".into(), |d| secs(*d)),
            o.not_checked,
            o.diag.first().map_or("-".into(), |d| secs(*d)),
        );
        outcomes.push(o);
    }
    env.run(&root, &["daemon", "stop"], "");
    if let Ok(keep) = std::env::var("BENCH_KEEP_LOG") {
        let _ = std::fs::write(keep, env.log());
    }
    report(&picked, &outcomes, &truths);
}

/// The truth of `c`, from the cache or pyright's CLI in `root` (left as it was).
fn truth_of(c: &Case, root: &Path, path: &str, cache: &Path) -> Truth {
    let module = root.join(c.module);
    let original = std::fs::read_to_string(&module).expect("the module");
    let files = truth::subset(root, c.module, c.names);
    let key = truth::fnv(&[
        c.module,
        c.setup.unwrap_or(""),
        c.old,
        c.new,
        &files.join("\n"),
        &original,
    ]);
    let file = cache.join(format!("{key:016x}.json"));
    if let Some(t) = std::fs::read(&file)
        .ok()
        .and_then(|b| serde_json::from_slice::<Truth>(&b).ok())
    {
        return t;
    }
    let t0 = Instant::now();
    let first = c.setup.unwrap_or(c.old);
    let before = pyright_cached(root, path, &files, cache, &original);
    let broken = c.setup.map(|s| {
        std::fs::write(&module, original.replacen(s, c.old, 1)).expect("writing");
        truth::pyright(root, path, &files)
    });
    let edited = original.replacen(first, c.old, 1).replacen(c.old, c.new, 1);
    std::fs::write(&module, &edited).expect("writing");
    let after = truth::pyright(root, path, &files);
    std::fs::write(&module, &original).expect("writing");
    let t = Truth {
        files,
        original: before,
        broken,
        after,
        secs: t0.elapsed().as_secs_f64(),
    };
    if let Ok(b) = serde_json::to_vec(&t) {
        let _ = std::fs::write(&file, b);
    }
    t
}

/// pyright's CLI on `files` of the original workspace, cached by the files (and `original`,
/// the written module's text, for safety).
fn pyright_cached(
    root: &Path,
    path: &str,
    files: &[String],
    cache: &Path,
    original: &str,
) -> Vec<Item> {
    let key = truth::fnv(&["original", &files.join("\n"), original]);
    let file = cache.join(format!("original-{key:016x}.json"));
    if let Some(v) = std::fs::read(&file)
        .ok()
        .and_then(|b| serde_json::from_slice::<Vec<Item>>(&b).ok())
    {
        return v;
    }
    let v = truth::pyright(root, path, files);
    if let Ok(b) = serde_json::to_vec(&v) {
        let _ = std::fs::write(&file, b);
    }
    v
}

/// The session starts (`hook start`): how long until a file's diagnostics answer, and until
/// the baseline pass is done (waited for, up to `BENCH_WARM_WAIT`).
fn warm(env: &Env, root: &Path, module: &str) {
    let start = serde_json::json!({
        "session_id": "warm", "cwd": root, "hook_event_name": "SessionStart", "source": "startup",
    })
    .to_string();
    let t = Instant::now();
    let (d, out) = env.run(root, &["hook", "start"], &start);
    println!(
        "session start: `hook start` answered in {} s{}",
        secs(d),
        if out.trim().is_empty() {
            ""
        } else {
            " (said something)"
        }
    );
    let wait = Duration::from_secs(knob("BENCH_WARM_WAIT", 900));
    loop {
        let (_, out) = env.run(root, &["diagnostics", module], "");
        if !out.trim().is_empty() || t.elapsed() > wait {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    println!(
        "  a file's diagnostics answer {} s after the start",
        secs(t.elapsed())
    );
    loop {
        if let Some(l) = env.log().lines().find(|l| l.contains("baseline pass of")) {
            println!(
                "  the baseline pass ended {} s after the start ({})",
                secs(t.elapsed()),
                l.split("hook: ").nth(1).unwrap_or(l)
            );
            break;
        }
        if t.elapsed() > wait {
            println!(
                "  the baseline pass had not ended {} s after the start",
                wait.as_secs()
            );
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// `c` made and measured, then undone.
fn run_case(env: &Env, root: &Path, c: &Case, t: &Truth, i: usize, wait: Duration) -> Outcome {
    let session = format!("recall-{i}");
    let module = root.join(c.module);
    let original = std::fs::read_to_string(&module).expect("the module");
    let mut o = Outcome::default();
    let post_args = ["hook", "post-edit", "--max-lines", "1000"];
    if let Some(s) = c.setup {
        // The session's previous edit, which the fix undoes: its answers drained.
        env.run(
            root,
            &["hook", "pre-edit"],
            &edit_event(root, "PreToolUse", &session, c.module, s, c.old),
        );
        std::fs::write(&module, original.replacen(s, c.old, 1)).expect("writing");
        env.run(
            root,
            &post_args,
            &edit_event(root, "PostToolUse", &session, c.module, s, c.old),
        );
        drain(
            env,
            root,
            &session,
            wait,
            &mut Vec::new(),
            &mut Vec::new(),
            None,
        );
    }
    let before = std::fs::read_to_string(&module).expect("the module");
    let edited = before.replacen(c.old, c.new, 1);
    let (d, _) = env.run(
        root,
        &["hook", "pre-edit"],
        &edit_event(root, "PreToolUse", &session, c.module, c.old, c.new),
    );
    o.pre.push(d);
    std::fs::write(&module, &edited).expect("writing");
    let answered = Instant::now();
    let (d, out) = env.run(
        root,
        &post_args,
        &edit_event(root, "PostToolUse", &session, c.module, c.old, c.new),
    );
    o.post.push(d);
    let (named, other) = parse_all(root, &out);
    note_others(&mut o.others, "post-edit", other);
    o.not_checked = out.matches("not checked yet").count();
    if c.kind == Kind::Comment {
        o.silent = Some(out.trim().is_empty());
    }
    let introduced = t.introduced();
    o.truth = introduced.len();
    let mut left = counted(&introduced);
    let (hits, fps) = score(&mut left, &named);
    o.post_hits = hits;
    o.post_fps = fps;
    let mut later = Vec::new();
    let all_named = |left: &HashMap<Key, usize>| left.values().all(|n| *n == 0);
    if !all_named(&left) || o.not_checked > 0 {
        o.later_after = drain(
            env,
            root,
            &session,
            wait,
            &mut later,
            &mut o.others,
            Some((&mut left, answered)),
        );
    }
    // Scored as they came (`drain`).
    for (n, hit) in later.iter().filter(|(n, _)| n.part == Part::Later) {
        if *hit {
            o.later_hits += 1;
        } else {
            o.later_fps.push(n.item.clone());
        }
    }
    o.misses = left
        .iter()
        .flat_map(|(k, n)| {
            introduced
                .iter()
                .filter(move |i| i.key() == *k)
                .take(*n)
                .cloned()
        })
        .collect();
    // The turn-end gate, before the undo.
    let stop = serde_json::json!({
        "session_id": session, "cwd": root, "hook_event_name": "Stop", "stop_hook_active": false,
    })
    .to_string();
    let (d, out) = env.run(root, &["hook", "stop", "--max-lines", "1000"], &stop);
    o.gate = d;
    let gate_truth = t.gate();
    o.gate_truth = gate_truth.len();
    let mut gleft = counted(&gate_truth);
    let (gnamed, other) = parse_all(root, &out);
    note_others(&mut o.others, "gate", other);
    let (hits, fps) = score(&mut gleft, &gnamed);
    o.gate_hits = hits;
    o.gate_fps = fps;
    o.gate_misses = gleft
        .iter()
        .flat_map(|(k, n)| {
            gate_truth
                .iter()
                .filter(move |i| i.key() == *k)
                .take(*n)
                .cloned()
        })
        .collect();
    // Undone with its own hooks (a fix that restored the original needs none).
    let restore = c.setup.unwrap_or(c.old);
    if edited != original {
        let (d, _) = env.run(
            root,
            &["hook", "pre-edit"],
            &edit_event(root, "PreToolUse", &session, c.module, c.new, restore),
        );
        o.pre.push(d);
        std::fs::write(&module, &original).expect("writing");
        let (d, out) = env.run(
            root,
            &post_args,
            &edit_event(root, "PostToolUse", &session, c.module, c.new, restore),
        );
        o.post.push(d);
        if c.kind == Kind::Comment {
            o.silent = Some(o.silent == Some(true) && out.trim().is_empty());
        }
        let mut uleft = counted(&t.undo());
        let (named, other) = parse_all(root, &out);
        note_others(&mut o.others, "undo", other);
        let (_, fps) = score(
            &mut uleft,
            named.iter().filter(|n| n.part == Part::Introduced),
        );
        o.undo_fps = fps;
        let mut rest = Vec::new();
        drain(env, root, &session, wait, &mut rest, &mut o.others, None);
        let rest: Vec<Named> = rest.into_iter().map(|(n, _)| n).collect();
        let (_, fps) = score(&mut uleft, rest.iter().filter(|n| n.part == Part::Later));
        o.undo_fps.extend(fps);
    }
    // `lspgate diagnostics` of the written file after the same write.
    for body in [&edited, &original] {
        std::fs::write(&module, body).expect("writing");
        let (d, _) = env.run(root, &["diagnostics", c.module], "");
        o.diag.push(d);
    }
    o
}
