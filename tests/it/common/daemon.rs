//! A per-user daemon of a test's own (a private runtime folder and data folder) and the
//! sessions and CLI calls that attach to it.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{Gate, LSPGATE, test_path};

/// A private runtime folder (so each test has a daemon of its own) and the environment that
/// points sessions at it.
pub(crate) struct Daemon {
    pub runtime: tempfile::TempDir,
    pub home: tempfile::TempDir,
}

impl Daemon {
    pub(crate) fn new() -> Daemon {
        let runtime = tempfile::tempdir().unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(runtime.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        Daemon {
            runtime,
            home: tempfile::tempdir().unwrap(),
        }
    }

    pub(crate) fn env<'a>(&'a self, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut env = vec![
            ("LSPGATE_STANDALONE", "0"),
            ("XDG_RUNTIME_DIR", self.runtime.path().to_str().unwrap()),
            ("LSPGATE_HOME", self.home.path().to_str().unwrap()),
            // A safety net: a test that fails midway leaves no daemon for long.
            ("LSPGATE_IDLE_EXIT", "30"),
        ];
        env.extend_from_slice(extra);
        env
    }

    pub(crate) async fn session(&self, root: &Path, server: &[&str]) -> Gate {
        self.session_with(root, server, &[]).await
    }

    /// `session` with `extra` variables in the session's environment.
    pub(crate) async fn session_with<'a>(
        &'a self,
        root: &Path,
        server: &[&str],
        extra: &[(&'a str, &'a str)],
    ) -> Gate {
        Gate::start_with_env(root, &[], server, &self.env(extra)).await
    }

    /// `lspgate ARGS` as a CLI client of this daemon: exit code, stdout, stderr.
    pub(crate) fn cli(&self, dir: &Path, args: &[&str]) -> (i32, String, String) {
        let out = std::process::Command::new(LSPGATE)
            .current_dir(dir)
            .args(args)
            .env("PATH", test_path())
            .envs(self.env(&[]))
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `lspgate hook ARGS` in `root` with `stdin` as its event and `extra` in its environment:
    /// exit code, stdout, stderr.
    pub(crate) fn hook(
        &self,
        root: &Path,
        args: &[&str],
        stdin: &str,
        extra: &[(&str, &str)],
    ) -> (i32, String, String) {
        use std::io::Write as _;
        let mut child = std::process::Command::new(LSPGATE)
            .current_dir(root)
            .arg("hook")
            .args(args)
            .env("PATH", test_path())
            .envs(self.env(extra))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // A hook may answer before reading all of it.
        let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    pub(crate) fn status(&self) -> Option<Value> {
        let (code, out, _) = self.cli(Path::new("/"), &["daemon", "status", "--json"]);
        (code == 0).then(|| serde_json::from_str(&out).unwrap())
    }

    pub(crate) fn pid(&self) -> u32 {
        self.status().expect("a daemon runs")["pid"]
            .as_u64()
            .unwrap() as u32
    }

    pub(crate) fn socket(&self) -> PathBuf {
        self.runtime.path().join("lspgate/daemon.sock")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.cli(Path::new("/"), &["daemon", "stop"]);
    }
}

/// The pid `servers` reports for a server.
pub(crate) async fn pid_of(gate: &Gate, name: &str) -> Option<u64> {
    let (s, _) = gate.ok("servers", json!({})).await;
    s["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == name)
        .and_then(|x| x["pid"].as_u64())
}
