//! Readiness for workspace-wide questions (references, workspace symbols, rename, call
//! hierarchy, definition), per server as its preset says (`presets::Readiness`): what each
//! server needs before such an answer is complete, waited for (bounded) and, where it cannot be
//! reached, said (`partial` with the reason) rather than passed off as the whole truth. It works
//! on the parts of a server that `Server` lends it (`Readied`), never on the server itself.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::documents::Documents;
use crate::lsp::LspClient;
use crate::workspace::Languages;
use crate::workspace::presets::Readiness;

/// tsserver projects opened, at most (each costs it memory; more are said in `partial`).
const MAX_PROJECTS: usize = 16;
/// Loose JavaScript/TypeScript files (under no tsconfig.json or jsconfig.json, vendored bundles
/// aside) opened, at most: tsserver knows such files only while they are open.
const MAX_LOOSE: usize = 100;

/// What a server can answer of a workspace-wide question.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Why its answer may be incomplete; `None`: it is complete.
    pub partial: Option<String>,
    /// What the server was still doing when the bound ran out (`partial` then says so):
    /// waiting longer completes the answer. `None`: it is ready, or what it lacks is not a
    /// matter of time (clangd without a compilation database, projects left out).
    pub waiting: Option<String>,
    /// tsserver: one file of each project it knows (its symbols are searched project by
    /// project).
    pub projects: Vec<PathBuf>,
}

/// The tsserver projects under a server's root: found once, kept until re-armed.
#[derive(Debug, Clone, Default)]
pub(super) struct Projects {
    /// One file per tsconfig.json / jsconfig.json, then the loose files.
    files: Vec<PathBuf>,
    /// How many of `files` stand for a tsconfig.json / jsconfig.json (the rest are loose).
    configs: usize,
    /// Why they do not cover every file, if they do not.
    note: Option<String>,
}

/// The fields of a `Server` (documented there) that readiness works with, lent by
/// `Server::readied`: it reaches nothing else of the server.
pub(super) struct Readied<'a> {
    pub(super) name: &'a str,
    pub(super) root: &'a Path,
    pub(super) docs: &'a Documents,
    pub(super) languages: &'a [String],
    pub(super) readiness: Readiness,
    pub(super) projects: &'a tokio::sync::Mutex<Option<Projects>>,
}

