//! The stdio framing guard in front of rmcp: newline-delimited JSON-RPC with a frame limit.
//! Bad frames get the JSON-RPC errors of SPEC §2 (-32700, -32600, -32602) instead of silence,
//! oversized frames are drained, and the session goes on. Valid messages pass through unchanged.

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
};
use tokio::sync::mpsc;

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
            return Ok(if len == 0 {
                Line::Eof
            } else if over {
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
    Forward,
    Skip,
    Reply(Vec<u8>),
}

fn judge(line: &[u8]) -> Verdict {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return Verdict::Skip;
    }
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
    let id_ok = matches!(&id, None | Some(Value::String(_)) | Some(Value::Number(_)));
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
    if let Err(e) = serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(v.clone()) {
        return match (id, has_method) {
            (Some(id), true) => Verdict::Reply(error(id, -32602, format!("invalid params: {e}"))),
            _ => {
                tracing::debug!("dropped a malformed notification: {e}");
                Verdict::Skip
            }
        };
    }
    Verdict::Forward
}

/// Runs the guard: reads `input`, forwards good frames into the returned stream for rmcp, and
/// writes rmcp's output and the guard's own error replies to `output`, one whole line at a time.
pub fn guard<R, W>(input: R, output: W, max_frame: usize) -> DuplexStream
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (ours, theirs) = tokio::io::duplex(256 * 1024);
    let (from_rmcp, mut to_rmcp) = tokio::io::split(ours);
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();

    // Writer: the only task that touches the client's output.
    tokio::spawn(async move {
        let mut output = output;
        while let Some(line) = out_rx.recv().await {
            if output.write_all(&line).await.is_err() {
                break;
            }
            if out_rx.is_empty() && output.flush().await.is_err() {
                break;
            }
        }
    });

    // rmcp's replies, passed on line by line so they never interleave with ours.
    let tx = out_tx.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(from_rmcp);
        loop {
            let mut buf = Vec::new();
            match lines.read_until(b'\n', &mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(buf).is_err() {
                        break;
                    }
                }
            }
        }
    });

    // Reader: judges each frame.
    tokio::spawn(async move {
        let mut input = BufReader::with_capacity(64 * 1024, input);
        loop {
            match read_line(&mut input, max_frame).await {
                Ok(Line::Eof) | Err(_) => break,
                Ok(Line::TooLong { prefix, len }) => {
                    tracing::warn!("dropped a {len}-byte frame over the {max_frame}-byte limit");
                    let _ = out_tx.send(error(
                        id_from_prefix(&prefix),
                        -32600,
                        format!("invalid request: frame of {len} bytes is over the limit of {max_frame} bytes"),
                    ));
                }
                Ok(Line::Text(mut line)) => match judge(&line) {
                    Verdict::Skip => {}
                    Verdict::Reply(r) => {
                        let _ = out_tx.send(r);
                    }
                    Verdict::Forward => {
                        if line.last() != Some(&b'\n') {
                            line.push(b'\n');
                        }
                        if to_rmcp.write_all(&line).await.is_err() {
                            break;
                        }
                    }
                },
            }
        }
        // Closing rmcp's input ends the session.
        let _ = to_rmcp.shutdown().await;
    });
    theirs
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
            Verdict::Forward
        ));
        assert!(matches!(judge(b"  \r\n"), Verdict::Skip));
    }
}
