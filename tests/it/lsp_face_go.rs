//! Neovim's own LSP client on a Go file, against gopls directly and through `lspgate lsp` (one
//! daemon): the same type error, hover, definition and references either way.

use crate::common::lsp_clients::{Driver, LspClient, Observations, hover_text, locations};
use crate::common::*;
use crate::golang::{go_env, require_go};
use serde_json::{Value, json};

const LIB: &str =
    "package face\n\n// Compute returns x.\nfunc Compute(x int) int {\n\treturn x\n}\n";
const APP: &str = "package face\n\nvar y string = Compute(1)\nvar z = Compute(2)\n";
/// gopls's message for line 3 of APP.
const TYPE_ERROR: &str = "cannot use Compute(1)";

/// A module in a folder whose name does not start with a dot (Go leaves such folders out).
fn go_workspace() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("go-face-")
        .tempdir()
        .unwrap();
    for (name, text) in [
        ("go.mod", "module example.com/face\n\ngo 1.22\n"),
        ("lib.go", LIB),
        ("app.go", APP),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

/// Open app.go, wait for gopls's type error, hover, definition and references on `Compute`
/// (line 4), then close and stop.
fn steps() -> Value {
    let at = |what: &str| json!({"do": what, "label": what, "file": "app.go", "line": 4, "symbol": "Compute"});
    json!([
        {"do": "open", "file": "app.go"},
        {"do": "wait_diagnostics", "file": "app.go", "match": TYPE_ERROR, "label": "diagnostics"},
        at("hover"),
        at("definition"),
        at("references"),
        {"do": "close", "file": "app.go"},
        {"do": "stop", "label": "stop"},
    ])
}

fn assert_go(obs: &Observations) {
    obs.assert_clean();
    let found = &obs.result("diagnostics")["diagnostics"];
    let error = found
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["message"].as_str().unwrap_or("").contains(TYPE_ERROR))
        .unwrap_or_else(|| panic!("{found}"));
    assert_eq!(error["range"]["start"]["line"], 2, "{error}");
    let hover = hover_text(obs.result("hover"));
    assert!(hover.contains("func Compute(x int) int"), "{hover}");
    assert!(hover.contains("Compute returns x."), "{hover}");
    assert_eq!(
        locations(obs.result("definition")),
        vec![("lib.go".to_string(), 3)]
    );
    let mut refs = locations(obs.result("references"));
    refs.sort();
    for want in [("app.go", 2), ("app.go", 3)] {
        assert!(
            refs.contains(&(want.0.to_string(), want.1)),
            "{want:?} not in {refs:?}"
        );
    }
    assert_eq!(obs.of_kind("exit").len(), 1, "{}", obs.dump());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn neovim_on_go_gets_what_gopls_gives_directly() {
    require_go();
    let ws = go_workspace();
    let env = go_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let gopls = repo().join(".tools/go/bin/gopls");
    let direct = LspClient::spawn(
        Driver::Nvim,
        &[gopls.to_str().unwrap()],
        ws.path(),
        steps(),
        &env,
    );
    let direct = direct.finish(120).await;
    assert_go(&direct);

    let d = Daemon::new();
    let mut env = env.clone();
    env.extend(d.env(&[]));
    let face = LspClient::spawn(Driver::Nvim, &[LSPGATE, "lsp"], ws.path(), steps(), &env);
    let face = face.finish(120).await;
    assert_go(&face);
    // The same answers either way.
    assert_eq!(
        hover_text(face.result("hover")),
        hover_text(direct.result("hover"))
    );
    let sorted = |o: &Observations| {
        let mut r = locations(o.result("references"));
        r.sort();
        r
    };
    assert_eq!(sorted(&face), sorted(&direct));
}
