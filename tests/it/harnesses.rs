//! End to end with the real agent harnesses (Claude Code, Codex, Gemini CLI, installed pinned in
//! `.tools/harnesses` by `scripts/install-test-servers.sh`): `lspgate setup` configures a
//! temporary Python project, the harness runs headless against a scripted model of our own on
//! 127.0.0.1 (`harnesses/mock_model.py`) that asks for an edit breaking an importer, and the
//! request the harness sends back after the edit must carry lspgate's post-edit words (the file,
//! line, column and pyright's message), as the harness delivers hook output to its model. The
//! turn-end tests (`lspgate hook stop`) check that a block makes the harness go on with the
//! reason; the session-start tests (`lspgate hook start`) that a session with no edit at all
//! leaves pyright running for the project. A harness that is not installed is skipped with a
//! note, except under CI (`CI` set), where that is a failure. Cursor has no headless binary to
//! drive: it is not covered here.

use crate::common;
use common::*;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long one harness run may take before it is killed (its process group).
const RUN_LIMIT: Duration = Duration::from_secs(150);

/// One harness at a time: each runs pyright, a daemon and a Node.js or native agent on a small
/// machine.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const LIB: &str = "def total(x: int) -> int:\n    return x\n";
/// lib.py once the scripted edit made it return text: app.py's `n: int = total(1)` breaks.
const LIB_TEXT: &str = "def total(x: int) -> str:\n    return str(x)\n";
const APP: &str = "from lib import total\n\nn: int = total(1)\n";
/// What the post-edit hook says of it, and pyright's own words.
const INTRODUCED: &str = "lspgate: this edit introduced 1 error:";
const WHERE: &str = "app.py:3:10 error";
const PYRIGHT_SAYS: &str = "Type \"str\" is not assignable to declared type \"int\"";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Harness {
    Claude,
    Codex,
    Gemini,
}

