//! The workspace: its root and path confinement, language detection, and the servers that serve
//! each language (built-in presets or one explicit command).

pub mod presets;

use std::path::{Component, Path, PathBuf};

use crate::error::{Code, ToolError};

/// The canonical workspace root. Every path an agent names is resolved through it.
#[derive(Debug, Clone)]
pub struct Root {
    path: PathBuf,
}

impl Root {
    pub fn new(dir: &Path) -> Result<Root, ToolError> {
        let path = dir.canonicalize().map_err(|e| {
            ToolError::new(
                Code::FileNotFound,
                format!("workspace root {}: {e}", dir.display()),
            )
        })?;
        if !path.is_dir() {
            return Err(ToolError::invalid(format!(
                "workspace root {} is not a directory",
                path.display()
            )));
        }
        Ok(Root { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Resolves an agent's `file` (root-relative, absolute, or `file://` URI) to a canonical path
    /// inside the root. Symlinks and `..` that lead out are `outside_root`; a missing file is
    /// `file_not_found`.
    pub fn resolve(&self, file: &str) -> Result<PathBuf, ToolError> {
        if file.trim().is_empty() {
            return Err(ToolError::invalid("`file` is empty"));
        }
        let given = if file.starts_with("file:") {
            url::Url::parse(file)
                .ok()
                .and_then(|u| u.to_file_path().ok())
                .ok_or_else(|| ToolError::invalid(format!("`{file}` is not a valid file URI")))?
        } else {
            PathBuf::from(file)
        };
        let joined = if given.is_absolute() {
            given
        } else {
            self.path.join(given)
        };
        let lexical = normalize(&joined);
        match lexical.canonicalize() {
            Ok(real) => {
                if real.starts_with(&self.path) {
                    Ok(real)
                } else {
                    Err(self.outside(file))
                }
            }
            Err(_) => {
                // Missing: confine what exists of it, then say it is not there.
                let mut probe = lexical.as_path();
                while let Some(parent) = probe.parent() {
                    if let Ok(real) = parent.canonicalize() {
                        if !real.starts_with(&self.path) {
                            return Err(self.outside(file));
                        }
                        break;
                    }
                    probe = parent;
                }
                if !lexical.starts_with(&self.path) {
                    return Err(self.outside(file));
                }
                Err(ToolError::new(
                    Code::FileNotFound,
                    format!("no file `{file}` in the workspace"),
                )
                .with_data(serde_json::json!({"file": file})))
            }
        }
    }

    fn outside(&self, file: &str) -> ToolError {
        ToolError::new(
            Code::OutsideRoot,
            format!(
                "`{file}` is outside the workspace root {}",
                self.path.display()
            ),
        )
        .with_data(serde_json::json!({"file": file, "root": self.path}))
    }

    /// The root-relative form of a path for output (with `/`); absolute if outside the root.
    pub fn relative(&self, path: &Path) -> String {
        match path.strip_prefix(&self.path) {
            Ok(rel) => rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }
}

/// Removes `.` and resolves `..` lexically (the canonical check follows).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The language of a file on disk (reads its first line only when it has no extension).
pub fn detect_language(path: &Path) -> &'static str {
    if path.extension().is_some() {
        return language_of(path, "");
    }
    use std::io::Read;
    let mut buf = [0u8; 256];
    let n = std::fs::File::open(path)
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
    fn paths_are_confined_to_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root_dir = dir.path().join("ws");
        std::fs::create_dir_all(root_dir.join("src")).unwrap();
        std::fs::write(root_dir.join("src/a b.py"), "x = 1\n").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "s").unwrap();
        let root = Root::new(&root_dir).unwrap();
        let a = root.resolve("src/a b.py").unwrap();
        assert_eq!(root.relative(&a), "src/a b.py");
        let uri = url::Url::from_file_path(&a).unwrap().to_string();
        assert!(uri.contains("a%20b.py"));
        assert_eq!(root.resolve(&uri).unwrap(), a);
        assert_eq!(root.resolve(a.to_str().unwrap()).unwrap(), a);
        assert_eq!(
            root.resolve("../secret.txt").unwrap_err().code,
            Code::OutsideRoot
        );
        assert_eq!(
            root.resolve("src/../../secret.txt").unwrap_err().code,
            Code::OutsideRoot
        );
        assert_eq!(
            root.resolve("/etc/passwd").unwrap_err().code,
            Code::OutsideRoot
        );
        assert_eq!(
            root.resolve("../nope.py").unwrap_err().code,
            Code::OutsideRoot
        );
        assert_eq!(
            root.resolve("src/nope.py").unwrap_err().code,
            Code::FileNotFound
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret.txt"), root_dir.join("link"))
                .unwrap();
            assert_eq!(root.resolve("link").unwrap_err().code, Code::OutsideRoot);
        }
    }
}
