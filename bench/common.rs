//! What the benchmarks share: a bare LSP client (Content-Length frames over a server's pipes,
//! nothing else) and lspgate serving MCP over stdio, each spoken to synchronously.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

pub(crate) const LSPGATE: &str = env!("CARGO_BIN_EXE_lspgate");

/// PATH with the test servers `scripts/install-test-servers.sh` puts in `.tools/` first.
pub(crate) fn tools_path() -> String {
    let repo = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    format!(
        "{}:{}",
        repo.join(".tools/node_modules/.bin").display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// `command` found on `path`, as an argument vector with `args`.
pub(crate) fn on_path(path: &str, command: &str, args: &[&str]) -> Option<Vec<String>> {
    let exe = std::env::split_paths(path)
        .map(|d| d.join(command))
        .find(|p| p.is_file())?;
    Some(
        std::iter::once(exe.to_string_lossy().into_owned())
            .chain(args.iter().map(|a| a.to_string()))
            .collect(),
    )
}

/// A bare LSP client: Content-Length frames over the child's pipes, nothing else.
pub(crate) struct Direct {
    pub child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    id: i64,
}

impl Direct {
    pub(crate) fn start(cmd: &[String], root: &Path) -> Direct {
        let mut child = Command::new(&cmd[0])
            .args(&cmd[1..])
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn server");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut d = Direct {
            child,
            stdin,
            stdout,
            id: 0,
        };
        let root_uri = url::Url::from_directory_path(root).unwrap();
        d.request("initialize", json!({"processId": null, "rootUri": root_uri,
            "workspaceFolders": [{"uri": root_uri, "name": "root"}],
            "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"configuration": true}}}));
        d.notify("initialized", json!({}));
        d
    }

    pub(crate) fn send(&mut self, v: &Value) {
        let body = v.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{}", body.len(), body).unwrap();
        self.stdin.flush().unwrap();
    }

    pub(crate) fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    pub(crate) fn read(&mut self) -> Value {
        let mut len = 0;
        loop {
            let mut line = String::new();
            self.stdout.read_line(&mut line).unwrap();
            let t = line.trim_end();
            if t.is_empty() {
                break;
            }
            if let Some(v) = t.strip_prefix("Content-Length:") {
                len = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; len];
        self.stdout.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    /// Sends a request and reads until its answer, answering the server's own requests.
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let msg = self.read();
            if msg.get("method").is_some() {
                if let Some(sid) = msg.get("id") {
                    let result = if msg["method"] == "workspace/configuration" {
                        json!(vec![
                            Value::Null;
                            msg["params"]["items"].as_array().map_or(0, Vec::len)
                        ])
                    } else {
                        Value::Null
                    };
                    self.send(&json!({"jsonrpc": "2.0", "id": sid, "result": result}));
                }
                continue;
            }
            if msg["id"] == id {
                return msg;
            }
        }
    }
}

impl Drop for Direct {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// lspgate serving MCP over stdio, spoken to line by line.
pub(crate) struct Gate {
    pub child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    id: i64,
}

impl Gate {
    pub(crate) fn start(server: &[String], root: &Path, path: &str) -> Gate {
        Gate::start_with_env(server, root, path, &[])
    }

    /// `start` with extra environment for lspgate.
    pub(crate) fn start_with_env(
        server: &[String],
        root: &Path,
        path: &str,
        env: &[(&str, &str)],
    ) -> Gate {
        Gate::start_with(&[], server, root, path, env)
    }

    /// `lspgate FLAGS… serve --root ROOT -- SERVER…` with `path` as PATH and extra `env`.
    pub(crate) fn start_with(
        flags: &[&str],
        server: &[String],
        root: &Path,
        path: &str,
        env: &[(&str, &str)],
    ) -> Gate {
        // BENCH_LSPGATE compares another build of lspgate (another profile, say) in the same run.
        let exe = std::env::var("BENCH_LSPGATE").unwrap_or_else(|_| LSPGATE.to_string());
        let mut child = Command::new(exe)
            .env("LSPGATE_STANDALONE", "1")
            .args(flags)
            .arg("serve")
            .arg("--root")
            .arg(root)
            .arg("--")
            .args(server)
            .env("PATH", path)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn lspgate");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut g = Gate {
            child,
            stdin,
            stdout,
            id: 0,
        };
        g.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"}}),
        );
        g.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        g
    }

    pub(crate) fn send(&mut self, v: &Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            self.stdout.read_line(&mut line).unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }

    /// Peak resident memory of lspgate itself (not its servers), in KiB.
    pub(crate) fn peak_rss_kib(&self) -> u64 {
        self.status_kib("VmHWM:")
    }

    /// Resident memory of lspgate itself now, in KiB.
    pub(crate) fn rss_kib(&self) -> u64 {
        self.status_kib("VmRSS:")
    }

    fn status_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    /// CPU time lspgate itself has used (user + system), in clock ticks (1/100 s).
    pub(crate) fn cpu_ticks(&self) -> u64 {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // Fields after the command name (which may hold spaces) start after its `)`.
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let f: Vec<&str> = rest.split_whitespace().collect();
        let tick = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        // utime and stime are fields 14 and 15 of /proc/PID/stat: 12 and 13 after the name.
        tick(11) + tick(12)
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A process and every process below it.
pub(crate) fn tree(pid: u32) -> Vec<u32> {
    let mut children: std::collections::HashMap<u32, Vec<u32>> = Default::default();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        if let Some(pp) = stat
            .rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u32>().ok())
        {
            children.entry(pp).or_default().push(p);
        }
    }
    let mut out = Vec::new();
    let mut stack = vec![pid];
    while let Some(p) = stack.pop() {
        out.push(p);
        stack.extend(children.get(&p).into_iter().flatten());
    }
    out
}

/// Resident memory of these processes (each counted once), in KiB.
pub(crate) fn rss_kib(pids: impl IntoIterator<Item = u32>) -> u64 {
    proc_kib(pids, "status", "VmRSS:")
}

/// Proportional memory of these processes (each counted once), in KiB: their resident pages,
/// each shared one divided among the processes that map it (one binary's pages shared by a
/// server and its clients count once in all, where `rss_kib` counts them in each).
pub(crate) fn pss_kib(pids: impl IntoIterator<Item = u32>) -> u64 {
    proc_kib(pids, "smaps_rollup", "Pss:")
}

/// The sum over `pids` (each once) of the KiB figure `key` in `/proc/PID/FILE`.
fn proc_kib(pids: impl IntoIterator<Item = u32>, file: &str, key: &str) -> u64 {
    let mut seen = std::collections::HashSet::new();
    pids.into_iter()
        .filter(|p| seen.insert(*p))
        .map(|p| {
            std::fs::read_to_string(format!("/proc/{p}/{file}"))
                .unwrap_or_default()
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .unwrap_or(0)
        })
        .sum()
}

/// Django 5.2's source: `.tools/projects/django-5.2` (the test setup's), else its wheel
/// fetched from PyPI into `target/bench-projects/`.
pub(crate) fn django(repo: &Path) -> std::path::PathBuf {
    let have = repo.join(".tools/projects/django-5.2");
    if have.join("django/__init__.py").is_file() {
        return have;
    }
    let dir = repo.join("target/bench-projects/django-5.2");
    if !dir.join("django/__init__.py").is_file() {
        let dl = repo.join("target/bench-projects/download");
        let ok = Command::new("python3")
            .args(["-m", "pip", "download", "--quiet", "--no-deps", "django==5.2", "-d"])
            .arg(&dl)
            .status()
            .is_ok_and(|s| s.success())
            && Command::new("python3")
                .args([
                    "-c",
                    "import sys, zipfile, glob; zipfile.ZipFile(glob.glob(sys.argv[1] + '/*.whl')[0]).extractall(sys.argv[2])",
                ])
                .arg(&dl)
                .arg(&dir)
                .status()
                .is_ok_and(|s| s.success());
        assert!(ok, "could not fetch django==5.2 from PyPI");
    }
    dir
}

/// Whether the bench `name` runs: pyright is on `path`, and this is not `cargo test`'s smoke
/// run of a debug build (`BENCH_CALLS` under 100), which skips the real workspace (it takes
/// minutes). Says why not.
pub(crate) fn pyright_bench_runs(name: &str, path: &str) -> bool {
    if on_path(path, "pyright-langserver", &[]).is_none() {
        println!("pyright not found: run scripts/install-test-servers.sh to bench it");
        return false;
    }
    if cfg!(debug_assertions) {
        println!("(a debug build, as `cargo test` makes it: figures are not representative)");
        if std::env::var("BENCH_CALLS").is_ok_and(|v| v.parse().unwrap_or(0) < 100) {
            println!("{name} bench skipped in the smoke run (BENCH_CALLS < 100)");
            return false;
        }
    }
    true
}
