//! GitHub Copilot CLI: its MCP server in `.github/mcp.json` (`~/.copilot/mcp-config.json`) and
//! its LSP client in `.github/lsp.json` (`~/.copilot/lsp-config.json`, extensions mapped to
//! language ids); no hooks (the arguments of its edit tools are not documented).

use super::HarnessDef;
use crate::cli::harness::table::{J, LANGUAGES, Launch, MCP, Put, json, obj, s, strs};

pub(super) static DEF: HarnessDef = HarnessDef {
    name: "copilot",
    files: &[
        json(
            ".github/mcp.json",
            ".copilot/mcp-config.json",
            &[Put::Mcp(MCP, mcp)],
        ),
        json(
            ".github/lsp.json",
            ".copilot/lsp-config.json",
            &[Put::Lsp(&["lspServers"], lsp)],
        ),
    ],
    notes: &[
        "No hooks written for Copilot CLI: the arguments of its edit tools are not documented.",
    ],
    hooks: None,
};

fn mcp(l: &Launch) -> J {
    obj(vec![
        ("type", s("local")),
        ("command", s(l.program())),
        ("args", l.args("serve")),
        ("tools", strs(&["*"])),
    ])
}

fn lsp(l: &Launch) -> J {
    let map = LANGUAGES
        .iter()
        .filter(|(e, _)| *e != ".mjs" && *e != ".cjs")
        .map(|(e, l)| (*e, s(l)))
        .collect();
    obj(vec![
        ("command", s(l.program())),
        ("args", l.args("lsp")),
        ("fileExtensions", obj(map)),
    ])
}
