//! The editing operations: `edit`, `rename`, `code_actions`, `format`, `undo` and `what_if`.
//! Each computes a `Plan` against the files as they are (`plan`), previews it as a diff, or
//! applies it (verified, atomic, journaled write-ahead), tells the servers, and reports the
//! diagnostics it introduced and resolved.
//!
//! Previews are remembered per call, so an apply refuses files changed since. `commit` runs one at
//! a time: diagnostics before, the journaled apply on the blocking pool, file operations
//! (`workspace/didRenameFiles` and its like) to the servers and the written files delivered through
//! `Registry::sync_with`, every touched file synced before any is asked for its diagnostics after.
//! `undo` takes only `applied` entries. At start, an existing journal is opened, so interrupted
//! edits are recovered.

mod actions;
mod delta;
mod plan;

use actions::{action_infos, choose_action};
pub use delta::delta;
use delta::{identifier_at, renamed_in};
pub use plan::apply_specs;
use plan::edits_key;
#[doc(hidden)]
pub use plan::plan_workspace_edit;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};

use super::files::{read_existing, read_in_root};
use super::types::*;
use super::{Engine, add_unique, diags, position};
use crate::documents::{Lease, Snapshot};
use crate::edits::journal::{Journal, State};
use crate::edits::{self, FileChange, Plan};
use crate::error::{Code, ToolError};
use crate::lsp::wire::{WireCodeAction, WireFileOp, WirePos, WireRange};
use crate::lsp::{Cap, LspClient};
use crate::registry::Server;
use crate::text;
use crate::watch::{Change, ChangeKind};

/// Diagnostics of some files, and whether any answer was partial.
type DiagSet = (Vec<FileDiag>, Option<String>);

impl super::Workspace {
    pub(super) fn journal(&self) -> Result<&Journal, ToolError> {
        self.state.journal().map_err(ToolError::from)
    }

    /// `edit_applied` (or `edit_undone`, naming the edit it undid) in the event log, before
    /// the `file_changed` its delivery records.
    fn record_edit(&self, id: i64, undoes: Option<i64>, files: &[PathBuf]) {
        let files: Vec<String> = files
            .iter()
            .map(|p| self.registry.root().relative(p))
            .collect();
        match undoes {
            Some(undone) => self.events.emit(
                "edit_undone",
                json!({"edit_id": undone, "files": files, "undo_edit_id": id}),
            ),
            None => self
                .events
                .emit("edit_applied", json!({"edit_id": id, "files": files})),
        }
    }

    /// At start: when the workspace has an edit journal, opens it, which rolls back any edit an
    /// earlier lspgate left half-applied (see `edits::journal`). Creates nothing otherwise.
    pub(super) fn recover_edits(&self) {
        if self.state.exists()
            && let Err(e) = self.journal()
        {
            tracing::error!("edit journal: {e}");
        }
    }
}

impl Engine {
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
                let Ok(lease) = server.docs.lease_current(path, &language).await else {
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
        self.commit_journaled(tool, summary, plan, key, file_ops, None, None)
            .await
    }

