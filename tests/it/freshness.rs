//! Never stale, whoever writes: files changed, created and deleted by plain writes from the
//! test (never through lspgate), each followed at once by a call, against pyright,
//! typescript-language-server and clangd. A dependency's change shows in its dependents'
//! diagnostics, hover and references in the very next call; a created module can be imported;
//! a deleted one cannot. Each is repeated in a loop, and no answer may be stale.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::Path;

/// How many write-then-ask rounds each loop runs.
const ROUNDS: usize = 50;

/// Writes `text` the way editors and formatters often do: a temporary file renamed over the
/// original (the file's inode changes; inotify reports a move, not a write).
fn write_atomic(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp~");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// Every round alternates plain writes and atomic renames.
fn write(path: &Path, text: &str, round: usize) {
    if round.is_multiple_of(2) {
        std::fs::write(path, text).unwrap();
    } else {
        write_atomic(path, text);
    }
}

fn messages(d: &Value) -> Vec<String> {
    diags(&d["files"])
        .iter()
        .filter(|x| x["severity"] == "error")
        .map(|x| x["message"].as_str().unwrap().to_string())
        .collect()
}

/// The three stories for one language: a dependency's signature changes under an open
/// dependent, a module is created for an import, and deleted again.
struct Story<'a> {
    /// The dependency, in two versions: the second breaks the dependent.
    lib: &'a str,
    lib_ok: &'a str,
    lib_broken: &'a str,
    /// What an error in the dependent says when the dependency is broken.
    broken_says: &'a str,
    /// The dependent; `hover_line`/`hover_symbol` point at its use of the dependency.
    user: &'a str,
    hover_line: u64,
    hover_symbol: &'a str,
    /// What the hover shows for each version.
    hover_ok: &'a str,
    hover_broken: &'a str,
    /// For round `i`: the importer's text, the created module's name and text, the symbol it
    /// defines (to ask references from, line 1), and what an unresolved import says.
    importer: &'a str,
    import_text: fn(usize) -> String,
    module: fn(usize) -> String,
    module_text: fn(usize) -> String,
    symbol: fn(usize) -> String,
    unresolved_says: &'a str,
}

