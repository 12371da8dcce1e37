//! Benchmark: the post-edit hook on a real workspace (a copy of Django 5.2's source) with
//! pyright warm in the per-user daemon, as a harness runs it: one `lspgate hook` process per
//! event, Claude Code `Edit` events on stdin, the pre-edit hook before each edit. Three edits,
//! each made and undone in turn: a body edit of a function other modules import that leaves its
//! signature as it was (only the file is asked), the same function's signature changed (its
//! importers that call it are asked again), and a comment edit. In the same run, `lspgate
//! diagnostics` of the written file alone through the same daemon (one process too) after the
//! same write: what checking the importers adds. Prints p50 and p95 of each and how many files
//! each hook checked.
//!
//! Run: `cargo bench --bench hooks` (pyright from `.tools/`, see scripts/). `BENCH_ROUNDS`
//! rounds per edit (default 15, as in docs/performance.md; each edits twice).
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and measurements fail loudly

mod common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// An edit: the module, a text of it and what replaces it.
struct Case {
    name: &'static str,
    module: &'static str,
    old: &'static str,
    new: &'static str,
}

const CASES: [Case; 3] = [
    Case {
        name: "body edit of get_text_list (6 importers call it; its signature stays)",
        module: "django/utils/text.py",
        old: "    if not list_:\n        return \"\"\n",
        new: "    if not list_:\n        return \"\" + \"\"\n",
    },
    Case {
        name: "signature edit of get_text_list (a parameter added: its 6 importers asked)",
        module: "django/utils/text.py",
        old: "def get_text_list(list_, last_word=gettext_lazy(\"or\")):",
        new: "def get_text_list(list_, last_word=gettext_lazy(\"or\"), sep=\", \"):",
    },
    Case {
        name: "comment edit",
        module: "django/utils/text.py",
        old: "def get_text_list(list_,",
        new: "# A note.\ndef get_text_list(list_,",
    },
];

