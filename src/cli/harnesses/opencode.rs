//! OpenCode: its MCP server and LSP client in `opencode.json` (or an existing
//! `opencode.jsonc`; `~/.config/opencode/opencode.json` for the user), each a command line as
//! one array; no hooks (OpenCode has them only as JavaScript plugins).

use super::HarnessDef;
use crate::cli::harness::table::{EMPTY, File, Format, J, LANGUAGES, Launch, Put, obj, s, strs};

pub(super) static DEF: HarnessDef = HarnessDef {
    name: "opencode",
    files: &[File {
        project: "opencode.json",
        user: ".config/opencode/opencode.json",
        instead: Some("opencode.jsonc"),
        format: Format::Jsonc,
        seed: EMPTY,
        puts: &[Put::Mcp(&["mcp"], mcp), Put::Lsp(&["lsp"], lsp)],
    }],
    notes: &["OpenCode has hooks only as JavaScript plugins: no hook written."],
    hooks: None,
};

pub(crate) fn mcp(l: &Launch) -> J {
    obj(vec![
        ("type", s("local")),
        ("command", l.all("serve")),
        ("enabled", J::Bool(true)),
    ])
}

fn lsp(l: &Launch) -> J {
    let extensions: Vec<&str> = LANGUAGES.iter().map(|(e, _)| *e).collect();
    obj(vec![
        ("command", l.all("lsp")),
        ("extensions", strs(&extensions)),
    ])
}
