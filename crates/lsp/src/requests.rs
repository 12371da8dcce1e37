//! The requests lspgate makes of a server, one typed method each; their answers become `wire`
//! types through `convert`.

use lsp_types as lt;
use serde_json::{Value, json};
use url::Url;

use super::LspError;
use super::client::LspClient;
use super::convert::{
    code_action, completion_kind, doc_symbol, hover_text, location, range, symbol_kind, text_pos,
    wire_range_json, workspace_edit,
};
use super::state::EditSink;
use super::watched;
use super::wire::*;
use crate::watch::{Change, ChangeKind};

impl LspClient {
    pub async fn hover(&self, uri: &Url, pos: WirePos) -> Result<Option<WireHover>, LspError> {
        // Read by hand: lsp-types' untagged `HoverContents` costs more than the rest of the call.
        let h: Value = self.call("textDocument/hover", text_pos(uri, pos)).await?;
        let Value::Object(mut h) = h else {
            return Ok(None);
        };
        let contents = h.remove("contents").map(hover_text).unwrap_or_default();
        let range = h
            .remove("range")
            .and_then(|r| serde_json::from_value::<lt::Range>(r).ok())
            .map(range);
        Ok(Some(WireHover { contents, range }).filter(|h| !h.contents.trim().is_empty()))
    }

    pub async fn goto(
        &self,
        kind: GotoKind,
        uri: &Url,
        pos: WirePos,
    ) -> Result<Vec<WireLocation>, LspError> {
        let method = match kind {
            GotoKind::Definition => "textDocument/definition",
            GotoKind::Declaration => "textDocument/declaration",
            GotoKind::TypeDefinition => "textDocument/typeDefinition",
            GotoKind::Implementation => "textDocument/implementation",
        };
        let r: Option<lt::GotoDefinitionResponse> = self.call(method, text_pos(uri, pos)).await?;
        Ok(match r {
            None => Vec::new(),
            Some(lt::GotoDefinitionResponse::Scalar(l)) => vec![location(l)],
            Some(lt::GotoDefinitionResponse::Array(ls)) => ls.into_iter().map(location).collect(),
            Some(lt::GotoDefinitionResponse::Link(links)) => links
                .into_iter()
                .map(|l| WireLocation {
                    uri: l.target_uri,
                    range: range(l.target_selection_range),
                })
                .collect(),
        })
    }

    pub async fn references(
        &self,
        uri: &Url,
        pos: WirePos,
        include_declaration: bool,
    ) -> Result<Vec<WireLocation>, LspError> {
        let mut params = text_pos(uri, pos);
        params["context"] = json!({"includeDeclaration": include_declaration});
        let r: Option<Vec<lt::Location>> = self.call("textDocument/references", params).await?;
        Ok(r.unwrap_or_default().into_iter().map(location).collect())
    }

    pub async fn document_symbols(&self, uri: &Url) -> Result<Vec<WireSymbol>, LspError> {
        let r: Option<lt::DocumentSymbolResponse> = self
            .call(
                "textDocument/documentSymbol",
                json!({"textDocument": {"uri": uri}}),
            )
            .await?;
        Ok(match r {
            None => Vec::new(),
            Some(lt::DocumentSymbolResponse::Nested(s)) => s.into_iter().map(doc_symbol).collect(),
            Some(lt::DocumentSymbolResponse::Flat(s)) => s
                .into_iter()
                .map(|s| WireSymbol {
                    name: s.name,
                    kind: symbol_kind(s.kind),
                    detail: s.container_name,
                    range: range(s.location.range),
                    selection: range(s.location.range),
                    children: Vec::new(),
                })
                .collect(),
        })
    }

