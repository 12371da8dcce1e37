//! The stdio framing guard in front of rmcp: newline-delimited JSON-RPC with a frame limit.
//! Bad frames get the JSON-RPC errors of protocol §2 (-32700, -32600, -32602) instead of silence,
//! oversized frames are drained, and the session goes on. Valid messages pass through unchanged.
//!
//! Each message is parsed once, straight into rmcp's type, and one writer task owns the output, so
//! stdout carries protocol only. Piped or socket stdin/stdout are polled by the runtime (no
//! blocking-thread hop per message) and put back in blocking mode on exit (`restore_client_io`).
//! For a relaying `serve` (`guard_with` with acks), each request read is acknowledged first
//! (`TOOK`), so the relay knows which calls a dying daemon had taken.

use serde_json::{Value, json};
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::OFlags;
use std::os::unix::fs::FileTypeExt;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;
use tokio::sync::{mpsc, oneshot};

/// Default largest frame (one line) accepted from the client.
pub const DEFAULT_MAX_FRAME: usize = 2 * 1024 * 1024;

/// One line read from the client, or why it could not be.
#[derive(Debug, PartialEq)]
enum Line {
    Text(Vec<u8>),
    /// The line was over the limit and was drained; the prefix may hold its id.
    TooLong {
        prefix: Vec<u8>,
        len: usize,
    },
    Eof,
}

async fn read_line<R: AsyncBufRead + Unpin>(r: &mut R, max: usize) -> std::io::Result<Line> {
    let mut buf = Vec::new();
    let mut len = 0usize;
    let mut over = false;
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            // Without a `\n` to end it, the line may be `max` bytes, as one that has one.
            return Ok(if len == 0 {
                Line::Eof
            } else if over || len > max {
                Line::TooLong { prefix: buf, len }
            } else {
                Line::Text(buf)
            });
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        len += take;
        if !over {
            if len > max + 1 {
                over = true;
                let keep = 256usize.saturating_sub(buf.len()).min(take);
                buf.extend_from_slice(&chunk[..keep]);
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        r.consume(take);
        if done {
            return Ok(if over {
                Line::TooLong { prefix: buf, len }
            } else {
                Line::Text(buf)
            });
        }
    }
}

fn error(id: Value, code: i64, message: String) -> Vec<u8> {
    let mut v = serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message}
    }))
    .unwrap_or_default();
    v.push(b'\n');
    v
}

/// The id of a request whose frame was too long, if its beginning shows one.
fn id_from_prefix(prefix: &[u8]) -> Value {
    let s = String::from_utf8_lossy(prefix);
    let Some(at) = s.find("\"id\"") else {
        return Value::Null;
    };
    let rest = s[at + 4..].trim_start();
    let Some(rest) = rest.strip_prefix(':') else {
        return Value::Null;
    };
    let rest = rest.trim_start();
    if let Some(q) = rest.strip_prefix('"') {
        if let Some(end) = q.find('"') {
            return Value::String(q[..end].to_string());
        }
        return Value::Null;
    }
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits
        .parse::<i64>()
        .map(Value::from)
        .unwrap_or(Value::Null)
}

/// What to do with one complete line.
enum Verdict {
    Forward(Box<ClientJsonRpcMessage>),
    Skip,
    Reply(Vec<u8>),
}

