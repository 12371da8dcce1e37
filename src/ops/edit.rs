//! The editing operations: `edit`, `rename`, `code_actions`, `format`, `undo` and `what_if`.
//! Each computes a `Plan` against the files as they are, previews it as a diff, or applies it
//! (verified, atomic, journaled), tells the servers, and reports the diagnostics it introduced
//! and resolved.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use url::Url;

use super::types::*;
use super::{Engine, add_unique, diags, position};
use crate::edits::journal::Journal;
use crate::edits::{self, FileChange, Plan};
use crate::error::{Code, ToolError};
use crate::lsp::wire::{WireFileOp, WirePos, WireRange};
use crate::lsp::{Cap, LspClient};
use crate::registry::Server;
use crate::text::{self, LineIndex};
use crate::watch::{Change, ChangeKind};

/// Diagnostics of some files, and whether any answer was partial.
type DiagSet = (Vec<FileDiag>, Option<String>);

impl Engine {
    fn journal(&self) -> Result<&Journal, ToolError> {
        self.journal
            .get_or_init(|| Journal::open(&self.opts.state_dir))
            .as_ref()
            .map_err(|e| e.clone())
    }

    /// A path a server named, confined to the root.
    fn confine(&self, uri: &Url) -> Result<PathBuf, ToolError> {
        let path = uri
            .to_file_path()
            .map_err(|_| ToolError::invalid(format!("the server named a non-file URI {uri}")))?;
        let probe = if path.exists() {
            path.canonicalize().unwrap_or(path.clone())
        } else {
            path.parent()
                .and_then(|p| p.canonicalize().ok())
                .map(|p| p.join(path.file_name().unwrap_or_default()))
                .unwrap_or(path.clone())
        };
        if probe.starts_with(self.root().path()) {
            Ok(probe)
        } else {
            Err(ToolError::new(
                Code::OutsideRoot,
                format!(
                    "the edit touches {}, outside the workspace; nothing was written",
                    path.display()
                ),
            ))
        }
    }

