//! `TOOLS`: every tool's row, in the order they are listed. Each tool is declared in its own
//! file, named after it (`hover.rs`, …): its `Tool` implementation (name, description, group,
//! effect, capabilities, the operation, command line) next to its own parameter and result
//! types and their text.

use super::{ToolDef, entry};
pub use super::{
    activity::Activity, call_hierarchy::CallHierarchy, check::Check, code_actions::CodeActions,
    completions::Completions, definition::Definition, diagnostics::Diagnostics,
    document_symbols::DocumentSymbols, edit::Edit, events::Events, execute_command::ExecuteCommand,
    explain_failure::ExplainFailure, format::Format, hover::Hover, inlay_hints::InlayHints,
    references::References, rename::Rename, restart_server::RestartServer, run_task::RunTask,
    servers::Servers, shrink::Shrink, signature_help::SignatureHelp, type_hierarchy::TypeHierarchy,
    undo::Undo, what_if::WhatIf, workspace_symbols::WorkspaceSymbols,
};

/// Every tool, in the order they are listed.
pub static TOOLS: [ToolDef; 26] = [
    entry::<Hover>(),
    entry::<Definition>(),
    entry::<References>(),
    entry::<DocumentSymbols>(),
    entry::<WorkspaceSymbols>(),
    entry::<SignatureHelp>(),
    entry::<Completions>(),
    entry::<CallHierarchy>(),
    entry::<TypeHierarchy>(),
    entry::<InlayHints>(),
    entry::<Diagnostics>(),
    entry::<Edit>(),
    entry::<Rename>(),
    entry::<CodeActions>(),
    entry::<Format>(),
    entry::<Undo>(),
    entry::<WhatIf>(),
    entry::<Check>(),
    entry::<ExplainFailure>(),
    entry::<Shrink>(),
    entry::<RunTask>(),
    entry::<ExecuteCommand>(),
    entry::<Servers>(),
    entry::<RestartServer>(),
    entry::<Activity>(),
    entry::<Events>(),
];