fn judge(line: &[u8]) -> Verdict {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return Verdict::Skip;
    }
    // The common case: one parse straight into rmcp's message type.
    if let Ok(msg) = serde_json::from_slice::<ClientJsonRpcMessage>(trimmed) {
        return Verdict::Forward(Box::new(msg));
    }
    // Otherwise find out what is wrong, to answer with the right code.
    let v: Value = match serde_json::from_slice(trimmed) {
        Ok(v) => v,
        Err(e) => return Verdict::Reply(error(Value::Null, -32700, format!("parse error: {e}"))),
    };
    let Value::Object(obj) = &v else {
        return Verdict::Reply(error(
            Value::Null,
            -32600,
            "invalid request: a message must be one JSON object (batches are not supported)".into(),
        ));
    };
    let id = obj.get("id").cloned();
    // MCP ids are strings or integers. Anything else (null, a fraction, an integer past 64 bits,
    // which would not be echoed as sent) makes the request invalid, answered with a null id.
    let id_ok = match &id {
        None | Some(Value::String(_)) => true,
        Some(Value::Number(n)) => n.is_i64() || n.is_u64(),
        Some(_) => false,
    };
    let has_method = obj.get("method").is_some_and(Value::is_string);
    let is_response = id.is_some() && (obj.contains_key("result") || obj.contains_key("error"));
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0")
        || !id_ok
        || !(has_method || is_response)
    {
        let reply_id = if id_ok {
            id.unwrap_or(Value::Null)
        } else {
            Value::Null
        };
        return Verdict::Reply(error(
            reply_id,
            -32600,
            "invalid request: needs \"jsonrpc\": \"2.0\", a string \"method\" and a string or number \"id\"".into(),
        ));
    }
    let why = serde_json::from_value::<ClientJsonRpcMessage>(v)
        .err()
        .map_or_else(|| "unreadable message".to_string(), |e| e.to_string());
    match (id, has_method) {
        (Some(id), true) => Verdict::Reply(error(id, -32602, format!("invalid params: {why}"))),
        _ => {
            tracing::debug!("dropped a malformed notification: {why}");
            Verdict::Skip
        }
    }
}

/// A whole output line, and who waits until it is written, if anyone.
type Out = (Vec<u8>, Option<oneshot::Sender<()>>);

/// The method of the notification with which the daemon acknowledges a request it has read
/// (`guard_with`, `params: {"id": ID}`): for the relaying `serve` only, never its client.
pub const TOOK: &str = "lspgate/took";

/// rmcp's side of the guard: messages the guard let through, and a queue of whole output lines.
pub struct GuardTransport {
    inbound: mpsc::Receiver<ClientJsonRpcMessage>,
    out: mpsc::UnboundedSender<Out>,
}

impl Transport<RoleServer> for GuardTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // Queued now, in the order rmcp sends, so progress never overtakes its result.
        let queued = serde_json::to_vec(&item)
            .map_err(std::io::Error::other)
            .and_then(|mut line| {
                line.push(b'\n');
                self.out.send((line, None)).map_err(|_| {
                    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "client output closed")
                })
            });
        std::future::ready(queued)
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.inbound.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inbound.close();
        Ok(())
    }
}

/// Runs the guard: reads `input`, hands good messages to rmcp through the returned transport,
/// and writes rmcp's output and the guard's own error replies to `output`, one whole line at a
/// time.
pub fn guard<R, W>(input: R, output: W, max_frame: usize) -> GuardTransport
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    guard_with(input, output, max_frame, false)
}

/// `guard`; with `acks`, each request read is acknowledged (a `TOOK` notification) on
/// `output`, written there before rmcp has the request: a relay whose daemon dies knows that
/// a request not acknowledged was never served (and may be sent to another), and that one
/// acknowledged may have been.
pub fn guard_with<R, W>(input: R, output: W, max_frame: usize, acks: bool) -> GuardTransport
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (in_tx, inbound) = mpsc::channel::<ClientJsonRpcMessage>(64);
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Out>();

    // Writer: the only task that touches the client's output.
    tokio::spawn(async move {
        let mut output = output;
        while let Some((line, written)) = out_rx.recv().await {
            if output.write_all(&line).await.is_err() {
                break;
            }
            if (written.is_some() || out_rx.is_empty()) && output.flush().await.is_err() {
                break;
            }
            if let Some(w) = written {
                let _ = w.send(());
            }
        }
    });

    // Reader: judges each frame.
    let replies = out_tx.clone();
    tokio::spawn(async move {
        let mut input = BufReader::with_capacity(64 * 1024, input);
        loop {
            match read_line(&mut input, max_frame).await {
                Ok(Line::Eof) | Err(_) => break,
                Ok(Line::TooLong { prefix, len }) => {
                    tracing::warn!("dropped a {len}-byte frame over the {max_frame}-byte limit");
                    let reply = error(
                        id_from_prefix(&prefix),
                        -32600,
                        format!(
                            "invalid request: frame of {len} bytes is over the limit of {max_frame} bytes"
                        ),
                    );
                    let _ = replies.send((reply, None));
                }
                Ok(Line::Text(line)) => match judge(&line) {
                    Verdict::Skip => {}
                    Verdict::Reply(r) => {
                        let _ = replies.send((r, None));
                    }
                    Verdict::Forward(msg) => {
                        if let (true, ClientJsonRpcMessage::Request(r)) = (acks, msg.as_ref()) {
                            // Out before anything of the request is done.
                            let (written, done) = oneshot::channel();
                            let ack = took(&r.id);
                            if replies.send((ack, Some(written))).is_err() || done.await.is_err() {
                                break;
                            }
                        }
                        if in_tx.send(*msg).await.is_err() {
                            break;
                        }
                    }
                },
            }
        }
        // Dropping the sender ends rmcp's input, and with it the session.
    });
    GuardTransport {
        inbound,
        out: out_tx,
    }
}