    /// A plan from a server's workspace edit, computed against the files as they are now.
    fn plan_from_ops(&self, server: &Server, ops: &[WireFileOp]) -> Result<Plan, ToolError> {
        let enc = server.client().encoding();
        let mut original: BTreeMap<PathBuf, Option<Vec<u8>>> = BTreeMap::new();
        let mut current: BTreeMap<PathBuf, Option<String>> = BTreeMap::new();
        fn load(
            path: &Path,
            original: &mut BTreeMap<PathBuf, Option<Vec<u8>>>,
            current: &mut BTreeMap<PathBuf, Option<String>>,
        ) -> Result<(), ToolError> {
            if current.contains_key(path) {
                return Ok(());
            }
            let bytes = match std::fs::read(path) {
                Ok(b) => Some(b),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => {
                    return Err(ToolError::invalid(format!(
                        "cannot read {}: {e}",
                        path.display()
                    )));
                }
            };
            let text = match &bytes {
                Some(b) => Some(String::from_utf8(b.clone()).map_err(|_| {
                    ToolError::invalid(format!(
                        "{} is not UTF-8; lspgate will not edit it",
                        path.display()
                    ))
                })?),
                None => None,
            };
            original.insert(path.to_path_buf(), bytes);
            current.insert(path.to_path_buf(), text);
            Ok(())
        }
        for op in ops {
            match op {
                WireFileOp::Edit {
                    uri,
                    version,
                    edits,
                } => {
                    let path = self.confine(uri)?;
                    if let (Some(v), Some(open)) = (version, server.docs.open_version(&path))
                        && *v != open
                    {
                        return Err(ToolError::new(
                            Code::RevisionConflict,
                            format!(
                                "{} changed while the edit was computed",
                                self.root().relative(&path)
                            ),
                        ));
                    }
                    load(&path, &mut original, &mut current)?;
                    let Some(Some(text)) = current.get(&path) else {
                        return Err(ToolError::invalid(format!(
                            "the server edits {}, which does not exist",
                            self.root().relative(&path)
                        )));
                    };
                    let index = LineIndex::new(text);
                    let spans: Vec<(usize, usize, &str)> = edits
                        .iter()
                        .map(|(r, new)| {
                            (
                                text::offset_of(text, &index, r.start.line, r.start.character, enc),
                                text::offset_of(text, &index, r.end.line, r.end.character, enc),
                                new.as_str(),
                            )
                        })
                        .collect();
                    let new = text::splice(text, &spans).map_err(|e| {
                        ToolError::new(
                            Code::ServerError,
                            format!("the server's edit is malformed: {e}"),
                        )
                    })?;
                    current.insert(path, Some(new));
                }
                WireFileOp::Create {
                    uri,
                    overwrite,
                    ignore_if_exists,
                } => {
                    let path = self.confine(uri)?;
                    load(&path, &mut original, &mut current)?;
                    if current[&path].is_some() && !overwrite {
                        if *ignore_if_exists {
                            continue;
                        }
                        return Err(ToolError::invalid(format!(
                            "{} already exists",
                            self.root().relative(&path)
                        )));
                    }
                    current.insert(path, Some(String::new()));
                }
                WireFileOp::Rename {
                    old,
                    new,
                    overwrite,
                    ignore_if_exists,
                } => {
                    let (from, to) = (self.confine(old)?, self.confine(new)?);
                    load(&from, &mut original, &mut current)?;
                    load(&to, &mut original, &mut current)?;
                    if current[&to].is_some() && !overwrite {
                        if *ignore_if_exists {
                            continue;
                        }
                        return Err(ToolError::invalid(format!(
                            "{} already exists",
                            self.root().relative(&to)
                        )));
                    }
                    let content =
                        current
                            .insert(from.clone(), None)
                            .flatten()
                            .ok_or_else(|| {
                                ToolError::invalid(format!(
                                    "cannot rename {}: it does not exist",
                                    self.root().relative(&from)
                                ))
                            })?;
                    current.insert(to, Some(content));
                }
                WireFileOp::Delete {
                    uri,
                    ignore_if_not_exists,
                } => {
                    let path = self.confine(uri)?;
                    load(&path, &mut original, &mut current)?;
                    if current[&path].is_none() && !ignore_if_not_exists {
                        return Err(ToolError::invalid(format!(
                            "cannot delete {}: it does not exist",
                            self.root().relative(&path)
                        )));
                    }
                    current.insert(path, None);
                }
            }
        }
        Ok(Plan {
            changes: current
                .into_iter()
                .map(|(path, after)| FileChange {
                    before: original.remove(&path).flatten(),
                    after: after.map(String::into_bytes),
                    path,
                })
                .collect(),
        }
        .normalized())
    }

    /// Fresh diagnostics of files (from every server of each), for a delta.
    async fn diagnostics_of(&self, paths: &[PathBuf]) -> DiagSet {
        let mut out = Vec::new();
        let mut reason = None;
        // Every file is synced with its servers before any is asked: a change in one file
        // changes another's diagnostics.
        for path in paths.iter().filter(|p| p.is_file()) {
            let language = self.languages().detect(path);
            for server in self.registry.started_for(path, &language).await {
                drop(server.docs.lease(path, &language, None).await);
            }
        }
        for path in paths {
            if !path.is_file() {
                continue;
            }
            let language = self.languages().detect(path);
            for server in self.registry.started_for(path, &language).await {
                let Ok(lease) = server.docs.lease(path, &language, None).await else {
                    continue;
                };
                match self.file_diagnostics(&server, &lease).await {
                    Ok(d) => {
                        if !d.fresh {
                            reason = Some(format!(
                                "{} was slow to report on {}",
                                server.name,
                                self.root().relative(path)
                            ));
                        }
                        let file = self.root().relative(path);
                        add_unique(&mut out, &file, diags(&lease.snap, d.diagnostics));
                    }
                    Err(e) => reason = Some(e.message),
                }
            }
        }
        (out, reason)
    }