    pub async fn workspace_symbols(
        &self,
        query: &str,
    ) -> Result<Vec<WireWorkspaceSymbol>, LspError> {
        let r: Option<lt::WorkspaceSymbolResponse> = self
            .call("workspace/symbol", json!({"query": query}))
            .await?;
        Ok(match r {
            None => Vec::new(),
            Some(lt::WorkspaceSymbolResponse::Flat(s)) => s
                .into_iter()
                .map(|s| WireWorkspaceSymbol {
                    name: s.name,
                    kind: symbol_kind(s.kind),
                    container: s.container_name,
                    local: false,
                    location: location(s.location),
                })
                .collect(),
            Some(lt::WorkspaceSymbolResponse::Nested(s)) => s
                .into_iter()
                .map(|s| WireWorkspaceSymbol {
                    name: s.name,
                    kind: symbol_kind(s.kind),
                    container: s.container_name,
                    local: false,
                    location: match s.location {
                        lt::OneOf::Left(l) => location(l),
                        lt::OneOf::Right(w) => WireLocation {
                            uri: w.uri,
                            range: WireRange::default(),
                        },
                    },
                })
                .collect(),
        })
    }

    /// Workspace symbols: for tsserver, searched in the projects of `projects` (one file each;
    /// its `workspace/symbol` searches only the project of the file it saw last), else the
    /// server's `workspace/symbol`.
    pub async fn workspace_symbols_in(
        &self,
        query: &str,
        projects: &[std::path::PathBuf],
    ) -> Result<Vec<WireWorkspaceSymbol>, LspError> {
        if self.opts.dialect == super::Dialect::Tsserver && !projects.is_empty() {
            return self.tsserver_symbols(query, projects).await;
        }
        self.workspace_symbols(query).await
    }

    pub async fn signature_help(
        &self,
        uri: &Url,
        pos: WirePos,
    ) -> Result<WireSignatures, LspError> {
        let r: Option<lt::SignatureHelp> = self
            .call("textDocument/signatureHelp", text_pos(uri, pos))
            .await?;
        let Some(h) = r else {
            return Ok(WireSignatures {
                signatures: Vec::new(),
                active_signature: None,
            });
        };
        let signatures = h
            .signatures
            .into_iter()
            .map(|s| {
                let parameters = s
                    .parameters
                    .unwrap_or_default()
                    .into_iter()
                    .map(|p| match p.label {
                        lt::ParameterLabel::Simple(s) => s,
                        lt::ParameterLabel::LabelOffsets([a, b]) => s
                            .label
                            .encode_utf16()
                            .skip(a as usize)
                            .take(b.saturating_sub(a) as usize)
                            .collect::<Vec<u16>>()
                            .pipe(|u| String::from_utf16_lossy(&u)),
                    })
                    .collect();
                WireSignature {
                    label: s.label,
                    parameters,
                    active_parameter: s.active_parameter.or(h.active_parameter),
                }
            })
            .collect();
        Ok(WireSignatures {
            signatures,
            active_signature: h.active_signature,
        })
    }

    pub async fn completions(&self, uri: &Url, pos: WirePos) -> Result<WireCompletions, LspError> {
        let r: Option<lt::CompletionResponse> = self
            .call("textDocument/completion", text_pos(uri, pos))
            .await?;
        let (items, incomplete) = match r {
            None => (Vec::new(), false),
            Some(lt::CompletionResponse::Array(a)) => (a, false),
            Some(lt::CompletionResponse::List(l)) => (l.items, l.is_incomplete),
        };
        let mut items: Vec<lt::CompletionItem> = items;
        items.sort_by(|a, b| {
            a.sort_text
                .as_deref()
                .unwrap_or(&a.label)
                .cmp(b.sort_text.as_deref().unwrap_or(&b.label))
        });
        Ok(WireCompletions {
            items: items
                .into_iter()
                .map(|i| WireCompletion {
                    label: i.label,
                    kind: i.kind.map(completion_kind),
                    detail: i.detail,
                })
                .collect(),
            incomplete,
        })
    }