/// The `TOOK` line of request `id`.
fn took(id: &rmcp::model::RequestId) -> Vec<u8> {
    let mut line = serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "method": TOOK, "params": {"id": id}
    }))
    .unwrap_or_default();
    line.push(b'\n');
    line
}

/// The client's stdin and stdout as non-blocking streams driven by the runtime's poller when
/// they are pipes or sockets (the usual case for an MCP client), so no message waits for a
/// blocking-pool thread; anything else (a terminal, a file) gets tokio's thread-backed stdio.
pub fn client_io() -> (
    Box<dyn tokio::io::AsyncRead + Unpin + Send>,
    Box<dyn AsyncWrite + Unpin + Send>,
) {
    // Their flags (none if closed), to give them back at the end.
    let flags = [
        rustix::fs::fcntl_getfl(std::io::stdin()).ok(),
        rustix::fs::fcntl_getfl(std::io::stdout()).ok(),
    ];
    let _ = CLIENT_FLAGS.set(flags);
    let input: Box<dyn tokio::io::AsyncRead + Unpin + Send> = match polled(std::io::stdin()) {
        Some(Polled::Pipe(fd)) => match pipe::Receiver::from_owned_fd(fd) {
            Ok(r) => Box::new(r),
            Err(_) => Box::new(tokio::io::stdin()),
        },
        Some(Polled::Socket(s)) => Box::new(s),
        None => Box::new(tokio::io::stdin()),
    };
    let output: Box<dyn AsyncWrite + Unpin + Send> = match polled(std::io::stdout()) {
        Some(Polled::Pipe(fd)) => match pipe::Sender::from_owned_fd(fd) {
            Ok(w) => Box::new(w),
            Err(_) => Box::new(tokio::io::stdout()),
        },
        Some(Polled::Socket(s)) => Box::new(s),
        None => Box::new(tokio::io::stdout()),
    };
    (input, output)
}

/// A client's input and output handed over by its process (`lspgate lsp`'s stdin and stdout,
/// received by the daemon) as streams the runtime polls; `None` unless both are pipes or
/// sockets. The originals are closed (the streams hold duplicates).
pub fn polled_io(
    input: OwnedFd,
    output: OwnedFd,
) -> Option<(
    Box<dyn tokio::io::AsyncRead + Unpin + Send>,
    Box<dyn AsyncWrite + Unpin + Send>,
)> {
    let input: Box<dyn tokio::io::AsyncRead + Unpin + Send> = match polled(&input)? {
        Polled::Pipe(fd) => Box::new(pipe::Receiver::from_owned_fd(fd).ok()?),
        Polled::Socket(s) => Box::new(s),
    };
    let output: Box<dyn AsyncWrite + Unpin + Send> = match polled(&output)? {
        Polled::Pipe(fd) => Box::new(pipe::Sender::from_owned_fd(fd).ok()?),
        Polled::Socket(s) => Box::new(s),
    };
    Some((input, output))
}

