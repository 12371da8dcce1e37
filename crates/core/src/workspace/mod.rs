//! The workspace: its root and path confinement, language detection, and the servers that serve
//! each language (built-in presets or one explicit command).
//!
//! `Languages`: config declarations, then extension, then shebang, cached per path and invalidated
//! on change, with a .gitignore-aware scan; `server_root`: the nearest ancestor with a server's
//! marker; `data_dir`: lspgate's data folder (trust records, installs, the journal, the daemon's
//! log).

pub mod config;
pub mod dirs;
pub mod env;
pub mod install;
pub mod presets;
mod root;
pub mod trust;

pub use root::Root;
pub(crate) use root::normalize;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// Language discovery for one workspace: project declarations (globs from lspgate.toml), then
/// extension, then shebang, then `plaintext`. Cached per path, invalidated when the file changes.
pub struct Languages {
    root: PathBuf,
    globs: globset::GlobSet,
    ids: Vec<String>,
    cache: Mutex<HashMap<PathBuf, (Option<SystemTime>, String)>>,
}

impl Languages {
    /// `declarations`: glob → language id, as in `[languages]`. Globs without a `/` match the
    /// file name anywhere; others match the root-relative path.
    pub fn new(root: &Path, declarations: &BTreeMap<String, String>) -> Languages {
        let mut b = globset::GlobSetBuilder::new();
        let mut ids = Vec::new();
        for (glob, lang) in declarations {
            let pattern = if glob.contains('/') {
                glob.clone()
            } else {
                format!("**/{glob}")
            };
            if let Ok(g) = globset::GlobBuilder::new(&pattern)
                .literal_separator(true)
                .build()
            {
                b.add(g);
                ids.push(lang.clone());
            }
        }
        Languages {
            root: root.to_path_buf(),
            globs: b.build().unwrap_or_else(|_| globset::GlobSet::empty()),
            ids,
            cache: Mutex::default(),
        }
    }

    /// The language of `path`.
    pub fn detect(&self, path: &Path) -> String {
        // Decided by the path alone (a configured pattern, or an extension): nothing to read.
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        if let Some(&i) = self.globs.matches(rel).first() {
            return self.ids[i].clone();
        }
        if path.extension().is_some() {
            return detect_language(path).to_string();
        }
        // Else by its first line, kept while the file's modification time holds.
        let mtime = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        if let Ok(c) = self.cache.lock()
            && let Some((t, lang)) = c.get(path)
            && *t == mtime
        {
            return lang.clone();
        }
        let lang = detect_language(path).to_string();
        if let Ok(mut c) = self.cache.lock() {
            c.insert(path.to_path_buf(), (mtime, lang.clone()));
        }
        lang
    }

    /// Forgets what was detected for `paths` (their files changed).
    pub fn forget<'a>(&self, paths: impl IntoIterator<Item = &'a Path>) {
        if let Ok(mut c) = self.cache.lock() {
            for p in paths {
                c.remove(p);
            }
        }
    }

    /// The languages the workspace holds, with a file count each (a walk that respects
    /// .gitignore and skips hidden files, at most `limit` files).
    pub fn scan(&self, limit: usize) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for p in walk(&self.root, limit) {
            let lang = self.detect(&p);
            if lang != "plaintext" {
                *out.entry(lang).or_insert(0) += 1;
            }
        }
        out
    }

    /// Each language the workspace holds (not plaintext), with its first file in path order.
    pub fn samples(&self, limit: usize) -> Vec<(String, PathBuf)> {
        let mut out: Vec<(String, PathBuf)> = Vec::new();
        for p in walk(&self.root, limit) {
            let lang = self.detect(&p);
            if lang != "plaintext" && !out.iter().any(|(l, _)| *l == lang) {
                out.push((lang, p));
            }
        }
        out
    }

    /// The first file (in path order) whose language `accept` takes.
    pub fn first_file(&self, limit: usize, accept: impl Fn(&str) -> bool) -> Option<PathBuf> {
        walk(&self.root, limit)
            .into_iter()
            .find(|p| accept(&self.detect(p)))
    }
}

/// Files a workspace walk looks at, at most.
pub const WALK_LIMIT: usize = 20_000;

