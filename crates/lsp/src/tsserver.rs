//! typescript-language-server specifics, reached through its `typescript.tsserverRequest`
//! command: tsserver's own diagnostics requests (computed for the current content when asked,
//! so never stale and never waited for), and reloading its projects from disk.
//!
//! Why: typescript-language-server pushes diagnostics without a version and, when a file's
//! diagnostics stay empty after a change, pushes nothing at all (`FileDiagnostics.update` skips
//! an empty list that replaces an empty list), so a wait for "the push after this change" could
//! only end at its bound. tsserver answers `syntacticDiagnosticsSync`, `semanticDiagnosticsSync`
//! and `suggestionDiagnosticsSync` in milliseconds once its project is loaded.

use serde_json::{Value, json};
use url::Url;

use super::LspError;
use super::client::LspClient;
use super::wire::{
    Severity, WireDiagnostic, WireLocation, WirePos, WireRange, WireWorkspaceSymbol,
};

const COMMAND: &str = "typescript.tsserverRequest";
const KINDS: [&str; 3] = [
    "syntacticDiagnosticsSync",
    "semanticDiagnosticsSync",
    "suggestionDiagnosticsSync",
];

impl LspClient {
    /// tsserver's syntactic, semantic and suggestion diagnostics of one file, as
    /// typescript-language-server would publish them.
    pub(super) async fn tsserver_diagnostics(
        &self,
        uri: &Url,
    ) -> Result<Vec<WireDiagnostic>, LspError> {
        let file = uri
            .to_file_path()
            .map_err(|_| LspError::Protocol(format!("{uri} is not a file")))?;
        let timeout = self.timeout_for("textDocument/diagnostic");
        let mut out = Vec::new();
        for kind in KINDS {
            let answer: Value = self
                .call_with(
                    "workspace/executeCommand",
                    json!({"command": COMMAND, "arguments": [kind, {"file": file}]}),
                    timeout,
                )
                .await?;
            out.extend(body(&answer, kind)?.iter().filter_map(diagnostic));
        }
        Ok(super::quotes::confine(uri, out, &self.opts.inside))
    }

    /// Symbols matching `query` in the projects of each of `files` (one file per project;
    /// tsserver's `navto` searches the projects of the file it is given), merged.
    pub async fn tsserver_symbols(
        &self,
        query: &str,
        files: &[std::path::PathBuf],
    ) -> Result<Vec<WireWorkspaceSymbol>, LspError> {
        let mut out: Vec<WireWorkspaceSymbol> = Vec::new();
        for file in files {
            // Brings the file's project up to date first: a `navto` right after the project
            // was opened can search only part of it.
            let _: Value = self
                .call(
                    "workspace/executeCommand",
                    json!({"command": COMMAND, "arguments": ["projectInfo", {"file": file, "needFileNameList": false}]}),
                )
                .await?;
            let answer: Value = self
                .call(
                    "workspace/executeCommand",
                    json!({"command": COMMAND, "arguments": ["navto", {"file": file, "searchValue": query}]}),
                )
                .await?;
            for item in body(&answer, "navto")? {
                if let Some(s) = nav_item(item)
                    && !out
                        .iter()
                        .any(|o| o.location == s.location && o.name == s.name)
                {
                    out.push(s);
                }
            }
        }
        Ok(out)
    }

    /// The project tsserver puts `file` in (its config file, or a name for an inferred
    /// project), its graph brought up to date.
    pub async fn tsserver_project_of(&self, file: &std::path::Path) -> Result<String, LspError> {
        let answer: Value = self
            .call(
                "workspace/executeCommand",
                json!({"command": COMMAND, "arguments": ["projectInfo", {"file": file, "needFileNameList": false}]}),
            )
            .await?;
        Ok(answer
            .get("body")
            .and_then(|b| b.get("configFileName"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string())
    }

    /// Makes tsserver reread its projects (file lists and files it has not been sent) from
    /// disk: after files were deleted, or too many changed to send each.
    pub async fn tsserver_reload(&self) -> Result<(), LspError> {
        let _: Value = self
            .call(
                "workspace/executeCommand",
                json!({"command": COMMAND, "arguments": ["reloadProjects", {}]}),
            )
            .await?;
        Ok(())
    }
}

/// The `body` of a tsserver response; its failure as an error.
fn body<'a>(answer: &'a Value, kind: &str) -> Result<&'a [Value], LspError> {
    if answer.get("success").and_then(Value::as_bool) == Some(false) {
        let why = answer
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("no reason given");
        return Err(LspError::Server {
            code: -32603,
            message: format!("tsserver {kind}: {why}"),
        });
    }
    Ok(answer
        .get("body")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]))
}

/// A tsserver position (1-based line and UTF-16 offset) as the server's.
fn position(p: &Value) -> Option<WirePos> {
    Some(WirePos {
        line: u32::try_from(p.get("line")?.as_u64()?.checked_sub(1)?).ok()?,
        character: u32::try_from(p.get("offset")?.as_u64()?.checked_sub(1)?).ok()?,
    })
}

