//! `lspgate lsp` pays for the languages a client uses, and offers per language (issue 39):
//! a Python-only client starts no TypeScript server and hears of no document it did not open;
//! opening a JavaScript file starts it then; what a language's servers serve is registered for
//! its documents alone (a `.py` buffer is offered no formatting, a `.js` one is), a method no
//! server of the document's language serves is `-32601`, as from a direct server; a client
//! that takes no registrations is told what the servers announced when they last ran, none
//! started for it; a missing server is said once, with how to install it.

use crate::common;
use common::lsp_clients::{Driver, LspClient};
use common::lsp_raw::{Client, uri};
use common::*;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

const PY: &str = "def double(x: int) -> int:\n    return x * 2\n\nprint(double(2))\n";
const JS: &str = "function twice(x){return x*2}\nconsole.log(twice(2));\n";

fn mixed_workspace() -> tempfile::TempDir {
    workspace(&[
        ("pyproject.toml", "[project]\nname = \"lean\"\n"),
        ("package.json", "{\"name\": \"lean\"}\n"),
        ("a.py", PY),
        ("b.js", JS),
        ("c.js", "let unused = ;\n"),
    ])
}

/// Every document request a client may register for, dynamically.
fn dynamic_capabilities() -> Value {
    let mut td = serde_json::Map::new();
    for at in [
        "hover",
        "completion",
        "signatureHelp",
        "definition",
        "declaration",
        "typeDefinition",
        "implementation",
        "references",
        "documentHighlight",
        "documentSymbol",
        "codeAction",
        "formatting",
        "rangeFormatting",
        "rename",
        "foldingRange",
        "selectionRange",
        "callHierarchy",
        "typeHierarchy",
        "inlayHint",
    ] {
        td.insert(at.into(), json!({"dynamicRegistration": true}));
    }
    json!({"textDocument": td})
}

async fn initialize(c: &mut Client, root: &Path, capabilities: Value) -> Value {
    let r = c
        .request(
            "initialize",
            json!({"processId": null, "rootUri": uri(root), "capabilities": capabilities}),
        )
        .await;
    c.notify("initialized", json!({})).await;
    r
}

fn formatting(file: &Path) -> Value {
    json!({"textDocument": {"uri": uri(file)}, "options": {"tabSize": 4, "insertSpaces": true}})
}

/// Whether a process below `ancestor` (not itself: its own arguments name the servers) runs a
/// command line holding `needle`.
fn runs_below(ancestor: u32, needle: &str) -> bool {
    lspgate::procfs::pids()
        .into_iter()
        .filter(|p| *p != ancestor)
        .any(|p| {
            let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).contains(needle) && descends_from(p, ancestor)
        })
}

fn descends_from(mut pid: u32, ancestor: u32) -> bool {
    for _ in 0..64 {
        if pid == ancestor {
            return true;
        }
        match lspgate::procfs::stat(pid) {
            Some(st) if st.ppid > 1 => pid = st.ppid,
            _ => return false,
        }
    }
    false
}

