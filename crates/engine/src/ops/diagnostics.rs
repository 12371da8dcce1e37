//! `diagnostics`: fresh diagnostics of one file (its current content, pulled or waited for at
//! the exact document version), or of every file with problems, as fresh as with one: what a
//! check of the whole workspace finds (`gates::check`: its scope, the servers' workspace
//! passes, leases), partial where something could not be checked; paged. And the one merge
//! policy every answer with diagnostics from several servers follows (`merge_by`).

use std::cmp::Ordering;

use super::*;

/// The most items at one place a new one is compared with (`merge_by`).
const SAME_PLACE: usize = 64;

/// The one way diagnostics from several servers (or several asks of them) become one list, for
/// the `diagnostics` tool, `check`, the hooks and the LSP face: in the order `cmp` says (their
/// place: file, line, column, then the most severe first), a repeat (`same`) of one already
/// listed at that place dropped, and otherwise in the order the servers gave them (the sort is
/// stable).
pub fn merge_by<T>(
    mut items: Vec<T>,
    cmp: impl Fn(&T, &T) -> Ordering,
    same: impl Fn(&T, &T) -> bool,
) -> Vec<T> {
    items.sort_by(&cmp);
    let mut out: Vec<T> = Vec::with_capacity(items.len());
    // Where the run of items at the current place starts in `out`.
    let mut run = 0;
    for item in items {
        if out
            .last()
            .is_some_and(|last| cmp(last, &item) != Ordering::Equal)
        {
            run = out.len();
        }
        // A repeat is looked for among the last `SAME_PLACE` at one place only: a server that
        // floods one place with diagnostics costs a pass, not a square.
        let from = run.max(out.len().saturating_sub(SAME_PLACE));
        if !out[from..].iter().any(|o| same(o, &item)) {
            out.push(item);
        }
    }
    out
}

/// One file's diagnostics merged (`merge_by`): by line, column, then severity.
pub(crate) fn merge(items: Vec<Diag>) -> Vec<Diag> {
    merge_by(
        items,
        |a, b| (a.line, a.column, a.severity).cmp(&(b.line, b.column, b.severity)),
        |a, b| a == b,
    )
}

impl Engine {
    /// Fresh diagnostics of one file, or of every file with problems; one page of them (files
    /// in path order, each file's diagnostics in line order; a file cut by the page boundary
    /// is on both pages with its part).
    pub async fn diagnostics(&self, p: DiagnosticsParams) -> Result<DiagnosticsResult, ToolError> {
        self.diagnostics_with_progress(p, &|_, _| {}).await
    }

