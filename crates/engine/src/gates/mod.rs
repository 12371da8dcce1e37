//! Toolchain tasks for the gates: running a task's commands in the root (each an argv, never
//! through a shell; bounded, output captured and capped) and parsing their output into
//! diagnostics with a named parser (`cargo-json`, `gcc`, `tsc`, `nim`, `go`) or a regex with named
//! groups; task presets by marker (`presets`); and SARIF 2.1.0 for check reports.
//! A task that runs past its timeout has its process group killed.

mod presets;
pub mod sarif;

pub use presets::presets;

use std::path::Path;

use crate::workspace::env::Env;
use std::time::Duration;

use regex::Regex;
use serde_json::Value;

use crate::error::{Code, ToolError};
use crate::lsp::wire::Severity;
use crate::workspace::config::TaskConfig;
use crate::workspace::trust::Untrusted;

/// A task to run.
#[derive(Debug, Clone)]
pub struct Task {
    pub name: String,
    /// The commands, run one after the other in the root, each an argv executed directly (no
    /// shell); a config task has one, a preset may have several (one per file).
    pub steps: Vec<Vec<String>>,
    pub parser: Option<String>,
    /// Set for a task of the workspace's lspgate.toml while that file is not trusted: it does
    /// not run (`untrusted_config`).
    pub untrusted: Option<Untrusted>,
    /// Set for a preset whose extra arguments can run commands (see `presets`) on a workspace
    /// that is not trusted: it runs as it is, but `run_task` with `args` is refused
    /// (`untrusted_config`) until `lspgate trust`.
    pub args_untrusted: Option<Untrusted>,
    /// What lspgate left out of the command and why (put before the task's stderr).
    pub notes: Vec<String>,
}

impl Task {
    /// A `[[task]]` of lspgate.toml (`untrusted`: that file's trust).
    pub fn from_config(t: &TaskConfig, untrusted: Option<&Untrusted>) -> Task {
        Task {
            name: t.name.clone(),
            steps: vec![t.command.clone()],
            parser: t.parser.clone(),
            untrusted: untrusted.cloned(),
            args_untrusted: None,
            notes: Vec::new(),
        }
    }

    /// `untrusted_config` while the task's config is not trusted (checked again at each use:
    /// `lspgate trust` in another terminal takes effect at once).
    pub fn runnable(&self) -> Result<(), ToolError> {
        match &self.untrusted {
            Some(u) if !u.granted() => Err(u.error(&format!("task `{}`", self.name)).into()),
            _ => Ok(()),
        }
    }

    /// `untrusted_config` when `args` are given to a preset whose arguments can run commands
    /// and the workspace is not trusted (checked again at each use).
    pub fn accepts(&self, args: &[String]) -> Result<(), ToolError> {
        match &self.args_untrusted {
            Some(u) if !args.is_empty() && !u.granted() => Err(u
                .refuse(
                    &format!("run_task `{}` with extra args", self.name),
                    &format!(
                        "`{}`'s arguments can make it run commands or write files anywhere",
                        self.steps
                            .first()
                            .and_then(|s| s.first())
                            .map_or(self.name.as_str(), String::as_str)
                    ),
                )
                .into()),
            _ => Ok(()),
        }
    }
}

/// A diagnostic a toolchain printed; `file` as printed (relative to the root, or absolute).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskDiag {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub severity: Severity,
    pub code: Option<String>,
    pub message: String,
}

/// What running a task gave.
#[derive(Debug, Clone)]
pub struct TaskRun {
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    pub diagnostics: Vec<TaskDiag>,
    pub command_line: String,
}

/// Most bytes of stdout and of stderr kept.
const OUTPUT_CAP: usize = 256 * 1024;

fn cap(mut s: String) -> String {
    if s.len() > OUTPUT_CAP {
        let mut end = OUTPUT_CAP;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        let cut = s.len() - end;
        s.truncate(end);
        s.push_str(&format!("\n… {cut} more bytes not kept"));
    }
    s
}

