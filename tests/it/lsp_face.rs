//! `lspgate lsp` through real LSP clients nobody here wrote (Neovim's built-in client, pygls):
//! the drivers proven against pyright-langserver directly, then, through the daemon, clients
//! sharing one pyright with an MCP session, unsaved buffers that stay their client's own, a
//! shell write reaching importers, a killed pyright, pyright and ruff on one connection,
//! position encodings, a garbage-sending client cut off while the others go on, and a killed
//! daemon ending a session clearly (exit 1, a word on stderr).

mod raw_clients;

use crate::common;
use common::lsp_clients::*;
use common::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const PYRIGHT: &[&str] = &["pyright-langserver", "--stdio"];

fn lspgate_lsp() -> Vec<&'static str> {
    vec![LSPGATE, "lsp"]
}

const LIB: &str = "def compute(x: int) -> int:\n    return x\n";
const APP: &str = "from lib import compute\n\ny: str = compute(1)\nprint(compute(2))\n";
/// pyright's message for line 3 of APP.
const TYPE_ERROR: &str = "Type \"int\" is not assignable to declared type \"str\"";

fn python_workspace() -> tempfile::TempDir {
    workspace(&[
        ("pyproject.toml", "[project]\nname = \"face\"\n"),
        ("lib.py", LIB),
        ("app.py", APP),
    ])
}

/// Open app.py, wait for pyright's diagnostics, hover, definition and references on `compute`
/// (line 4), then close and stop.
fn basic_steps() -> Value {
    let at = json!({"file": "app.py", "line": 4, "symbol": "compute"});
    json!([
        {"do": "open", "file": "app.py"},
        {"do": "wait_diagnostics", "file": "app.py", "match": TYPE_ERROR, "label": "diagnostics"},
        merge(&at, json!({"do": "hover", "label": "hover"})),
        merge(&at, json!({"do": "definition", "label": "definition"})),
        merge(&at, json!({"do": "references", "label": "references"})),
        {"do": "close", "file": "app.py"},
        {"do": "stop", "label": "stop"},
    ])
}

fn merge(base: &Value, extra: Value) -> Value {
    let mut out = base.clone();
    for (k, v) in extra.as_object().unwrap() {
        out[k] = v.clone();
    }
    out
}