    fn stats(&self, plan: &Plan) -> (String, Vec<FileStat>) {
        let (diff, stats) = edits::diff(plan, |p| self.root().relative(p));
        let files = stats
            .into_iter()
            .map(|s| FileStat {
                file: self.root().relative(&s.path),
                added: s.added,
                removed: s.removed,
                created: s.created,
                deleted: s.deleted,
            })
            .collect();
        (diff, files)
    }

    /// The preview of a plan; remembers what it was computed from, so applying the same call
    /// later refuses if the files changed in between.
    fn preview(&self, key: &str, plan: &Plan) -> EditResult {
        let digests: Vec<(PathBuf, Option<String>)> = plan
            .changes
            .iter()
            .map(|c| (c.path.clone(), c.before.as_deref().map(text::digest)))
            .collect();
        if let Ok(mut p) = self.previews.lock() {
            p.insert(key.to_string(), digests);
        }
        let (diff, files) = self.stats(plan);
        EditResult {
            changed: true,
            diff,
            files,
            message: Some("preview only: call again with \"apply\": true to write it".into()),
            ..EditResult::default()
        }
    }

    fn nothing(message: String) -> EditResult {
        EditResult {
            message: Some(message),
            ..EditResult::default()
        }
    }

    /// Applies a plan: verified against its preview (if any) and the disk, atomic, journaled;
    /// then the servers hear of it and the diagnostics delta is measured.
    pub(super) async fn commit(
        &self,
        tool: &str,
        summary: String,
        plan: Plan,
        key: Option<&str>,
        file_ops: &[WireFileOp],
    ) -> Result<EditResult, ToolError> {
        if plan.is_empty() {
            return Ok(Engine::nothing(format!("{summary}: changes nothing")));
        }
        let _guard = self.edit_lock.lock().await;
        if let Some(key) = key {
            let previewed = self.previews.lock().ok().and_then(|mut p| p.remove(key));
            for (path, digest) in previewed.unwrap_or_default() {
                let now = std::fs::read(&path).ok().map(|b| text::digest(&b));
                if now != digest {
                    return Err(ToolError::new(
                        Code::RevisionConflict,
                        format!("{} changed since the preview; nothing was written", self.root().relative(&path)),
                    )
                    .with_data(json!({"file": self.root().relative(&path), "current_digest": now, "expected_digest": digest})));
                }
            }
        }
        let journal = self.journal()?;
        let before_paths: Vec<PathBuf> = plan
            .changes
            .iter()
            .filter(|c| c.before.is_some())
            .map(|c| c.path.clone())
            .collect();
        let (before, r1) = self.diagnostics_of(&before_paths).await;
        let to_apply = plan.clone();
        tokio::task::spawn_blocking(move || edits::apply(&to_apply))
            .await
            .map_err(|e| ToolError::new(Code::ServerError, e.to_string()))??;
        let id = journal.record(tool, &summary, &plan)?;
        let own: Vec<Change> = plan
            .changes
            .iter()
            .map(|c| Change {
                path: c.path.clone(),
                kind: match (&c.before, &c.after) {
                    (None, Some(_)) => ChangeKind::Created,
                    (Some(_), None) => ChangeKind::Deleted,
                    _ => ChangeKind::Changed,
                },
            })
            .collect();
        if !file_ops.is_empty() {
            for server in self.registry.running() {
                server.client().did_change_files(file_ops);
            }
        }
        // The servers hear of the written files as of any change on disk, once each (the
        // watcher sees the same writes).
        self.registry.sync_with(own).await;
        let after_paths: Vec<PathBuf> = plan
            .changes
            .iter()
            .filter(|c| c.after.is_some())
            .map(|c| c.path.clone())
            .collect();
        let (after, r2) = self.diagnostics_of(&after_paths).await;
        let (introduced, resolved) = delta(&before, &after);
        let (diff, files) = self.stats(&plan);
        let reason = r2.or(r1);
        Ok(EditResult {
            applied: true,
            changed: true,
            edit_id: Some(id),
            files,
            diff,
            introduced: Some(introduced),
            resolved: Some(resolved),
            partial: reason.is_some(),
            reason,
            message: Some(format!("{summary}: applied as edit {id}")),
        })
    }

