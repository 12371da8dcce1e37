//! Fuzz target: the MCP stdio framing guard (`mcp::stdio::guard`), fed an arbitrary client
//! stream. Checks, against an independent reading of the same lines: one reply at most per
//! line; none for a blank line, a forwarded message, a notification or a response; exactly
//! one (-32700, -32600 or -32602, echoing the request's id) for any other bad line; -32600 for
//! a line over the frame limit; the session never ends early (every line is judged).

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rmcp::model::ClientJsonRpcMessage;
use serde_json::Value;
use tokio::io::AsyncReadExt;

/// Frame limits to try, picked by the first byte: tiny ones reach the drain path often.
const LIMITS: [usize; 5] = [8, 40, 300, 4096, lspgate::mcp::stdio::DEFAULT_MAX_FRAME];

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

/// What the guard must do with one line.
#[derive(Debug)]
enum Expect {
    Nothing,
    Forward,
    /// A reply; the id it must carry, when the line names one the guard can read.
    Reply {
        id: Option<Value>,
        codes: &'static [i64],
    },
}

fn expect(line: &[u8], max: usize) -> Expect {
    // The limit is on the line without its `\n`, whether or not one ends it.
    if line.len() > max {
        return Expect::Reply {
            id: None,
            codes: &[-32600],
        };
    }
    let t = line.trim_ascii();
    if t.is_empty() {
        return Expect::Nothing;
    }
    if serde_json::from_slice::<ClientJsonRpcMessage>(t).is_ok() {
        return Expect::Forward;
    }
    let Ok(v) = serde_json::from_slice::<Value>(t) else {
        return Expect::Reply {
            id: Some(Value::Null),
            codes: &[-32700],
        };
    };
    let Value::Object(o) = &v else {
        return Expect::Reply {
            id: Some(Value::Null),
            codes: &[-32600],
        };
    };
    let v2 = o.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    let method = o.get("method").is_some_and(Value::is_string);
    // Ids echoed as sent: strings and integers (MCP's kinds).
    let id = match o.get("id") {
        Some(id @ Value::String(_)) => Some(id.clone()),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Some(Value::Number(n.clone())),
        _ => None,
    };
    // Nobody answers a notification, nor a response (the client's answer to a request).
    let notification = v2 && method && !o.contains_key("id");
    let response =
        v2 && !method && id.is_some() && (o.contains_key("result") || o.contains_key("error"));
    if notification || response {
        return Expect::Nothing;
    }
    let id = id.unwrap_or(Value::Null);
    Expect::Reply {
        id: Some(id),
        codes: &[-32600, -32602],
    }
}

/// The stream's lines as the guard reads them (without their `\n`): split after each `\n`, and
/// a last unterminated piece if any.
fn lines(stream: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        match rest.iter().position(|&b| b == b'\n') {
            Some(i) => {
                out.push(&rest[..i]);
                rest = &rest[i + 1..];
            }
            None => {
                out.push(rest);
                rest = &[];
            }
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, stream)) = data.split_first() else {
        return;
    };
    let max = LIMITS[pick as usize % LIMITS.len()];
    let stream = stream.to_vec();
    let expected: Vec<Expect> = lines(&stream).into_iter().map(|l| expect(l, max)).collect();

    let (forwarded, output) = runtime().block_on(async {
        let (theirs, mut ours) = tokio::io::duplex(64 * 1024);
        let mut transport = lspgate::mcp::stdio::guard(std::io::Cursor::new(stream), theirs, max);
        let mut forwarded = 0usize;
        while rmcp::transport::Transport::receive(&mut transport)
            .await
            .is_some()
        {
            forwarded += 1;
        }
        drop(transport);
        let mut output = Vec::new();
        ours.read_to_end(&mut output)
            .await
            .expect("reading the guard's output");
        (forwarded, output)
    });

    let want_forwarded = expected
        .iter()
        .filter(|e| matches!(e, Expect::Forward))
        .count();
    assert_eq!(
        forwarded, want_forwarded,
        "forwarded messages: {expected:?}"
    );

    let replies: Vec<Value> = output
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("every reply is one JSON line"))
        .collect();
    assert!(
        output.is_empty() || output.ends_with(b"\n"),
        "replies are whole lines"
    );
    let want: Vec<(&Option<Value>, &[i64])> = expected
        .iter()
        .filter_map(|e| match e {
            Expect::Reply { id, codes } => Some((id, *codes)),
            _ => None,
        })
        .collect();
    assert_eq!(
        replies.len(),
        want.len(),
        "one reply per bad line, none otherwise: {expected:?} got {replies:?}"
    );
    for (reply, (id, codes)) in replies.iter().zip(want) {
        assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
        let code = reply["error"]["code"].as_i64().expect("an error code");
        assert!(
            codes.contains(&code),
            "code {code}, wanted {codes:?}: {reply}"
        );
        assert!(reply["error"]["message"].is_string(), "{reply}");
        match id {
            Some(id) => assert_eq!(&reply["id"], id, "{reply}"),
            None => assert!(
                matches!(
                    reply["id"],
                    Value::Null | Value::String(_) | Value::Number(_)
                ),
                "{reply}"
            ),
        }
    }
});
