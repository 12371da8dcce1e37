//! `lspgate lsp` as faithful as a direct server (issue 39), through a bare JSON-RPC client: a
//! workspace-wide request on a server still at work waits until it is ready, however long,
//! with `$/progress` shown to a client that can show it, other requests answered meanwhile, a
//! cancel answered at once; the client's capabilities carried (hover as plain text, diagnostic
//! tags, related information); server messages reaching the clients of that server only.

use crate::common;
use common::lsp_raw::{Client, uri};
use common::*;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Initializes `c` with `capabilities`, answering nothing else.
async fn initialize_with(c: &mut Client, root: &Path, capabilities: Value) -> Value {
    let r = c
        .request(
            "initialize",
            json!({"processId": null, "rootUri": uri(root), "capabilities": capabilities}),
        )
        .await;
    c.notify("initialized", json!({})).await;
    r
}

fn references(file: &Path, line: u64, character: u64) -> Value {
    json!({"textDocument": {"uri": uri(file)}, "position": {"line": line, "character": character},
           "context": {"includeDeclaration": true}})
}

/// The methods the fixture logged, in order.
fn logged(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// A server indexing for 4 s past a 0.3 s `--ready-timeout`: the references wait for the end
/// (the server is asked only after it), a hover meanwhile is answered at once, and the client
/// sees the wait as work-done progress on a token it was asked to create.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_wide_request_waits_for_the_server_with_progress() {
    let dir = workspace(&[("a.txt", "alpha beta\nbeta gamma\n")]);
    let root = dir.path().canonicalize().unwrap();
    let file = root.join("a.txt");
    let log = root.join("fixture.log");
    std::fs::write(&log, "").unwrap();
    let log_arg = log.to_str().unwrap();
    let mut c = Client::start(
        &root,
        &[
            "--ready-timeout",
            "0.3",
            "--",
            FIXTURE,
            "--progress",
            "4000",
            "--log",
            log_arg,
        ],
    );
    initialize_with(&mut c, &root, json!({"window": {"workDoneProgress": true}})).await;
    c.open(&file, "plaintext").await;
    let started = Instant::now();
    c.send(
        json!({"jsonrpc": "2.0", "id": 100, "method": "textDocument/references",
                  "params": references(&file, 0, 7)}),
    )
    .await;
    // Answered meanwhile, while the server indexes.
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri(&file)}, "position": {"line": 0, "character": 1}}),
        )
        .await;
    assert!(hover.get("error").is_none(), "{hover}");
    assert!(
        !logged(&log).iter().any(|l| l == "progress end"),
        "the hover waited for the indexing: {:?}",
        logged(&log)
    );
    // The wait is shown: a token to create, then its begin.
    let create = c
        .wait(|m| m["method"] == "window/workDoneProgress/create")
        .await;
    let token = create["params"]["token"].clone();
    c.send(json!({"jsonrpc": "2.0", "id": create["id"], "result": null}))
        .await;
    let begin = c
        .wait(|m| m["method"] == "$/progress" && m["params"]["token"] == token)
        .await;
    assert_eq!(begin["params"]["value"]["kind"], "begin", "{begin}");
    assert!(
        begin["params"]["value"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("indexing")),
        "{begin}"
    );
    let answer = c
        .wait(|m| m["id"] == 100 && m.get("method").is_none())
        .await;
    assert!(answer.get("error").is_none(), "{answer}");
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "answered after {:?}, before the server was ready",
        started.elapsed()
    );
    let methods = logged(&log);
    let end = methods.iter().position(|l| l == "progress end");
    let asked = methods
        .iter()
        .position(|l| l.contains("textDocument/references"));
    assert!(
        matches!((end, asked), (Some(e), Some(a)) if e < a),
        "the server was asked before its indexing ended: {methods:?}"
    );
    let ended = c
        .wait(|m| {
            m["method"] == "$/progress"
                && m["params"]["token"] == token
                && m["params"]["value"]["kind"] == "end"
        })
        .await;
    assert_eq!(ended["params"]["value"]["kind"], "end");
}

