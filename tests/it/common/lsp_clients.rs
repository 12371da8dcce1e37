//! Real LSP clients nobody here wrote, driven by a small step language: Neovim's built-in
//! client (`tests/lsp_face/nvim_client.lua`) and pygls's `LanguageClient`
//! (`tests/lsp_face/pygls_client.py`), each writing what it observed as JSON lines.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{repo, test_path};

/// Which real client runs the steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Driver {
    /// Neovim's built-in LSP client (`nvim --headless`, Debian's 0.7.2).
    Nvim,
    /// pygls's `LanguageClient` (`.tools/lsp-venv`).
    Pygls,
}

/// One client process taking its steps; killed (with its server) when dropped.
pub(crate) struct LspClient {
    pub driver: Driver,
    child: Child,
    dir: tempfile::TempDir,
}

impl LspClient {
    /// Starts `driver` on `root` with `server` as its language server command (looked up on the
    /// test PATH, which the client and so the server get) and `steps` (a JSON list, see
    /// nvim_client.lua); `env` goes to the client and its server.
    pub(crate) fn spawn(
        driver: Driver,
        server: &[&str],
        root: &Path,
        steps: Value,
        env: &[(&str, &str)],
    ) -> LspClient {
        let dir = tempfile::Builder::new()
            .prefix("lspf-client-")
            .tempdir()
            .unwrap();
        std::fs::create_dir(dir.path().join("signals")).unwrap();
        let mut cmd = match driver {
            Driver::Nvim => {
                super::require("nvim");
                let script = repo().join("tests/lsp_face/nvim_client.lua");
                let mut c = Command::new("nvim");
                c.args([
                    "--headless",
                    "--clean",
                    "-u",
                    "NONE",
                    "-i",
                    "NONE",
                    "-n",
                    "-c",
                ])
                .arg(format!("luafile {}", script.display()));
                c
            }
            Driver::Pygls => {
                let python = repo().join(".tools/lsp-venv/bin/python");
                assert!(
                    python.is_file(),
                    "pygls is not installed: run scripts/install-test-servers.sh"
                );
                let mut c = Command::new(python);
                c.arg(repo().join("tests/lsp_face/pygls_client.py"));
                c
            }
        };
        use std::os::unix::process::CommandExt;
        cmd.current_dir(root)
            .env("PATH", test_path())
            .env("LSPF_CMD", serde_json::to_string(server).unwrap())
            .env("LSPF_ROOT", root)
            .env("LSPF_OUT", dir.path().join("out.jsonl"))
            .env("LSPF_SIGNALS", dir.path().join("signals"))
            .env("LSPF_STEPS", steps.to_string())
            .env("LSPF_STDERR", dir.path().join("server.stderr"))
            // Neovim's own files (its lsp.log) stay in the client's folder.
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .env("XDG_STATE_HOME", dir.path().join("state"))
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("client.stderr")).unwrap())
            // A group of its own, so that dropping the client kills its server too.
            .process_group(0);
        let child = cmd.spawn().expect("start the LSP client");
        LspClient { driver, child, dir }
    }

    /// Every observation so far.
    pub(crate) fn observations(&self) -> Observations {
        let text = std::fs::read_to_string(self.dir.path().join("out.jsonl")).unwrap_or_default();
        Observations {
            events: text
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect(),
            logs: self.logs(),
        }
    }

    /// The client's stderr, its server's stderr (pygls) and Neovim's lsp.log, for messages.
    pub(crate) fn logs(&self) -> String {
        ["client.stderr", "server.stderr", "cache/nvim/lsp.log"]
            .iter()
            .filter_map(|f| {
                let text = std::fs::read_to_string(self.dir.path().join(f)).ok()?;
                let tail: String = text
                    .chars()
                    .rev()
                    .take(4000)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                Some(format!("--- {f}:\n{tail}"))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Lets a `{"do": "wait_go", "name": NAME}` step go on.
    pub(crate) fn go(&self, name: &str) {
        std::fs::write(self.dir.path().join("signals").join(name), b"").unwrap();
    }

    /// Waits (at most `secs`) until the step labelled `label` has finished; its line. Panics
    /// with everything observed when it does not come, or the client ended first.
    pub(crate) async fn step(&mut self, label: &str, secs: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let obs = self.observations();
            if let Some(s) = obs.find_step(label) {
                return s.clone();
            }
            let ended = self.child.try_wait().unwrap().is_some() || obs.done();
            if ended || Instant::now() >= deadline {
                let why = if ended {
                    "the client ended"
                } else {
                    "timed out"
                };
                panic!(
                    "{:?}: no step {label:?} ({why})\n{}",
                    self.driver,
                    obs.dump()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits (at most `secs`) for the client to take all its steps and exit; what it observed.
    pub(crate) async fn finish(mut self, secs: u64) -> Observations {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while self.child.try_wait().unwrap().is_none() {
            if Instant::now() >= deadline {
                self.kill();
                panic!(
                    "{:?} did not finish within {secs}s\n{}",
                    self.driver,
                    self.observations().dump()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.observations()
    }

    /// The client's pid (its group's id too).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    fn kill(&mut self) {
        // SAFETY: kill(2) on the process group this client leads (its own, from spawn).
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.kill();
        } else {
            // The client is gone; its server may not be (a group member left behind).
            // SAFETY: as in `kill`.
            unsafe {
                libc::kill(-(self.child.id() as i32), libc::SIGKILL);
            }
        }
    }
}

/// What a client wrote: `initialized`, `diagnostics`, `step`, `exit`, `error` and `done` lines.
pub(crate) struct Observations {
    pub events: Vec<Value>,
    pub logs: String,
}

impl Observations {
    pub(crate) fn find_step(&self, label: &str) -> Option<&Value> {
        self.events
            .iter()
            .find(|e| e["event"] == "step" && e["label"] == label)
    }

    /// The result of the step labelled `label`, which must have finished without error.
    pub(crate) fn result(&self, label: &str) -> &Value {
        let s = self
            .find_step(label)
            .unwrap_or_else(|| panic!("no step {label:?}\n{}", self.dump()));
        assert!(
            s["err"].is_null(),
            "step {label:?} failed: {}\n{}",
            s["err"],
            self.dump()
        );
        &s["result"]
    }

    /// Every `publishDiagnostics` received for `file` (a path), in order: their diagnostics.
    pub(crate) fn published(&self, file: &Path) -> Vec<&Value> {
        let uri = uri_of(file);
        self.events
            .iter()
            .filter(|e| e["event"] == "diagnostics" && e["uri"] == uri.as_str())
            .map(|e| &e["diagnostics"])
            .collect()
    }

    pub(crate) fn of_kind(&self, event: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["event"] == event).collect()
    }

    pub(crate) fn done(&self) -> bool {
        self.events.iter().any(|e| e["event"] == "done")
    }

    /// Every step finished without error, the run ended and no error was reported.
    pub(crate) fn assert_clean(&self) {
        assert!(self.done(), "the client did not finish\n{}", self.dump());
        for e in &self.events {
            let bad = e["event"] == "error" || (e["event"] == "step" && !e["err"].is_null());
            assert!(!bad, "{e}\n{}", self.dump());
        }
    }

    /// Everything observed, for a failure message (long values cut).
    pub(crate) fn dump(&self) -> String {
        let mut out = String::new();
        for e in &self.events {
            let line = e.to_string();
            let cut: String = line.chars().take(1500).collect();
            out.push_str(&cut);
            out.push('\n');
        }
        out.push_str(&self.logs);
        out
    }
}

pub(crate) fn uri_of(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The text of a hover result: its markup, marked strings or plain strings, joined.
pub(crate) fn hover_text(hover: &Value) -> String {
    fn part(v: &Value) -> String {
        match v {
            Value::String(s) => s.clone(),
            Value::Array(a) => a.iter().map(part).collect::<Vec<_>>().join("\n"),
            Value::Object(o) => o.get("value").map(part).unwrap_or_default(),
            _ => String::new(),
        }
    }
    part(&hover["contents"])
}

/// The (file name, 0-based line) of each location of a definition or references result
/// (`Location`, `Location[]` or `LocationLink[]`), sorted.
pub(crate) fn locations(result: &Value) -> Vec<(String, u64)> {
    let items = match result {
        Value::Array(a) => a.clone(),
        Value::Null => vec![],
        one => vec![one.clone()],
    };
    let mut out: Vec<(String, u64)> = items
        .iter()
        .map(|l| {
            let uri = l["uri"].as_str().or(l["targetUri"].as_str()).unwrap_or("");
            let range = if l["range"].is_object() {
                &l["range"]
            } else {
                &l["targetSelectionRange"]
            };
            let name = uri.rsplit('/').next().unwrap_or("").to_string();
            (name, range["start"]["line"].as_u64().unwrap_or(u64::MAX))
        })
        .collect();
    out.sort();
    out
}

/// The messages of a list of diagnostics, with their `source`: "source: message".
pub(crate) fn messages(diagnostics: &Value) -> Vec<String> {
    diagnostics
        .as_array()
        .map(|a| {
            a.iter()
                .map(|d| {
                    format!(
                        "{}: {}",
                        d["source"].as_str().unwrap_or("?"),
                        d["message"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}