    pub async fn call_hierarchy(
        &self,
        uri: &Url,
        pos: WirePos,
        direction: CallDirection,
    ) -> Result<Vec<WireCall>, LspError> {
        let items: Option<Vec<lt::CallHierarchyItem>> = self
            .call("textDocument/prepareCallHierarchy", text_pos(uri, pos))
            .await?;
        let mut out = Vec::new();
        for item in items.unwrap_or_default() {
            let origin = item.uri.clone();
            let item =
                serde_json::to_value(&item).map_err(|e| LspError::Protocol(e.to_string()))?;
            match direction {
                CallDirection::Incoming => {
                    let calls: Option<Vec<lt::CallHierarchyIncomingCall>> = self
                        .call("callHierarchy/incomingCalls", json!({"item": item}))
                        .await?;
                    for c in calls.unwrap_or_default() {
                        out.push(WireCall {
                            name: c.from.name,
                            kind: symbol_kind(c.from.kind),
                            sites_uri: c.from.uri.clone(),
                            location: WireLocation {
                                uri: c.from.uri,
                                range: range(c.from.selection_range),
                            },
                            call_sites: c.from_ranges.into_iter().map(range).collect(),
                        });
                    }
                }
                CallDirection::Outgoing => {
                    let calls: Option<Vec<lt::CallHierarchyOutgoingCall>> = self
                        .call("callHierarchy/outgoingCalls", json!({"item": item}))
                        .await?;
                    for c in calls.unwrap_or_default() {
                        out.push(WireCall {
                            name: c.to.name,
                            kind: symbol_kind(c.to.kind),
                            location: WireLocation {
                                uri: c.to.uri,
                                range: range(c.to.selection_range),
                            },
                            sites_uri: origin.clone(),
                            call_sites: c.from_ranges.into_iter().map(range).collect(),
                        });
                    }
                }
            }
        }
        Ok(out)
    }
}

impl LspClient {
    /// `textDocument/rename`: the edit, or `None` when the server renames nothing.
    pub async fn rename(
        &self,
        uri: &Url,
        pos: WirePos,
        new_name: &str,
    ) -> Result<Option<Vec<WireFileOp>>, LspError> {
        let mut params = text_pos(uri, pos);
        params["newName"] = Value::String(new_name.to_string());
        let r: Option<Value> = self.call("textDocument/rename", params).await?;
        r.map(workspace_edit)
            .transpose()
            .map_err(LspError::Protocol)
    }

    /// `textDocument/codeAction` over a range, with the diagnostics there as context.
    pub async fn code_actions(
        &self,
        uri: &Url,
        range: WireRange,
        diagnostics: Vec<Value>,
        only: Option<Vec<String>>,
    ) -> Result<Vec<WireCodeAction>, LspError> {
        let mut context = json!({"diagnostics": diagnostics, "triggerKind": 1});
        if let Some(only) = only {
            context["only"] = json!(only);
        }
        let params = json!({
            "textDocument": {"uri": uri},
            "range": wire_range_json(range),
            "context": context,
        });
        let r: Option<Vec<Value>> = self.call("textDocument/codeAction", params).await?;
        Ok(r.unwrap_or_default().into_iter().map(code_action).collect())
    }