/// A wait the client gives up is answered RequestCancelled at once; a client that did not
/// announce `window.workDoneProgress` is asked to create no token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_for_readiness_is_cancelled_by_the_client() {
    let dir = workspace(&[("a.txt", "alpha beta\n")]);
    let root = dir.path().canonicalize().unwrap();
    let file = root.join("a.txt");
    let mut c = Client::start(
        &root,
        &[
            "--ready-timeout",
            "0.3",
            "--",
            FIXTURE,
            "--progress",
            "60000",
        ],
    );
    initialize_with(&mut c, &root, json!({})).await;
    c.open(&file, "plaintext").await;
    c.send(
        json!({"jsonrpc": "2.0", "id": 7, "method": "textDocument/references",
                  "params": references(&file, 0, 7)}),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    c.notify("$/cancelRequest", json!({"id": 7})).await;
    let answer = c.wait(|m| m["id"] == 7 && m.get("method").is_none()).await;
    assert_eq!(answer["error"]["code"], -32800, "{answer}");
    for m in &c.seen {
        assert_ne!(m["method"], "window/workDoneProgress/create", "{m}");
        assert_ne!(m["method"], "$/progress", "{m}");
    }
}

/// pyright, cold, on 1,500 modules calling one function, asked its references at once past a
/// 0.1 s `--ready-timeout`: the first answer is complete (every call and the definition), the
/// client shown the wait meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_first_references_answer_from_pyright_is_complete() {
    require("pyright-langserver");
    const MODULES: usize = 1500;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    std::fs::write(root.join("pkg/__init__.py"), "").unwrap();
    std::fs::write(root.join("pkg/core.py"), "def target():\n    return 1\n").unwrap();
    for i in 0..MODULES {
        let folder = root.join(format!("pkg/m{}", i / 100));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("__init__.py"), "").unwrap();
        std::fs::write(
            folder.join(format!("f{i}.py")),
            format!(
                "from pkg.core import target\n\n\ndef f{i}() -> int:\n    return target() + {i}\n"
            ),
        )
        .unwrap();
    }
    let core = root.join("pkg/core.py");
    let mut c = Client::start(&root, &["--ready-timeout", "0.1", "--language", "python"]);
    initialize_with(&mut c, &root, json!({"window": {"workDoneProgress": true}})).await;
    c.open(&core, "python").await;
    c.send(
        json!({"jsonrpc": "2.0", "id": 50, "method": "textDocument/references",
                  "params": references(&core, 0, 5)}),
    )
    .await;
    // Progress is shown if the wait for readiness lasts (a fast machine may find pyright ready
    // at once: `a_workspace_wide_request_waits_for_the_server_with_progress` holds progress).
    let mut token = None;
    let answer = loop {
        let m = c
            .wait(|m| {
                (m["id"] == 50 && m.get("method").is_none())
                    || m["method"] == "window/workDoneProgress/create"
            })
            .await;
        if m["method"] == "window/workDoneProgress/create" {
            c.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": null}))
                .await;
            token = Some(m["params"]["token"].clone());
            continue;
        }
        break m;
    };
    let found = answer["result"].as_array().map(Vec::len).unwrap_or(0);
    // Each module's import and call, and the definition.
    assert_eq!(
        found,
        2 * MODULES + 1,
        "{}",
        answer.to_string().chars().take(300).collect::<String>()
    );
    if let Some(token) = token {
        let begin = c
            .wait(|m| m["method"] == "$/progress" && m["params"]["token"] == token)
            .await;
        assert_eq!(begin["params"]["value"]["kind"], "begin", "{begin}");
    }
}