impl Readied<'_> {
    fn client(&self) -> Arc<LspClient> {
        self.docs.client()
    }

    /// `Server::workspace_ready`.
    pub(super) async fn workspace_ready(&self, bound: Duration, languages: &Languages) -> Scope {
        let client = self.client();
        match self.readiness {
            Readiness::Progress => match client.wait_idle(bound).await {
                Ok(()) => Scope::default(),
                Err(busy) => waiting(
                    format!(
                        "{} was still busy ({}) after {}s; results may be incomplete",
                        self.name,
                        busy.titles.join(", "),
                        bound.as_secs()
                    ),
                    busy.titles.join(", "),
                ),
            },
            Readiness::Marker => match client.wait_loaded(bound).await {
                Ok(()) => Scope::default(),
                Err(_) => waiting(
                    format!(
                        "{} had not loaded the workspace after {}s; results may be incomplete",
                        self.name,
                        bound.as_secs()
                    ),
                    "loading the workspace".into(),
                ),
            },
            Readiness::CompileCommands => {
                let Some(db) = compile_commands(self.root) else {
                    return partial(format!(
                        "{} indexes files nobody opened only from a compile_commands.json, and {} has none: it knows the open files and what they include",
                        self.name,
                        self.root.display()
                    ));
                };
                self.load_compilation_database(&db, languages, bound).await;
                match client.wait_idle(bound).await {
                    Ok(()) => Scope::default(),
                    Err(busy) => waiting(
                        format!(
                            "{} was still indexing ({}) after {}s; results may be incomplete",
                            self.name,
                            busy.titles.join(", "),
                            bound.as_secs()
                        ),
                        busy.titles.join(", "),
                    ),
                }
            }
            Readiness::Projects => {
                // Prepared in the background from the server's start (`prepare`); waiting
                // here is bounded.
                match tokio::time::timeout(bound, self.prepare(languages)).await {
                    Ok(p) => Scope {
                        partial: p.note,
                        waiting: None,
                        projects: p.files,
                    },
                    Err(_) => waiting(
                        format!(
                            "{} was still loading its projects after {}s; results may be incomplete",
                            self.name,
                            bound.as_secs()
                        ),
                        "loading its projects".into(),
                    ),
                }
            }
        }
    }

    /// tsserver's projects under the root, found and loaded once: one file of each tsconfig /
    /// jsconfig project and the loose files (under no such file) are opened (tsserver loads a
    /// project when a file of it opens, and knows loose files only while open), then each
    /// project's graph is built and one file kept per project, to search it by.
    pub(super) async fn prepare(&self, languages: &Languages) -> Projects {
        let mut cached = self.projects.lock().await;
        if let Some(p) = cached.as_ref() {
            return p.clone();
        }
        let root = self.root.to_path_buf();
        let serves: Vec<String> = self.languages.to_vec();
        let files = tokio::task::spawn_blocking(move || {
            crate::workspace::walk(&root, crate::workspace::WALK_LIMIT)
        })
        .await
        .unwrap_or_default();
        let served: Vec<PathBuf> = files
            .iter()
            .filter(|f| {
                let l = languages.detect(f);
                serves.is_empty() || serves.contains(&l)
            })
            .cloned()
            .collect();
        let mut found = find_projects(self.root, &files, &served);
        tracing::debug!(server = %self.name, files = ?found.files, "opening tsserver projects");
        for file in &found.files {
            let language = languages.detect(file);
            if let Err(e) = self.docs.lease(file, &language, None).await {
                tracing::debug!(server = %self.name, "opening {}: {e}", file.display());
            }
        }
        // One file per project to search it by. tsserver keeps every loose file in one
        // inferred project (measured: Django's 87 JavaScript files, in 20 folders), so the
        // first loose file stands for them all; the call also builds the project's graph.
        let client = self.client();
        let mut seen: Vec<String> = Vec::new();
        let mut keep = Vec::new();
        let candidates = std::mem::take(&mut found.files);
        let loose_from = found.configs.min(candidates.len());
        for file in candidates.into_iter().take(loose_from + 1) {
            match client.tsserver_project_of(&file).await {
                Ok(project) if !seen.contains(&project) => {
                    seen.push(project);
                    keep.push(file);
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::debug!(server = %self.name, "project of {}: {e}", file.display())
                }
            }
        }
        found.files = keep;
        tracing::debug!(server = %self.name, projects = ?found.files, "tsserver projects loaded");
        *cached = Some(found.clone());
        found
    }

    /// Makes clangd load the compilation database `db` and start its background index, once
    /// per instance (a restart re-arms it): clangd reads the database only for a file it
    /// opens, so nothing is indexed until one is. One file of the database is opened, and the
    /// indexing it starts is waited for to begin (bounded: an index already on disk and up to
    /// date may start none).
    async fn load_compilation_database(&self, db: &Path, languages: &Languages, bound: Duration) {
        let mut loaded = self.projects.lock().await;
        if loaded.is_some() {
            return;
        }
        let (db, root) = (db.to_path_buf(), self.root.to_path_buf());
        let first = tokio::task::spawn_blocking(move || first_entry(&db, &root))
            .await
            .ok()
            .flatten();
        let client = self.client();
        let seen = client.progress_begun();
        if let Some(file) = &first {
            tracing::debug!(server = %self.name, file = %file.display(), "opening a file of the compilation database");
            let language = languages.detect(file);
            match self.docs.lease(file, &language, None).await {
                Ok(_) => {
                    client.wait_begun(seen, INDEX_START.min(bound)).await;
                }
                Err(e) => tracing::debug!(server = %self.name, "opening {}: {e}", file.display()),
            }
        }
        *loaded = Some(Projects {
            files: first.into_iter().collect(),
            ..Projects::default()
        });
    }
}

/// How long clangd gets to announce the background indexing that opening a file of its
/// compilation database starts.
const INDEX_START: Duration = Duration::from_secs(3);

/// The first file of a compilation database that exists inside `root`.
fn first_entry(db: &Path, root: &Path) -> Option<PathBuf> {
    #[derive(serde::Deserialize)]
    struct Entry {
        directory: PathBuf,
        file: PathBuf,
    }
    let text = lspgate_base::regular::read(db, true).ok()?;
    let entries: Vec<Entry> = serde_json::from_slice(&text).ok()?;
    entries.into_iter().find_map(|e| {
        let path = e.directory.join(&e.file).canonicalize().ok()?;
        (path.starts_with(root) && path.is_file()).then_some(path)
    })
}

fn partial(reason: String) -> Scope {
    Scope {
        partial: Some(reason),
        waiting: None,
        projects: Vec::new(),
    }
}

/// Not ready when the bound ran out, still `doing` what it does: `reason` for an answer now.
fn waiting(reason: String, doing: String) -> Scope {
    Scope {
        partial: Some(reason),
        waiting: Some(doing),
        projects: Vec::new(),
    }
}

/// clangd's compilation database for `root`, if it has one (it looks there and in `build/`).
fn compile_commands(root: &Path) -> Option<PathBuf> {
    ["compile_commands.json", "build/compile_commands.json"]
        .into_iter()
        .map(|name| root.join(name))
        .find(|p| p.is_file())
}

