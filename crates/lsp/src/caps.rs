//! The capabilities lspgate asks servers about: lspgate's name for each (tools, config
//! allowlists, `servers`), the provider key servers announce it under, and its request method.

use serde_json::Value;

/// Whether capabilities `caps` (a server's, or a provider's options) announce `key`: present,
/// and neither null nor false.
pub fn announces(caps: &Value, key: &str) -> bool {
    !matches!(
        caps.get(key),
        None | Some(Value::Null) | Some(Value::Bool(false))
    )
}

/// Capabilities lspgate asks about, by what it would call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cap {
    Hover,
    Definition,
    Declaration,
    TypeDefinition,
    Implementation,
    References,
    DocumentSymbols,
    WorkspaceSymbols,
    SignatureHelp,
    Completion,
    CallHierarchy,
    TypeHierarchy,
    InlayHints,
    SemanticTokens,
    PullDiagnostics,
    Rename,
    CodeActions,
    Formatting,
}

impl Cap {
    /// Every capability, in the order tools list them.
    pub const ALL: [Cap; 18] = [
        Cap::Hover,
        Cap::Definition,
        Cap::Declaration,
        Cap::TypeDefinition,
        Cap::Implementation,
        Cap::References,
        Cap::DocumentSymbols,
        Cap::WorkspaceSymbols,
        Cap::SignatureHelp,
        Cap::Completion,
        Cap::CallHierarchy,
        Cap::TypeHierarchy,
        Cap::InlayHints,
        Cap::SemanticTokens,
        Cap::PullDiagnostics,
        Cap::Rename,
        Cap::CodeActions,
        Cap::Formatting,
    ];

    /// lspgate's name for it (config allowlists, `servers`).
    pub fn name(self) -> &'static str {
        match self {
            Cap::Hover => "hover",
            Cap::Definition => "definition",
            Cap::Declaration => "declaration",
            Cap::TypeDefinition => "type_definition",
            Cap::Implementation => "implementation",
            Cap::References => "references",
            Cap::DocumentSymbols => "document_symbols",
            Cap::WorkspaceSymbols => "workspace_symbols",
            Cap::SignatureHelp => "signature_help",
            Cap::Completion => "completions",
            Cap::CallHierarchy => "call_hierarchy",
            Cap::TypeHierarchy => "type_hierarchy",
            Cap::InlayHints => "inlay_hints",
            Cap::SemanticTokens => "semantic_tokens",
            Cap::PullDiagnostics => "diagnostics",
            Cap::Rename => "rename",
            Cap::CodeActions => "code_actions",
            Cap::Formatting => "format",
        }
    }

    pub fn provider_key(self) -> &'static str {
        match self {
            Cap::Hover => "hoverProvider",
            Cap::Definition => "definitionProvider",
            Cap::Declaration => "declarationProvider",
            Cap::TypeDefinition => "typeDefinitionProvider",
            Cap::Implementation => "implementationProvider",
            Cap::References => "referencesProvider",
            Cap::DocumentSymbols => "documentSymbolProvider",
            Cap::WorkspaceSymbols => "workspaceSymbolProvider",
            Cap::SignatureHelp => "signatureHelpProvider",
            Cap::Completion => "completionProvider",
            Cap::CallHierarchy => "callHierarchyProvider",
            Cap::TypeHierarchy => "typeHierarchyProvider",
            Cap::InlayHints => "inlayHintProvider",
            Cap::SemanticTokens => "semanticTokensProvider",
            Cap::PullDiagnostics => "diagnosticProvider",
            Cap::Rename => "renameProvider",
            Cap::CodeActions => "codeActionProvider",
            Cap::Formatting => "documentFormattingProvider",
        }
    }

    /// The capability whose request is `method`.
    pub fn of_method(method: &str) -> Option<Cap> {
        Cap::ALL.into_iter().find(|c| c.method() == method)
    }

    pub(super) fn method(self) -> &'static str {
        match self {
            Cap::Hover => "textDocument/hover",
            Cap::Definition => "textDocument/definition",
            Cap::Declaration => "textDocument/declaration",
            Cap::TypeDefinition => "textDocument/typeDefinition",
            Cap::Implementation => "textDocument/implementation",
            Cap::References => "textDocument/references",
            Cap::DocumentSymbols => "textDocument/documentSymbol",
            Cap::WorkspaceSymbols => "workspace/symbol",
            Cap::SignatureHelp => "textDocument/signatureHelp",
            Cap::Completion => "textDocument/completion",
            Cap::CallHierarchy => "textDocument/prepareCallHierarchy",
            Cap::TypeHierarchy => "textDocument/prepareTypeHierarchy",
            Cap::InlayHints => "textDocument/inlayHint",
            Cap::SemanticTokens => "textDocument/semanticTokens/full",
            Cap::PullDiagnostics => "textDocument/diagnostic",
            Cap::Rename => "textDocument/rename",
            Cap::CodeActions => "textDocument/codeAction",
            Cap::Formatting => "textDocument/formatting",
        }
    }
}