async fn run_story(gate: &Gate, root: &Path, s: &Story<'_>) {
    let (d, text) = gate.ok("diagnostics", json!({"file": s.user})).await;
    assert!(messages(&d).is_empty(), "starts clean: {text}");

    let mut stale = Vec::new();
    for round in 0..ROUNDS {
        let broken = round.is_multiple_of(2);
        write(
            &root.join(s.lib),
            if broken { s.lib_broken } else { s.lib_ok },
            round,
        );
        let (d, text) = gate.ok("diagnostics", json!({"file": s.user})).await;
        let says_broken = messages(&d).iter().any(|m| m.contains(s.broken_says));
        if says_broken != broken || d["partial"] == true {
            stale.push(format!("round {round} diagnostics: {text}"));
        }
        let (_, text) = gate
            .ok(
                "hover",
                json!({"file": s.user, "line": s.hover_line, "symbol": s.hover_symbol}),
            )
            .await;
        let want = if broken { s.hover_broken } else { s.hover_ok };
        if !text.contains(want) {
            stale.push(format!("round {round} hover (wanted {want}): {text}"));
        }
    }
    assert!(stale.is_empty(), "stale answers:\n{}", stale.join("\n"));

    for round in 0..ROUNDS {
        let module = (s.module)(round);
        // The importer asks for a module that does not exist yet…
        write(&root.join(s.importer), &(s.import_text)(round), round);
        let (d, text) = gate.ok("diagnostics", json!({"file": s.importer})).await;
        if !messages(&d).iter().any(|m| m.contains(s.unresolved_says)) {
            stale.push(format!("round {round} before create: {text}"));
        }
        // …which is created: the import resolves and its uses are references.
        write(&root.join(&module), &(s.module_text)(round), round);
        let (d, text) = gate.ok("diagnostics", json!({"file": s.importer})).await;
        if !messages(&d).is_empty() {
            stale.push(format!("round {round} after create: {text}"));
        }
        let (refs, text) = gate
            .ok(
                "references",
                json!({"file": module, "line": 1, "symbol": (s.symbol)(round)}),
            )
            .await;
        if !files_of(&refs["files"]).contains(&s.importer.to_string()) {
            stale.push(format!("round {round} references: {text}"));
        }
        // …and deleted: the importer says so.
        std::fs::remove_file(root.join(&module)).unwrap();
        let (d, text) = gate.ok("diagnostics", json!({"file": s.importer})).await;
        if !messages(&d).iter().any(|m| m.contains(s.unresolved_says)) {
            stale.push(format!("round {round} after delete: {text}"));
        }
    }
    assert!(stale.is_empty(), "stale answers:\n{}", stale.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_sees_every_outside_write() {
    require("pyright-langserver");
    let lib_ok = "def f(a: int) -> int:\n    return a\n";
    let user = "from lib import f\n\nx: int = f(1)\n";
    let ws = workspace(&[
        ("lib.py", lib_ok),
        ("use.py", user),
        ("importer.py", "x = 1\n"),
    ]);
    let gate = Gate::start(ws.path(), &[], &["pyright-langserver", "--stdio"]).await;
    run_story(
        &gate,
        ws.path(),
        &Story {
            lib: "lib.py",
            lib_ok,
            lib_broken: "def f(a: str) -> int:\n    return len(a)\n",
            broken_says: "\"Literal[1]\" is not assignable to \"str\"",
            user: "use.py",
            hover_line: 3,
            hover_symbol: "f",
            hover_ok: "(a: int) -> int",
            hover_broken: "(a: str) -> int",
            importer: "importer.py",
            import_text: |i| format!("from mod{i} import g{i}\n\nprint(g{i})\n"),
            module: |i| format!("mod{i}.py"),
            module_text: |i| format!("g{i} = {i}\n"),
            symbol: |i| format!("g{i}"),
            unresolved_says: "could not be resolved",
        },
    )
    .await;
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sees_every_outside_write() {
    require("typescript-language-server");
    let lib_ok = "export function f(a: number): number {\n  return a;\n}\n";
    let user = "import { f } from \"./lib\";\n\nexport const x: number = f(1);\n";
    let ws = workspace(&[
        (
            "tsconfig.json",
            r#"{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}}"#,
        ),
        ("lib.ts", lib_ok),
        ("use.ts", user),
        ("importer.ts", "export const y = 1;\n"),
    ]);
    let gate = Gate::start(ws.path(), &[], &[]).await;
    run_story(
        &gate,
        ws.path(),
        &Story {
            lib: "lib.ts",
            lib_ok,
            lib_broken: "export function f(a: string): number {\n  return a.length;\n}\n",
            broken_says: "not assignable to parameter of type 'string'",
            user: "use.ts",
            hover_line: 3,
            hover_symbol: "f",
            hover_ok: "f(a: number): number",
            hover_broken: "f(a: string): number",
            importer: "importer.ts",
            import_text: |i| {
                format!("import {{ g{i} }} from \"./mod{i}\";\n\nexport const y = g{i};\n")
            },
            module: |i| format!("mod{i}.ts"),
            module_text: |i| format!("export const g{i} = {i};\n"),
            symbol: |i| format!("g{i}"),
            unresolved_says: "Cannot find module",
        },
    )
    .await;

    // An open file changed on disk whose diagnostics stay the same (empty) answers at once,
    // not after the diagnostics bound, and not partial.
    for round in 0..10 {
        let text = format!("{user}// comment {round}\n");
        write(&ws.path().join("use.ts"), &text, round);
        let started = std::time::Instant::now();
        let (d, text) = gate.ok("diagnostics", json!({"file": "use.ts"})).await;
        assert!(messages(&d).is_empty(), "{text}");
        assert_ne!(d["partial"], true, "{text}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "waited {:?} for diagnostics that stay empty",
            started.elapsed()
        );
    }
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clangd_sees_a_changed_header_in_the_file_that_includes_it() {
    require("clangd");
    let header_ok = "int f(int a);\n";
    let header_broken = "int f(int a, int b);\n";
    let ws = workspace(&[
        ("compile_flags.txt", "-std=c11\n"),
        ("lib.h", header_ok),
        (
            "main.c",
            "#include \"lib.h\"\n\nint main(void) { return f(1); }\n",
        ),
    ]);
    let gate = Gate::start(ws.path(), &[], &[]).await;
    let (d, text) = gate.ok("diagnostics", json!({"file": "main.c"})).await;
    assert!(messages(&d).is_empty(), "{text}");
    let mut stale = Vec::new();
    for round in 0..ROUNDS {
        let broken = round.is_multiple_of(2);
        write(
            &ws.path().join("lib.h"),
            if broken { header_broken } else { header_ok },
            round,
        );
        let (d, text) = gate.ok("diagnostics", json!({"file": "main.c"})).await;
        let says = messages(&d).iter().any(|m| m.contains("few arguments"));
        if says != broken || d["partial"] == true {
            stale.push(format!("round {round}: {text}"));
        }
        let (_, text) = gate
            .ok("hover", json!({"file": "main.c", "line": 3, "symbol": "f"}))
            .await;
        let want = if broken {
            "int f(int a, int b)"
        } else {
            "int f(int a)"
        };
        if !text.contains(want) {
            stale.push(format!("round {round} hover (wanted {want}): {text}"));
        }
    }
    assert!(stale.is_empty(), "stale answers:\n{}", stale.join("\n"));
    gate.stop().await;
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_git_checkout_of_300_files_then_check_equals_a_fresh_check() {
    require("pyright-langserver");
    let ws = workspace(&[("base.py", "def g(x: int) -> int:\n    return x\n")]);
    let root = ws.path();
    for i in 0..300 {
        let text = format!("from base import g\n\nv{i} = g({i})\n");
        std::fs::write(root.join(format!("m{i}.py")), text).unwrap();
    }
    for i in 0..10 {
        let text = format!(
            "from m{} import v{}\n\nprint(v{})\n",
            100 + i,
            100 + i,
            100 + i
        );
        std::fs::write(root.join(format!("u{i}.py")), text).unwrap();
    }
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "."]);
    git(root, &["commit", "-qm", "main"]);
    // The other branch differs in 300 files: 100 changed (now wrong), 100 deleted (their
    // importers break), 100 created (wrong too).
    git(root, &["checkout", "-qb", "other"]);
    for i in 0..100 {
        let text = format!("from base import g\n\nv{i} = g(\"s{i}\")\n");
        std::fs::write(root.join(format!("m{i}.py")), text).unwrap();
        std::fs::remove_file(root.join(format!("m{}.py", 100 + i))).unwrap();
        let text = format!("from base import g\n\nw{i}: str = g({i})\n");
        std::fs::write(root.join(format!("n{i}.py")), text).unwrap();
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "other"]);
    git(root, &["checkout", "-q", "main"]);

    let server = ["pyright-langserver", "--stdio"];
    let gate = Gate::start(root, &[], &server).await;
    let (on_main, text) = gate.ok("check", json!({})).await;
    assert_eq!(on_main["ok"], true, "{text}");
    assert_eq!(on_main["summary"]["files"], 311, "{text}");

    git(root, &["checkout", "-q", "other"]);
    let (after, text) = gate.ok("check", json!({})).await;
    let fresh = Gate::start(root, &[], &server).await;
    let (want, want_text) = fresh.ok("check", json!({})).await;
    fresh.stop().await;
    assert_eq!(want["summary"]["errors"], 210, "{want_text}");
    assert_eq!(
        findings(&after),
        findings(&want),
        "{text}\n---\n{want_text}"
    );

    git(root, &["checkout", "-q", "main"]);
    let (back, text) = gate.ok("check", json!({})).await;
    assert_eq!(findings(&back), findings(&on_main), "{text}");
    gate.stop().await;
}

/// The lines of the fixture's log about watched-file changes: `TYPE URI` each.
fn heard(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("workspace/didChangeWatchedFiles "))
        .flat_map(|l| {
            l.split(' ')
                .collect::<Vec<_>>()
                .chunks(2)
                .map(|c| c.join(" "))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Waits (bounded) until the fixture's log holds `line`: the server's registration reaches
/// lspgate asynchronously after `initialized`.
async fn log_has(log: &Path, line: &str) {
    for _ in 0..200 {
        if std::fs::read_to_string(log).is_ok_and(|t| t.lines().any(|l| l == line)) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the fixture never logged `{line}`");
}

/// A server hears each change once, as its watcher asked, whoever made it: lspgate's own edit
/// (which the watcher sees too) or a plain write; nothing it did not ask for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_change_reaches_a_server_once_and_only_as_it_asked() {
    let ws = workspace(&[("a.py", "a = 1\n"), ("notes.txt", "n\n")]);
    let log = ws.path().join("fixture.log");
    let gate = Gate::start(
        ws.path(),
        &[],
        &[
            FIXTURE,
            "--watch",
            "**/*.py",
            "--log",
            log.to_str().unwrap(),
        ],
    )
    .await;
    gate.ok("hover", json!({"file": "a.py", "line": 1, "column": 1}))
        .await;
    log_has(&log, "watching registered").await;
    let uri = |f: &str| {
        url::Url::from_file_path(ws.path().join(f))
            .unwrap()
            .to_string()
    };

    // lspgate's own edit: one `changed` (2), though inotify saw a temporary file and a rename.
    gate.ok(
        "edit",
        json!({"file": "a.py", "edits": [{"old_text": "a = 1", "new_text": "a = 2"}], "apply": true}),
    )
    .await;
    gate.ok("hover", json!({"file": "a.py", "line": 1, "column": 1}))
        .await;
    assert_eq!(heard(&log), [format!("2 {}", uri("a.py"))]);

    // Outside writes: created (1), changed (2), deleted (3); the .txt file matches no watcher.
    std::fs::write(ws.path().join("b.py"), "b = 1\n").unwrap();
    std::fs::write(ws.path().join("notes.txt"), "m\n").unwrap();
    gate.ok("servers", json!({})).await;
    std::fs::write(ws.path().join("a.py"), "a = 3\n").unwrap();
    std::fs::remove_file(ws.path().join("b.py")).unwrap();
    let (s, _) = gate.ok("servers", json!({})).await;
    assert!(
        s["watcher"].as_str().unwrap().starts_with("inotify:"),
        "{s}"
    );
    // The fixture serves in order: once it answers a request sent after the notifications,
    // it has logged them.
    gate.ok("hover", json!({"file": "a.py", "line": 1, "column": 1}))
        .await;
    assert_eq!(
        heard(&log),
        [
            format!("2 {}", uri("a.py")),
            format!("1 {}", uri("b.py")),
            format!("2 {}", uri("a.py")),
            format!("3 {}", uri("b.py")),
        ]
    );
    gate.stop().await;
}

/// Past the watch limit lspgate polls, says so in `servers`, and stays fresh.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_watch_limit_lspgate_polls_and_stays_fresh() {
    require("pyright-langserver");
    let lib_ok = "def f(a: int) -> int:\n    return a\n";
    let lib_broken = "def f(a: str) -> int:\n    return len(a)\n";
    let ws = workspace(&[
        ("lib.py", lib_ok),
        ("use.py", "from lib import f\n\nx: int = f(1)\n"),
    ]);
    std::fs::create_dir(ws.path().join("sub")).unwrap();
    let gate = Gate::start_with_env(
        ws.path(),
        &[],
        &["pyright-langserver", "--stdio"],
        &[("LSPGATE_WATCH_LIMIT", "1")],
    )
    .await;
    let (s, text) = gate.ok("servers", json!({})).await;
    let watcher = s["watcher"].as_str().unwrap();
    assert!(
        watcher.starts_with("poll:") && watcher.contains("LSPGATE_WATCH_LIMIT"),
        "{text}"
    );
    for round in 0..10usize {
        let broken = round.is_multiple_of(2);
        write(
            &ws.path().join("lib.py"),
            if broken { lib_broken } else { lib_ok },
            round,
        );
        let (d, text) = gate.ok("diagnostics", json!({"file": "use.py"})).await;
        assert_eq!(!messages(&d).is_empty(), broken, "round {round}: {text}");
    }
    gate.stop().await;
}

/// `diagnostics` without a file is as fresh as with one: a dependency broken from a shell shows
/// in every file with problems at once, and its fix clears them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_of_every_file_are_as_fresh_as_one_files() {
    require("pyright-langserver");
    let lib_ok = "def f(a: int) -> int:\n    return a\n";
    let ws = workspace(&[
        ("lib.py", lib_ok),
        ("use.py", "from lib import f\n\nx: int = f(1)\n"),
        ("other.py", "from lib import f\n\ny: int = f(2)\n"),
    ]);
    let gate = Gate::start(ws.path(), &[], &["pyright-langserver", "--stdio"]).await;
    for f in ["use.py", "other.py"] {
        gate.ok("diagnostics", json!({"file": f})).await;
    }
    for round in 0..10usize {
        let broken = round.is_multiple_of(2);
        let text = if broken {
            "def f(a: str) -> int:\n    return len(a)\n"
        } else {
            lib_ok
        };
        write(&ws.path().join("lib.py"), text, round);
        let (d, text) = gate.ok("diagnostics", json!({})).await;
        let files: Vec<&str> = d["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["file"].as_str().unwrap())
            .collect();
        let want: &[&str] = if broken { &["other.py", "use.py"] } else { &[] };
        assert_eq!(files, want, "round {round}: {text}");
    }
    gate.stop().await;
}

/// The consistency point is a guard, not a call each entry point must remember: a server handed
/// out by the registry (here to a caller that never calls `sync`) has been told of a write made
/// just before. (Without the guard the write waits for the debounce loop, and the server
/// answers first.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_handed_out_has_heard_of_every_write_before_it() {
    use lspgate::registry::{Registry, RegistryOptions};
    use lspgate::workspace::presets::ServerSpec;
    use lspgate::workspace::{Languages, Root};

    let ws = workspace(&[("a.py", "a = 1\n")]);
    let log = ws.path().join("fixture.log");
    let root = Root::new(ws.path()).unwrap();
    let languages = Languages::new(root.path(), &Default::default());
    let registry = Registry::new(root, languages, RegistryOptions::default());
    let argv: Vec<String> = [
        FIXTURE,
        "--watch",
        "**/*.py",
        "--log",
        log.to_str().unwrap(),
    ]
    .map(String::from)
    .into();
    let mut spec = ServerSpec::explicit(&argv).unwrap();
    spec.languages = vec!["python".into()];
    registry.register(spec);
    let a = ws.path().join("a.py");
    assert_eq!(registry.started_for(&a, "python").await.len(), 1);
    log_has(&log, "watching registered").await;
    let uri = |f: &str| url::Url::from_file_path(ws.path().join(f)).unwrap();

    for round in 0..5 {
        let name = format!("b{round}.py");
        std::fs::write(ws.path().join(&name), "b = 1\n").unwrap();
        let server = registry.started_for(&a, "python").await.remove(0);
        // The fixture serves in order: its answer comes after it logged what it heard before.
        server.client().workspace_symbols("b").await.unwrap();
        assert!(
            heard(&log).contains(&format!("1 {}", uri(&name))),
            "round {round}: the server answered before it heard of {name}: {:?}",
            heard(&log)
        );
    }
    registry.stop_all().await;
}