/// The projects tsserver would make of `files` (everything under the root, sorted) and the
/// `served` ones: one file to open per tsconfig.json / jsconfig.json (a source file the config
/// takes in, no nearer config taking it first), and the loose served files (no config takes
/// them: tsserver puts them in an inferred project).
fn find_projects(root: &Path, files: &[PathBuf], served: &[PathBuf]) -> Projects {
    let configs: Vec<&PathBuf> = files
        .iter()
        .filter(|f| {
            f.file_name()
                .is_some_and(|n| n == "tsconfig.json" || n == "jsconfig.json")
        })
        .collect();
    // Each config's folder and what it takes in.
    let projects: Vec<(&Path, bool, Include)> = configs
        .iter()
        .filter_map(|c| {
            let js = c.file_name().is_some_and(|n| n == "jsconfig.json");
            Some((c.parent()?, js, Include::read(c)))
        })
        .collect();
    // The project a file belongs to: the nearest config above it that takes it in (as
    // tsserver looks for one); `None`: a loose file, in an inferred project.
    let owner = |f: &Path| -> Option<usize> {
        f.ancestors()
            .skip(1)
            .take_while(|a| a.starts_with(root))
            .find_map(|a| {
                projects.iter().position(|(dir, js, inc)| {
                    *dir == a && (is_ts(f) || *js || inc.allow_js) && inc.takes(dir, f)
                })
            })
    };
    let owners: Vec<Option<usize>> = served.iter().map(|f| owner(f)).collect();
    let mut out = Projects::default();
    let mut skipped_projects = 0;
    for i in 0..projects.len() {
        let members = served
            .iter()
            .zip(owners.iter())
            .filter(|(_, o)| **o == Some(i))
            .map(|(f, _)| f);
        // A source file rather than a declaration file, where there is one.
        let pick = members
            .clone()
            .find(|f| !f.to_string_lossy().ends_with(".d.ts"))
            .or_else(|| members.clone().next());
        match pick {
            Some(f) if out.files.len() < MAX_PROJECTS => {
                out.files.push(f.clone());
                out.configs += 1;
            }
            Some(_) => skipped_projects += 1,
            None => {}
        }
    }
    let loose: Vec<&PathBuf> = served
        .iter()
        .zip(owners.iter())
        .filter(|(f, o)| o.is_none() && !is_generated(root, f))
        .map(|(f, _)| f)
        .collect();
    let mut notes = Vec::new();
    if skipped_projects > 0 {
        notes.push(format!(
            "{} of {} tsconfig/jsconfig projects were loaded (at most {MAX_PROJECTS})",
            out.files.len(),
            out.files.len() + skipped_projects
        ));
    }
    if configs.is_empty() && loose.is_empty() {
        notes.push("no JavaScript or TypeScript files were found".into());
    }
    if loose.len() > MAX_LOOSE {
        notes.push(format!(
            "{} files are under no tsconfig.json or jsconfig.json; tsserver knows such files only while they are open, and lspgate opened {MAX_LOOSE} of them",
            loose.len()
        ));
    }
    out.files.extend(loose.into_iter().take(MAX_LOOSE).cloned());
    out.note = (!notes.is_empty()).then(|| notes.join("; "));
    out
}

/// Generated or vendored, like a dependency folder's files, so not opened: build output (under
/// a `dist`, `build` or `out` folder, or ending with a source map comment: rxjs ships 750 such
/// files beside its sources), declaration files no project takes in, and bundles (`*.min.js`,
/// or over 100 KB: parsing Django's jQuery, Select2 and XRegExp took tsserver 5 of the 7 s its
/// 87 JavaScript files cost).
fn is_generated(root: &Path, f: &Path) -> bool {
    let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let built = f.strip_prefix(root).is_ok_and(|rel| {
        rel.components().any(|c| {
            matches!(
                c.as_os_str().to_str(),
                Some("dist" | "build" | "out" | "coverage")
            )
        })
    });
    built
        || name.contains(".min.")
        || name.ends_with(".d.ts")
        || std::fs::metadata(f).is_ok_and(|m| m.len() > 100 * 1024)
        || ends_with_source_map(f)
}

/// Whether the file's last line is a `//# sourceMappingURL=` comment (compiler output).
fn ends_with_source_map(f: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = lspgate_base::regular::open(f, true) else {
        return false;
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(len.saturating_sub(300)));
    let mut tail = String::new();
    let _ = file.take(300).read_to_string(&mut tail);
    tail.trim_end()
        .rsplit('\n')
        .next()
        .is_some_and(|l| l.starts_with("//# sourceMappingURL="))
}

fn is_ts(f: &Path) -> bool {
    f.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "ts" | "tsx" | "mts" | "cts"))
}

/// What a tsconfig.json / jsconfig.json takes in: its `files`, `include` and `exclude`, and
/// `allowJs` (read leniently: comments and trailing commas are allowed in these files).
struct Include {
    files: Vec<String>,
    include: Option<globset::GlobSet>,
    exclude: Option<globset::GlobSet>,
    allow_js: bool,
}