    /// `diagnostics`, calling `progress(done, total)` as the files of a whole-workspace answer
    /// are checked.
    pub async fn diagnostics_with_progress(
        &self,
        p: DiagnosticsParams,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<DiagnosticsResult, ToolError> {
        // Bad paging arguments fail before any work.
        positive(p.limit, "limit")?;
        cursor_start(p.cursor.as_deref())?;
        let (limit, cursor) = (p.limit, p.cursor.clone());
        let terse = p.terse.unwrap_or(self.options().terse);
        let asked_all = p.file.is_none();
        let mut out = self.all_diagnostics_with_progress(p, progress).await?;
        out.notes = self.waiting_notes();
        if terse {
            // Terse lists errors and warnings only, in the text and the structured answer alike.
            for f in &mut out.files {
                f.diagnostics.retain(|d| d.severity <= Severity::Warning);
            }
            // Without a file, the files with problems: none left is none listed.
            if asked_all {
                out.files.retain(|f| !f.diagnostics.is_empty());
            }
        }
        if out.files.iter().all(|f| f.diagnostics.is_empty()) {
            // Nothing to page; a file asked for stays listed, with no problems.
            return Ok(out);
        }
        let flat: Vec<(String, Diag)> = std::mem::take(&mut out.files)
            .into_iter()
            .flat_map(|f| {
                let file = f.file;
                f.diagnostics.into_iter().map(move |d| (file.clone(), d))
            })
            .collect();
        let (page, total, next_cursor) = paginate(flat, limit, cursor.as_deref(), 200)?;
        for (file, d) in page {
            match out.files.last_mut() {
                Some(f) if f.file == file => f.diagnostics.push(d),
                _ => out.files.push(FileDiagnostics {
                    file,
                    diagnostics: vec![d],
                }),
            }
        }
        out.total = total;
        out.next_cursor = next_cursor;
        Ok(out)
    }

    /// Every diagnostic `diagnostics` would page.
    pub(crate) async fn all_diagnostics(
        &self,
        p: DiagnosticsParams,
    ) -> Result<DiagnosticsResult, ToolError> {
        self.all_diagnostics_with_progress(p, &|_, _| {}).await
    }

    /// `all_diagnostics`, calling `progress(done, total)` as a whole-workspace answer's files are
    /// checked.
    async fn all_diagnostics_with_progress(
        &self,
        p: DiagnosticsParams,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<DiagnosticsResult, ToolError> {
        match &p.file {
            Some(file) => self.file_answer(file, p.source.as_deref()).await,
            None => self.workspace_answer(progress).await,
        }
    }

    /// Every diagnostic of one file (of `source`, when given, in an overlay): every server of
    /// the file's language reports; their diagnostics merge.
    async fn file_answer(
        &self,
        file: &str,
        source: Option<&str>,
    ) -> Result<DiagnosticsResult, ToolError> {
        let mut out = empty_answer();
        let path = self.resolve(file)?;
        let language = self.languages().detect(&path);
        let servers = self.registry.servers_for(&path, &language).await;
        if servers.is_empty() {
            return Err(self.registry.no_server(&language, &path).into());
        }
        let mut merged: Vec<Diag> = Vec::new();
        let mut failures = Vec::new();
        for server in servers {
            let server = match server {
                Ok(s) => s,
                Err(e) => {
                    failures.push(ToolError::from(e));
                    continue;
                }
            };
            let lease = match source {
                Some(_) => server.docs.lease(&path, &language, source).await?,
                None => server.docs.lease_current(&path, &language).await?,
            };
            match self.file_diagnostics(&server, &lease).await {
                Ok(d) => {
                    if !d.fresh {
                        note(
                            &mut out,
                            format!(
                                "{} sent no diagnostics for this version of the file within {}s",
                                server.name,
                                self.opts.diagnostics_timeout.as_secs()
                            ),
                        );
                    }
                    merged.extend(diags(&lease.snap, d.diagnostics));
                }
                Err(e) => failures.push(e),
            }
        }
        if merged.is_empty()
            && !failures.is_empty()
            && failures.len() == self.registry.by_language(&language).len()
        {
            return Err(failures.remove(0));
        }
        for f in failures {
            note(&mut out, f.message);
        }
        out.files.push(FileDiagnostics {
            file: self.root().relative(&path),
            diagnostics: merge(merged),
        });
        Ok(out)
    }

    /// Every file with problems: what a check of the whole workspace finds (its scope, the
    /// servers' workspace passes, tsserver's unopened answers, leases), and what it could not
    /// check makes the answer partial.
    async fn workspace_answer(
        &self,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<DiagnosticsResult, ToolError> {
        let mut out = empty_answer();
        let found = self.workspace_findings(progress).await?;
        if !found.unchecked.is_empty() {
            let why: Vec<String> = found.unchecked.iter().map(unchecked_reason).collect();
            note(&mut out, why.join("; "));
        }
        // In path order.
        let by_file: BTreeMap<String, Vec<Diag>> = found
            .files
            .into_iter()
            .filter(|f| !f.diagnostics.is_empty())
            .map(|f| (f.file, f.diagnostics))
            .collect();
        out.files = by_file
            .into_iter()
            .map(|(file, diagnostics)| FileDiagnostics { file, diagnostics })
            .collect();
        Ok(out)
    }

    /// One server's diagnostics of a leased file; if its process dies meanwhile, once more in
    /// the restarted one.
    pub(super) async fn file_diagnostics(
        &self,
        server: &Server,
        lease: &Lease,
    ) -> Result<crate::documents::DocDiagnostics, ToolError> {
        let tick = self.registry.tick();
        let since = server.generation();
        let client = server.client();
        let first = server
            .docs
            .diagnostics(lease, self.opts.diagnostics_timeout)
            .await
            .map_err(ToolError::from);
        let died = match &first {
            Err(e) => e.code == Code::ServerFailed,
            Ok(d) => !d.fresh && !client.is_alive(),
        };
        if !died {
            self.saw_diagnostics(server, lease, &first, self.stamp(tick));
            return first;
        }
        let again = match server.await_restart(since, &client).await {
            Ok(()) => {
                lease.reopen();
                server
                    .docs
                    .diagnostics(lease, self.opts.diagnostics_timeout)
                    .await
                    .map_err(ToolError::from)
            }
            Err(why) => Err(ToolError::new(Code::ServerFailed, why)),
        };
        self.saw_diagnostics(server, lease, &again, self.stamp(tick));
        again
    }
}

impl Engine {
    /// What the workspace's lspgate.toml defines that waits for `lspgate trust` while
    /// built-ins answer in its place (`Registry::waiting`): the first answer of a session that
    /// carries notes says it, the later ones not again.
    pub(super) fn waiting_notes(&self) -> Vec<String> {
        let notes = self.registry.waiting();
        if notes.is_empty()
            || self
                .told_waiting
                .swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            return Vec::new();
        }
        notes
    }

    /// The tick an answer asked at `tick` may be stamped with: `tick` when no delivery of
    /// changes began while it was asked, else none (it may know of a later change, or not).
    fn stamp(&self, tick: u64) -> Option<u64> {
        (self.registry.tick() == tick).then_some(tick)
    }
}

/// An answer with no files yet, complete.
fn empty_answer() -> DiagnosticsResult {
    DiagnosticsResult {
        files: Vec::new(),
        total: 0,
        next_cursor: None,
        partial: false,
        reason: None,
        notes: Vec::new(),
    }
}

/// Makes an answer partial, adding `why` to its reason.
fn note(out: &mut DiagnosticsResult, why: String) {
    out.partial = true;
    out.reason = Some(match out.reason.take() {
        Some(r) => format!("{r}; {why}"),
        None => why,
    });
}

/// A check's `unchecked` entry as a reason, with the files it names (a check's entry has them
/// apart).
fn unchecked_reason(u: &Unchecked) -> String {
    match (&u.file, u.examples.as_slice()) {
        (Some(file), _) => format!("{} ({file})", u.reason),
        (None, []) => u.reason.clone(),
        (None, some) => format!(
            "{} ({}{})",
            u.reason,
            some.join(", "),
            if u.files.unwrap_or(0) > some.len() {
                ", …"
            } else {
                ""
            }
        ),
    }
}

#[cfg(test)]
mod merge_tests {
    use super::*;

    fn d(line: u32, column: u32, severity: Severity, message: &str) -> Diag {
        Diag {
            severity,
            line,
            column,
            end_line: line,
            end_column: column + 1,
            code: None,
            source: None,
            message: message.into(),
        }
    }

    #[test]
    fn one_merge_orders_by_place_then_severity_and_drops_repeats() {
        use Severity::*;
        // Two servers: the second repeats one of the first's, not next to it once sorted.
        let first = vec![
            d(3, 1, Warning, "unused"),
            d(1, 5, Error, "bad"),
            d(3, 1, Hint, "style"),
        ];
        let second = vec![
            d(3, 1, Error, "undefined"),
            d(3, 1, Warning, "unused"),
            d(2, 1, Info, "note"),
        ];
        let merged = merge([first, second].concat());
        let got: Vec<(u32, &str)> = merged
            .iter()
            .map(|x| (x.line, x.message.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (1, "bad"),
                (2, "note"),
                (3, "undefined"),
                (3, "unused"),
                (3, "style")
            ]
        );
        // The same message at two places is two diagnostics; equal places keep their order.
        let twice = merge(vec![
            d(1, 1, Error, "b"),
            d(1, 1, Error, "a"),
            d(2, 1, Error, "b"),
        ]);
        let got: Vec<&str> = twice.iter().map(|x| x.message.as_str()).collect();
        assert_eq!(got, ["b", "a", "b"]);
    }
}