    /// Fills in a code action's edit (`codeAction/resolve`) when it has none and the server
    /// can resolve.
    pub async fn resolve_code_action(
        &self,
        action: WireCodeAction,
    ) -> Result<WireCodeAction, LspError> {
        let is_command = action.raw.get("command").is_some_and(Value::is_string);
        let resolvable = self
            .caps
            .get("codeActionProvider")
            .and_then(|p| p.get("resolveProvider"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if is_command || action.raw.get("edit").is_some() || !resolvable {
            return Ok(action);
        }
        let r: Value = self.call("codeAction/resolve", action.raw.clone()).await?;
        Ok(code_action(r))
    }

    /// The edit of a code action, if it carries one.
    pub fn code_action_edit(action: &WireCodeAction) -> Result<Option<Vec<WireFileOp>>, LspError> {
        if action.raw.get("command").is_some_and(Value::is_string) {
            return Ok(None);
        }
        action
            .raw
            .get("edit")
            .cloned()
            .map(workspace_edit)
            .transpose()
            .map_err(LspError::Protocol)
    }

    /// The command of a code action (or a bare command), if any: name and arguments.
    pub fn code_action_command(action: &WireCodeAction) -> Option<(String, Vec<Value>)> {
        let cmd = if action.raw.get("command").is_some_and(Value::is_string) {
            &action.raw
        } else {
            action.raw.get("command")?
        };
        let name = cmd.get("command")?.as_str()?.to_string();
        let args = cmd
            .get("arguments")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Some((name, args))
    }

    /// `workspace/executeCommand`, with the server's `workspace/applyEdit` requests sent to
    /// `sink` meanwhile.
    pub async fn execute_command(
        &self,
        command: &str,
        arguments: Vec<Value>,
        sink: Option<EditSink>,
    ) -> Result<Value, LspError> {
        if let Ok(mut s) = self.state.edit_sink.lock() {
            *s = sink;
        }
        let r: Result<Option<Value>, LspError> = self
            .call(
                "workspace/executeCommand",
                json!({"command": command, "arguments": arguments}),
            )
            .await;
        if let Ok(mut s) = self.state.edit_sink.lock() {
            *s = None;
        }
        Ok(r?.unwrap_or(Value::Null))
    }

    /// `textDocument/formatting` of a whole document.
    pub async fn formatting(
        &self,
        uri: &Url,
        tab_size: u32,
        insert_spaces: bool,
    ) -> Result<Vec<(WireRange, String)>, LspError> {
        let params = json!({
            "textDocument": {"uri": uri},
            "options": {"tabSize": tab_size, "insertSpaces": insert_spaces,
                        "trimTrailingWhitespace": true, "insertFinalNewline": true},
        });
        let r: Option<Vec<lt::TextEdit>> = self.call("textDocument/formatting", params).await?;
        Ok(r.unwrap_or_default()
            .into_iter()
            .map(|e| (range(e.range), e.new_text))
            .collect())
    }

    /// Tells the server of files that changed on disk, as its registered file watchers ask:
    /// one `workspace/didChangeWatchedFiles` with the changes some watcher of its wants, none
    /// when no watcher wants any. Returns how many changes were sent.
    pub fn did_change_watched_files(&self, changes: &[Change]) -> usize {
        let list: Vec<Value> = {
            let Ok(watchers) = self.state.watchers.lock() else {
                return 0;
            };
            changes
                .iter()
                .filter(|c| {
                    watched::wanted(watchers.values().flatten(), &c.path, c.kind, &self.root)
                })
                .filter_map(|c| {
                    let t = match c.kind {
                        ChangeKind::Created => 1,
                        ChangeKind::Changed => 2,
                        ChangeKind::Deleted => 3,
                    };
                    Url::from_file_path(&c.path)
                        .ok()
                        .map(|uri| json!({"uri": uri, "type": t}))
                })
                .collect()
        };
        if !list.is_empty() {
            crate::raw::record(
                || json!({"server": self.name(), "method": "workspace/didChangeWatchedFiles", "params": {"changes": list}}),
            );
            self.transport
                .notify("workspace/didChangeWatchedFiles", json!({"changes": list}));
        }
        list.len()
    }

    /// Whether the server registered any file watcher.
    pub fn watches_files(&self) -> bool {
        self.state
            .watchers
            .lock()
            .is_ok_and(|w| w.values().any(|v| !v.is_empty()))
    }

    /// Tells the server files were created, renamed or deleted, when it asked to know.
    pub fn did_change_files(&self, ops: &[WireFileOp]) {
        let wants = |k: &str| {
            self.caps
                .get("workspace")
                .and_then(|w| w.get("fileOperations"))
                .and_then(|f| f.get(k))
                .is_some()
        };
        let mut created = Vec::new();
        let mut renamed = Vec::new();
        let mut deleted = Vec::new();
        for op in ops {
            match op {
                WireFileOp::Create { uri, .. } => created.push(json!({"uri": uri})),
                WireFileOp::Rename { old, new, .. } => {
                    renamed.push(json!({"oldUri": old, "newUri": new}))
                }
                WireFileOp::Delete { uri, .. } => deleted.push(json!({"uri": uri})),
                WireFileOp::Edit { .. } => {}
            }
        }
        if !created.is_empty() && wants("didCreate") {
            self.transport
                .notify("workspace/didCreateFiles", json!({"files": created}));
        }
        if !renamed.is_empty() && wants("didRename") {
            self.transport
                .notify("workspace/didRenameFiles", json!({"files": renamed}));
        }
        if !deleted.is_empty() && wants("didDelete") {
            self.transport
                .notify("workspace/didDeleteFiles", json!({"files": deleted}));
        }
    }
}

trait Pipe: Sized {
    fn pipe<R>(self, f: impl FnOnce(Self) -> R) -> R {
        f(self)
    }
}
impl<T> Pipe for T {}