    pub async fn edit(&self, p: EditParams) -> Result<EditResult, ToolError> {
        let path = self.resolve(&p.file)?;
        let bytes = std::fs::read(&path).map_err(|e| {
            ToolError::new(Code::FileNotFound, format!("cannot read {}: {e}", p.file))
        })?;
        if let Some(expected) = &p.expected_digest {
            let now = text::digest(&bytes);
            if !now.eq_ignore_ascii_case(expected) {
                return Err(ToolError::new(
                    Code::RevisionConflict,
                    format!("{} is not the version you read", p.file),
                )
                .with_data(
                    json!({"file": p.file, "current_digest": now, "expected_digest": expected}),
                ));
            }
        }
        let text = String::from_utf8(bytes.clone()).map_err(|_| {
            ToolError::invalid(format!("{} is not UTF-8; lspgate will not edit it", p.file))
        })?;
        let new = apply_specs(&text, &p.edits)?;
        let plan = Plan {
            changes: vec![FileChange {
                path: path.clone(),
                before: Some(bytes),
                after: Some(new.into_bytes()),
            }],
        }
        .normalized();
        let key = format!(
            "edit:{}:{}",
            path.display(),
            serde_json::to_string(&edits_key(&p.edits)).unwrap_or_default()
        );
        if plan.is_empty() {
            return Ok(Engine::nothing(format!(
                "the edits leave {} as it is",
                p.file
            )));
        }
        if p.apply.unwrap_or(false) {
            self.commit("edit", format!("edit of {}", p.file), plan, Some(&key), &[])
                .await
        } else {
            Ok(self.preview(&key, &plan))
        }
    }

    pub async fn rename(&self, p: RenameParams) -> Result<EditResult, ToolError> {
        if p.new_name.trim().is_empty() {
            return Err(ToolError::invalid("`new_name` is empty"));
        }
        let (server, lease) = self.hold(&p.at.file, None, Cap::Rename, "rename").await?;
        let pos = position(&lease.snap, &p.at)?;
        let uri = &lease.snap.uri;
        let name = p.new_name.as_str();
        let ops = server
            .request(
                Some(&lease),
                |c| async move { c.rename(uri, pos, name).await },
            )
            .await?;
        let key = format!(
            "rename:{}:{}:{}:{}",
            lease.snap.path.display(),
            pos.line,
            pos.character,
            p.new_name
        );
        drop(lease);
        let Some(ops) = ops else {
            return Ok(Engine::nothing(
                "the server renames nothing at this position".into(),
            ));
        };
        let plan = self.plan_from_ops(&server, &ops)?;
        if plan.is_empty() {
            return Ok(Engine::nothing(format!(
                "renaming to `{}` changes nothing",
                p.new_name
            )));
        }
        if p.apply.unwrap_or(false) {
            self.commit(
                "rename",
                format!("rename to {}", p.new_name),
                plan,
                Some(&key),
                &ops,
            )
            .await
        } else {
            Ok(self.preview(&key, &plan))
        }
    }

    pub async fn format(&self, p: FormatParams) -> Result<EditResult, ToolError> {
        let (server, lease) = self.hold(&p.file, None, Cap::Formatting, "format").await?;
        let tab = super::positive(p.tab_size, "tab_size")?.unwrap_or(4);
        let spaces = p.insert_spaces.unwrap_or(true);
        let uri = lease.snap.uri.clone();
        let u = &uri;
        let edits = server
            .request(Some(&lease), |c| async move {
                c.formatting(u, tab, spaces).await
            })
            .await?;
        let version = lease.snap.version;
        drop(lease);
        let ops = vec![WireFileOp::Edit {
            uri,
            version: Some(version),
            edits,
        }];
        let plan = self.plan_from_ops(&server, &ops)?;
        let key = format!("format:{}", p.file);
        if plan.is_empty() {
            return Ok(Engine::nothing(format!("{} is already formatted", p.file)));
        }
        if p.apply.unwrap_or(false) {
            self.commit(
                "format",
                format!("format {}", p.file),
                plan,
                Some(&key),
                &[],
            )
            .await
        } else {
            Ok(self.preview(&key, &plan))
        }
    }