impl Include {
    fn read(config: &Path) -> Include {
        let v: serde_json::Value = lspgate_base::regular::read(config, true)
            .ok()
            .and_then(|b| serde_json::from_str(&strip_jsonc(&String::from_utf8_lossy(&b))).ok())
            .unwrap_or_default();
        let strings = |k: &str| -> Option<Vec<String>> {
            v.get(k)?.as_array().map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
        };
        Include {
            files: strings("files").unwrap_or_default(),
            include: strings("include").map(|p| globs(&p)),
            exclude: strings("exclude").map(|p| globs(&p)),
            allow_js: v
                .get("compilerOptions")
                .and_then(|o| o.get("allowJs"))
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false),
        }
    }

    /// Whether the config takes `file` (under `dir`, the config's folder) in.
    fn takes(&self, dir: &Path, file: &Path) -> bool {
        let Ok(rel) = file.strip_prefix(dir) else {
            return false;
        };
        let listed = self
            .files
            .iter()
            .any(|f| Path::new(f) == rel || dir.join(f) == file);
        if listed {
            return true;
        }
        if self.exclude.as_ref().is_some_and(|g| g.is_match(rel)) {
            return false;
        }
        match &self.include {
            Some(g) => g.is_match(rel),
            // No `include`: everything, unless only `files` were given.
            None => self.files.is_empty(),
        }
    }
}

/// tsconfig patterns as globs: a pattern without a wildcard or an extension names a folder.
fn globs(patterns: &[String]) -> globset::GlobSet {
    let mut b = globset::GlobSetBuilder::new();
    for p in patterns {
        let p = p.trim_start_matches("./");
        let last = p.rsplit('/').next().unwrap_or(p);
        let folder = !p.contains('*') && !last.contains('.');
        let pattern = if folder {
            format!("{}/**/*", p.trim_end_matches('/'))
        } else {
            p.to_string()
        };
        if let Ok(g) = globset::GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
        {
            b.add(g);
        }
    }
    b.build().unwrap_or_else(|_| globset::GlobSet::empty())
}

/// JSON with comments (`//`, `/* */`) and trailing commas, as tsconfig files allow, made JSON.
fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
            }
            (',', _) => {
                // A trailing comma: the next non-blank character closes the list or object.
                let rest: String = chars.clone().collect();
                if !matches!(rest.trim_start().chars().next(), Some('}' | ']')) {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsconfig_files_read_leniently() {
        let t = "{\n // a comment\n \"include\": [\"src\", /* inline */ \"lib/**/*.ts\",],\n \"x\": \"http://a\"\n}";
        let v: serde_json::Value = serde_json::from_str(&strip_jsonc(t)).unwrap();
        assert_eq!(v["include"], serde_json::json!(["src", "lib/**/*.ts"]));
        assert_eq!(v["x"], "http://a");
    }

    #[test]
    fn one_file_per_project_and_the_loose_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let w = |p: &str, t: &str| {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, t).unwrap();
        };
        w("tsconfig.json", r#"{"include": ["src"]}"#);
        w("src/a.ts", "");
        w("dist/a.d.ts", "");
        w(
            "pkg/tsconfig.json",
            r#"{"compilerOptions": {"allowJs": true}, "exclude": ["gen"]}"#,
        );
        w("pkg/gen/x.ts", "");
        w("pkg/m.js", "");
        w("web/jsconfig.json", "{}");
        w("web/app.js", "");
        w("loose/x.js", "");
        w("lib/out.js", "x();\n//# sourceMappingURL=out.js.map\n");
        let files = crate::workspace::walk(root, 100);
        let served: Vec<PathBuf> = files
            .iter()
            .filter(|f| !f.to_string_lossy().ends_with(".json"))
            .cloned()
            .collect();
        let p = find_projects(root, &files, &served);
        let rel: Vec<String> = p
            .files
            .iter()
            .map(|f| f.strip_prefix(root).unwrap().display().to_string())
            .collect();
        // One file per project; then the loose files (a file its nearest config leaves out is
        // loose too), build output (dist's declarations) left out.
        assert_eq!(
            rel,
            [
                "pkg/m.js",
                "src/a.ts",
                "web/app.js",
                "loose/x.js",
                "pkg/gen/x.ts"
            ]
        );
        assert_eq!(p.configs, 3);
        assert!(p.note.is_none());

        // Without any config: the loose files only, generated ones left out.
        let none = find_projects(root, &[], &served);
        assert_eq!(none.configs, 0);
        assert_eq!(
            none.files.len(),
            served.len() - 2,
            "all but dist/a.d.ts and lib/out.js (compiler output)"
        );
    }
}