/// The flags of stdin and stdout as the client gave them, saved by `client_io`.
static CLIENT_FLAGS: std::sync::OnceLock<[Option<OFlags>; 2]> = std::sync::OnceLock::new();

/// Gives stdin and stdout back their original blocking mode (the open file descriptions may be
/// shared with whoever started lspgate). Call once nothing polls them any more: after the
/// runtime has shut down.
pub fn restore_client_io() {
    let Some(flags) = CLIENT_FLAGS.get() else {
        return;
    };
    restore_blocking(std::io::stdin(), flags[0]);
    restore_blocking(std::io::stdout(), flags[1]);
}

/// Gives `fd` back the blocking mode of its `original` flags (if it had any: it was open); a
/// failure (a descriptor closed since) is harmless and ignored.
fn restore_blocking(fd: impl AsFd, original: Option<OFlags>) {
    let Some(original) = original else {
        return;
    };
    let Ok(now) = rustix::fs::fcntl_getfl(&fd) else {
        return;
    };
    let nonblock = original & OFlags::NONBLOCK;
    if now & OFlags::NONBLOCK != nonblock {
        let _ = rustix::fs::fcntl_setfl(&fd, (now - OFlags::NONBLOCK) | nonblock);
    }
}

enum Polled {
    Pipe(OwnedFd),
    Socket(tokio::net::UnixStream),
}

/// Whether `fd` is what the runtime can poll: a pipe or a socket (not a file, nor a terminal).
pub fn pollable(fd: impl AsFd) -> bool {
    rustix::fs::fstat(fd).is_ok_and(|st| {
        matches!(
            rustix::fs::FileType::from_raw_mode(st.st_mode),
            rustix::fs::FileType::Fifo | rustix::fs::FileType::Socket
        )
    })
}