struct Env {
    path: String,
    runtime: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Env {
    fn command(&self, root: &Path) -> Command {
        let mut c = Command::new(common::LSPGATE);
        c.current_dir(root)
            .env("PATH", &self.path)
            .env("XDG_RUNTIME_DIR", self.runtime.path())
            .env("LSPGATE_HOME", self.home.path())
            .env("LSPGATE_STANDALONE", "0")
            .env("LSPGATE_IDLE_EXIT", "120")
            .stderr(Stdio::null());
        c
    }

    /// Runs `lspgate ARGS` with `stdin`; its wall time and stdout.
    fn run(&self, root: &Path, args: &[&str], stdin: &str) -> (Duration, String) {
        let t = Instant::now();
        let mut child = self
            .command(root)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
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
}

fn event(root: &Path, name: &str, case: &Case, undo: bool) -> String {
    let (old, new) = if undo {
        (case.new, case.old)
    } else {
        (case.old, case.new)
    };
    serde_json::json!({
        "session_id": "bench", "cwd": root, "hook_event_name": name, "tool_name": "Edit",
        "tool_input": {"file_path": root.join(case.module), "old_string": old, "new_string": new},
    })
    .to_string()
}

fn percentile(mut d: Vec<Duration>, p: f64) -> Duration {
    d.sort();
    d[((d.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let path = format!(
        "{}:{}",
        repo.join(".tools/venv/bin").display(),
        common::tools_path()
    );
    if !common::pyright_bench_runs("hooks", &path) {
        return;
    }
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    // A copy: the bench writes to it.
    let source = common::django(&repo);
    let copy = tempfile::Builder::new()
        .prefix("hooks-bench")
        .tempdir()
        .unwrap();
    let root = copy.path().join("django-5.2");
    let ok = Command::new("cp")
        .arg("-r")
        .arg(&source)
        .arg(&root)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "copying Django");
    let env = Env {
        path,
        runtime: tempfile::tempdir().unwrap(),
        home: tempfile::tempdir().unwrap(),
    };
    {
        use std::os::unix::fs::PermissionsExt;
        let _ =
            std::fs::set_permissions(env.runtime.path(), std::fs::Permissions::from_mode(0o700));
    }
    let t = Instant::now();
    env.run(&root, &["diagnostics", CASES[0].module], "");
    println!(
        "warm-up (daemon, pyright): {:.1} s",
        t.elapsed().as_secs_f64()
    );
    for case in &CASES {
        bench(&env, &root, case, rounds);
    }
    env.run(&root, &["daemon", "stop"], "");
}

/// Edits `case` in and out `rounds` times each, hooks around each edit; then the written
/// file's diagnostics alone after the same writes; prints the figures.
fn bench(env: &Env, root: &Path, case: &Case, rounds: usize) {
    let module = root.join(case.module);
    let original = std::fs::read_to_string(&module).unwrap();
    assert_eq!(
        original.matches(case.old).count(),
        1,
        "{}: pick another text",
        case.module
    );
    let edited = original.replace(case.old, case.new);
    let bodies = [&edited, &original];
    // Warm: one edit and its undo with a generous budget (pyright reads the importers).
    for (i, body) in [&edited, &original].iter().enumerate() {
        let undo = i == 1;
        env.run(
            root,
            &["hook", "pre-edit", "--budget", "120"],
            &event(root, "PreToolUse", case, undo),
        );
        std::fs::write(&module, body).unwrap();
        env.run(
            root,
            &["hook", "post-edit", "--budget", "120"],
            &event(root, "PostToolUse", case, undo),
        );
    }
    let seq_before = last_seq(env, root);
    let (mut pre, mut post) = (Vec::new(), Vec::new());
    for i in 0..rounds * 2 {
        let undo = i % 2 == 1;
        let (d, _) = env.run(
            root,
            &["hook", "pre-edit"],
            &event(root, "PreToolUse", case, undo),
        );
        pre.push(d);
        std::fs::write(&module, bodies[i % 2]).unwrap();
        let (d, out) = env.run(
            root,
            &["hook", "post-edit"],
            &event(root, "PostToolUse", case, undo),
        );
        assert!(
            !out.contains("introduced"),
            "the edit broke something: {out}"
        );
        post.push(d);
    }
    let mut one = Vec::new();
    for i in 0..rounds * 2 {
        std::fs::write(&module, bodies[i % 2]).unwrap();
        let (d, _) = env.run(root, &["diagnostics", case.module], "");
        one.push(d);
    }
    let (_, events) = env.run(
        root,
        &[
            "events",
            "--json",
            "--kinds",
            "[\"hook\"]",
            "--after",
            &seq_before.to_string(),
            "--limit",
            "1000",
        ],
        "",
    );
    let events: serde_json::Value = serde_json::from_str(&events).unwrap_or_default();
    let posts: Vec<&serde_json::Value> = events["events"]
        .as_array()
        .map(|e| {
            e.iter()
                .filter(|e| e["data"]["stage"] == "post-edit")
                .collect()
        })
        .unwrap_or_default();
    let mut checked: Vec<u64> = posts
        .iter()
        .filter_map(|e| e["data"]["checked"].as_u64())
        .collect();
    checked.sort_unstable();
    checked.dedup();
    let timed_out = posts
        .iter()
        .filter(|e| e["data"]["timed_out"] == true)
        .count();
    let (p50, p95) = (percentile(post.clone(), 0.5), percentile(post, 0.95));
    let one50 = percentile(one, 0.5);
    println!(
        "{} in {}, {} edits, files checked per hook {checked:?}:",
        case.name,
        case.module,
        rounds * 2
    );
    println!("  post-edit hook        p50 {}  p95 {}", ms(p50), ms(p95));
    println!(
        "  pre-edit hook         p50 {}  p95 {}",
        ms(percentile(pre.clone(), 0.5)),
        ms(percentile(pre, 0.95))
    );
    println!(
        "  `lspgate diagnostics` of the module alone after the same write, p50 {}",
        ms(one50)
    );
    println!(
        "  post-edit / one file: {:.2}x; hooks past their budget: {timed_out}",
        p50.as_secs_f64() / one50.as_secs_f64()
    );
}

/// The event log's newest seq.
fn last_seq(env: &Env, root: &Path) -> i64 {
    let (_, out) = env.run(
        root,
        &[
            "events",
            "--json",
            "--kinds",
            "[\"hook\"]",
            "--limit",
            "1000",
        ],
        "",
    );
    serde_json::from_str::<serde_json::Value>(&out)
        .ok()
        .and_then(|v| v["next"].as_i64())
        .unwrap_or(0)
}
