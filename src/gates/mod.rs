//! Toolchain tasks for the gates: running a configured command in the root (bounded, output
//! captured and capped) and parsing its output into diagnostics with a named parser
//! (`cargo-json`, `gcc`, `tsc`, `nim`) or a regex with named groups; task presets by marker;
//! and SARIF 2.1.0 for check reports.

pub mod sarif;

use std::path::Path;
use std::time::Duration;

use regex::Regex;
use serde_json::Value;

use crate::error::{Code, ToolError};
use crate::lsp::wire::Severity;

/// A task to run.
#[derive(Debug, Clone)]
pub struct Task {
    pub name: String,
    pub command: Vec<String>,
    pub parser: Option<String>,
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

/// Runs `task` (plus `args`) in `root`, killed after `timeout`.
pub async fn run(
    task: &Task,
    args: &[String],
    root: &Path,
    timeout: Duration,
) -> Result<TaskRun, ToolError> {
    let Some((program, rest)) = task.command.split_first() else {
        return Err(ToolError::invalid(format!(
            "task `{}` has an empty command",
            task.name
        )));
    };
    let command_line = task
        .command
        .iter()
        .chain(args)
        .cloned()
        .collect::<Vec<_>>()
        .join(" ");
    crate::raw::record(
        || serde_json::json!({"task": task.name, "command": command_line, "cwd": root}),
    );
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(rest)
        .args(args)
        .current_dir(root)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    let child = cmd.spawn().map_err(|e| {
        ToolError::new(
            Code::InvalidParams,
            format!("task `{}`: cannot run `{program}`: {e}", task.name),
        )
        .with_data(serde_json::json!({"command": command_line}))
    })?;
    let pid = child.id();
    let (out, timed_out) = match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(r) => (
            r.map_err(|e| ToolError::internal(format!("task `{}`: {e}", task.name)))?,
            false,
        ),
        Err(_) => {
            #[cfg(unix)]
            if let Some(pid) = pid {
                // SAFETY: killpg of the group we created for the task.
                unsafe {
                    libc::killpg(pid as libc::pid_t, libc::SIGKILL);
                }
            }
            return Ok(TaskRun {
                exit_code: None,
                stdout: String::new(),
                stderr: format!("timed out after {}s", timeout.as_secs()),
                timed_out: true,
                diagnostics: Vec::new(),
                command_line,
            });
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let diagnostics = parse(task.parser.as_deref(), &stdout, &stderr)?;
    Ok(TaskRun {
        exit_code: out.status.code(),
        stdout: cap(stdout),
        stderr: cap(stderr),
        timed_out,
        diagnostics,
        command_line,
    })
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

/// Task presets for the toolchains whose markers the workspace holds, runnable here.
pub fn presets(root: &Path) -> Vec<Task> {
    let has = |marker: &str| crate::workspace::has_marker(root, marker);
    let on_path = |c: &str| crate::workspace::presets::which(c).is_some();
    let mut out = Vec::new();
    if has("Cargo.toml") && on_path("cargo") {
        out.push(Task {
            name: "cargo".into(),
            command: vec![
                "cargo".into(),
                "check".into(),
                "--message-format=json".into(),
            ],
            parser: Some("cargo-json".into()),
        });
    }
    if has("tsconfig.json") && on_path("tsc") {
        out.push(Task {
            name: "tsc".into(),
            command: vec![
                "tsc".into(),
                "--noEmit".into(),
                "--pretty".into(),
                "false".into(),
            ],
            parser: Some("tsc".into()),
        });
    }
    let sh = |script: &str| vec!["sh".to_string(), "-c".to_string(), script.to_string()];
    if has("compile_flags.txt") && on_path("cc") {
        out.push(Task {
            name: "cc".into(),
            command: sh(
                "cc -fsyntax-only $(cat compile_flags.txt) $(find . -name '*.c' -not -path './.*')",
            ),
            parser: Some("gcc".into()),
        });
    }
    if (has("*.nimble") || has("*.nim")) && on_path("nim") {
        out.push(Task {
            name: "nim".into(),
            command: sh("for f in *.nim; do nim check --hints:off \"$f\"; done"),
            parser: Some("nim".into()),
        });
    }
    let pytest_markers = has("pytest.ini") || has("conftest.py") || has("tests/conftest.py");
    if pytest_markers && on_path("pytest") {
        out.push(Task {
            name: "pytest".into(),
            command: vec![
                "pytest".into(),
                "-q".into(),
                "--tb=line".into(),
                "-p".into(),
                "no:cacheprovider".into(),
            ],
            parser: Some(r"^(?P<file>[^\s:]+\.py):(?P<line>\d+): (?P<message>.*)$".into()),
        });
    }
    if has("Makefile") && on_path("make") {
        out.push(Task {
            name: "make".into(),
            command: vec!["make".into()],
            parser: Some("gcc".into()),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn presets_follow_markers() {
        let dir = tempfile::tempdir().unwrap();
        let names = |d: &Path| presets(d).into_iter().map(|t| t.name).collect::<Vec<_>>();
        assert!(names(dir.path()).is_empty());
        std::fs::write(dir.path().join("compile_flags.txt"), "-std=c11\n").unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "").unwrap();
        let found = names(dir.path());
        if crate::workspace::presets::which("cc").is_some() {
            assert!(found.contains(&"cc".to_string()), "{found:?}");
        }
        if crate::workspace::presets::which("cargo").is_some() {
            assert!(found.contains(&"cargo".to_string()), "{found:?}");
        }
    }

    #[tokio::test]
    async fn the_cc_preset_runs_and_parses() {
        if crate::workspace::presets::which("cc").is_none() {
            panic!("cc is needed for this test");
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("compile_flags.txt"), "-std=c11\n").unwrap();
        std::fs::write(dir.path().join("bad.c"), "int main(void) { return x; }\n").unwrap();
        let task = presets(dir.path())
            .into_iter()
            .find(|t| t.name == "cc")
            .unwrap();
        let run = run(&task, &[], dir.path(), Duration::from_secs(60))
            .await
            .unwrap();
        assert_ne!(run.exit_code, Some(0));
        let d = run
            .diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error)
            .unwrap();
        assert!(d.file.ends_with("bad.c") && d.line == 1, "{d:?}");
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