    pub async fn undo(&self, p: UndoParams) -> Result<EditResult, ToolError> {
        let id = p.edit_id.0;
        let entry = self
            .journal()?
            .get(id)?
            .ok_or_else(|| ToolError::invalid(format!("no edit {id} in the journal")))?;
        if let Some(by) = entry.undone_by {
            return Err(ToolError::invalid(format!(
                "edit {id} was already undone (by edit {by})"
            )));
        }
        let plan = entry.plan.reversed();
        let result = self
            .commit(
                "undo",
                format!("undo of edit {id} ({})", entry.summary),
                plan,
                None,
                &[],
            )
            .await?;
        if let Some(new_id) = result.edit_id {
            self.journal()?.mark_undone(id, new_id)?;
        }
        Ok(result)
    }

    pub async fn code_actions(&self, p: CodeActionsParams) -> Result<CodeActionsResult, ToolError> {
        let (server, lease) = self
            .hold(&p.file, None, Cap::CodeActions, "code_actions")
            .await?;
        let first = super::positive(Some(p.line), "line")?.unwrap_or(1);
        let last = super::positive(p.end_line, "end_line")?
            .unwrap_or(first)
            .max(first);
        let snap = &lease.snap;
        let end_chars = snap
            .line(last)
            .map(|l| l.chars().count() as u32)
            .ok_or_else(|| {
                ToolError::invalid(format!(
                    "line {last} is past the end of the file ({} lines)",
                    snap.index.line_count()
                ))
            })?;
        let range = WireRange {
            start: snap.to_wire(first, 1)?,
            end: snap.to_wire(last, end_chars + 1)?,
        };
        // The diagnostics there, as the server sent them: quick fixes are keyed on them.
        let context: Vec<Value> = server
            .docs
            .diagnostics(&lease, self.opts.diagnostics_timeout)
            .await
            .map(|d| d.diagnostics)
            .unwrap_or_default()
            .into_iter()
            .filter(|d| {
                d.range.start.line <= range.end.line && d.range.end.line >= range.start.line
            })
            .map(|d| d.raw)
            .collect();
        let uri = &snap.uri;
        let only = p.kind.clone().map(|k| vec![k]);
        let actions = server
            .request(Some(&lease), |c| {
                let (ctx, only) = (context.clone(), only.clone());
                async move { c.code_actions(uri, range, ctx, only).await }
            })
            .await?;
        let list: Vec<ActionInfo> = actions
            .iter()
            .enumerate()
            .map(|(i, a)| ActionInfo {
                index: i + 1,
                title: a.title.clone(),
                kind: a.kind.clone(),
                preferred: a.preferred,
                fixes: a.fixes.clone(),
                disabled: a.disabled.clone(),
            })
            .collect();
        let Some(choice) = &p.apply else {
            return Ok(CodeActionsResult {
                actions: list,
                applied: None,
            });
        };
        let chosen = match choice {
            Value::Number(n) => n.as_u64().map(|n| n as usize),
            Value::String(s) => s.trim().parse::<usize>().ok(),
            _ => None,
        }
        .and_then(|i| i.checked_sub(1))
        .and_then(|i| actions.get(i))
        .or_else(|| {
            choice
                .as_str()
                .and_then(|t| actions.iter().find(|a| a.title == t))
        })
        .cloned()
        .ok_or_else(|| {
            ToolError::invalid(format!(
                "no action {choice} here; the actions are: {}",
                titles(&list)
            ))
            .with_data(json!({"actions": list}))
        })?;
        if let Some(why) = &chosen.disabled {
            return Err(ToolError::invalid(format!(
                "`{}` is disabled: {why}",
                chosen.title
            )));
        }
        let action = server
            .request(Some(&lease), |c| {
                let a = chosen.clone();
                async move { c.resolve_code_action(a).await }
            })
            .await?;
        drop(lease);
        let ops = LspClient::code_action_edit(&action)?.unwrap_or_default();
        let plan = self.plan_from_ops(&server, &ops)?;
        let command = LspClient::code_action_command(&action);
        let key = format!("action:{}:{}:{}:{}", p.file, first, last, action.title);
        if p.preview.unwrap_or(false) {
            let mut r = self.preview(&key, &plan);
            if command.is_some() {
                r.message = Some(
                    "preview shows the action's edit; its command runs only when applied".into(),
                );
            }
            return Ok(CodeActionsResult {
                actions: list,
                applied: Some(r),
            });
        }
        let mut result = if plan.is_empty() {
            Engine::nothing(format!("`{}` has no edit of its own", action.title))
        } else {
            self.commit("code_action", action.title.clone(), plan, Some(&key), &ops)
                .await?
        };
        if let Some((name, args)) = command {
            let (_, produced) = self
                .run_server_command(&server, &name, args, &action.title)
                .await?;
            if let Some(r) = produced {
                result = merge(result, r);
            }
        }
        if !result.changed {
            result.message = Some(format!("`{}` changed nothing", action.title));
        }
        Ok(CodeActionsResult {
            actions: list,
            applied: Some(result),
        })
    }

