//! What the workspace watcher leaves alone: version-control and dependency folders, build
//! output, virtualenvs, lspgate's own state, and whatever the workspace's .gitignore files say.

use std::path::{Path, PathBuf};

use ignore::Match;
use ignore::gitignore::Gitignore;

/// Folder names never watched, wherever they are.
const SKIPPED_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".jj",
    ".lspgate",
    "node_modules",
    "target",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
];

/// Decides which folders are watched and which file events count.
pub struct Filter {
    root: PathBuf,
    /// Folders never watched (lspgate's state folder, wherever `--state` puts it).
    skip: Vec<PathBuf>,
    /// The .gitignore files found, each with the folder it applies to, deepest last.
    gitignores: Vec<(PathBuf, Gitignore)>,
}

impl Filter {
    pub fn new(root: &Path, skip: Vec<PathBuf>) -> Filter {
        Filter {
            root: root.to_path_buf(),
            skip,
            gitignores: Vec::new(),
        }
    }

    /// Whether a folder (not the root) is left alone: by name, by path, as a virtualenv, or by
    /// a .gitignore.
    pub fn skips_dir(&self, dir: &Path) -> bool {
        if dir == self.root {
            return false;
        }
        let named = dir
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| SKIPPED_DIRS.contains(&n));
        named
            || self.skip.iter().any(|s| dir.starts_with(s))
            || dir.join("pyvenv.cfg").is_file()
            || self.ignored(dir, true)
    }

    /// Whether a file event at `path` is left alone: inside a skipped folder, or ignored by a
    /// .gitignore.
    pub fn skips_file(&self, path: &Path) -> bool {
        let Ok(rel) = path.strip_prefix(&self.root) else {
            return true;
        };
        let mut dir = self.root.clone();
        if let Some(parent) = rel.parent() {
            for c in parent.components() {
                dir.push(c);
                let name = c.as_os_str().to_str().unwrap_or("");
                if SKIPPED_DIRS.contains(&name) || self.skip.iter().any(|s| dir.starts_with(s)) {
                    return true;
                }
            }
        }
        self.ignored(path, false)
    }

    /// What the .gitignore files say of `path`: the deepest one that has an opinion wins.
    fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        for (dir, gi) in self.gitignores.iter().rev() {
            if !path.starts_with(dir) {
                continue;
            }
            match gi.matched_path_or_any_parents(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }

    /// Reads (or re-reads, or forgets) the .gitignore of `dir`.
    pub fn load_gitignore(&mut self, dir: &Path) {
        self.gitignores.retain(|(d, _)| d != dir);
        let file = dir.join(".gitignore");
        if !file.is_file() {
            return;
        }
        let (gi, err) = Gitignore::new(&file);
        if let Some(e) = err {
            tracing::debug!("{}: {e}", file.display());
        }
        self.gitignores.push((dir.to_path_buf(), gi));
        // Shallow folders first, so the deepest is consulted first (iterated in reverse).
        self.gitignores.sort_by_key(|(d, _)| d.components().count());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_tooling_folders_virtualenvs_state_and_gitignored_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for d in ["src", "node_modules", "env", "build", "keep", ".state"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("env/pyvenv.cfg"), "home = /usr\n").unwrap();
        std::fs::write(root.join(".gitignore"), "build/\n*.log\n").unwrap();
        std::fs::write(root.join("src/.gitignore"), "gen_*.py\n!gen_keep.py\n").unwrap();
        let mut f = Filter::new(&root, vec![root.join(".state")]);
        f.load_gitignore(&root);
        f.load_gitignore(&root.join("src"));

        assert!(!f.skips_dir(&root));
        assert!(!f.skips_dir(&root.join("src")));
        assert!(!f.skips_dir(&root.join("keep")));
        assert!(f.skips_dir(&root.join("node_modules")));
        assert!(f.skips_dir(&root.join("env")), "a virtualenv");
        assert!(f.skips_dir(&root.join("build")), "gitignored");
        assert!(f.skips_dir(&root.join(".state")), "lspgate's state");

        assert!(!f.skips_file(&root.join("src/a.py")));
        assert!(f.skips_file(&root.join("run.log")));
        assert!(
            f.skips_file(&root.join("src/gen_x.py")),
            "nested .gitignore"
        );
        assert!(
            !f.skips_file(&root.join("src/gen_keep.py")),
            "its whitelist"
        );
        assert!(f.skips_file(&root.join("node_modules/x/index.js")));
        assert!(f.skips_file(&root.join(".git/index")));
        assert!(f.skips_file(Path::new("/elsewhere/a.py")));
    }
}