/// A duplicate of standard descriptor `fd` that the runtime can poll, if it is a pipe or a
/// Unix socket (`pollable`).
fn polled(fd: impl AsFd) -> Option<Polled> {
    // A duplicate (close-on-exec) this process owns; none if `fd` is closed.
    let dup = rustix::io::fcntl_dupfd_cloexec(fd, 0).ok()?;
    if !pollable(&dup) {
        return None;
    }
    let file = std::fs::File::from(dup);
    if file.metadata().ok()?.file_type().is_fifo() {
        Some(Polled::Pipe(OwnedFd::from(file)))
    } else {
        let s = std::os::unix::net::UnixStream::from(OwnedFd::from(file));
        s.set_nonblocking(true).ok()?;
        tokio::net::UnixStream::from_std(s).ok().map(Polled::Socket)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn long_lines_are_drained_and_reading_goes_on() {
        let mut input = vec![b'{'; 100];
        input.extend_from_slice(b"\n{\"a\":1}\nlast");
        let mut r = BufReader::with_capacity(16, input.as_slice());
        assert!(matches!(
            read_line(&mut r, 50).await.unwrap(),
            Line::TooLong { len: 101, .. }
        ));
        assert_eq!(
            read_line(&mut r, 50).await.unwrap(),
            Line::Text(b"{\"a\":1}\n".to_vec())
        );
        assert_eq!(
            read_line(&mut r, 50).await.unwrap(),
            Line::Text(b"last".to_vec())
        );
        assert_eq!(read_line(&mut r, 50).await.unwrap(), Line::Eof);
    }

    /// Found by fuzzing (fuzz/frame_guard): a last line with no `\n`, one byte over the
    /// limit, was judged instead of refused as too long.
    #[tokio::test]
    async fn an_unterminated_last_line_has_the_same_limit() {
        let mut r = BufReader::with_capacity(16, &b"0123456789\n01234567890"[..]);
        assert_eq!(
            read_line(&mut r, 10).await.unwrap(),
            Line::Text(b"0123456789\n".to_vec())
        );
        assert!(matches!(
            read_line(&mut r, 10).await.unwrap(),
            Line::TooLong { len: 11, .. }
        ));
        let mut r = BufReader::new(&b"0123456789"[..]);
        assert_eq!(
            read_line(&mut r, 10).await.unwrap(),
            Line::Text(b"0123456789".to_vec())
        );
        // The fuzzer's input: the last line is 41 bytes, the limit 40.
        let input = b"{\"id\":\"abc\",\"js\r\nonrpc\"#\"2.0\",\"method\":\"ping\",\"params\":{}}";
        let (theirs, mut ours) = tokio::io::duplex(4096);
        let mut t = guard(&input[..], theirs, 40);
        assert!(t.receive().await.is_none());
        drop(t);
        let mut out = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut ours, &mut out)
            .await
            .unwrap();
        let codes: Vec<i64> = out
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["error"]["code"]
                    .as_i64()
                    .unwrap()
            })
            .collect();
        assert_eq!(codes, [-32700, -32600]);
    }

    /// With acks, each request is acknowledged on the output before rmcp has it; a
    /// notification is not, nor is anything without acks.
    #[tokio::test]
    async fn requests_are_acknowledged_before_they_are_served() {
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"x","method":"ping"}"#,
            "\n"
        );
        for acks in [true, false] {
            let (theirs, mut ours) = tokio::io::duplex(4096);
            let mut t = guard_with(input.as_bytes(), theirs, 1024, acks);
            let mut lines = BufReader::new(&mut ours).lines();
            for id in [json!(7), json!("x")] {
                if id == json!("x") {
                    assert!(t.receive().await.is_some(), "the notification");
                }
                if acks {
                    let took: Value =
                        serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
                    assert_eq!(took["method"], TOOK);
                    assert_eq!(took["params"]["id"], id);
                }
                assert!(t.receive().await.is_some(), "{id}");
            }
            assert!(t.receive().await.is_none());
            drop(t);
            assert_eq!(lines.next_line().await.unwrap(), None);
        }
    }

    #[test]
    fn ids_are_recovered_from_prefixes() {
        assert_eq!(
            id_from_prefix(br#"{"jsonrpc":"2.0","id": 42,"method""#),
            json!(42)
        );
        assert_eq!(id_from_prefix(br#"{"id":"abc","#), json!("abc"));
        assert_eq!(id_from_prefix(br#"{"method":"x""#), Value::Null);
    }

    #[test]
    fn verdicts() {
        let reply = |v: Verdict| match v {
            Verdict::Reply(r) => serde_json::from_slice::<Value>(&r).unwrap(),
            _ => Value::Null,
        };
        assert_eq!(reply(judge(b"{nope"))["error"]["code"], -32700);
        assert_eq!(reply(judge(b"[1,2]"))["error"]["code"], -32600);
        assert_eq!(
            reply(judge(br#"{"jsonrpc":"2.0","id":3}"#))["error"]["code"],
            -32600
        );
        assert_eq!(reply(judge(br#"{"jsonrpc":"2.0","id":3}"#))["id"], 3);
        let bad = judge(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":7}"#);
        assert_eq!(reply(bad)["error"]["code"], -32602);
        assert!(matches!(
            judge(br#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#),
            Verdict::Forward(_)
        ));
        assert!(matches!(judge(b"  \r\n"), Verdict::Skip));
    }

    /// Found by fuzzing (fuzz/frame_guard): an id past 64 bits was read as a float and echoed
    /// as a different number. Only string and integer ids are echoed.
    #[test]
    fn ids_that_cannot_be_echoed_as_sent_are_invalid() {
        let reply = |line: &[u8]| match judge(line) {
            Verdict::Reply(r) => serde_json::from_slice::<Value>(&r).unwrap(),
            _ => Value::Null,
        };
        for id in [
            "66666666666660000000000000000000000001215143893",
            "1.5",
            "null",
            "[1]",
        ] {
            let line = format!(r#"{{"jsonrpc":"1.0","id":{id},"method":"tools/list"}}"#);
            let r = reply(line.as_bytes());
            assert_eq!(r["error"]["code"], -32600, "{id}: {r}");
            assert_eq!(r["id"], Value::Null, "{id}: {r}");
        }
        let r = reply(br#"{"jsonrpc":"1.0","id":18446744073709551615,"method":"x"}"#);
        assert_eq!(r["id"], json!(u64::MAX));
    }
}