    /// Runs a server command; the edits it asks lspgate to apply (`workspace/applyEdit`) are
    /// applied and journaled like any other. Returns the command's answer and those edits.
    pub(super) async fn run_server_command(
        &self,
        server: &Arc<Server>,
        name: &str,
        args: Vec<Value>,
        title: &str,
    ) -> Result<(Value, Option<EditResult>), ToolError> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let client = server.client();
        let run = client.execute_command(name, args, Some(tx));
        tokio::pin!(run);
        let mut produced: Option<EditResult> = None;
        loop {
            tokio::select! {
                r = &mut run => {
                    let value = r?;
                    // Edits sent just before the answer.
                    while let Ok((ops, reply)) = rx.try_recv() {
                        let r = self.apply_server_edit(server, &ops, title).await;
                        let _ = reply.send(r.is_ok());
                        produced = Some(match (produced, r?) { (Some(a), b) => merge(a, b), (None, b) => b });
                    }
                    return Ok((value, produced));
                }
                Some((ops, reply)) = rx.recv() => {
                    let r = self.apply_server_edit(server, &ops, title).await;
                    let _ = reply.send(r.is_ok());
                    produced = Some(match (produced, r?) { (Some(a), b) => merge(a, b), (None, b) => b });
                }
            }
        }
    }

    async fn apply_server_edit(
        &self,
        server: &Server,
        ops: &[WireFileOp],
        title: &str,
    ) -> Result<EditResult, ToolError> {
        let plan = self.plan_from_ops(server, ops)?;
        self.commit("code_action", title.to_string(), plan, None, ops)
            .await
    }

    pub async fn what_if(&self, p: WhatIfParams) -> Result<WhatIfResult, ToolError> {
        let path = self.resolve(&p.file)?;
        let text = std::fs::read_to_string(&path).map_err(|e| {
            ToolError::new(Code::FileNotFound, format!("cannot read {}: {e}", p.file))
        })?;
        let new = apply_specs(&text, &p.edits)?;
        let (before, r1) = self.diagnostics_of(std::slice::from_ref(&path)).await;
        let language = self.languages().detect(&path);
        let servers: Vec<Arc<Server>> = self.registry.started_for(&path, &language).await;
        if servers.is_empty() {
            return Err(self.registry.no_server(&language, &path));
        }
        let mut after = Vec::new();
        let mut reason = r1;
        let mut hover = None;
        let file = self.root().relative(&path);
        for server in &servers {
            let lease = server.docs.lease(&path, &language, Some(&new)).await?;
            match self.file_diagnostics(server, &lease).await {
                Ok(d) => {
                    if !d.fresh {
                        reason = Some(format!("{} was slow to report", server.name));
                    }
                    add_unique(&mut after, &file, diags(&lease.snap, d.diagnostics));
                }
                Err(e) => reason = Some(e.message),
            }
            if let Some(probe) = &p.probe
                && hover.is_none()
                && server.supports(Cap::Hover)
            {
                let at = PositionParams {
                    file: p.file.clone(),
                    line: probe.line,
                    column: probe.column,
                    symbol: probe.symbol.clone(),
                    occurrence: probe.occurrence,
                    source: None,
                    terse: None,
                };
                let pos: WirePos = position(&lease.snap, &at)?;
                let uri = &lease.snap.uri;
                let h = server
                    .request(Some(&lease), |c| async move { c.hover(uri, pos).await })
                    .await?;
                hover = Some(h.map(|h| h.contents).unwrap_or_default());
            }
            drop(lease);
        }
        let (introduced, resolved) = delta(&before, &after);
        Ok(WhatIfResult {
            introduced,
            resolved,
            hover_at_probe: hover,
            partial: reason.is_some(),
            reason,
        })
    }
}