/// Answers the face's `client/registerCapability` and returns its registrations.
async fn registered(c: &mut Client) -> Vec<Value> {
    let r = c.wait(|m| m["method"] == "client/registerCapability").await;
    c.send(json!({"jsonrpc": "2.0", "id": r["id"], "result": null}))
        .await;
    r["params"]["registrations"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn methods(registrations: &[Value]) -> Vec<String> {
    registrations
        .iter()
        .filter_map(|r| r["method"].as_str().map(str::to_string))
        .collect()
}

/// The uris the client was sent diagnostics for so far.
fn published(c: &Client) -> Vec<String> {
    c.seen
        .iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .filter_map(|m| m["params"]["uri"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_client_starts_no_typescript_server_until_it_opens_javascript() {
    require("pyright-langserver");
    require("typescript-language-server");
    let ws = mixed_workspace();
    let root = ws.path().canonicalize().unwrap();
    let mut c = Client::start(
        &root,
        &[
            "--server",
            "pyright",
            "--server",
            "typescript-language-server",
        ],
    );
    let init = initialize(&mut c, &root, dynamic_capabilities()).await;
    let caps = &init["result"]["capabilities"];
    assert!(
        caps.get("documentFormattingProvider").is_none() && caps.get("hoverProvider").is_none(),
        "registered per language, not announced for every document: {caps}"
    );
    let lspgate = c.child.id().unwrap();
    let py = root.join("a.py");
    c.open(&py, "python").await;
    let python = registered(&mut c).await;
    for r in &python {
        assert_eq!(
            r["registerOptions"]["documentSelector"][0]["language"], "python",
            "{r}"
        );
    }
    let m = methods(&python);
    assert!(m.iter().any(|m| m == "textDocument/hover"), "{m:?}");
    assert!(
        !m.iter().any(|m| m.contains("ormatting")),
        "pyright formats nothing: {m:?}"
    );
    c.wait(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri(&py))
        .await;
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri(&py)}, "position": {"line": 0, "character": 5}}),
        )
        .await;
    assert!(
        hover["result"]["contents"].to_string().contains("double"),
        "{hover}"
    );
    let format = c.request("textDocument/formatting", formatting(&py)).await;
    assert_eq!(format["error"]["code"], -32601, "{format}");
    assert!(
        !runs_below(lspgate, "typescript-language-server") && !runs_below(lspgate, "tsserver"),
        "a TypeScript server was started for a Python-only client"
    );
    // A second's quiet: nothing about the documents it did not open.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let _ = c.request("workspace/symbol", json!({"query": "zzz"})).await;
    assert!(published(&c).iter().all(|u| *u == uri(&py)), "{:?}", c.seen);

    let js = root.join("b.js");
    c.open(&js, "javascript").await;
    let javascript = registered(&mut c).await;
    assert!(
        methods(&javascript)
            .iter()
            .any(|m| m == "textDocument/formatting"),
        "{javascript:?}"
    );
    assert!(
        javascript
            .iter()
            .all(|r| r["registerOptions"]["documentSelector"][0]["language"] == "javascript"),
        "{javascript:?}"
    );
    assert!(runs_below(lspgate, "typescript-language-server"));
    let format = c.request("textDocument/formatting", formatting(&js)).await;
    let edits = format["result"]
        .as_array()
        .unwrap_or_else(|| panic!("{format}"));
    assert!(!edits.is_empty(), "{format}");
    c.wait(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri(&js))
        .await;
    let c_js = uri(&root.join("c.js"));
    assert!(!published(&c).contains(&c_js), "{:?}", c.seen);
}

/// A client that takes no registrations is told in `initialize` what the servers announced
/// when they last ran: the first client starts both to learn it, a later one starts none of
/// them for it, and a method the document's servers do not serve is `-32601`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_registrations_is_told_what_servers_last_announced() {
    require("pyright-langserver");
    require("typescript-language-server");
    let ws = mixed_workspace();
    let root = ws.path().canonicalize().unwrap();
    let home = new_home();
    let home = home.to_str().unwrap();
    let env = [("LSPGATE_STANDALONE", "1"), ("LSPGATE_HOME", home)];
    let args = [
        "--server",
        "pyright",
        "--server",
        "typescript-language-server",
    ];
    let mut first = Client::start_with(&root, &args, &env);
    let told = initialize(&mut first, &root, json!({})).await;
    let _ = first.request("shutdown", Value::Null).await;
    first.notify("exit", Value::Null).await;
    let _ = first.child.wait().await;

    let mut c = Client::start_with(&root, &args, &env);
    let init = initialize(&mut c, &root, json!({})).await;
    assert_eq!(
        init["result"]["capabilities"], told["result"]["capabilities"],
        "what they announced last time"
    );
    let caps = &init["result"]["capabilities"];
    assert!(caps.get("documentFormattingProvider").is_some(), "{caps}");
    assert_eq!(
        caps["workspace"]["workspaceFolders"]["supported"], true,
        "pyright's workspace folders: {caps}"
    );
    let lspgate = c.child.id().unwrap();
    let py = root.join("a.py");
    c.open(&py, "python").await;
    c.wait(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri(&py))
        .await;
    let format = c.request("textDocument/formatting", formatting(&py)).await;
    assert_eq!(format["error"]["code"], -32601, "{format}");
    assert!(runs_below(lspgate, "pyright"));
    assert!(
        !runs_below(lspgate, "typescript-language-server"),
        "a TypeScript server was started for a Python-only client"
    );
}

