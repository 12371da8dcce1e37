//! A minimal HTTP/1.1 client over a plain TCP stream, for the HTTP tests and the HTTP load
//! bench: requests with exactly the headers given (a foreign `Host` included), status and
//! headers back, bodies by Content-Length, chunks or end of stream, and the JSON-RPC messages of
//! a JSON or SSE body. One keep-alive connection per client; no TLS, no redirects.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::{Value, json};

/// An HTTP response.
#[derive(Debug)]
pub(crate) struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// A header's value (the first, case-insensitive name).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The JSON-RPC messages in the body: the body itself when it is JSON, else each SSE
    /// `data:` line that holds JSON.
    pub(crate) fn messages(&self) -> Vec<Value> {
        if let Ok(v) = serde_json::from_slice::<Value>(&self.body) {
            return vec![v];
        }
        self.text()
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    }
}

/// `http://HOST:PORT/PATH` → (address, path).
pub(crate) fn split_url(url: &str) -> (SocketAddr, String) {
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_string()),
        None => (rest, "/".to_string()),
    };
    (authority.parse().expect("HOST:PORT as an address"), path)
}

/// One connection.
pub(crate) struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    pub addr: SocketAddr,
}

impl Conn {
    pub(crate) fn connect(addr: SocketAddr) -> std::io::Result<Conn> {
        Conn::connect_within(addr, Duration::from_secs(60))
    }

    /// A connection whose reads fail after `timeout` without data.
    pub(crate) fn connect_within(addr: SocketAddr, timeout: Duration) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(timeout))?;
        Ok(Conn {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
            addr,
        })
    }

    /// Sends a request with exactly `headers` (plus Content-Length when there is a body) and
    /// reads the whole response.
    pub(crate) fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> std::io::Result<Response> {
        let mut head = format!("{method} {path} HTTP/1.1\r\n");
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        if !body.is_empty() || method == "POST" {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        let mut out = head.into_bytes();
        out.extend_from_slice(body);
        self.writer.write_all(&out)?;
        self.writer.flush()?;
        self.read_response(method == "HEAD")
    }

    fn line(&mut self) -> std::io::Result<String> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        Ok(line.trim_end_matches(['\r', '\n']).to_string())
    }

    fn read_response(&mut self, head_only: bool) -> std::io::Result<Response> {
        let status_line = self.line()?;
        let status = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| std::io::Error::other(format!("bad status line {status_line:?}")))?;
        let mut headers = Vec::new();
        loop {
            let l = self.line()?;
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                headers.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
        let mut r = Response {
            status,
            headers,
            body: Vec::new(),
        };
        if head_only || status == 204 || status == 304 || (100..200).contains(&status) {
            return Ok(r);
        }
        if let Some(n) = r.header("content-length") {
            let n: usize = n.parse().map_err(std::io::Error::other)?;
            let mut body = vec![0; n];
            self.reader.read_exact(&mut body)?;
            r.body = body;
        } else if r
            .header("transfer-encoding")
            .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
        {
            loop {
                let size = self.line()?;
                let size = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16)
                    .map_err(std::io::Error::other)?;
                if size == 0 {
                    // Trailers, then the blank line.
                    while !self.line()?.is_empty() {}
                    break;
                }
                let mut chunk = vec![0; size];
                self.reader.read_exact(&mut chunk)?;
                r.body.extend_from_slice(&chunk);
                self.line()?;
            }
        } else {
            self.reader.read_to_end(&mut r.body)?;
        }
        Ok(r)
    }
}

/// An MCP session over Streamable HTTP (the 2025 protocol: `initialize`, then the session id
/// on every request), with the bearer token.
pub(crate) struct Mcp {
    conn: Conn,
    path: String,
    host: String,
    token: String,
    session: Option<String>,
    id: u64,
    /// The `initialize` result.
    pub init: Value,
}

impl Mcp {
    pub(crate) fn connect(url: &str, token: &str) -> std::io::Result<Mcp> {
        Mcp::connect_within(url, token, Duration::from_secs(60))
    }

    /// A session whose every answer must come within `timeout`.
    pub(crate) fn connect_within(
        url: &str,
        token: &str,
        timeout: Duration,
    ) -> std::io::Result<Mcp> {
        let (addr, path) = split_url(url);
        let mut m = Mcp {
            conn: Conn::connect_within(addr, timeout)?,
            path,
            host: addr.to_string(),
            token: token.to_string(),
            session: None,
            id: 0,
            init: Value::Null,
        };
        let init = m.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw-http", "version": "0"}}),
        )?;
        m.init = init["result"].clone();
        m.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(m)
    }

    /// A new connection carrying session `session` as it is, without an `initialize`.
    pub(crate) fn resume(url: &str, token: &str, session: &str) -> std::io::Result<Mcp> {
        let (addr, path) = split_url(url);
        Ok(Mcp {
            conn: Conn::connect_within(addr, Duration::from_secs(60))?,
            path,
            host: addr.to_string(),
            token: token.to_string(),
            session: Some(session.to_string()),
            id: 100,
            init: Value::Null,
        })
    }

    fn post(&mut self, msg: &Value) -> std::io::Result<Response> {
        let auth = format!("Bearer {}", self.token);
        let body = msg.to_string();
        let mut headers = vec![
            ("Host", self.host.as_str()),
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        let session = self.session.clone();
        if let Some(s) = &session {
            headers.push(("Mcp-Session-Id", s.as_str()));
        }
        let path = self.path.clone();
        let r = self
            .conn
            .request("POST", &path, &headers, body.as_bytes())?;
        if let Some(s) = r.header("mcp-session-id") {
            self.session = Some(s.to_string());
        }
        Ok(r)
    }

    /// A JSON-RPC request: its response message (Err on an HTTP status other than 200).
    pub(crate) fn request(&mut self, method: &str, params: Value) -> std::io::Result<Value> {
        self.id += 1;
        let id = self.id;
        let r =
            self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        if r.status != 200 {
            return Err(std::io::Error::other(format!(
                "HTTP {}: {}",
                r.status,
                r.text()
            )));
        }
        r.messages()
            .into_iter()
            .find(|m| m["id"] == id)
            .ok_or_else(|| std::io::Error::other(format!("no answer to {method} in {}", r.text())))
    }

    /// `tools/call`: its result.
    pub(crate) fn call(&mut self, tool: &str, args: Value) -> std::io::Result<Value> {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}))?;
        Ok(r["result"].clone())
    }

    /// The session's id (`Mcp-Session-Id`).
    pub(crate) fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// Ends the session (DELETE).
    pub(crate) fn close(mut self) -> std::io::Result<u16> {
        let auth = format!("Bearer {}", self.token);
        let session = self.session.clone().unwrap_or_default();
        let headers = [
            ("Host", self.host.as_str()),
            ("Authorization", auth.as_str()),
            ("Mcp-Session-Id", session.as_str()),
        ];
        let path = self.path.clone();
        Ok(self.conn.request("DELETE", &path, &headers, b"")?.status)
    }
}