fn titles(list: &[ActionInfo]) -> String {
    if list.is_empty() {
        return "(none)".into();
    }
    list.iter()
        .map(|a| format!("{}. {}", a.index, a.title))
        .collect::<Vec<_>>()
        .join("; ")
}

fn merge(a: EditResult, b: EditResult) -> EditResult {
    if !a.changed {
        return b;
    }
    if !b.changed {
        return a;
    }
    let mut files = a.files;
    files.extend(b.files);
    let cat = |x: Option<Vec<FileDiag>>, y: Option<Vec<FileDiag>>| match (x, y) {
        (Some(mut x), Some(y)) => {
            x.extend(y);
            Some(x)
        }
        (x, y) => x.or(y),
    };
    EditResult {
        applied: a.applied || b.applied,
        changed: true,
        edit_id: b.edit_id.or(a.edit_id),
        files,
        diff: a.diff + &b.diff,
        introduced: cat(a.introduced, b.introduced),
        resolved: cat(a.resolved, b.resolved),
        partial: a.partial || b.partial,
        reason: b.reason.or(a.reason),
        message: b.message.or(a.message),
    }
}

fn edits_key(specs: &[EditSpec]) -> Value {
    Value::Array(
        specs
            .iter()
            .map(|s| match s {
                EditSpec::Replace { old_text, new_text } => json!([old_text, new_text]),
                EditSpec::Lines {
                    start_line,
                    end_line,
                    new_text,
                } => json!([start_line.0, end_line.0, new_text]),
            })
            .collect(),
    )
}

/// Applies `edit` specs to a text, in order.
pub fn apply_specs(text: &str, specs: &[EditSpec]) -> Result<String, ToolError> {
    if specs.is_empty() {
        return Err(ToolError::invalid("`edits` is empty"));
    }
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut out = text.to_string();
    for (i, spec) in specs.iter().enumerate() {
        match spec {
            EditSpec::Replace { old_text, new_text } => {
                if old_text.is_empty() {
                    return Err(ToolError::invalid(format!(
                        "edit {}: `old_text` is empty",
                        i + 1
                    )));
                }
                let count = out.matches(old_text.as_str()).count();
                match count {
                    1 => out = out.replacen(old_text.as_str(), new_text, 1),
                    0 => {
                        return Err(ToolError::invalid(format!(
                            "edit {}: `old_text` is not in the file",
                            i + 1
                        )));
                    }
                    n => {
                        return Err(ToolError::invalid(format!(
                            "edit {}: `old_text` occurs {n} times; include more context so it is unique",
                            i + 1
                        )));
                    }
                }
            }
            EditSpec::Lines {
                start_line,
                end_line,
                new_text,
            } => {
                let index = LineIndex::new(&out);
                let lines = index.line_count();
                let (s, e) = (start_line.0, end_line.0);
                if s < 1 || e < s || e as usize > lines {
                    return Err(ToolError::invalid(format!(
                        "edit {}: lines {s}..{e} are not within 1..{lines}",
                        i + 1
                    )));
                }
                // Whole lines, endings included; the new text gets the file's line ending if it
                // replaces lines that had one and brings none (so "" deletes the lines).
                let start = text::offset_of(&out, &index, (s - 1) as u32, 0, text::Encoding::Utf8);
                let end_of_last =
                    text::offset_of(&out, &index, (e - 1) as u32, u32::MAX, text::Encoding::Utf8);
                let end = if (e as usize) < lines {
                    text::offset_of(&out, &index, e as u32, 0, text::Encoding::Utf8)
                } else {
                    out.len()
                };
                let mut replacement = new_text.clone();
                if !replacement.is_empty() && end > end_of_last && !replacement.ends_with('\n') {
                    replacement.push_str(newline);
                }
                out = text::splice(&out, &[(start, end, replacement.as_str())])
                    .map_err(ToolError::invalid)?;
            }
        }
    }
    Ok(out)
}

