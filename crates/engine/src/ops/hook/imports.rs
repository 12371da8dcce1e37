//! Each file's imports, kept by the file's version (read again only when it changed), and the
//! files that may depend on a written one through them (`lspgate_analysis::imports` reads them
//! from the text).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub(crate) use lspgate_analysis::imports::{
    Family, MAX_FILE, Target, imports_of, keys, names, reexports, script_module, script_specifiers,
};

use crate::watch::FileVersion;

/// A file's imports, as of its version.
type Known = (FileVersion, Arc<Vec<Target>>);

/// Each file's imports, by the file's version (read again only when it changed).
#[derive(Default)]
pub struct Imports {
    files: Mutex<HashMap<PathBuf, Known>>,
}

impl Imports {
    /// The files among `tree` (a walk of `root`) that may depend on `written`: those importing
    /// a written file, and those importing a re-exporting one of them. In path order, the
    /// written files left out. Blocking (reads files).
    pub fn dependents(&self, root: &Path, tree: &[PathBuf], written: &[PathBuf]) -> Vec<PathBuf> {
        let skip: HashSet<&PathBuf> = written.iter().collect();
        let first = self.importers(root, tree, written, &skip);
        let again: Vec<PathBuf> = first.iter().filter(|f| reexports(f)).cloned().collect();
        let mut all: BTreeSet<PathBuf> = first.into_iter().collect();
        if !again.is_empty() {
            all.extend(self.importers(root, tree, &again, &skip));
        }
        all.into_iter().collect()
    }

    fn importers(
        &self,
        root: &Path,
        tree: &[PathBuf],
        of: &[PathBuf],
        skip: &HashSet<&PathBuf>,
    ) -> Vec<PathBuf> {
        let wanted: Vec<(Family, Vec<PathBuf>)> = of
            .iter()
            .filter_map(|p| Family::of(p).map(|f| (f, keys(p, f))))
            .collect();
        if wanted.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for path in tree {
            let Some(family) = Family::of(path) else {
                continue;
            };
            if skip.contains(path) || !wanted.iter().any(|(f, _)| *f == family) {
                continue;
            }
            // A Go file sees its own package's names unimported.
            let same_package = family == Family::Go
                && path.parent().is_some_and(|dir| {
                    wanted
                        .iter()
                        .any(|(f, keys)| *f == Family::Go && keys.iter().any(|k| k == dir))
                });
            let hit = same_package || {
                let targets = self.targets(path, family);
                wanted
                    .iter()
                    .filter(|(f, _)| *f == family)
                    .any(|(_, keys)| targets.iter().any(|t| names(t, root, keys)))
            };
            if hit {
                out.push(path.clone());
            }
        }
        out
    }

    /// `path`'s imports, read again only when its version moved.
    // Not a read inside a root for an answer: a file of the root's walk (which follows no link), checked by symlink_metadata to be a regular file of bounded size.
    #[allow(clippy::disallowed_methods)]
    fn targets(&self, path: &Path, family: Family) -> Arc<Vec<Target>> {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return Arc::default();
        };
        if !meta.is_file() || meta.len() > MAX_FILE {
            return Arc::default();
        }
        let version = FileVersion::of(&meta);
        if let Ok(files) = self.files.lock()
            && let Some((v, targets)) = files.get(path)
            && *v == version
        {
            return targets.clone();
        }
        let Ok(bytes) = std::fs::read(path) else {
            return Arc::default();
        };
        let targets = Arc::new(imports_of(family, path, &String::from_utf8_lossy(&bytes)));
        if let Ok(mut files) = self.files.lock() {
            files.insert(path.to_path_buf(), (version, targets.clone()));
        }
        targets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_imports_name_their_modules_folders_and_a_package_its_own_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let files = [
            ("go.mod", "module example.com/m\n\ngo 1.22\n"),
            ("a.go", "package m\n\nfunc Total(x int) int { return x }\n"),
            ("b.go", "package m\n\nvar n = Total(1)\n"),
            (
                "doc/doc.go",
                "package doc\n\nimport (\n\t\"fmt\"\n\tm \"example.com/m\"\n)\n\nvar s = fmt.Sprint(m.Total(2))\n",
            ),
            (
                "util/u.go",
                "package util\n\nimport \"example.com/m/doc\" // `x`\n\nvar _ = doc.X\n",
            ),
            (
                "other/o.go",
                "package other\n\nimport \"strings\"\n\nvar _ = strings.ToUpper\n",
            ),
        ];
        for (p, t) in files {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, t).unwrap();
        }
        let targets = imports_of(Family::Go, &root.join("doc/doc.go"), files[3].1);
        assert_eq!(targets, [Target::Exact(root.clone())]);
        let targets = imports_of(Family::Go, &root.join("util/u.go"), files[4].1);
        assert_eq!(targets, [Target::Exact(root.join("doc"))]);
        let tree: Vec<PathBuf> = files.iter().map(|(p, _)| root.join(p)).collect();
        let deps = Imports::default().dependents(&root, &tree, &[root.join("a.go")]);
        assert_eq!(deps, [root.join("b.go"), root.join("doc/doc.go")]);
    }

    #[test]
    fn importers_are_found_through_a_reexporting_package_and_no_others() {
        let dir = tempfile::Builder::new()
            .prefix("imports")
            .tempdir()
            .unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::create_dir_all(root.join("other")).unwrap();
        let write = |p: &str, t: &str| std::fs::write(root.join(p), t).unwrap();
        write("pkg/core.py", "def f() -> int: return 1\n");
        write("pkg/__init__.py", "from .core import f\n");
        write("user.py", "from pkg import f\n");
        write("direct.py", "from pkg.core import f\n");
        write("other/core.py", "x = 1\n");
        write("other/user.py", "from .core import x\n");
        write("unrelated.py", "import os\n");
        let tree = crate::workspace::walk(root, 100);
        let deps = Imports::default().dependents(root, &tree, &[root.join("pkg/core.py")]);
        let rel: Vec<String> = deps
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        assert_eq!(rel, vec!["direct.py", "pkg/__init__.py", "user.py"]);
    }
}