/// Files under `root`, respecting .gitignore, skipping hidden ones; sorted; at most `limit`.
pub fn walk(root: &Path, limit: usize) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .require_git(false)
        .filter_entry(|e| e.file_name() != "node_modules")
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.into_path())
        .take(limit)
        .collect();
    out.sort();
    out
}

/// The root a server should use for `file`: the nearest ancestor (up to the workspace root)
/// holding one of `markers` (`*.ext` patterns allowed), else the workspace root.
pub fn server_root(workspace: &Path, file: &Path, markers: &[String]) -> PathBuf {
    if markers.is_empty() {
        return workspace.to_path_buf();
    }
    let start = if file.is_dir() {
        file
    } else {
        file.parent().unwrap_or(workspace)
    };
    for dir in start.ancestors() {
        if !dir.starts_with(workspace) {
            break;
        }
        if markers.iter().any(|m| has_marker(dir, m)) {
            return dir.to_path_buf();
        }
        if dir == workspace {
            break;
        }
    }
    workspace.to_path_buf()
}

/// Whether `dir` holds `marker`: a file name, or `*.ext` for any file with that ending.
pub fn has_marker(dir: &Path, marker: &str) -> bool {
    match marker.strip_prefix('*') {
        Some(suffix) => std::fs::read_dir(dir).is_ok_and(|rd| {
            rd.flatten()
                .any(|e| e.file_name().to_string_lossy().ends_with(suffix))
        }),
        None => dir.join(marker).exists(),
    }
}

/// The language of a file on disk (reads its first line only when it has no extension).
pub fn detect_language(path: &Path) -> &'static str {
    if path.extension().is_some() {
        return language_of(path, "");
    }
    use std::io::Read;
    let mut buf = [0u8; 256];
    // A FIFO, a device or a folder has no first line to read (and a FIFO's open would block).
    let n = lspgate_base::regular::open(path, true)
        .and_then(|mut f| f.read(&mut buf))
        .unwrap_or(0);
    language_of(path, &String::from_utf8_lossy(&buf[..n]))
}

/// The LSP `languageId` of a file: by extension, then by shebang for extension-less scripts,
/// else `plaintext`.
pub fn language_of(path: &Path, head: &str) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if let Some(lang) = ext.as_deref().and_then(language_of_extension) {
        return lang;
    }
    if ext.is_none()
        && let Some(lang) = language_of_shebang(head)
    {
        return lang;
    }
    "plaintext"
}

fn language_of_extension(ext: &str) -> Option<&'static str> {
    Some(match ext {
        "py" | "pyi" | "pyw" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" | "ipp" => "cpp",
        "rs" => "rust",
        "go" => "go",
        "sh" | "bash" | "zsh" => "shellscript",
        "json" => "json",
        "jsonc" => "jsonc",
        "css" => "css",
        "scss" => "scss",
        "html" | "htm" => "html",
        "yaml" | "yml" => "yaml",
        "toml" => "toml",
        "md" | "markdown" => "markdown",
        "nim" | "nims" => "nim",
        _ => return None,
    })
}

fn language_of_shebang(head: &str) -> Option<&'static str> {
    let first = head.lines().next()?.strip_prefix("#!")?;
    let mut words = first.split_whitespace();
    let mut prog = words.next()?.rsplit('/').next()?;
    if prog == "env" {
        prog = words.find(|w| !w.starts_with('-'))?;
    }
    let prog = prog.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match prog {
        "python" => "python",
        "node" | "nodejs" => "javascript",
        "deno" | "ts-node" | "tsx" => "typescript",
        "sh" | "bash" | "zsh" | "dash" | "ksh" => "shellscript",
        _ => return None,
    })
}