/// One `navto` item, its kind named as typescript-language-server names it; local when
/// tsserver says so (`local var`, `local function`, `local class`) or when it is a variable
/// whose container is a function, method, constructor or accessor.
fn nav_item(item: &Value) -> Option<WireWorkspaceSymbol> {
    let file = item.get("file")?.as_str()?;
    let uri = url::Url::from_file_path(file).ok()?;
    let ts_kind = item.get("kind").and_then(Value::as_str).unwrap_or("");
    let in_function = matches!(
        item.get("containerKind").and_then(Value::as_str),
        Some("function" | "local function" | "method" | "constructor" | "getter" | "setter")
    );
    let variable = matches!(ts_kind, "var" | "let" | "const" | "local var" | "using");
    let local = ts_kind.starts_with("local ") || (variable && in_function);
    let kind = match ts_kind {
        "class" | "local class" => "class",
        "interface" => "interface",
        "enum" => "enum",
        "enum member" | "const" => "constant",
        "function" | "local function" => "function",
        "method" | "getter" | "setter" => "method",
        "constructor" => "constructor",
        "property" | "JSX attribute" => "property",
        "field" => "field",
        "module" => "module",
        "file" => "file",
        _ => "variable",
    };
    Some(WireWorkspaceSymbol {
        name: item.get("name")?.as_str()?.to_string(),
        kind,
        container: item
            .get("containerName")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty())
            .map(str::to_string),
        location: WireLocation {
            uri,
            range: WireRange {
                start: position(item.get("start")?)?,
                end: position(item.get("end")?)?,
            },
        },
        local,
    })
}

/// One tsserver diagnostic (1-based line and UTF-16 offset) as typescript-language-server
/// converts it.
fn diagnostic(d: &Value) -> Option<WireDiagnostic> {
    let range = WireRange {
        start: position(d.get("start")?)?,
        end: position(d.get("end")?)?,
    };
    let (severity, lsp_severity) = match d.get("category").and_then(Value::as_str) {
        Some("warning") => (Severity::Warning, 2),
        Some("suggestion") => (Severity::Hint, 4),
        _ => (Severity::Error, 1),
    };
    let message = d.get("text").and_then(Value::as_str)?.to_string();
    let code = d.get("code").cloned().filter(|c| !c.is_null());
    let source = d
        .get("source")
        .and_then(Value::as_str)
        .unwrap_or("typescript")
        .to_string();
    // What code actions are asked with: the diagnostic as the server itself would publish it.
    let mut raw = json!({
        "range": {
            "start": {"line": range.start.line, "character": range.start.character},
            "end": {"line": range.end.line, "character": range.end.character}
        },
        "message": message,
        "severity": lsp_severity,
        "code": code,
        "source": source,
    });
    // LSP's tags, as typescript-language-server sets them: 1 unnecessary, 2 deprecated.
    let tags: Vec<u8> = [("reportsUnnecessary", 1), ("reportsDeprecated", 2)]
        .into_iter()
        // tsserver writes them as `{}` (any value but null and false says yes).
        .filter(|(k, _)| {
            d.get(*k)
                .is_some_and(|v| !matches!(v, Value::Null | Value::Bool(false)))
        })
        .map(|(_, t)| t)
        .collect();
    if !tags.is_empty() {
        raw["tags"] = json!(tags);
    }
    Some(WireDiagnostic {
        range,
        severity,
        code: code.map(|c| match c {
            Value::String(s) => s,
            other => other.to_string(),
        }),
        source: Some(source),
        message,
        raw,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsserver_diagnostics_convert_as_typescript_language_server_does() {
        let answer = json!({"success": true, "body": [
            {"start": {"line": 2, "offset": 28}, "end": {"line": 2, "offset": 29},
             "text": "Argument of type 'number' is not assignable to parameter of type 'string'.",
             "code": 2345, "category": "error"},
            {"start": {"line": 1, "offset": 7}, "end": {"line": 1, "offset": 8},
             "text": "'x' is declared but its value is never read.", "code": 6133,
             "category": "suggestion", "reportsUnnecessary": true}
        ]});
        let list: Vec<_> = body(&answer, "k")
            .unwrap()
            .iter()
            .filter_map(diagnostic)
            .collect();
        assert_eq!(list.len(), 2);
        assert_eq!(
            list[0].range.start,
            WirePos {
                line: 1,
                character: 27
            }
        );
        assert_eq!(list[0].severity, Severity::Error);
        assert_eq!(list[0].code.as_deref(), Some("2345"));
        assert_eq!(list[0].source.as_deref(), Some("typescript"));
        assert_eq!(list[0].raw["code"], 2345);
        assert_eq!(list[1].severity, Severity::Hint);
        assert_eq!(list[1].raw["tags"], json!([1]));
        assert!(list[0].raw.get("tags").is_none());
        let deprecated = json!({"start": {"line": 1, "offset": 1}, "end": {"line": 1, "offset": 4},
            "text": "'f' is deprecated.", "code": 6387, "category": "suggestion",
            "reportsDeprecated": {}});
        assert_eq!(
            diagnostic(&deprecated).map(|d| d.raw["tags"].clone()),
            Some(json!([2]))
        );

        let failed = json!({"success": false, "message": "No Project."});
        assert!(body(&failed, "semanticDiagnosticsSync").is_err());
        assert!(body(&json!({}), "k").unwrap().is_empty());
    }

    #[test]
    fn navto_items_say_which_are_local() {
        let item = |kind: &str, container_kind: &str| {
            json!({"name": "subject", "kind": kind, "file": "/w/a.ts",
                   "start": {"line": 3, "offset": 9}, "end": {"line": 3, "offset": 16},
                   "containerName": "lift", "containerKind": container_kind})
        };
        let local = |kind, ck| nav_item(&item(kind, ck)).map(|s| (s.kind, s.local));
        assert_eq!(local("const", "method"), Some(("constant", true)));
        assert_eq!(local("let", "function"), Some(("variable", true)));
        assert_eq!(local("local var", ""), Some(("variable", true)));
        assert_eq!(local("local function", ""), Some(("function", true)));
        // A member, and a declaration with no named container: not said to be local.
        assert_eq!(local("property", "class"), Some(("property", false)));
        assert_eq!(local("const", ""), Some(("constant", false)));
    }
}
