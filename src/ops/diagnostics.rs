//! `diagnostics`: fresh diagnostics of one file (its current content, pulled or waited for at
//! the exact document version), or of every file with problems, as fresh as with one; paged.

use super::*;

impl Engine {
    /// Fresh diagnostics of one file, or of every file with problems; one page of them (files
    /// in path order, each file's diagnostics in line order; a file cut by the page boundary
    /// is on both pages with its part).
    pub async fn diagnostics(&self, p: DiagnosticsParams) -> Result<DiagnosticsResult, ToolError> {
        // Bad paging arguments fail before any work.
        positive(p.limit, "limit")?;
        cursor_start(p.cursor.as_deref())?;
        let (limit, cursor) = (p.limit, p.cursor.clone());
        let mut out = self.all_diagnostics(p).await?;
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
        let mut out = DiagnosticsResult {
            files: Vec::new(),
            total: 0,
            next_cursor: None,
            partial: false,
            reason: None,
        };
        let note = |out: &mut DiagnosticsResult, why: String| {
            out.partial = true;
            out.reason = Some(match out.reason.take() {
                Some(r) => format!("{r}; {why}"),
                None => why,
            });
        };
        if let Some(file) = &p.file {
            // Every server of the file's language reports; their diagnostics merge.
            let path = self.resolve(file)?;
            let language = self.languages().detect(&path);
            let servers = self.registry.servers_for(&path, &language).await;
            if servers.is_empty() {
                return Err(self.registry.no_server(&language, &path));
            }
            let mut merged: Vec<Diag> = Vec::new();
            let mut failures = Vec::new();
            for server in servers {
                let server = match server {
                    Ok(s) => s,
                    Err(e) => {
                        failures.push(e);
                        continue;
                    }
                };
                let lease = server
                    .docs
                    .lease(&path, &language, p.source.as_deref())
                    .await?;
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
                        for d in diags(&lease.snap, d.diagnostics) {
                            if !merged.contains(&d) {
                                merged.push(d);
                            }
                        }
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
            merged.sort_by_key(|d| (d.line, d.column));
            out.files.push(FileDiagnostics {
                file: self.root().relative(&path),
                diagnostics: merged,
            });
            return Ok(out);
        }
        // Every open document, and every other file a server reported problems in (opened now:
        // a push for a file nobody opened may predate a change of what it depends on), each
        // freshened and asked for its current content's diagnostics.
        let mut by_file: BTreeMap<String, Vec<Diag>> = BTreeMap::new();
        for server in self.registry.running() {
            let mut files = server.docs.open_paths();
            let pushed: Vec<(PathBuf, String)> = server
                .client()
                .pushed_uris()
                .into_iter()
                .filter(|uri| !server.client().latest_pushed(uri).is_empty())
                .filter_map(|uri| uri.to_file_path().ok())
                // Confined: a file through a symlink leading out is not opened (read) at all.
                .filter_map(|p| self.root().confine(&p).ok())
                .filter(|p| !files.iter().any(|(o, _)| o == p))
                .map(|p| {
                    let l = self.languages().detect(&p);
                    (p, l)
                })
                .collect();
            if pushed.len() > MAX_PUSHED_FILES {
                note(
                    &mut out,
                    format!(
                        "{} reported on {} files nobody opened; the first {MAX_PUSHED_FILES} were checked",
                        server.name,
                        pushed.len()
                    ),
                );
            }
            files.extend(pushed.into_iter().take(MAX_PUSHED_FILES));
            let mut slow = 0;
            for (path, language) in &files {
                let Ok(lease) = server.docs.lease(path, language, None).await else {
                    continue;
                };
                let d = self.file_diagnostics(&server, &lease).await?;
                if !d.fresh {
                    slow += 1;
                    continue;
                }
                let list = by_file.entry(self.root().relative(path)).or_default();
                for d in diags(&lease.snap, d.diagnostics) {
                    if !list.contains(&d) {
                        list.push(d);
                    }
                }
            }
            if slow > 0 {
                note(
                    &mut out,
                    format!(
                        "{} sent no diagnostics for the current content of {slow} file{} within {}s",
                        server.name,
                        if slow == 1 { "" } else { "s" },
                        self.opts.diagnostics_timeout.as_secs()
                    ),
                );
            }
        }
        by_file.retain(|_, d| !d.is_empty());
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
        let since = server.generation();
        let client = server.client();
        let first = server
            .docs
            .diagnostics(lease, self.opts.diagnostics_timeout)
            .await;
        let died = match &first {
            Err(e) => e.code == Code::ServerFailed,
            Ok(d) => !d.fresh && !client.is_alive(),
        };
        if !died {
            self.saw_diagnostics(server, lease, &first);
            return first;
        }
        let again = match server.await_restart(since, &client).await {
            Ok(()) => {
                lease.reopen();
                server
                    .docs
                    .diagnostics(lease, self.opts.diagnostics_timeout)
                    .await
            }
            Err(why) => Err(ToolError::new(Code::ServerFailed, why)),
        };
        self.saw_diagnostics(server, lease, &again);
        again
    }
}