/// lspgate's own data folder: `$LSPGATE_HOME`, else `$XDG_DATA_HOME/lspgate`, else
/// `~/.local/share/lspgate`.
pub fn data_dir() -> PathBuf {
    if let Some(h) = std::env::var_os("LSPGATE_HOME") {
        return PathBuf::from(h);
    }
    if let Some(x) = std::env::var_os("XDG_DATA_HOME") {
        return PathBuf::from(x).join("lspgate");
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    home.join(".local/share/lspgate")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_by_extension_and_shebang() {
        assert_eq!(language_of(Path::new("a/b.py"), ""), "python");
        assert_eq!(language_of(Path::new("x.TSX"), ""), "typescriptreact");
        assert_eq!(language_of(Path::new("m.h"), ""), "c");
        assert_eq!(
            language_of(Path::new("run"), "#!/usr/bin/env python3\n"),
            "python"
        );
        assert_eq!(
            language_of(Path::new("run"), "#!/usr/bin/env -S node --x\n"),
            "javascript"
        );
        assert_eq!(
            language_of(Path::new("build"), "#!/bin/bash -e\n"),
            "shellscript"
        );
        assert_eq!(language_of(Path::new("notes"), "hello"), "plaintext");
        // An extension wins over a shebang.
        assert_eq!(language_of(Path::new("a.txt"), "#!/bin/sh"), "plaintext");
    }

    #[test]
    fn declarations_beat_extensions_and_shebangs() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("gen")).unwrap();
        std::fs::write(dir.path().join("stubs.pyi"), "x: int\n").unwrap();
        std::fs::write(dir.path().join("gen/out.txt"), "x").unwrap();
        std::fs::write(dir.path().join("tool"), "#!/bin/sh\necho\n").unwrap();
        std::fs::write(dir.path().join("build"), "#!/usr/bin/env python3\n").unwrap();
        let mut decl = BTreeMap::new();
        decl.insert("*.pyi".to_string(), "python-stub".to_string());
        decl.insert("gen/*.txt".to_string(), "json".to_string());
        decl.insert("tool".to_string(), "python".to_string());
        let langs = Languages::new(dir.path(), &decl);
        assert_eq!(langs.detect(&dir.path().join("stubs.pyi")), "python-stub");
        assert_eq!(langs.detect(&dir.path().join("gen/out.txt")), "json");
        assert_eq!(langs.detect(&dir.path().join("tool")), "python");
        assert_eq!(langs.detect(&dir.path().join("build")), "python");
        // The cache follows changes to the file.
        std::fs::write(
            dir.path().join("build"),
            "#!/bin/bash\n# longer than before\n",
        )
        .unwrap();
        let later = SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(dir.path().join("build"))
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert_eq!(langs.detect(&dir.path().join("build")), "shellscript");
        let scan = langs.scan(100);
        assert_eq!(scan.get("python"), Some(&1));
        assert_eq!(scan.get("json"), Some(&1));
    }

    #[test]
    fn scans_respect_gitignore() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "build/\n").unwrap();
        std::fs::create_dir_all(dir.path().join("build")).unwrap();
        std::fs::create_dir_all(dir.path().join("node_modules/x")).unwrap();
        std::fs::write(dir.path().join("build/gen.c"), "").unwrap();
        std::fs::write(dir.path().join("node_modules/x/i.js"), "").unwrap();
        std::fs::write(dir.path().join("a.c"), "").unwrap();
        let langs = Languages::new(dir.path(), &BTreeMap::new());
        let scan = langs.scan(100);
        assert_eq!(scan.get("c"), Some(&1), "{scan:?}");
        assert_eq!(scan.get("javascript"), None);
    }

    #[test]
    fn server_roots_are_the_nearest_marked_ancestor() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::create_dir_all(ws.join("packages/api/src")).unwrap();
        std::fs::create_dir_all(ws.join("lib")).unwrap();
        std::fs::write(ws.join("pyproject.toml"), "").unwrap();
        std::fs::write(ws.join("packages/api/pyproject.toml"), "").unwrap();
        std::fs::write(ws.join("packages/api/src/m.py"), "").unwrap();
        std::fs::write(ws.join("lib/x.py"), "").unwrap();
        std::fs::write(ws.join("lib/app.nimble"), "").unwrap();
        let m = vec!["pyproject.toml".to_string()];
        assert_eq!(
            server_root(ws, &ws.join("packages/api/src/m.py"), &m),
            ws.join("packages/api")
        );
        assert_eq!(server_root(ws, &ws.join("lib/x.py"), &m), ws);
        assert_eq!(server_root(ws, &ws.join("lib/x.py"), &[]), ws);
        assert_eq!(
            server_root(ws, &ws.join("lib/x.py"), &["*.nimble".to_string()]),
            ws.join("lib")
        );
        // Never above the workspace root, even when a marker is there.
        let inner = ws.join("packages");
        assert_eq!(
            server_root(&inner, &inner.join("api/../x.py"), &["nothing".to_string()]),
            inner
        );
    }
}