/// Runs `task`'s steps (each plus `args`) in `root`, all within `timeout` (then the running
/// step's process group is killed), found on and run with `env` (the calling session's whole
/// environment, as its shell would run them; `None`: lspgate's own). The exit code is the
/// first non-zero one; outputs are concatenated.
pub async fn run(
    task: &Task,
    args: &[String],
    root: &Path,
    env: Option<&Env>,
    timeout: Duration,
) -> Result<TaskRun, ToolError> {
    task.runnable()?;
    task.accepts(args)?;
    if task.steps.is_empty() || task.steps.iter().any(Vec::is_empty) {
        return Err(ToolError::invalid(format!(
            "task `{}` has an empty command",
            task.name
        )));
    }
    let argv = |step: &[String]| step.iter().chain(args).cloned().collect::<Vec<String>>();
    let command_line = task
        .steps
        .iter()
        .map(|s| argv(s).join(" "))
        .collect::<Vec<_>>()
        .join("; ");
    crate::raw::record(
        || serde_json::json!({"task": task.name, "command": command_line, "cwd": root}),
    );
    let deadline = tokio::time::Instant::now() + timeout;
    let mut stdout = Vec::new();
    let mut stderr: Vec<u8> = task
        .notes
        .iter()
        .flat_map(|n| format!("lspgate: {n}\n").into_bytes())
        .collect();
    let mut exit_code = Some(0);
    for step in &task.steps {
        let argv = argv(step);
        let Some(out) = run_step(task, &argv, root, env, deadline, &command_line).await? else {
            return Ok(TaskRun {
                exit_code: None,
                stdout: cap(String::from_utf8_lossy(&stdout).into_owned()),
                stderr: format!("timed out after {}s", timeout.as_secs()),
                timed_out: true,
                diagnostics: Vec::new(),
                command_line,
            });
        };
        stdout.extend_from_slice(&out.stdout);
        stderr.extend_from_slice(&out.stderr);
        if exit_code == Some(0) {
            exit_code = out.status.code();
        }
    }
    let stdout = String::from_utf8_lossy(&stdout).into_owned();
    let stderr = String::from_utf8_lossy(&stderr).into_owned();
    let diagnostics = parse(task.parser.as_deref(), &stdout, &stderr)?;
    Ok(TaskRun {
        exit_code,
        stdout: cap(stdout),
        stderr: cap(stderr),
        timed_out: false,
        diagnostics,
        command_line,
    })
}