/// Two clients of one pyright: the one announcing plain-text hovers and no diagnostic tags gets
/// a plain-text hover and no "is not accessed" hints (as pyright itself would give it); the one
/// announcing markdown and tags gets the fence and the hints, tagged Unnecessary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_client_gets_answers_shaped_for_its_capabilities() {
    require("pyright-langserver");
    let text = "def f() -> int:\n    unused = 1\n    return 2\n";
    let dir = workspace(&[("m.py", text)]);
    let root = dir.path().canonicalize().unwrap();
    let file = root.join("m.py");
    let hover_at =
        json!({"textDocument": {"uri": uri(&file)}, "position": {"line": 0, "character": 4}});
    let not_accessed = |m: &Value| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["diagnostics"].as_array().is_some_and(|d| {
                d.iter().any(|d| {
                    d["message"]
                        .as_str()
                        .unwrap_or("")
                        .contains("is not accessed")
                })
            })
    };

    let mut rich = Client::start(&root, &["--language", "python"]);
    initialize_with(
        &mut rich,
        &root,
        json!({"textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]},
               "publishDiagnostics": {"tagSupport": {"valueSet": [1, 2]}}}}),
    )
    .await;
    rich.open(&file, "python").await;
    let hover = rich.request("textDocument/hover", hover_at.clone()).await;
    assert_eq!(hover["result"]["contents"]["kind"], "markdown", "{hover}");
    assert!(
        hover["result"]["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("```"),
        "{hover}"
    );
    let published = rich.wait(not_accessed).await;
    let hint = published["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["message"].as_str().unwrap().contains("is not accessed"))
        .unwrap()
        .clone();
    assert_eq!(hint["tags"], json!([1]), "{hint}");
    assert_eq!(hint["severity"], 4, "{hint}");

    let mut plain = Client::start(&root, &["--language", "python"]);
    initialize_with(
        &mut plain,
        &root,
        json!({"textDocument": {"hover": {"contentFormat": ["plaintext"]}}}),
    )
    .await;
    plain.open(&file, "python").await;
    let hover = plain.request("textDocument/hover", hover_at).await;
    assert_eq!(hover["result"]["contents"]["kind"], "plaintext", "{hover}");
    let value = hover["result"]["contents"]["value"].as_str().unwrap();
    assert!(
        !value.contains("```") && value.contains("def f() -> int"),
        "{hover}"
    );
    // Its diagnostics come (pyright's `reportUnusedVariable` is off in basic mode: none), and
    // never the hints.
    let first = plain
        .wait(|m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri(&file)
        })
        .await;
    assert!(!not_accessed(&first), "{first}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    for m in &plain.seen {
        assert!(!not_accessed(m), "{m}");
    }
}

/// Two roots served by one daemon, each with its own server: what one root's server logs
/// (`window/logMessage` before each answer, `--chatty`) reaches the client of that root, and
/// not the client of the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_messages_reach_the_clients_of_that_server_only() {
    let d = Daemon::new();
    let env = d.env(&[]);
    let one = workspace(&[("a.txt", "alpha beta\n")]);
    let other = workspace(&[("b.txt", "gamma delta\n")]);
    let (one, other) = (
        one.path().canonicalize().unwrap(),
        other.path().canonicalize().unwrap(),
    );
    let mut a = Client::start_with(&one, &["--", FIXTURE, "--chatty"], &env);
    initialize_with(&mut a, &one, json!({})).await;
    let mut b = Client::start_with(&other, &["--", FIXTURE], &env);
    initialize_with(&mut b, &other, json!({})).await;
    let (a_txt, b_txt) = (one.join("a.txt"), other.join("b.txt"));
    a.open(&a_txt, "plaintext").await;
    b.open(&b_txt, "plaintext").await;
    // The pumps pick their servers up within a second.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let hover = a
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri(&a_txt)}, "position": {"line": 0, "character": 1}}),
        )
        .await;
    assert!(hover.get("error").is_none(), "{hover}");
    let said = a
        .wait(|m| m["method"] == "window/logMessage" && m["params"]["message"] == "working on it")
        .await;
    assert_eq!(said["params"]["type"], 4, "{said}");
    let hover = b
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri(&b_txt)}, "position": {"line": 0, "character": 1}}),
        )
        .await;
    assert!(hover.get("error").is_none(), "{hover}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    // Everything sent to b before this answer is read (into `seen`) by the time it comes.
    b.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri(&b_txt)}, "position": {"line": 0, "character": 7}}),
    )
    .await;
    for m in &b.seen {
        assert_ne!(m["method"], "window/logMessage", "{m}");
    }
}

