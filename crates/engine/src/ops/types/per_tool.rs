//! Each tool's own parameter and result types, declared next to the tool (`ops/tools/<name>.rs`)
//! and named here too, so that `ops::types` holds the types of every tool.

pub use crate::ops::tools::call_hierarchy::{
    Call, CallHierarchyParams, CallHierarchyResult, Direction,
};
pub use crate::ops::tools::check::{CheckParams, CheckReport, CheckSummary, Unchecked};
pub use crate::ops::tools::code_actions::{ActionInfo, CodeActionsParams, CodeActionsResult};
pub use crate::ops::tools::completions::{CompletionItem, CompletionsParams, CompletionsResult};
pub use crate::ops::tools::definition::{DefinitionParams, GotoKindParam, LocationsResult};
pub use crate::ops::tools::diagnostics::{DiagnosticsParams, DiagnosticsResult};
pub use crate::ops::tools::document_symbols::{
    DocumentSymbolsParams, DocumentSymbolsResult, Symbol,
};
pub use crate::ops::tools::edit::EditParams;
pub use crate::ops::tools::execute_command::{ExecuteCommandParams, ExecuteCommandResult};
pub use crate::ops::tools::explain_failure::{Culprit, ExplainParams, ExplainResult};
pub use crate::ops::tools::format::FormatParams;
pub use crate::ops::tools::hover::{HoverParams, HoverResult, Range};
pub use crate::ops::tools::inlay_hints::{
    AnnotatedLine, Class, Hint, InlayHintsParams, InlayHintsResult,
};
pub use crate::ops::tools::references::{ReferencesParams, ReferencesResult};
pub use crate::ops::tools::rename::RenameParams;
pub use crate::ops::tools::restart_server::RestartServerParams;
pub use crate::ops::tools::run_task::{RunTaskParams, RunTaskResult};
pub use crate::ops::tools::servers::ServersParams;
pub use crate::ops::tools::shrink::{ShrinkParams, ShrinkResult};
pub use crate::ops::tools::signature_help::{Signature, SignatureHelpResult};
pub use crate::ops::tools::type_hierarchy::{
    TypeDirectionParam, TypeHierarchyParams, TypeHierarchyResult, TypeNode,
};
pub use crate::ops::tools::undo::UndoParams;
pub use crate::ops::tools::what_if::{Probe, WhatIfParams, WhatIfResult};
pub use crate::ops::tools::workspace_symbols::{
    WorkspaceSymbol, WorkspaceSymbolsParams, WorkspaceSymbolsResult,
};
