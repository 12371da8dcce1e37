//! The MCP channel itself, spoken raw over stdio: malformed JSON, unknown methods, bad params and
//! oversized frames get their JSON-RPC errors (protocol §2) and the session goes on.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_frames_get_errors_and_the_session_goes_on() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.py"), "def hello():\n    pass\n").unwrap();
    let mut raw = Raw::start(ws.path(), &[], &[FIXTURE]).await;

    let init = raw.initialize().await;
    assert_eq!(init["result"]["serverInfo"]["name"], "lspgate");
    // The result shapes' version (protocol §1): 2, lists grouped per file.
    let limits = &init["result"]["capabilities"]["experimental"]["lspgate"];
    assert_eq!(limits["shapes"], 2, "{init}");

    raw.send("{this is not json").await;
    let r = raw.recv().await;
    assert_eq!(
        (r["error"]["code"].as_i64(), &r["id"]),
        (Some(-32700), &Value::Null)
    );

    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#)
        .await;
    let r = raw.recv().await;
    assert_eq!(
        (r["error"]["code"].as_i64(), r["id"].as_i64()),
        (Some(-32601), Some(2))
    );

    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":7}"#)
        .await;
    let r = raw.recv().await;
    assert_eq!(
        (r["error"]["code"].as_i64(), r["id"].as_i64()),
        (Some(-32602), Some(3))
    );

    raw.send(r#"[{"jsonrpc":"2.0","id":9,"method":"tools/list"}]"#)
        .await;
    let r = raw.recv().await;
    assert_eq!(r["error"]["code"], -32600);

    // 3 MiB: over the 2 MiB limit, drained, answered with its id.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"hover","arguments":{{"file":"a.py","line":1,"column":1,"source":"{}"}}}}}}"#,
        "x".repeat(3 * 1024 * 1024)
    );
    raw.send(&big).await;
    let r = raw.recv().await;
    assert_eq!(
        (r["error"]["code"].as_i64(), r["id"].as_i64()),
        (Some(-32600), Some(4))
    );

    // And the session goes on: a normal call is answered.
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "hover", "arguments": {"file": "a.py", "line": 1, "symbol": "hello"}}})
        .to_string(),
    )
    .await;
    let r = raw.recv().await;
    assert_eq!(r["id"], 5);
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("word=hello")
    );

    // Bad tool arguments are a tool error the agent can read, not a protocol error.
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
        "name": "hover", "arguments": {"file": "a.py", "line": -1, "column": 1}}})
        .to_string(),
    )
    .await;
    let r = raw.recv().await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(
        r["result"]["structuredContent"]["error"]["code"],
        "invalid_params"
    );
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("invalid_params: ")
    );

    // Closing stdin ends lspgate cleanly.
    drop(raw.stdin);
    let status = tokio::time::timeout(Duration::from_secs(10), raw.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
}

/// A piped stdin is polled by lspgate's runtime (non-blocking while it serves) and handed back
/// in blocking mode when it exits, since the pipe's read end may be shared with others.
#[test]
fn client_pipes_are_polled_then_given_back_blocking() {
    use std::io::{BufRead, Write};
    use std::os::fd::AsRawFd;
    let nonblocking = |fd: &std::io::PipeReader| {
        // SAFETY: F_GETFL on a descriptor this test owns.
        let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
        assert!(flags >= 0);
        flags & libc::O_NONBLOCK != 0
    };
    let ws = workspace(&[("a.py", "x = 1\n")]);
    let (stdin_r, mut stdin_w) = std::io::pipe().unwrap();
    let probe = stdin_r.try_clone().unwrap();
    assert!(!nonblocking(&probe));
    let mut child = std::process::Command::new(LSPGATE)
        .env("LSPGATE_STANDALONE", "1")
        .arg("serve")
        .arg("--root")
        .arg(ws.path())
        .env("PATH", test_path())
        .stdin(stdin_r)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    writeln!(
        stdin_w,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#
    )
    .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(line.contains("\"result\""), "{line}");
    assert!(nonblocking(&probe), "lspgate polls its stdin");
    drop(stdin_w);
    assert!(child.wait().unwrap().success());
    assert!(
        !nonblocking(&probe),
        "stdin is blocking again after lspgate exits"
    );
}