/// A root the client reaches through a symlink: the servers know it by its real path, the
/// client by its own; requests reach the document the servers have open, and answers and
/// diagnostics name the client's paths.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_root_reached_through_a_symlink_is_answered_in_the_clients_paths() {
    require("pyright-langserver");
    let dir = workspace(&[
        ("real/pyproject.toml", "[project]\nname = \"linked\"\n"),
        ("real/lib.py", "def compute(x: int) -> int:\n    return x\n"),
        (
            "real/app.py",
            "from lib import compute\n\ny: str = compute(1)\nprint(compute(2))\n",
        ),
    ]);
    let base = dir.path().canonicalize().unwrap();
    let link = base.join("link");
    std::os::unix::fs::symlink(base.join("real"), &link).unwrap();
    let mut c = Client::start(&link, &["--server", "pyright"]);
    initialize_with(&mut c, &link, json!({})).await;
    let app = link.join("app.py");
    c.open(&app, "python").await;
    let published = c
        .wait(|m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri(&app)
                && m["params"]["diagnostics"]
                    .as_array()
                    .is_some_and(|d| !d.is_empty())
        })
        .await;
    assert!(
        published.to_string().contains("is not assignable"),
        "{published}"
    );
    let refs = c
        .request("textDocument/references", references(&app, 0, 17))
        .await;
    let found = refs["result"].as_array().cloned().unwrap_or_default();
    assert_eq!(found.len(), 4, "{refs}");
    let prefix = uri(&link);
    assert!(
        found
            .iter()
            .all(|l| l["uri"].as_str().is_some_and(|u| u.starts_with(&prefix))),
        "{refs}"
    );
    let def = c
        .request(
            "textDocument/definition",
            json!({"textDocument": {"uri": uri(&app)}, "position": {"line": 3, "character": 7}}),
        )
        .await;
    assert!(
        def["result"]
            .to_string()
            .contains(&uri(&link.join("lib.py"))),
        "{def}"
    );
}

/// A file written on disk by someone else (an agent's shell, a formatter) is what the face's
/// next request is answered from, at once: the face reaches the consistency point (`sync`)
/// before it asks a server, as every tool does. (The watcher's own delivery waits for the
/// burst to settle, so a request made right after the write used to get pyright's old view.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_on_disk_just_before_a_request_is_seen_by_it() {
    require("pyright-langserver");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let a = root.join("a.py");
    let b = root.join("b.py");
    std::fs::write(&b, "def f() -> int:\n    return 1\n").unwrap();
    std::fs::write(&a, "from b import f\n\nx = f()\n").unwrap();
    let mut c = Client::start(&root, &["--language", "python"]);
    initialize_with(&mut c, &root, json!({})).await;
    c.open(&a, "python").await;
    let definition =
        json!({"textDocument": {"uri": uri(&a)}, "position": {"line": 2, "character": 4}});
    let first = c
        .request("textDocument/definition", definition.clone())
        .await;
    let line_of = |answer: &Value| {
        let r = &answer["result"];
        let loc = if r.is_array() { &r[0] } else { r };
        loc["range"]["start"]["line"]
            .as_u64()
            .or_else(|| loc["targetRange"]["start"]["line"].as_u64())
    };
    assert_eq!(line_of(&first), Some(0), "{first}");
    for round in 1..=5u64 {
        // `f` moves down, written as a plain write; asked at once.
        let pad = "\n".repeat(round as usize * 3);
        std::fs::write(&b, format!("{pad}def f() -> int:\n    return {round}\n")).unwrap();
        let answer = c
            .request("textDocument/definition", definition.clone())
            .await;
        assert_eq!(line_of(&answer), Some(round * 3), "round {round}: {answer}");
    }
}