impl Harness {
    /// The executable's name and `lspgate setup`'s name for the harness.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Harness::Claude => ("claude", "claude-code"),
            Harness::Codex => ("codex", "codex"),
            Harness::Gemini => ("gemini", "gemini"),
        }
    }

    /// The installed executable, or `None` (with a note) when it is not installed; under CI a
    /// missing harness fails the test.
    fn find(self) -> Option<PathBuf> {
        let (bin, _) = self.names();
        let path = repo().join(".tools/harnesses/node_modules/.bin").join(bin);
        if path.is_file() {
            return Some(path);
        }
        let why = format!(
            "{bin} is not installed in .tools/harnesses: run scripts/install-test-servers.sh"
        );
        assert!(std::env::var_os("CI").is_none(), "{why}");
        eprintln!("skipped: {why}");
        None
    }

    /// The scripted model's steps: the edit that breaks app.py (Claude Code reads the file
    /// first, as its Edit requires), then text that ends the turn (served again after that).
    fn script(self, root: &Path) -> Value {
        let lib = root.join("lib.py").to_string_lossy().into_owned();
        let done = json!({"text": "Done: total now returns text."});
        match self {
            Harness::Claude => json!([
                {"tool": "Read", "input": {"file_path": lib}},
                {"tool": "Edit", "input": {"file_path": lib, "old_string": LIB, "new_string": LIB_TEXT}},
                done,
            ]),
            Harness::Codex => json!([
                {"tool": "apply_patch", "input": format!(
                    "*** Begin Patch\n*** Update File: lib.py\n@@\n{}{}*** End Patch\n",
                    prefixed(LIB, '-'),
                    prefixed(LIB_TEXT, '+'),
                )},
                done,
            ]),
            Harness::Gemini => json!([
                {"tool": "replace", "input": {
                    "file_path": lib,
                    "instruction": "Make total return its argument as text.",
                    "old_string": LIB,
                    "new_string": LIB_TEXT,
                }},
                done,
            ]),
        }
    }

    /// The number of tool steps in `script`.
    fn edit_steps(self) -> usize {
        match self {
            Harness::Claude => 2,
            Harness::Codex | Harness::Gemini => 1,
        }
    }

    /// The harness's own configuration in the temporary home: the scripted model as its
    /// provider (Codex), the API-key sign-in (Gemini CLI: with only a base URL it picks a
    /// "gateway" sign-in its headless mode refuses).
    fn home_config(self, home: &Path, port: u16) {
        match self {
            Harness::Claude => {}
            Harness::Codex => write(
                &home.join(".codex/config.toml"),
                &format!(
                    "# gpt-5.5: a model Codex knows, so its apply_patch tool is offered\n\
                     model = \"gpt-5.5\"\nmodel_provider = \"mock\"\n\n\
                     [model_providers.mock]\nname = \"mock\"\n\
                     base_url = \"http://127.0.0.1:{port}/v1\"\n\
                     wire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\n"
                ),
            ),
            Harness::Gemini => write(
                &home.join(".gemini/settings.json"),
                "{\"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}}}\n",
            ),
        }
    }

    /// The headless command: arguments and environment.
    fn command(self, bin: &Path, port: u16, prompt: &str) -> Command {
        let mut cmd = Command::new(bin);
        let base = format!("http://127.0.0.1:{port}");
        match self {
            Harness::Claude => {
                cmd.args(["-p", prompt, "--permission-mode", "acceptEdits"])
                    .args(["--model", "claude-sonnet-4-5"])
                    .env("ANTHROPIC_BASE_URL", base)
                    .env("ANTHROPIC_API_KEY", "sk-test")
                    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                    .env("DISABLE_AUTOUPDATER", "1");
            }
            Harness::Codex => {
                // --trust: the project's .codex/ is read only in a trusted project; hooks are
                // otherwise held until reviewed in the TUI.
                cmd.args(["exec", "--skip-git-repo-check", "--trust"])
                    .args(["--dangerously-bypass-hook-trust", "-s", "workspace-write"])
                    .arg(prompt)
                    .env("MOCK_API_KEY", "test");
            }
            Harness::Gemini => {
                // The variable, not --skip-trust: that flag trusts the folder too late for
                // its project settings (and hooks) to be read.
                cmd.args(["-m", "gemini-2.5-pro", "--approval-mode", "yolo"])
                    .args(["-p", prompt])
                    .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
                    .env("GOOGLE_GEMINI_BASE_URL", base)
                    .env("GEMINI_API_KEY", "test");
            }
        }
        for var in [
            "ANTHROPIC_AUTH_TOKEN",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "CODEX_HOME",
            "GOOGLE_API_KEY",
            "GOOGLE_GENAI_USE_VERTEXAI",
            "GOOGLE_GENAI_USE_GCA",
            "GOOGLE_CLOUD_PROJECT",
        ] {
            cmd.env_remove(var);
        }
        cmd
    }

    /// Where the harness puts a tool's result and the post-tool hook's words for its model, in
    /// the request that follows the tool call: their text.
    fn tool_result_text(self, body: &Value) -> String {
        match self {
            // The last message: the user's, holding the tool_result (hook words inside it).
            Harness::Claude => {
                let last = body["messages"].as_array().and_then(|m| m.last());
                let blocks = last.and_then(|m| m["content"].as_array());
                blocks
                    .into_iter()
                    .flatten()
                    .filter(|b| b["type"] == "tool_result")
                    .map(|b| match &b["content"] {
                        Value::String(s) => s.clone(),
                        other => texts(other),
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }
            // Everything after the last apply_patch call: the hook's developer message, then
            // the call's output.
            Harness::Codex => {
                let input = body["input"].as_array().cloned().unwrap_or_default();
                let from = input
                    .iter()
                    .rposition(|i| i["type"] == "custom_tool_call" || i["type"] == "function_call")
                    .map_or(input.len(), |at| at + 1);
                input[from..]
                    .iter()
                    .map(|i| match i["type"].as_str() {
                        Some("message") => texts(&i["content"]),
                        _ => i["output"].as_str().unwrap_or_default().to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }
            // The last content: the user's functionResponse (hook words appended to it).
            Harness::Gemini => {
                let last = body["contents"].as_array().and_then(|c| c.last());
                let parts = last.and_then(|c| c["parts"].as_array());
                parts
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p["functionResponse"]["response"]["output"].as_str())
                    .map(str::to_string)
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        }
    }

    /// The text of the last user turn of a request (where a turn-end block's reason goes).
    fn last_user_text(self, body: &Value) -> String {
        let (list, role) = match self {
            Harness::Claude => (&body["messages"], "user"),
            Harness::Codex => (&body["input"], "user"),
            Harness::Gemini => (&body["contents"], "user"),
        };
        let last = list
            .as_array()
            .and_then(|l| l.iter().rev().find(|m| m["role"] == role));
        match (self, last) {
            (_, None) => String::new(),
            (Harness::Gemini, Some(m)) => texts(&m["parts"]),
            (_, Some(m)) => match &m["content"] {
                Value::String(s) => s.clone(),
                other => texts(other),
            },
        }
    }
}

/// Each line of `text` with `mark` before it (a patch's removed or added lines).
fn prefixed(text: &str, mark: char) -> String {
    text.lines().map(|l| format!("{mark}{l}\n")).collect()
}

/// The `text` members of a list of content blocks or parts, joined.
fn texts(list: &Value) -> String {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The scripted model, a child of the test, killed when dropped.
struct Mock {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
}

impl Mock {
    fn start(script: &Value) -> Mock {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("script.json"), &script.to_string());
        let port_file = dir.path().join("port");
        let child = Command::new("python3")
            .arg(repo().join("tests/harnesses/mock_model.py"))
            .arg(dir.path().join("script.json"))
            .arg(dir.path().join("requests.jsonl"))
            .arg(&port_file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("python3 runs the scripted model");
        let started = Instant::now();
        let port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                break text.trim().parse().unwrap();
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the scripted model did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        Mock { child, dir, port }
    }

    /// The requests that offered tools (the agent loop's), in order: (step served, body).
    fn requests(&self) -> Vec<(Value, Value)> {
        let text =
            std::fs::read_to_string(self.dir.path().join("requests.jsonl")).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|e| e["main"] == true)
            .map(|e| (e["step"].clone(), e["body"].clone()))
            .collect()
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A harness run's outcome.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// Runs `cmd` in a process group of its own, at most `RUN_LIMIT`, then kills that group (what
/// the harness started and left behind: MCP servers, a relaunched child).
fn run(mut cmd: Command, out_dir: &Path) -> Run {
    use std::os::unix::process::CommandExt;
    let stdout = out_dir.join("harness.out");
    let stderr = out_dir.join("harness.err");
    cmd.process_group(0)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap());
    let started = Instant::now();
    let mut child = cmd.spawn().expect("the harness starts");
    let group = rustix::process::Pid::from_child(&child);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if started.elapsed() > RUN_LIMIT {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let took = started.elapsed();
    let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    Run {
        code,
        stdout: std::fs::read_to_string(&stdout).unwrap_or_default(),
        stderr: std::fs::read_to_string(&stderr).unwrap_or_default(),
        took,
    }
}

/// One end-to-end run: a project set up by `lspgate setup HARNESS`, the harness driven by the
/// scripted model. Returns the setup's files' text, the run, and the model's requests; `None`
/// when the harness is not installed.
struct Session {
    _lock: std::sync::MutexGuard<'static, ()>,
    daemon: Daemon,
    ws: tempfile::TempDir,
    mock: Mock,
    configured: String,
    run: Run,
}

/// What the scripted model does: the breaking edit, or only say hello.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Turn {
    Edit,
    Hello,
}

fn session(harness: Harness, turn: Turn) -> Option<Session> {
    let bin = harness.find()?;
    require("pyright-langserver");
    let lock = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let ws = workspace(&[
        ("pyproject.toml", "[project]\nname = \"e2e\"\n"),
        ("lib.py", LIB),
        ("app.py", APP),
    ]);
    let root = ws.path();
    let home = tempfile::tempdir().unwrap();
    let script = match turn {
        Turn::Edit => harness.script(root),
        Turn::Hello => json!([{"text": "Hello."}]),
    };
    let mock = Mock::start(&script);
    harness.home_config(home.path(), mock.port);

    // lspgate's own setup writes the harness's configuration (project scope, the default).
    let (_, name) = harness.names();
    let out = Command::new(LSPGATE)
        .args(["setup", name, "--root", &root.to_string_lossy()])
        .args(["--command", LSPGATE])
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "lspgate setup {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let configured = [
        ".claude/settings.json",
        ".codex/config.toml",
        ".gemini/settings.json",
    ]
    .iter()
    .filter_map(|f| std::fs::read_to_string(root.join(f)).ok())
    .collect::<Vec<_>>()
    .join("\n");

    // The hooks reach this test's own daemon through the harness's environment.
    let daemon = Daemon::new();
    let mut cmd = harness.command(
        &bin,
        mock.port,
        "Make total in lib.py return its argument as text.",
    );
    cmd.current_dir(root)
        .env("HOME", home.path())
        .env("PATH", test_path())
        .envs(daemon.env(&[]));
    let run = run(cmd, mock.dir.path());
    // Codex starts its MCP servers (`lspgate serve`, as setup wrote it) with only a few
    // variables (HOME, PATH, SHELL, LANG, TERM…): that one's daemon is the temporary home's,
    // not this test's, and outlives the run. Stopped here.
    let _ = Command::new(LSPGATE)
        .args(["daemon", "stop"])
        .env("HOME", home.path())
        .env("PATH", test_path())
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("LSPGATE_HOME")
        .output();
    eprintln!("{name}: the run took {:.1} s", run.took.as_secs_f64());
    Some(Session {
        _lock: lock,
        daemon,
        ws,
        mock,
        configured,
        run,
    })
}

impl Session {
    /// Everything a failed assertion should show.
    fn story(&self) -> String {
        let requests: Vec<String> = self
            .mock
            .requests()
            .iter()
            .map(|(step, body)| {
                // The end of the conversation it carries, not its tool list.
                let list = ["messages", "input", "contents"]
                    .iter()
                    .find_map(|k| body[*k].as_array())
                    .cloned()
                    .unwrap_or_default();
                let text = Value::from(list[list.len().saturating_sub(2)..].to_vec()).to_string();
                let mut from = text.len().saturating_sub(2000);
                while !text.is_char_boundary(from) {
                    from += 1;
                }
                format!("step {step}: …{}", &text[from..])
            })
            .collect();
        format!(
            "exit {:?} after {:.1} s\n--- stdout\n{}\n--- stderr\n{}\n--- configuration\n{}\n--- requests\n{}",
            self.run.code,
            self.run.took.as_secs_f64(),
            self.run.stdout,
            self.run.stderr,
            self.configured,
            requests.join("\n")
        )
    }

    /// The edit was made, and the request after it carries the post-edit hook's report.
    fn assert_post_edit_reached_the_model(&self, harness: Harness) {
        let story = self.story();
        assert_eq!(self.run.code, Some(0), "{story}");
        let lib = std::fs::read_to_string(self.ws.path().join("lib.py")).unwrap();
        assert_eq!(lib, LIB_TEXT, "the scripted edit was not made\n{story}");
        let requests = self.mock.requests();
        let after = harness.edit_steps();
        assert!(requests.len() > after, "no request after the edit\n{story}");
        let said = harness.tool_result_text(&requests[after].1);
        for words in [INTRODUCED, WHERE, PYRIGHT_SAYS] {
            assert!(
                said.contains(words),
                "`{words}` is not in what the model got after the edit: {said}\n{story}"
            );
        }
    }

    /// The turn-end hook blocked the first end of the turn, and the harness went on with a
    /// request whose last user turn holds the reason, naming the error; then it ended.
    fn assert_stop_block_made_it_go_on(&self, harness: Harness) {
        let story = self.story();
        assert!(
            self.configured.contains(" hook stop"),
            "setup wrote no `lspgate hook stop`\n{story}"
        );
        assert_eq!(self.run.code, Some(0), "{story}");
        let requests = self.mock.requests();
        // The request after the one answered with the turn's closing text.
        let ended = harness.edit_steps() + 1;
        assert!(
            requests.len() > ended,
            "the harness did not go on after the turn ended\n{story}"
        );
        let reason = harness.last_user_text(&requests[ended].1);
        assert!(
            reason.contains(WHERE) && reason.contains(PYRIGHT_SAYS),
            "the block's reason naming the error is not in the request after the turn's end: {reason}\n{story}"
        );
    }
    /// The session-start hook warmed the project: with no edit and no tool call in the whole
    /// session, the test's daemon runs pyright for the project once the harness is done.
    fn assert_session_start_warmed_the_project(&self) {
        let configured = self.configured.contains(" hook start");
        assert!(
            configured,
            "setup wrote no `lspgate hook start`\n{}",
            self.story()
        );
        assert_eq!(self.run.code, Some(0), "{}", self.story());
        assert_eq!(
            self.mock.requests().len(),
            1,
            "one request, no tool call\n{}",
            self.story()
        );
        let root = self.ws.path().canonicalize().unwrap();
        // The hook answers at once and the servers start behind it: pyright comes up within
        // seconds, with no edit to ask for it.
        let mut status = None;
        let mut warm = false;
        for _ in 0..120 {
            status = self.daemon.status();
            warm = status
                .as_ref()
                .and_then(|s| s["roots"].as_array())
                .is_some_and(|roots| {
                    roots.iter().any(|r| {
                        r["root"].as_str().map(Path::new) == Some(root.as_path())
                            && r["servers"].as_array().is_some_and(|servers| {
                                servers.iter().any(|s| {
                                    s["name"].as_str().is_some_and(|n| n.contains("pyright"))
                                        && s["pid"].is_u64()
                                })
                            })
                    })
                });
            if warm {
                break;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        let story = format!("{}\n--- daemon status\n{status:?}", self.story());
        assert!(
            warm,
            "no pyright running for the project after the session started\n{story}"
        );
    }
}

#[test]
fn claude_code_delivers_the_post_edit_report_to_the_model() {
    if let Some(s) = session(Harness::Claude, Turn::Edit) {
        s.assert_post_edit_reached_the_model(Harness::Claude);
    }
}

#[test]
fn codex_delivers_the_post_edit_report_to_the_model() {
    if let Some(s) = session(Harness::Codex, Turn::Edit) {
        s.assert_post_edit_reached_the_model(Harness::Codex);
    }
}

#[test]
fn gemini_delivers_the_post_edit_report_to_the_model() {
    if let Some(s) = session(Harness::Gemini, Turn::Edit) {
        s.assert_post_edit_reached_the_model(Harness::Gemini);
    }
}

#[test]
fn claude_code_goes_on_when_the_turn_end_gate_blocks() {
    if let Some(s) = session(Harness::Claude, Turn::Edit) {
        s.assert_stop_block_made_it_go_on(Harness::Claude);
    }
}

#[test]
fn codex_goes_on_when_the_turn_end_gate_blocks() {
    if let Some(s) = session(Harness::Codex, Turn::Edit) {
        s.assert_stop_block_made_it_go_on(Harness::Codex);
    }
}

#[test]
fn gemini_goes_on_when_the_turn_end_gate_blocks() {
    if let Some(s) = session(Harness::Gemini, Turn::Edit) {
        s.assert_stop_block_made_it_go_on(Harness::Gemini);
    }
}

#[test]
fn claude_code_session_start_warms_the_project() {
    if let Some(s) = session(Harness::Claude, Turn::Hello) {
        s.assert_session_start_warmed_the_project();
    }
}

#[test]
fn codex_session_start_warms_the_project() {
    if let Some(s) = session(Harness::Codex, Turn::Hello) {
        s.assert_session_start_warmed_the_project();
    }
}

#[test]
fn gemini_session_start_warms_the_project() {
    if let Some(s) = session(Harness::Gemini, Turn::Hello) {
        s.assert_session_start_warmed_the_project();
    }
}