/// pyright off PATH: opening a Python file says so once, naming it and how to install it, and
/// `lspgate servers` lists it as missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_server_is_said_once() {
    let ws = workspace(&[("a.py", PY), ("b.py", "y = 2\n")]);
    let root = ws.path().canonicalize().unwrap();
    let home = new_home();
    let home = home.to_str().unwrap();
    let path = "/usr/bin:/bin";
    let env = [
        ("LSPGATE_STANDALONE", "1"),
        ("LSPGATE_HOME", home),
        ("PATH", path),
    ];
    let mut c = Client::start_with(&root, &[], &env);
    initialize(&mut c, &root, json!({})).await;
    c.open(&root.join("a.py"), "python").await;
    let said = c.wait(|m| m["method"] == "window/showMessage").await;
    assert_eq!(said["params"]["type"], 2, "a warning: {said}");
    let text = said["params"]["message"].as_str().unwrap_or_default();
    assert!(
        text.contains("pyright-langserver") && text.contains("install"),
        "{said}"
    );
    c.open(&root.join("b.py"), "python").await;
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri(&root.join("b.py"))}, "position": {"line": 0, "character": 0}}),
        )
        .await;
    assert!(hover.get("error").is_some(), "{hover}");
    let again = c
        .seen
        .iter()
        .filter(|m| m["method"] == "window/showMessage")
        .count();
    assert_eq!(again, 0, "said more than once: {:?}", c.seen);
    let (code, out, err) = lspgate_cli_with(&root, &["servers", "--json"], Path::new(home), path);
    assert_eq!(code, 0, "{out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let pyright = v["servers"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["name"] == "builtin/pyright")
        .cloned()
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(pyright["state"], "missing", "{pyright}");
}

/// Neovim 0.7 takes no registrations: told what both languages serve, its `.py` buffer's
/// formatting is pyright's `-32601` (not a null answer), its `.js` buffer's is tsserver's edits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn neovim_formats_javascript_and_hears_python_has_no_formatter() {
    require("pyright-langserver");
    require("typescript-language-server");
    let ws = mixed_workspace();
    let home = new_home();
    let home = home.to_str().unwrap();
    let env = [("LSPGATE_STANDALONE", "1"), ("LSPGATE_HOME", home)];
    let steps = json!([
        {"do": "open", "file": "a.py"},
        {"do": "wait_diagnostics", "file": "a.py", "label": "py-diagnostics"},
        {"do": "format", "file": "a.py", "label": "py"},
        {"do": "open", "file": "b.js"},
        {"do": "format", "file": "b.js", "label": "js"},
        {"do": "stop"},
    ]);
    let cmd = [
        LSPGATE,
        "lsp",
        "--server",
        "pyright",
        "--server",
        "typescript-language-server",
    ];
    let obs = LspClient::spawn(Driver::Nvim, &cmd, ws.path(), steps, &env)
        .finish(120)
        .await;
    let py = obs
        .find_step("py")
        .unwrap_or_else(|| panic!("{}", obs.dump()));
    assert!(py["result"].is_null(), "{}", obs.dump());
    assert_eq!(py["err"]["code"], -32601, "{}", obs.dump());
    let js = obs.result("js");
    assert!(
        js.as_array().is_some_and(|e| !e.is_empty()),
        "{}",
        obs.dump()
    );
    let init = &obs.of_kind("initialized")[0]["capabilities"];
    assert_eq!(init["documentFormattingProvider"], true, "{init}");
}
