//! LSP base protocol framing: `Content-Length` headers around JSON bodies, with a size limit.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// Why a frame could not be read. Any of these means the stream can no longer be trusted.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("stream closed")]
    Eof,
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    #[error("malformed header: {0}")]
    BadHeader(String),
    #[error("message of {0} bytes is over the limit of {1} bytes")]
    TooLarge(usize, usize),
}

/// Longest header line we accept; real headers are a few dozen bytes.
const MAX_HEADER_LINE: usize = 1024;

/// Reads one frame body. `max` bounds the body size; a larger frame is an error (not drained),
/// since a server that sends one is treated as broken.
pub async fn read_frame<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> Result<Vec<u8>, FrameError> {
    let mut length: Option<usize> = None;
    let mut line = Vec::with_capacity(64);
    let mut first = true;
    loop {
        line.clear();
        let n = (&mut *reader)
            .take(MAX_HEADER_LINE as u64)
            .read_until(b'\n', &mut line)
            .await?;
        if n == 0 {
            return Err(if first {
                FrameError::Eof
            } else {
                FrameError::BadHeader("stream ended inside headers".into())
            });
        }
        first = false;
        if line.last() != Some(&b'\n') {
            return Err(FrameError::BadHeader("header line too long".into()));
        }
        let text = std::str::from_utf8(&line)
            .map_err(|_| FrameError::BadHeader("header is not UTF-8".into()))?
            .trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            break;
        }
        let Some((name, value)) = text.split_once(':') else {
            return Err(FrameError::BadHeader(truncate(text)));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let v: usize = value
                .trim()
                .parse()
                .map_err(|_| FrameError::BadHeader(truncate(text)))?;
            length = Some(v);
        }
    }
    let length = length.ok_or_else(|| FrameError::BadHeader("no Content-Length".into()))?;
    if length > max {
        return Err(FrameError::TooLarge(length, max));
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).await?;
    Ok(body)
}

/// Frames a JSON body for sending.
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 32);
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(body);
    out
}

fn truncate(s: &str) -> String {
    s.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_all(input: &[u8], max: usize) -> Vec<Result<Vec<u8>, String>> {
        let mut r = tokio::io::BufReader::new(input);
        let mut out = Vec::new();
        loop {
            match read_frame(&mut r, max).await {
                Err(FrameError::Eof) => break,
                Err(e) => {
                    out.push(Err(e.to_string()));
                    break;
                }
                Ok(b) => out.push(Ok(b)),
            }
        }
        out
    }

    #[tokio::test]
    async fn reads_consecutive_frames_and_extra_headers() {
        let mut input = encode(br#"{"a":1}"#);
        input.extend_from_slice(
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: 2\r\n\r\n{}",
        );
        let frames = read_all(&input, 100).await;
        assert_eq!(frames, vec![Ok(br#"{"a":1}"#.to_vec()), Ok(b"{}".to_vec())]);
    }

    #[tokio::test]
    async fn rejects_oversized_and_garbage() {
        let big = encode(&[b' '; 50]);
        assert!(matches!(
            read_all(&big, 10).await.as_slice(),
            [Err(e)] if e.contains("over the limit")
        ));
        let garbage = b"hello world\r\n\r\n".to_vec();
        assert!(matches!(
            read_all(&garbage, 10).await.as_slice(),
            [Err(e)] if e.contains("malformed")
        ));
        let endless = vec![b'x'; 5000];
        assert!(matches!(
            read_all(&endless, 10).await.as_slice(),
            [Err(e)] if e.contains("too long")
        ));
    }
}
