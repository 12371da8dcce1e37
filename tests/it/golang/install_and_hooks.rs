//! `lspgate install gopls`, and the harness hooks on Go: a signature change in one package
//! named in the packages that import it.

use super::*;

/// `lspgate install gopls` builds the pinned gopls with the Go on PATH into lspgate's data
/// folder (Go's caches as the test's: offline); without Go on PATH it says what is missing.
#[test]
fn lspgate_install_gopls() {
    require_go();
    let dir = tempfile::tempdir().unwrap();
    let home = new_home();
    let out = std::process::Command::new(LSPGATE)
        .current_dir(dir.path())
        .args(["install", "gopls"])
        .envs(go_env())
        .env("LSPGATE_HOME", &home)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exe = home.join("servers/gopls/bin/gopls");
    assert!(stdout.contains(&exe.display().to_string()), "{stdout}");
    let version = std::process::Command::new(&exe)
        .arg("version")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&version.stdout).contains("golang.org/x/tools/gopls v0.23.0"),
        "{}",
        String::from_utf8_lossy(&version.stdout)
    );

    // No Go on PATH: a clear error naming what is missing, and nothing installed.
    let home = new_home();
    let (code, out, err) =
        lspgate_cli_with(dir.path(), &["install", "gopls"], &home, "/nonexistent");
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("`go` is not on PATH") && err.contains("https://go.dev/dl/"),
        "{err}"
    );
    assert!(!home.join("servers/gopls/bin/gopls").exists());
}

/// The hooks on Go: a post-edit hook after a method's signature changes in cobra's root
/// package names what breaks in that package's other files and in the `doc` package that
/// imports it (every named line calls the method: `go vet` agrees it no longer compiles),
/// and the turn-end gate keeps the turn going until the change is undone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_on_go_name_what_a_signature_change_breaks_in_other_packages() {
    require_go();
    let ws = real_project("cobra-1.8.1");
    let root = ws.path().to_path_buf();
    let d = Daemon::new();
    let env = go_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let file = root.join("command.go");
    let event = |name: &str| {
        json!({"session_id": "go-1", "cwd": root, "hook_event_name": name, "tool_name": "Edit",
               "tool_input": {"file_path": file}})
        .to_string()
    };
    let stop = json!({"session_id": "go-1", "cwd": root, "hook_event_name": "Stop",
                      "stop_hook_active": false})
    .to_string();
    let old = std::fs::read_to_string(&file).unwrap();
    // The session starts: gopls warmed and every file's diagnostics known before the first
    // edit (gopls pushes diagnostics, so importers' baselines cannot be had afterwards).
    let start = json!({"session_id": "go-1", "cwd": root, "hook_event_name": "SessionStart",
                       "source": "startup"})
    .to_string();
    let (code, out, err) = d.hook(&root, &["start"], &start, &env);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    let warmed = (0..240).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(500));
        let (_, out, _) = d.cli(&root, &["events", "--json", "--kinds", "[\"hook\"]"]);
        out.contains("baseline_files")
    });
    assert!(warmed, "no baseline pass recorded");
    let (code, out, err) = d.hook(
        &root,
        &["pre-edit", "--budget", "60"],
        &event("PreToolUse"),
        &env,
    );
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    std::fs::write(
        &file,
        old.replace(
            "func (c *Command) Name() string {",
            "func (c *Command) Name(full bool) string {",
        ),
    )
    .unwrap();
    let (code, out, err) = d.hook(
        &root,
        &["post-edit", "--budget", "60", "--max-lines", "500"],
        &event("PostToolUse"),
        &env,
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    let report = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        report.starts_with("lspgate: this edit introduced "),
        "{report}"
    );
    let named: Vec<(String, u64)> = report
        .lines()
        .filter(|l| l.contains(" error "))
        .map(|l| {
            let mut parts = l.split(':');
            let f = parts.next().unwrap().to_string();
            (f, parts.next().unwrap().parse().unwrap())
        })
        .collect();
    let files: std::collections::BTreeSet<&str> = named.iter().map(|(f, _)| f.as_str()).collect();
    // The written file, another file of its package, the importing package; nothing else
    // (gopls's analyzers' warnings were in the baselines too).
    assert!(files.contains("command.go"), "{report}");
    assert!(files.iter().any(|f| f.starts_with("doc/")), "{report}");
    assert!(!report.contains(" warning "), "{report}");
    assert!(
        files
            .iter()
            .any(|f| !f.starts_with("doc/") && *f != "command.go"),
        "{report}"
    );
    for (f, line) in &named {
        let text = std::fs::read_to_string(root.join(f)).unwrap();
        let at = text.lines().nth(*line as usize - 1).unwrap_or("");
        assert!(at.contains("Name()"), "{f}:{line} `{at}`\n{report}");
    }
    let (ok, vet) = go_tool(&root, "go", &["vet", "./doc/"]);
    assert!(!ok && vet.contains("Name"), "{vet}");

    // The turn ends with the change in place: kept going, naming the importer's error.
    let (code, out, err) = d.hook(&root, &["stop", "--max-lines", "500"], &stop, &env);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    assert_eq!(v["decision"], "block", "{out}");
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.contains("doc/"), "{reason}");
    for l in reason.lines().filter(|l| l.contains(" error ")) {
        let mut parts = l.split(':');
        let (f, line): (&str, usize) = (
            parts.next().unwrap(),
            parts.next().unwrap().parse().unwrap(),
        );
        let text = std::fs::read_to_string(root.join(f)).unwrap();
        assert!(
            text.lines().nth(line - 1).unwrap_or("").contains("Name()"),
            "{l}"
        );
    }
    // Undone: the turn ends in silence.
    d.hook(
        &root,
        &["pre-edit", "--budget", "60"],
        &event("PreToolUse"),
        &env,
    );
    std::fs::write(&file, &old).unwrap();
    d.hook(
        &root,
        &["post-edit", "--budget", "60"],
        &event("PostToolUse"),
        &env,
    );
    let (code, out, err) = d.hook(&root, &["stop"], &stop, &env);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
}