/// What `basic_steps` must have observed: pyright's type error on line 3 (0-based 2), the
/// signature in the hover, the definition in lib.py, references in both files.
fn assert_basic(obs: &Observations) {
    obs.assert_clean();
    let diags = obs.result("diagnostics");
    let found = &diags["diagnostics"];
    let error = found
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["message"].as_str().unwrap_or("").contains(TYPE_ERROR))
        .unwrap_or_else(|| panic!("{found}"));
    assert_eq!(error["range"]["start"]["line"], 2, "{error}");
    assert_eq!(error["source"], "Pyright", "{error}");
    let hover = hover_text(obs.result("hover"));
    assert!(hover.contains("def compute(x: int) -> int"), "{hover}");
    assert_eq!(
        locations(obs.result("definition")),
        vec![("lib.py".to_string(), 0)]
    );
    let refs = locations(obs.result("references"));
    for want in [("lib.py", 0), ("app.py", 0), ("app.py", 2), ("app.py", 3)] {
        assert!(
            refs.contains(&(want.0.to_string(), want.1)),
            "{want:?} not in {refs:?}"
        );
    }
    assert_eq!(obs.of_kind("initialized").len(), 1, "{}", obs.dump());
    let exits = obs.of_kind("exit");
    assert_eq!(exits.len(), 1, "{}", obs.dump());
    assert_eq!(exits[0]["code"], 0, "{}", obs.dump());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn neovim_gets_pyright_answers_directly() {
    require("pyright-langserver");
    let ws = python_workspace();
    let c = LspClient::spawn(Driver::Nvim, PYRIGHT, ws.path(), basic_steps(), &[]);
    assert_basic(&c.finish(120).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pygls_gets_pyright_answers_directly() {
    require("pyright-langserver");
    let ws = python_workspace();
    let c = LspClient::spawn(Driver::Pygls, PYRIGHT, ws.path(), basic_steps(), &[]);
    assert_basic(&c.finish(120).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn neovim_and_pygls_get_answers_through_lspgate_lsp() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = python_workspace();
    let env = d.env(&[]);
    let nvim = LspClient::spawn(Driver::Nvim, &lspgate_lsp(), ws.path(), basic_steps(), &env);
    let pygls = LspClient::spawn(
        Driver::Pygls,
        &lspgate_lsp(),
        ws.path(),
        basic_steps(),
        &env,
    );
    assert_basic(&nvim.finish(120).await);
    assert_basic(&pygls.finish(120).await);
}

/// Client A changes lib.py without saving (`compute` now returns `str`, so `return x` is a
/// type error in A's buffer); B, on the same file, gets hover and diagnostics for the disk's
/// content; A gets them for its buffer; A's didClose leaves B's document open (B still gets
/// answers, and its diagnostics are never A's).
async fn unsaved_buffers_are_their_clients_own(server: &[&str], env: &[(&str, &str)]) {
    let ws = python_workspace();
    let edited = "def compute(x: int) -> str:\n    return x\n";
    let at = json!({"file": "lib.py", "line": 1, "symbol": "compute"});
    let mut a = LspClient::spawn(
        Driver::Nvim,
        server,
        ws.path(),
        json!([
            {"do": "open", "file": "lib.py"},
            {"do": "wait_diagnostics", "file": "lib.py", "empty": true, "label": "a-disk"},
            {"do": "edit", "file": "lib.py", "text": edited},
            {"do": "wait_diagnostics", "file": "lib.py", "match": "is not assignable to return type", "label": "a-edited"},
            merge(&at, json!({"do": "hover", "label": "a-hover"})),
            {"do": "wait_go", "name": "close"},
            {"do": "close", "file": "lib.py", "label": "a-closed"},
            {"do": "wait_go", "name": "stop"},
            {"do": "stop"},
        ]),
        env,
    );
    a.step("a-hover", 90).await;
    let mut b = LspClient::spawn(
        Driver::Nvim,
        server,
        ws.path(),
        json!([
            {"do": "open", "file": "lib.py"},
            {"do": "wait_diagnostics", "file": "lib.py", "empty": true, "label": "b-disk"},
            merge(&at, json!({"do": "hover", "label": "b-hover"})),
            {"do": "wait_go", "name": "after-close"},
            merge(&at, json!({"do": "hover", "label": "b-hover-after"})),
            {"do": "references", "file": "lib.py", "line": 1, "symbol": "compute", "label": "b-refs-after"},
            // Anything A's close would publish for lib.py has come by now.
            {"do": "sleep", "ms": 500},
            {"do": "stop"},
        ]),
        env,
    );
    b.step("b-hover", 90).await;
    a.go("close");
    a.step("a-closed", 30).await;
    b.go("after-close");
    let b = b.finish(90).await;
    a.go("stop");
    let a = a.finish(60).await;
    a.assert_clean();
    b.assert_clean();
    let lib = ws.path().join("lib.py");
    assert!(
        hover_text(a.result("a-hover")).contains("-> str"),
        "A's hover is for its buffer\n{}",
        a.dump()
    );
    for label in ["b-hover", "b-hover-after"] {
        let text = hover_text(b.result(label));
        assert!(
            text.contains("def compute(x: int) -> int"),
            "B's {label} is for the disk: {text}\n{}",
            b.dump()
        );
    }
    assert!(
        locations(b.result("b-refs-after")).contains(&("app.py".to_string(), 0)),
        "{}",
        b.dump()
    );
    for diags in b.published(&lib) {
        assert!(
            messages(diags).is_empty(),
            "B got diagnostics of A's buffer: {diags}\n{}",
            b.dump()
        );
    }
    assert!(!b.published(&lib).is_empty(), "{}", b.dump());
    assert_eq!(b.of_kind("initialized").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_neovims_keep_their_buffers_with_pyright_directly() {
    require("pyright-langserver");
    unsaved_buffers_are_their_clients_own(PYRIGHT, &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsaved_buffers_are_their_clients_own_through_lspgate_lsp() {
    require("pyright-langserver");
    let d = Daemon::new();
    unsaved_buffers_are_their_clients_own(&lspgate_lsp(), &d.env(&[])).await;
}

/// The pids of the pyright servers `lspgate daemon status` lists, over every root.
fn pyright_pids(d: &Daemon) -> Vec<u64> {
    let status = d.status().expect("a daemon runs");
    let mut pids: Vec<u64> = status["roots"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["servers"].as_array().unwrap().iter())
        .filter(|s| s["name"].as_str().unwrap_or("").contains("pyright"))
        .filter_map(|s| s["pid"].as_u64())
        .collect();
    pids.sort();
    pids.dedup();
    pids
}

/// Both clients' steps up to `ready`: open app.py, pyright's diagnostics, hover, definition,
/// references; then wait for `end` and stop.
fn shared_steps() -> Value {
    let at = json!({"file": "app.py", "line": 4, "symbol": "compute"});
    json!([
        {"do": "open", "file": "app.py"},
        {"do": "wait_diagnostics", "file": "app.py", "match": TYPE_ERROR, "label": "diagnostics"},
        merge(&at, json!({"do": "hover", "label": "hover"})),
        merge(&at, json!({"do": "definition", "label": "definition"})),
        merge(&at, json!({"do": "references", "label": "references"})),
        {"do": "wait_go", "name": "end"},
        {"do": "close", "file": "app.py"},
        {"do": "stop", "label": "stop"},
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_neovims_and_an_mcp_session_share_one_pyright() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = python_workspace();
    let env = d.env(&[]);
    let gate = d.session(ws.path(), &[]).await;
    let mut a = LspClient::spawn(
        Driver::Nvim,
        &lspgate_lsp(),
        ws.path(),
        shared_steps(),
        &env,
    );
    let mut b = LspClient::spawn(
        Driver::Nvim,
        &lspgate_lsp(),
        ws.path(),
        shared_steps(),
        &env,
    );
    a.step("references", 120).await;
    b.step("references", 120).await;
    let (r, text) = gate
        .ok(
            "references",
            json!({"file": "lib.py", "line": 1, "symbol": "compute"}),
        )
        .await;
    assert_eq!(r["total"], 4, "{text}");
    let (r, text) = gate.ok("diagnostics", json!({"file": "app.py"})).await;
    assert!(text.contains(TYPE_ERROR), "{r}\n{text}");
    let pids = pyright_pids(&d);
    assert_eq!(pids.len(), 1, "one pyright: {:?}", d.status());
    a.go("end");
    b.go("end");
    assert_basic(&a.finish(60).await);
    assert_basic(&b.finish(60).await);
    assert_eq!(pyright_pids(&d), pids, "the same pyright throughout");
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_write_reaches_both_clients_importers() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = workspace(&[
        ("pyproject.toml", "[project]\nname = \"face\"\n"),
        ("lib.py", LIB),
        ("app.py", "from lib import compute\n\nprint(compute(2))\n"),
    ]);
    let env = d.env(&[]);
    let unknown = "\"compute\" is unknown import symbol";
    let steps = json!([
        {"do": "open", "file": "app.py"},
        {"do": "wait_diagnostics", "file": "app.py", "empty": true},
        {"do": "mark", "file": "app.py", "label": "ready"},
        {"do": "wait_diagnostics", "file": "app.py", "match": unknown, "timeout_ms": 60000, "label": "after-write"},
        {"do": "stop"},
    ]);
    let mut a = LspClient::spawn(Driver::Nvim, &lspgate_lsp(), ws.path(), steps.clone(), &env);
    let mut b = LspClient::spawn(Driver::Pygls, &lspgate_lsp(), ws.path(), steps, &env);
    a.step("ready", 120).await;
    b.step("ready", 120).await;
    // A plain write, as a shell or another tool makes: no client touched lib.py.
    std::fs::write(
        ws.path().join("lib.py"),
        "def renamed(x: int) -> int:\n    return x\n",
    )
    .unwrap();
    for c in [a, b] {
        let obs = c.finish(90).await;
        obs.assert_clean();
        let found = &obs.result("after-write")["diagnostics"];
        assert!(
            messages(found).iter().any(|m| m.contains(unknown)),
            "{found}"
        );
        assert!(
            obs.published(&ws.path().join("lib.py")).is_empty(),
            "{}",
            obs.dump()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_pyright_is_transparent_to_clients() {
    require("pyright-langserver");
    let d = Daemon::new();
    let ws = python_workspace();
    let env = d.env(&[]);
    // A has an unsaved line that only its buffer holds; after the kill, its hover there must
    // still be answered (the document reopened with A's content).
    let edited = format!("{APP}z = compute(3)\n");
    let steps = |edit: bool| {
        // (Hovers, not diagnostics, tell that pyright is up: this test is about requests.)
        let mut s = vec![json!({"do": "open", "file": "app.py"})];
        if edit {
            s.push(json!({"do": "edit", "file": "app.py", "text": edited}));
            s.push(json!({"do": "hover", "file": "app.py", "line": 5, "symbol": "compute", "label": "unsaved-before"}));
        }
        s.extend([
            json!({"do": "hover", "file": "app.py", "line": 4, "symbol": "compute", "label": "before"}),
            json!({"do": "mark", "file": "app.py", "label": "ready"}),
            json!({"do": "wait_go", "name": "killed"}),
            json!({"do": "hover", "file": "app.py", "line": 4, "symbol": "compute", "label": "after"}),
            json!({"do": "references", "file": "app.py", "line": 4, "symbol": "compute", "label": "refs-after"}),
        ]);
        if edit {
            s.push(json!({"do": "hover", "file": "app.py", "line": 5, "symbol": "compute", "label": "unsaved-after"}));
        }
        s.push(json!({"do": "stop"}));
        Value::Array(s)
    };
    let mut a = LspClient::spawn(Driver::Nvim, &lspgate_lsp(), ws.path(), steps(true), &env);
    let mut b = LspClient::spawn(Driver::Pygls, &lspgate_lsp(), ws.path(), steps(false), &env);
    a.step("ready", 120).await;
    b.step("ready", 120).await;
    let pids = pyright_pids(&d);
    assert_eq!(pids.len(), 1, "{:?}", d.status());
    // SAFETY: kill(2) of the pyright the daemon reported.
    unsafe {
        libc::kill(pids[0] as i32, libc::SIGKILL);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while lspgate::procfs::alive(pids[0] as u32) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    a.go("killed");
    b.go("killed");
    let a = a.finish(120).await;
    let b = b.finish(120).await;
    for obs in [&a, &b] {
        obs.assert_clean();
        for label in ["before", "after"] {
            let text = hover_text(obs.result(label));
            assert!(
                text.contains("def compute(x: int) -> int"),
                "{label}: {text}"
            );
        }
        assert!(
            locations(obs.result("refs-after")).contains(&("lib.py".to_string(), 0)),
            "{}",
            obs.dump()
        );
        // One initialize, one exit (at `stop`): the client never saw its server go.
        assert_eq!(obs.of_kind("initialized").len(), 1, "{}", obs.dump());
        assert_eq!(obs.of_kind("exit").len(), 1, "{}", obs.dump());
    }
    for label in ["unsaved-before", "unsaved-after"] {
        let text = hover_text(a.result(label));
        assert!(
            text.contains("def compute"),
            "A's unsaved line, {label}: {text}"
        );
    }
    assert_ne!(pyright_pids(&d), pids, "a new pyright");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_and_ruff_diagnostics_through_one_connection() {
    require("pyright-langserver");
    require("ruff");
    let d = Daemon::new();
    let ws = workspace(&[
        (
            "pyproject.toml",
            "[project]\nname = \"face\"\n\n[tool.ruff]\nline-length = 100\n",
        ),
        ("lib.py", LIB),
        ("app.py", format!("import os\n{APP}").as_str()),
    ]);
    let (code, out, err) = d.cli(ws.path(), &["servers", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("builtin/pyright") && out.contains("builtin/ruff"),
        "{out}"
    );
    let steps = json!([
        {"do": "open", "file": "app.py"},
        {"do": "wait_diagnostics", "file": "app.py", "match": TYPE_ERROR, "label": "pyright", "fresh": false},
        {"do": "wait_diagnostics", "file": "app.py", "match": "`os` imported but unused", "label": "ruff", "fresh": false},
        {"do": "stop"},
    ]);
    let nvim = LspClient::spawn(
        Driver::Nvim,
        &lspgate_lsp(),
        ws.path(),
        steps.clone(),
        &d.env(&[]),
    );
    let obs = nvim.finish(120).await;
    obs.assert_clean();
    // The last publish holds both servers' diagnostics, each with its source.
    let published = obs.published(&ws.path().join("app.py"));
    let last = messages(published.last().unwrap());
    assert!(
        last.iter()
            .any(|m| m.starts_with("Pyright: ") && m.contains(TYPE_ERROR)),
        "{last:?}"
    );
    assert!(
        last.iter()
            .any(|m| m.starts_with("Ruff: ") && m.contains("`os` imported but unused")),
        "{last:?}"
    );
}

/// pygls offers `utf-8` (then `utf-32`, then nothing: `utf-16`) on a line with non-ASCII text
/// before the symbol: whatever encoding is agreed, positions sent and received are in it.
async fn positions_in_the_agreed_encoding(server: &[&str], env: &[(&str, &str)]) {
    let app = "from lib import compute\n\nw = \"é🎉\"; v: str = compute(3)\n";
    let ws = workspace(&[
        ("pyproject.toml", "[project]\nname = \"face\"\n"),
        ("lib.py", LIB),
        ("app.py", app),
    ]);
    let line = app.lines().nth(2).unwrap();
    let at = line.find("compute").unwrap();
    for offered in [Some("utf-8"), Some("utf-32"), None] {
        let steps = json!([
            {"do": "open", "file": "app.py"},
            {"do": "wait_diagnostics", "file": "app.py", "match": TYPE_ERROR, "label": "diagnostics"},
            {"do": "hover", "file": "app.py", "line": 3, "symbol": "compute", "label": "hover"},
            {"do": "stop"},
        ]);
        let encodings = offered.map(|e| json!([e]).to_string());
        let mut env = env.to_vec();
        if let Some(e) = &encodings {
            env.push(("LSPF_ENCODINGS", e.as_str()));
        }
        let c = LspClient::spawn(Driver::Pygls, server, ws.path(), steps, &env);
        let obs = c.finish(120).await;
        obs.assert_clean();
        let agreed = obs.of_kind("initialized")[0]["offset_encoding"]
            .as_str()
            .unwrap()
            .to_string();
        let column = match agreed.as_str() {
            "utf-8" => at,
            "utf-32" => line[..at].chars().count(),
            _ => line[..at].encode_utf16().count(),
        } as u64;
        let found = &obs.result("diagnostics")["diagnostics"];
        let error = found
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["message"].as_str().unwrap_or("").contains(TYPE_ERROR))
            .unwrap();
        assert_eq!(
            error["range"]["start"]["character"], column,
            "offered {offered:?}, agreed {agreed}: {error}"
        );
        let hover = obs.result("hover");
        assert!(hover_text(hover).contains("def compute"), "{hover}");
        assert_eq!(hover["range"]["start"]["character"], column, "{hover}");
        if offered.is_some() && server[0] == LSPGATE {
            assert_eq!(
                Some(agreed.as_str()),
                offered,
                "lspgate takes what is offered"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pygls_positions_with_pyright_directly() {
    require("pyright-langserver");
    positions_in_the_agreed_encoding(PYRIGHT, &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn positions_in_the_agreed_encoding_through_lspgate_lsp() {
    require("pyright-langserver");
    let d = Daemon::new();
    positions_in_the_agreed_encoding(&lspgate_lsp(), &d.env(&[])).await;
}