/// What changed between two sets of diagnostics: matched by file, severity, code and message
/// (positions may move), nearest line first.
pub fn delta(before: &[FileDiag], after: &[FileDiag]) -> (Vec<FileDiag>, Vec<FileDiag>) {
    let same = |a: &FileDiag, b: &FileDiag| {
        a.file == b.file
            && a.diag.severity == b.diag.severity
            && a.diag.code == b.diag.code
            && a.diag.message == b.diag.message
    };
    let mut unmatched: Vec<Option<&FileDiag>> = before.iter().map(Some).collect();
    let mut introduced = Vec::new();
    for a in after {
        let best = unmatched
            .iter()
            .enumerate()
            .filter_map(|(i, b)| {
                b.filter(|b| same(a, b))
                    .map(|b| (i, b.diag.line.abs_diff(a.diag.line)))
            })
            .min_by_key(|(_, d)| *d)
            .map(|(i, _)| i);
        match best {
            Some(i) => unmatched[i] = None,
            None => introduced.push(a.clone()),
        }
    }
    let resolved = unmatched.into_iter().flatten().cloned().collect();
    (introduced, resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::wire::Severity;

    fn d(file: &str, line: u32, msg: &str) -> FileDiag {
        FileDiag {
            file: file.into(),
            diag: Diag {
                severity: Severity::Error,
                line,
                column: 1,
                end_line: line,
                end_column: 2,
                code: None,
                source: None,
                message: msg.into(),
            },
        }
    }

    #[test]
    fn deltas_follow_moved_diagnostics() {
        let before = vec![d("a", 3, "x"), d("a", 9, "y")];
        let after = vec![d("a", 4, "x"), d("a", 5, "z")];
        let (intro, res) = delta(&before, &after);
        assert_eq!(intro, vec![d("a", 5, "z")]);
        assert_eq!(res, vec![d("a", 9, "y")]);
    }

    #[test]
    fn specs_replace_unique_text_and_lines() {
        let t = "a\nb\nc\n";
        let r = |s: &[EditSpec]| apply_specs(t, s);
        let rep = |o: &str, n: &str| EditSpec::Replace {
            old_text: o.into(),
            new_text: n.into(),
        };
        let lines = |s: i64, e: i64, n: &str| EditSpec::Lines {
            start_line: Num(s),
            end_line: Num(e),
            new_text: n.into(),
        };
        assert_eq!(r(&[rep("b", "B")]).unwrap(), "a\nB\nc\n");
        assert_eq!(r(&[lines(2, 3, "X\n")]).unwrap(), "a\nX\n");
        assert_eq!(r(&[lines(1, 1, "first")]).unwrap(), "first\nb\nc\n");
        assert_eq!(r(&[lines(2, 2, "")]).unwrap(), "a\nc\n");
        assert_eq!(
            apply_specs("a\r\nb\r\n", &[lines(1, 1, "z")]).unwrap(),
            "z\r\nb\r\n"
        );
        assert_eq!(apply_specs("a\nb", &[lines(2, 2, "c")]).unwrap(), "a\nc");
        assert!(r(&[rep("\n", "")]).unwrap_err().message.contains("3 times"));
        assert!(
            r(&[rep("zz", "")])
                .unwrap_err()
                .message
                .contains("not in the file")
        );
        assert!(r(&[lines(3, 9, "")]).is_err());
    }
}
