//! Neutral types the LSP layer returns: positions still in the server's encoding, everything else
//! already in lspgate's own vocabulary. No `lsp_types` here.

use serde::Serialize;
use url::Url;

/// A position as the server counts it (0-based line, character in the negotiated encoding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WirePos {
    pub line: u32,
    pub character: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WireRange {
    pub start: WirePos,
    pub end: WirePos,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WireLocation {
    pub uri: Url,
    pub range: WireRange,
}

/// Diagnostic severity, as the protocol (docs/protocol.md §3) names it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
    Hint,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WireDiagnostic {
    pub range: WireRange,
    pub severity: Severity,
    pub code: Option<String>,
    pub source: Option<String>,
    pub message: String,
    /// The diagnostic exactly as the server sent it (opaque; handed back in code action
    /// requests, which need its `data`).
    pub raw: serde_json::Value,
}

impl WireDiagnostic {
    /// Whether it is there only to be rendered, as servers send to a client announcing
    /// diagnostic tag support (pyright's "is not accessed", unreachable code, deprecated uses: a
    /// hint, tagged, of no rule): the tools and hooks leave such diagnostics out, as the servers
    /// do for a client without that support; the LSP face passes them to clients with it.
    pub fn rendering_only(&self) -> bool {
        self.severity == Severity::Hint
            && self.code.is_none()
            && self
                .raw
                .get("tags")
                .and_then(|t| t.as_array())
                .is_some_and(|t| !t.is_empty())
    }
}

/// One step of a workspace edit, positions in the server's encoding.
#[derive(Debug, Clone, PartialEq)]
pub enum WireFileOp {
    /// Text edits to one file; `version` is the document version they were computed for.
    Edit {
        uri: Url,
        version: Option<i32>,
        edits: Vec<(WireRange, String)>,
    },
    Create {
        uri: Url,
        overwrite: bool,
        ignore_if_exists: bool,
    },
    Rename {
        old: Url,
        new: Url,
        overwrite: bool,
        ignore_if_exists: bool,
    },
    Delete {
        uri: Url,
        ignore_if_not_exists: bool,
    },
}

/// A code action as offered (its edit and command are resolved when applied).
#[derive(Debug, Clone)]
pub struct WireCodeAction {
    pub title: String,
    pub kind: Option<String>,
    pub preferred: bool,
    /// Messages of the diagnostics it fixes.
    pub fixes: Vec<String>,
    pub disabled: Option<String>,
    /// Opaque, for resolving and applying.
    pub raw: serde_json::Value,
}

#[derive(Debug, Clone)]
pub struct WireHover {
    pub contents: String,
    pub range: Option<WireRange>,
}

#[derive(Debug, Clone)]
pub struct WireSymbol {
    pub name: String,
    pub kind: &'static str,
    pub detail: Option<String>,
    pub range: WireRange,
    pub selection: WireRange,
    pub children: Vec<WireSymbol>,
}

#[derive(Debug, Clone)]
pub struct WireWorkspaceSymbol {
    pub name: String,
    pub kind: &'static str,
    pub container: Option<String>,
    pub location: WireLocation,
    /// The server said it is local to a function (tsserver's `local …` kinds, or a variable
    /// whose container is a function); false when it did not say.
    pub local: bool,
}

#[derive(Debug, Clone)]
pub struct WireSignature {
    pub label: String,
    pub parameters: Vec<String>,
    pub active_parameter: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct WireSignatures {
    pub signatures: Vec<WireSignature>,
    pub active_signature: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct WireCompletion {
    pub label: String,
    pub kind: Option<&'static str>,
    pub detail: Option<String>,
}

#[derive(Debug, Clone)]
pub struct WireCompletions {
    pub items: Vec<WireCompletion>,
    pub incomplete: bool,
}

/// One caller or callee; `call_sites` are in `sites_uri`.
#[derive(Debug, Clone)]
pub struct WireCall {
    pub name: String,
    pub kind: &'static str,
    pub location: WireLocation,
    pub sites_uri: Url,
    pub call_sites: Vec<WireRange>,
}

/// Which way `call_hierarchy` walks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallDirection {
    Incoming,
    Outgoing,
}

/// Which of the four "go to" requests `definition` sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GotoKind {
    Definition,
    Declaration,
    TypeDefinition,
    Implementation,
}

/// What indexing/progress state the server reports.
#[derive(Debug, Clone, Default)]
pub struct Busy {
    pub titles: Vec<String>,
}

/// An inlay hint: where it goes (the server's encoding) and what it says, `label` as the
/// server wrote it (`: int`, `width: `), padding already added.
#[derive(Debug, Clone, PartialEq)]
pub struct WireInlayHint {
    pub pos: WirePos,
    pub label: String,
    pub kind: HintKind,
}

/// What an inlay hint names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HintKind {
    Type,
    Parameter,
    Other,
}

impl HintKind {
    pub fn name(self) -> &'static str {
        match self {
            HintKind::Type => "type",
            HintKind::Parameter => "parameter",
            HintKind::Other => "other",
        }
    }
}

/// A type of a type hierarchy, with the next level in the direction asked (`next`).
#[derive(Debug, Clone)]
pub struct WireTypeItem {
    pub name: String,
    pub kind: &'static str,
    pub detail: Option<String>,
    /// Where its name is (the selection range).
    pub location: WireLocation,
    pub next: Vec<WireTypeItem>,
}

/// Which way `type_hierarchy` walks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeDirection {
    Supertypes,
    Subtypes,
}

/// One semantic token, decoded with its server's legend: where (line and start in the server's
/// encoding), how long, and its words.
#[derive(Debug, Clone, PartialEq)]
pub struct WireToken {
    pub line: u32,
    pub start: u32,
    pub length: u32,
    pub kind: String,
    pub modifiers: Vec<String>,
}