    /// `commit`, recording in the same journal transaction as its completion that this edit
    /// undoes edit `undoes`; `renamed` (old name, new name) for a rename, whose diagnostics
    /// then name the new name where they named the old one and are not news.
    #[allow(clippy::too_many_arguments)]
    async fn commit_journaled(
        &self,
        tool: &str,
        summary: String,
        plan: Plan,
        key: Option<&str>,
        file_ops: &[WireFileOp],
        undoes: Option<i64>,
        renamed: Option<(String, String)>,
    ) -> Result<EditResult, ToolError> {
        if plan.is_empty() {
            return Ok(Engine::nothing(format!("{summary}: changes nothing")));
        }
        let _guard = self.edit_lock.lock().await;
        if let Some(key) = key {
            self.verify_preview(key)?;
        }
        let journal = self.journal()?.clone();
        let (before, r1) = self
            .diagnostics_of(&paths_where(&plan, |c| c.before.is_some()))
            .await;
        let id = self
            .hand_over(journal, tool, &summary, &plan, file_ops, undoes)
            .await?;
        let (after, r2) = self
            .diagnostics_of(&paths_where(&plan, |c| c.after.is_some()))
            .await;
        let renamed = renamed.as_ref().map(|(a, b)| (a.as_str(), b.as_str()));
        let (introduced, resolved) = delta(&before, &after, renamed);
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

    /// Checks that every file a preview (`key`) showed is still as it was then.
    fn verify_preview(&self, key: &str) -> Result<(), ToolError> {
        let previewed = self.previews.lock().ok().and_then(|mut p| p.remove(key));
        for (path, digest) in previewed.unwrap_or_default() {
            // Unreadable now (a link out, a FIFO, a folder): changed, whatever it was.
            let now = read_in_root(self.root(), &path).map(|b| b.map(|b| text::digest(&b)));
            let now = match now {
                Ok(now) => now,
                Err(_) => Some("unreadable".to_string()),
            };
            if now != digest {
                return Err(ToolError::new(
                    Code::RevisionConflict,
                    format!("{} changed since the preview; nothing was written", self.root().relative(&path)),
                )
                .with_data(json!({"file": self.root().relative(&path), "current_digest": now, "expected_digest": digest})));
            }
        }
        Ok(())
    }

    /// Writes a plan through the journal and hands it to the servers; the edit's id.
    async fn hand_over(
        &self,
        journal: Journal,
        tool: &str,
        summary: &str,
        plan: &Plan,
        file_ops: &[WireFileOp],
        undoes: Option<i64>,
    ) -> Result<i64, ToolError> {
        // Intent, files, completion on the blocking pool; then the edit recorded as lspgate's
        // and handed to the servers. All of it in a task of its own, which a client's cancel
        // (dropping this future) does not stop: the journal always knows what was written, and
        // the log and the servers always hear of it as lspgate's write.
        let (to_apply, tool_name, text) = (plan.clone(), tool.to_string(), summary.to_string());
        let written: Vec<PathBuf> = plan.changes.iter().map(|c| c.path.clone()).collect();
        let own = own_changes(plan);
        let (ws, file_ops) = (self.shared().clone(), file_ops.to_vec());
        let handed = tokio::spawn(async move {
            let registry = ws.registry.clone();
            // The watcher may deliver these writes before they are handed over below: they
            // are lspgate's own either way.
            let _claim = registry.claim_writes(&written);
            let id = tokio::task::spawn_blocking(move || {
                journal.apply(&tool_name, &text, &to_apply, undoes)
            })
            .await
            .map_err(|e| ToolError::internal(format!("the edit's writer stopped: {e}")))??;
            ws.record_edit(id, undoes, &written);
            if !file_ops.is_empty() {
                for server in registry.running() {
                    server.client().did_change_files(&file_ops);
                }
            }
            // The servers hear of the written files as of any change on disk, once each (the
            // watcher sees the same writes).
            registry.sync_with(own).await;
            Ok::<i64, ToolError>(id)
        });
        handed
            .await
            .map_err(|e| ToolError::internal(format!("the edit's hand-over stopped: {e}")))?
    }

    pub async fn edit(&self, p: EditParams) -> Result<EditResult, ToolError> {
        let path = self.resolve(&p.file)?;
        let bytes = read_existing(self.root(), &path, &p.file)?;
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
        let scope = self.workspace(&server).await;
        if p.apply.unwrap_or(false) {
            complete_for_rename(scope.partial.as_deref())?;
        }
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
        let old_name = identifier_at(&lease.snap, pos);
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
            let summary = rename_summary(old_name.as_deref(), &p.new_name);
            self.commit_journaled(
                "rename",
                summary,
                plan,
                Some(&key),
                &ops,
                None,
                old_name.map(|old| (old, p.new_name.clone())),
            )
            .await
        } else {
            let mut preview = self.preview(&key, &plan);
            preview.partial = scope.partial.is_some();
            preview.reason = scope.partial;
            Ok(preview)
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
        let not_applied = match entry.state {
            State::Applied => None,
            State::Pending => Some(
                "has not completed: it is being applied, or lspgate stopped while applying it and rolls it back at its next start",
            ),
            State::RolledBack => Some(
                "was interrupted before it completed and rolled back: no file holds what it would have written",
            ),
            State::Refused => Some(
                "is refused: it names paths outside the workspace (or in a VCS folder), or was not recorded by lspgate for this workspace and user",
            ),
        };
        if let Some(why) = not_applied {
            return Err(ToolError::invalid(format!(
                "edit {id} {why}; there is nothing to undo"
            )));
        }
        // Every path of the entry was confined when it was read, and is again when written.
        // Undoing a rename renames back.
        let renamed = renamed_in(&entry.tool, &entry.summary).map(|(old, new)| (new, old));
        self.commit_journaled(
            "undo",
            format!("undo of edit {id} ({})", entry.summary),
            entry.plan.reversed(),
            None,
            &[],
            Some(id),
            renamed,
        )
        .await
    }

    /// The code actions a server offers for some lines; one chosen is previewed or applied.
    pub async fn code_actions(&self, p: CodeActionsParams) -> Result<CodeActionsResult, ToolError> {
        let (server, lease) = self
            .hold(&p.file, None, Cap::CodeActions, "code_actions")
            .await?;
        let first = super::positive(Some(p.line), "line")?.unwrap_or(1);
        let last = super::positive(p.end_line, "end_line")?
            .unwrap_or(first)
            .max(first);
        let range = lines_range(&lease.snap, first, last)?;
        let context = self.diagnostics_in(&server, &lease, range).await;
        let uri = &lease.snap.uri;
        let only = p.kind.clone().map(|k| vec![k]);
        let actions = server
            .request(Some(&lease), |c| {
                let (ctx, only) = (context.clone(), only.clone());
                async move { c.code_actions(uri, range, ctx, only).await }
            })
            .await?;
        let list = action_infos(&actions);
        let shown = format!(
            "{}:{first}:{last}:{}",
            p.file,
            p.kind.as_deref().unwrap_or("")
        );
        let Some(choice) = &p.apply else {
            if let Ok(mut l) = self.listed.lock() {
                if l.len() >= 256 {
                    l.clear();
                }
                l.insert(shown, actions.iter().map(|a| a.title.clone()).collect());
            }
            return Ok(CodeActionsResult {
                actions: list,
                applied: None,
            });
        };
        let remembered = self.listed.lock().ok().and_then(|l| l.get(&shown).cloned());
        let chosen = choose_action(choice, &actions, &list, remembered.as_deref())?;
        let at = format!("action:{}:{}:{}", p.file, first, last);
        let applied = self
            .take_action(&server, lease, chosen, &at, p.preview.unwrap_or(false))
            .await?;
        Ok(CodeActionsResult {
            actions: list,
            applied: Some(applied),
        })
    }

    /// The diagnostics a server sent for the lines of `range`, raw: quick fixes are keyed on
    /// them.
    async fn diagnostics_in(&self, server: &Server, lease: &Lease, range: WireRange) -> Vec<Value> {
        server
            .docs
            .diagnostics(lease, self.opts.diagnostics_timeout)
            .await
            .map(|d| d.diagnostics)
            .unwrap_or_default()
            .into_iter()
            .filter(|d| {
                d.range.start.line <= range.end.line && d.range.end.line >= range.start.line
            })
            .map(|d| d.raw)
            .collect()
    }

    /// Resolves a chosen code action and previews (`preview`) or applies its edit, then runs its
    /// command (applied only); `at` is the start of its preview key (file and lines).
    async fn take_action(
        &self,
        server: &Arc<Server>,
        lease: Lease,
        chosen: WireCodeAction,
        at: &str,
        preview: bool,
    ) -> Result<EditResult, ToolError> {
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
        let plan = self.plan_from_ops(server, &ops)?;
        let command = LspClient::code_action_command(&action);
        let key = format!("{at}:{}", action.title);
        if preview {
            let mut r = self.preview(&key, &plan);
            if command.is_some() {
                r.message = Some(
                    "preview shows the action's edit; its command runs only when applied".into(),
                );
            }
            return Ok(r);
        }
        let mut result = if plan.is_empty() {
            Engine::nothing(format!("`{}` has no edit of its own", action.title))
        } else {
            self.commit("code_action", action.title.clone(), plan, Some(&key), &ops)
                .await?
        };
        if let Some((name, args)) = command {
            let (_, produced) = self
                .run_server_command(server, &name, args, &action.title)
                .await?;
            if let Some(r) = produced {
                result = merge(result, r);
            }
        }
        if !result.changed {
            result.message = Some(format!("`{}` changed nothing", action.title));
        }
        Ok(result)
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
        let text = String::from_utf8(read_existing(self.root(), &path, &p.file)?)
            .map_err(|_| ToolError::invalid(format!("{} is not UTF-8", p.file)))?;
        let new = apply_specs(&text, &p.edits)?;
        let (before, r1) = self.diagnostics_of(std::slice::from_ref(&path)).await;
        let language = self.languages().detect(&path);
        let servers: Vec<Arc<Server>> = self.registry.started_for(&path, &language).await;
        if servers.is_empty() {
            return Err(self.registry.no_server(&language, &path).into());
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
        let (introduced, resolved) = delta(&before, &after, None);
        Ok(WhatIfResult {
            introduced,
            resolved,
            hover_at_probe: hover,
            partial: reason.is_some(),
            reason,
        })
    }
}
/// A rename computed before the server knows the whole workspace (`partial` says why) misses
/// files: it is shown (partial) but never applied.
fn complete_for_rename(partial: Option<&str>) -> Result<(), ToolError> {
    match partial {
        Some(why) => Err(ToolError::new(
            Code::Timeout,
            format!("not applied: the rename could miss files ({why}); try again"),
        )
        .with_data(json!({"reason": why}))),
        None => Ok(()),
    }
}

/// A rename's summary, naming both names: an undo reads them back (`renamed_in`).
fn rename_summary(old_name: Option<&str>, new_name: &str) -> String {
    match old_name {
        Some(old) => format!("rename {old} to {new_name}"),
        None => format!("rename to {new_name}"),
    }
}

/// The paths of a plan's changes that `keep` keeps.
fn paths_where(plan: &Plan, keep: impl Fn(&FileChange) -> bool) -> Vec<PathBuf> {
    plan.changes
        .iter()
        .filter(|c| keep(c))
        .map(|c| c.path.clone())
        .collect()
}

/// A plan's changes as the changes on disk they make, for the servers.
fn own_changes(plan: &Plan) -> Vec<Change> {
    plan.changes
        .iter()
        .map(|c| Change {
            path: c.path.clone(),
            kind: match (&c.before, &c.after) {
                (None, Some(_)) => ChangeKind::Created,
                (Some(_), None) => ChangeKind::Deleted,
                _ => ChangeKind::Changed,
            },
        })
        .collect()
}

/// The wire range of whole lines `first..=last` (1-based) of a snapshot.
fn lines_range(snap: &Snapshot, first: u32, last: u32) -> Result<WireRange, ToolError> {
    let end_chars = snap
        .line(last)
        .map(|l| l.chars().count() as u32)
        .ok_or_else(|| {
            ToolError::invalid(format!(
                "line {last} is past the end of the file ({} lines)",
                snap.index.line_count()
            ))
        })?;
    Ok(WireRange {
        start: snap.to_wire(first, 1)?,
        end: snap.to_wire(last, end_chars + 1)?,
    })
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

#[cfg(test)]
mod tests;
