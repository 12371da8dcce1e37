//! A bare JSON-RPC client of `lspgate lsp`, for assertions at the protocol's level (the real
//! editors are in `lsp_clients`).

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::{LSPGATE, test_path};

/// A bare LSP client of `lspgate lsp`.
pub(crate) struct Client {
    pub child: Child,
    pub stdin: ChildStdin,
    pub stdout: BufReader<ChildStdout>,
    pub next: i64,
    /// Messages read while waiting for something else.
    pub seen: Vec<Value>,
}

impl Client {
    pub(crate) fn start(root: &Path, args: &[&str]) -> Client {
        let home = root.join(".home-not-used");
        let home = home.to_str().unwrap();
        Client::start_with(
            root,
            args,
            &[("LSPGATE_STANDALONE", "1"), ("LSPGATE_HOME", home)],
        )
    }

    /// A client with `env` (a shared daemon's, say) in its process's environment.
    pub(crate) fn start_with(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Client {
        let mut child = Command::new(LSPGATE)
            .arg("lsp")
            .args(args)
            .current_dir(root)
            .env("PATH", test_path())
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        Client {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            next: 1,
            seen: Vec::new(),
        }
    }

    pub(crate) async fn write_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    pub(crate) async fn send(&mut self, message: Value) {
        let body = message.to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        self.write_raw(frame.as_bytes()).await;
    }

    /// The next message, or `None` when the connection closed (bounded: 60 s).
    pub(crate) async fn read(&mut self) -> Option<Value> {
        let read = async {
            let mut length = None;
            loop {
                let mut line = String::new();
                if self.stdout.read_line(&mut line).await.ok()? == 0 {
                    return None;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(v) = line.strip_prefix("Content-Length: ") {
                    length = v.parse::<usize>().ok();
                }
            }
            let mut body = vec![0; length?];
            self.stdout.read_exact(&mut body).await.ok()?;
            serde_json::from_slice(&body).ok()
        };
        tokio::time::timeout(Duration::from_secs(60), read)
            .await
            .expect("lspgate lsp said nothing for 60 s")
    }

    /// Waits for the message `pick` accepts (others are kept in `seen`).
    pub(crate) async fn wait(&mut self, pick: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.seen.iter().position(&pick) {
            return self.seen.remove(i);
        }
        loop {
            let m = self.read().await.expect("the connection closed");
            if pick(&m) {
                return m;
            }
            self.seen.push(m);
        }
    }

    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.wait(|m| m["id"] == id && m.get("method").is_none())
            .await
    }

    pub(crate) async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    pub(crate) async fn initialize(&mut self, root: &Path, encodings: &[&str]) -> Value {
        let r = self
            .request(
                "initialize",
                json!({"processId": null, "rootUri": uri(root),
                       "capabilities": {"general": {"positionEncodings": encodings}}}),
            )
            .await;
        self.notify("initialized", json!({})).await;
        r
    }

    pub(crate) async fn open(&mut self, path: &Path, language: &str) {
        let text = std::fs::read_to_string(path).unwrap();
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri(path), "languageId": language, "version": 1, "text": text}}),
        )
        .await;
    }
}

pub(crate) fn uri(path: &Path) -> String {
    url::Url::from_file_path(path).unwrap().to_string()
}