/// One step of a task, bounded by `deadline`: its output, or `None` when it was killed for
/// running past it.
async fn run_step(
    task: &Task,
    argv: &[String],
    root: &Path,
    env: Option<&Env>,
    deadline: tokio::time::Instant,
    command_line: &str,
) -> Result<Option<std::process::Output>, ToolError> {
    let Some((program, rest)) = argv.split_first() else {
        return Err(ToolError::invalid(format!(
            "task `{}` has an empty command",
            task.name
        )));
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(rest)
        .current_dir(root)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    // The session's environment, whole (the program is looked up on its PATH too).
    if let Some(env) = env {
        cmd.env_clear().envs(env.vars());
    }
    #[cfg(unix)]
    cmd.process_group(0);
    #[cfg(target_os = "linux")]
    // SAFETY: the hook makes one system call (prctl, async-signal-safe, no allocation); it asks
    // the kernel to kill the task's process when lspgate dies, even by SIGKILL (its own
    // children are reached by the group kill below). A failure is ignored, as before.
    unsafe {
        cmd.pre_exec(|| {
            let kill = Some(rustix::process::Signal::KILL);
            let _ = rustix::process::set_parent_process_death_signal(kill);
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(|e| {
        ToolError::new(
            Code::InvalidParams,
            format!("task `{}`: cannot run `{program}`: {e}", task.name),
        )
        .with_data(serde_json::json!({"command": command_line}))
    })?;
    // Until the task ends by itself, its whole group is killed if this future is dropped (a
    // cancelled activity, a client that gave up) or runs past the deadline.
    let mut group = Group(child.id());
    match tokio::time::timeout_at(deadline, child.wait_with_output()).await {
        Ok(r) => {
            group.0 = None;
            r.map(Some)
                .map_err(|e| ToolError::internal(format!("task `{}`: {e}", task.name)))
        }
        Err(_) => Ok(None),
    }
}

/// A running task's process group (its leader's pid), killed when dropped unless disarmed.
/// The leader is not reaped before then (its exit is only waited for through the future being
/// dropped with it), so the group id still names this group.
struct Group(Option<u32>);

impl Drop for Group {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(group) = self
            .0
            .and_then(|p| rustix::process::Pid::from_raw(p.try_into().ok()?))
        {
            // The group we created for the task; an error (gone) is ignored.
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
    }
}

fn severity(s: &str) -> Severity {
    match s.to_ascii_lowercase().as_str() {
        "warning" | "warn" => Severity::Warning,
        "note" | "info" | "information" | "hint" => Severity::Info,
        _ => Severity::Error,
    }
}

const GCC: &str = r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<severity>fatal error|error|warning|note): (?P<message>.*?)(?: \[(?P<code>-W[^\]]+)\])?$";
const TSC: &str = r"^(?P<file>[^(\n]+)\((?P<line>\d+),(?P<col>\d+)\): (?P<severity>error|warning) (?P<code>TS\d+): (?P<message>.*)$";
/// `go build` and `go vet`: `./a.go:3:7: msg`, `doc/b.go:6:14: msg` (vet's findings), `vet:
/// ./a_test.go:3:17: msg` (a type error vet met in a test file, which `go build` does not
/// compile), absolute paths for some; `go.mod:5: msg` without a column.
const GO: &str = r"^(?:vet: )?(?P<file>[^\s:#][^:\n]*\.(?:go|mod|work)):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<message>.*)$";
const NIM: &str = r"^(?P<file>[^(\n]+)\((?P<line>\d+), (?P<col>\d+)\) (?P<severity>Error|Warning|Hint): (?P<message>.*)$";

/// Parses a toolchain's output (stdout and stderr) with the named parser or a regex with named
/// groups `file`, `line`, `col`?, `severity`?, `code`?, `message`.
pub fn parse(parser: Option<&str>, stdout: &str, stderr: &str) -> Result<Vec<TaskDiag>, ToolError> {
    let pattern = match parser {
        None => return Ok(Vec::new()),
        Some("cargo-json") => return Ok(cargo_json(stdout)),
        Some("gcc") | Some("clang") => GCC,
        Some("tsc") => TSC,
        Some("nim") => NIM,
        Some("go") => GO,
        Some(custom) => custom,
    };
    let re = Regex::new(&format!("(?m){pattern}"))
        .map_err(|e| ToolError::invalid(format!("bad parser regex: {e}")))?;
    for g in ["file", "line", "message"] {
        if !re.capture_names().flatten().any(|n| n == g) {
            return Err(ToolError::invalid(format!(
                "parser regex needs a named group `{g}`"
            )));
        }
    }
    let mut out = Vec::new();
    for text in [stdout, stderr] {
        for c in re.captures_iter(text) {
            let num = |g: &str| c.name(g).and_then(|m| m.as_str().parse::<u32>().ok());
            out.push(TaskDiag {
                file: c["file"].trim().to_string(),
                line: num("line").unwrap_or(1),
                column: num("col").unwrap_or(1),
                severity: c
                    .name("severity")
                    .map_or(Severity::Error, |m| severity(m.as_str())),
                code: c.name("code").map(|m| m.as_str().to_string()),
                message: c["message"].trim().to_string(),
            });
        }
    }
    if parser == Some("go") {
        // `go vet` type-checks what `go build` compiled and says its errors again.
        let mut seen = std::collections::HashSet::new();
        out.retain(|d| {
            let file = d.file.trim_start_matches("./").to_string();
            seen.insert((file, d.line, d.column, d.message.clone()))
        });
    }
    Ok(out)
}

/// `cargo … --message-format=json`: compiler messages with their primary span.
fn cargo_json(stdout: &str) -> Vec<TaskDiag> {
    let mut out = Vec::new();
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v["reason"] != "compiler-message" {
            continue;
        }
        let m = &v["message"];
        let Some(span) = m["spans"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["is_primary"] == true))
        else {
            continue;
        };
        // Spans are relative to the package: anchor them at its manifest's folder.
        let name = span["file_name"].as_str().unwrap_or("");
        let file = match v["manifest_path"]
            .as_str()
            .and_then(|m| Path::new(m).parent())
        {
            Some(dir) if Path::new(name).is_relative() => {
                dir.join(name).to_string_lossy().into_owned()
            }
            _ => name.to_string(),
        };
        out.push(TaskDiag {
            file,
            line: span["line_start"].as_u64().unwrap_or(1) as u32,
            column: span["column_start"].as_u64().unwrap_or(1) as u32,
            severity: severity(m["level"].as_str().unwrap_or("error")),
            code: m["code"]["code"].as_str().map(str::to_string),
            message: m["message"].as_str().unwrap_or("").to_string(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn extra_args_of_a_preset_are_refused_on_an_untrusted_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let task = Task {
            name: "make".into(),
            steps: vec![vec![
                "/bin/sh".into(),
                "-c".into(),
                format!("touch '{}'", marker.display()),
            ]],
            parser: None,
            untrusted: None,
            args_untrusted: Some(Untrusted {
                config: dir.path().to_path_buf(),
                root: dir.path().to_path_buf(),
                digest: "not on record".into(),
                changed: false,
            }),
            notes: Vec::new(),
        };
        let run_with = |args: Vec<String>| {
            let (task, root) = (task.clone(), dir.path().to_path_buf());
            async move { run(&task, &args, &root, None, Duration::from_secs(10)).await }
        };
        let e = run_with(vec!["--eval=x".into()]).await.unwrap_err();
        assert_eq!(e.code, Code::UntrustedConfig);
        assert!(
            e.message
                .contains("run_task `make` with extra args is refused")
                && e.message.contains("lspgate trust --root"),
            "{}",
            e.message
        );
        assert!(!marker.exists(), "nothing runs");
        // Without extra args the preset runs as ever.
        let r = run_with(Vec::new()).await.unwrap();
        assert_eq!(r.exit_code, Some(0));
        assert!(marker.exists());
    }

    #[test]
    fn gcc_and_clang_output() {
        let err = "main.c: In function 'main':\nmain.c:6:20: error: invalid initializer\nutil.h:3:1: warning: unused variable 'x' [-Wunused-variable]\nmain.c:9: note: here\n";
        let d = parse(Some("gcc"), "", err).unwrap();
        assert_eq!(d.len(), 3);
        assert_eq!(
            (d[0].file.as_str(), d[0].line, d[0].column, d[0].severity),
            ("main.c", 6, 20, Severity::Error)
        );
        assert_eq!(d[1].code.as_deref(), Some("-Wunused-variable"));
        assert_eq!(d[1].message, "unused variable 'x'");
        assert_eq!(
            (d[2].line, d[2].column, d[2].severity),
            (9, 1, Severity::Info)
        );
    }

    #[test]
    fn tsc_nim_and_custom_regex() {
        let d = parse(
            Some("tsc"),
            "src/a.ts(5,14): error TS2322: Type 'number' is not assignable to type 'string'.\n",
            "",
        )
        .unwrap();
        assert_eq!(
            (
                d[0].file.as_str(),
                d[0].line,
                d[0].column,
                d[0].code.as_deref()
            ),
            ("src/a.ts", 5, 14, Some("TS2322"))
        );
        let d = parse(
            Some("nim"),
            "",
            "app.nim(3, 9) Error: type mismatch: got <string> but expected 'int'\n",
        )
        .unwrap();
        assert_eq!(
            (d[0].line, d[0].column, d[0].severity),
            (3, 9, Severity::Error)
        );
        let d = parse(
            Some(r"^FAIL (?P<file>\S+):(?P<line>\d+) (?P<message>.*)$"),
            "FAIL t.py:12 boom\nok\n",
            "",
        )
        .unwrap();
        assert_eq!(
            (d[0].file.as_str(), d[0].line, d[0].message.as_str()),
            ("t.py", 12, "boom")
        );
        assert!(parse(Some("(?P<x>.*)"), "", "").is_err());
    }

    #[test]
    fn go_build_and_vet_output() {
        // As go 1.26 prints them: `go build ./...` with an error in command.go, then
        // `go vet ./...` saying it again, a type error in a test file, a finding in doc/.
        let err = "# github.com/spf13/cobra\n./command.go:267:6: declared and not used: unused\n# github.com/spf13/cobra\n# [github.com/spf13/cobra]\n./command.go:267:6: declared and not used: unused\nvet: ./broken_test.go:3:17: undefined: undefinedThing\n/w/c2/x_test.go:3:1: wrong signature for TestX, must be: func TestX(t *testing.T)\ndoc/vetme.go:6:14: fmt.Printf format %d has arg \"x\" of wrong type string\ngo: errors parsing go.mod:\n/w/c2/go.mod:5: unknown directive: foo\n";
        let d = parse(Some("go"), "", err).unwrap();
        let got: Vec<(&str, u32, u32)> = d
            .iter()
            .map(|d| (d.file.as_str(), d.line, d.column))
            .collect();
        assert_eq!(
            got,
            [
                ("./command.go", 267, 6),
                ("./broken_test.go", 3, 17),
                ("/w/c2/x_test.go", 3, 1),
                ("doc/vetme.go", 6, 14),
                ("/w/c2/go.mod", 5, 1),
            ]
        );
        assert!(d.iter().all(|d| d.severity == Severity::Error));
        assert_eq!(d[1].message, "undefined: undefinedThing");
    }

    #[test]
    fn cargo_json_messages() {
        let line = r#"{"reason":"compiler-message","message":{"message":"mismatched types","code":{"code":"E0308"},"level":"error","spans":[{"file_name":"src/main.rs","line_start":3,"column_start":18,"is_primary":true}]}}"#;
        let d = parse(
            Some("cargo-json"),
            &format!("{line}\n{{\"reason\":\"build-finished\"}}\n"),
            "",
        )
        .unwrap();
        assert_eq!(d.len(), 1);
        assert_eq!(
            (
                d[0].file.as_str(),
                d[0].line,
                d[0].column,
                d[0].code.as_deref()
            ),
            ("src/main.rs", 3, 18, Some("E0308"))
        );
    }
}
