//! Which files may depend on a written file: those whose imports name it (Python's `import`
//! and `from … import`, including relative and parenthesized forms; JavaScript and TypeScript
//! module specifiers of `import`, `export … from`, `require` and `import()`; C and C++
//! `#include`s; Go's `import` of a package of the same module, and every other file of a Go
//! file's own package, which sees its names without importing them), and, one level further, those importing a package or index file that imports
//! it (a re-export). Read from the files' text, over-approximate by name: a file the server
//! then finds unaffected costs one question. (The engine keeps each file's by its version.)

use std::path::{Path, PathBuf};

/// Files read for their imports, at most (larger ones are skipped).
pub const MAX_FILE: u64 = 1 << 20;

/// The family of languages whose files import one another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    Python,
    Script,
    C,
    /// A Go package is a folder: its files are named by it, and import it by module path.
    Go,
}

impl Family {
    /// The lexer's rules for the family (none for C).
    pub fn lang(self) -> Option<crate::lexer::Lang> {
        match self {
            Family::Python => Some(crate::lexer::Lang::Python),
            Family::Script => Some(crate::lexer::Lang::Script),
            Family::Go => Some(crate::lexer::Lang::Go),
            Family::C => None,
        }
    }

    pub fn of(path: &Path) -> Option<Family> {
        let ext = path.extension()?.to_str()?;
        Some(match ext {
            "py" | "pyi" => Family::Python,
            "ts" | "tsx" | "js" | "jsx" | "mjs" | "cjs" | "mts" | "cts" => Family::Script,
            "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" | "ipp" | "inl" => Family::C,
            "go" => Family::Go,
            _ => return None,
        })
    }
}

/// What an import names: a module path as written (`django/utils/dates`, `lib/util`,
/// `geo/shape.h`), matched against the end of a file's path, or a path resolved from the
/// importing file's folder (a relative import), matched whole. Without extension, except for C.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Suffix(String),
    Exact(PathBuf),
}

/// The ways `path` is named by imports: its path without extension (with it, for C), and
/// its folder's for a package's `__init__` or a script folder's `index`.
pub fn keys(path: &Path, family: Family) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if family == Family::C {
        out.push(path.to_path_buf());
        return out;
    }
    if family == Family::Go {
        out.extend(path.parent().map(Path::to_path_buf));
        return out;
    }
    let file = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let stem = file
        .strip_suffix(".d.ts")
        .or_else(|| file.rsplit_once('.').map(|(s, _)| s))
        .unwrap_or(file);
    out.push(path.with_file_name(stem));
    if matches!(stem, "__init__" | "index")
        && let Some(dir) = path.parent()
    {
        out.push(dir.to_path_buf());
    }
    out
}

/// Whether a file re-exports what it imports, so that its importers depend on its imports too.
pub fn reexports(path: &Path) -> bool {
    let stem = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split('.').next())
        .unwrap_or("");
    stem == "__init__" || stem == "index"
}

/// Whether `target` (an import of a file in `root`) names the file with keys `keys`.
pub fn names(target: &Target, root: &Path, keys: &[PathBuf]) -> bool {
    match target {
        Target::Exact(p) => keys.iter().any(|k| k == p),
        Target::Suffix(s) => keys.iter().any(|k| {
            let rel = k.strip_prefix(root).unwrap_or(k);
            let rel = rel.to_string_lossy();
            rel == s.as_str() || rel.ends_with(&format!("/{s}"))
        }),
    }
}

/// `path` with `.` and `..` resolved lexically.
pub fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// What the imports of a file at `path` (in `family`, with text `text`) name.
pub fn imports_of(family: Family, path: &Path, text: &str) -> Vec<Target> {
    let dir = path.parent().unwrap_or(Path::new("/"));
    let mut out = Vec::new();
    match family {
        Family::Python => python(text, dir, &mut out),
        Family::Script => script(text, dir, &mut out),
        Family::C => c(text, dir, &mut out),
        Family::Go => go(text, dir, &mut out),
    }
    out.dedup();
    out
}

/// Go's `import "path"`, `import name "path"` and `import ( … )`: a path under the module of
/// the file's `go.mod` (found from `dir` up) names that module's folder; others (the standard
/// library, other modules) name nothing here.
fn go(text: &str, dir: &Path, out: &mut Vec<Target>) {
    let Some((module_root, module)) = go_module(dir) else {
        return;
    };
    let lexed = crate::lexer::lex(crate::lexer::Lang::Go, text);
    let code = &lexed.masked;
    let mut in_group = false;
    let mut import_strings = Vec::new();
    let mut offset = 0;
    for line in code.split_inclusive('\n') {
        let t = line.trim();
        let start = offset;
        offset += line.len();
        let spec = if in_group {
            if t.starts_with(')') {
                in_group = false;
                continue;
            }
            true
        } else if let Some(rest) = t.strip_prefix("import") {
            let rest = rest.trim_start();
            if rest.starts_with('(') {
                in_group = !rest.contains(')');
                // `import ("a"; "b")` on one line is rare: its strings are taken below.
                !in_group
            } else {
                true
            }
        } else {
            // Imports come first: the first declaration ends them.
            if t.starts_with("func") || t.starts_with("type") || t.starts_with("var") {
                break;
            }
            false
        };
        if spec {
            for r in &lexed.strings {
                if r.start >= start && r.end <= offset {
                    import_strings.push(r.clone());
                }
            }
        }
    }
    for r in import_strings {
        let path = text[r].trim_matches(['"', '`']);
        let rest = if path == module {
            Some("")
        } else {
            path.strip_prefix(&module).and_then(|r| r.strip_prefix('/'))
        };
        if let Some(rest) = rest {
            out.push(Target::Exact(normal(&module_root.join(rest))));
        }
    }
}

/// The folder of the `go.mod` nearest above `dir` and the module path it declares.
fn go_module(dir: &Path) -> Option<(PathBuf, String)> {
    for d in dir.ancestors().take(32) {
        let Ok(bytes) = lspgate_base::regular::read(&d.join("go.mod"), true) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let module = text.lines().find_map(|l| {
            let rest = l.trim().strip_prefix("module")?;
            rest.starts_with(char::is_whitespace)
                .then(|| rest.trim().trim_matches('"').to_string())
        })?;
        return Some((normal(d), module));
    }
    None
}

/// Python statements that import: `import a.b [as x], c` and `from [.]a.b import c, d`
/// (continued by parentheses or backslashes).
fn python(text: &str, dir: &Path, out: &mut Vec<Target>) {
    // Read as code: a docstring's or a string's words, and comments, import nothing (an import
    // statement holds no string literal).
    let text = crate::lexer::lex(crate::lexer::Lang::Python, text).masked;
    // `import a; import b` and `if TYPE_CHECKING: from m import X` hold statements after the
    // first: each its own line.
    let text = text
        .replace(';', "\n")
        .replace(": from ", ":\nfrom ")
        .replace(": import ", ":\nimport ");
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if !(t.starts_with("import ") || t.starts_with("from ")) {
            continue;
        }
        // Each line's comment goes before the lines are joined.
        let uncomment = |l: &str| l.split('#').next().unwrap_or("").to_string();
        let mut stmt = uncomment(t);
        let mut open = stmt.contains('(') && !stmt.contains(')');
        while open || stmt.trim_end().ends_with('\\') {
            let Some(next) = lines.next() else { break };
            let next = uncomment(next);
            stmt = stmt.trim_end().trim_end_matches('\\').to_string();
            stmt.push(' ');
            stmt.push_str(&next);
            open = open && !next.contains(')');
        }
        let stmt = stmt.replace(['(', ')'], " ");
        let names = |list: &str| -> Vec<String> {
            list.split(',')
                .filter_map(|n| n.split_whitespace().next())
                .filter(|n| *n != "*")
                .map(str::to_string)
                .collect()
        };
        if let Some(rest) = stmt.strip_prefix("import ") {
            for m in names(rest) {
                let parts: Vec<&str> = m.split('.').collect();
                for i in 1..=parts.len() {
                    out.push(Target::Suffix(parts[..i].join("/")));
                }
            }
        } else if let Some(rest) = stmt.strip_prefix("from ") {
            let Some((module, imported)) = rest.split_once(" import ") else {
                continue;
            };
            let module = module.trim();
            let dots = module.chars().take_while(|c| *c == '.').count();
            let named = &module[dots..];
            let base: Option<PathBuf> = (dots > 0).then(|| {
                let mut b = dir.to_path_buf();
                for _ in 1..dots {
                    b.pop();
                }
                if named.is_empty() {
                    b
                } else {
                    b.join(named.replace('.', "/"))
                }
            });
            match base {
                Some(b) => {
                    out.push(Target::Exact(normal(&b)));
                    for n in names(imported) {
                        out.push(Target::Exact(normal(&b.join(n))));
                    }
                }
                None => {
                    let m = named.replace('.', "/");
                    out.push(Target::Suffix(m.clone()));
                    for n in names(imported) {
                        out.push(Target::Suffix(format!("{m}/{n}")));
                    }
                }
            }
        }
    }
}

/// JavaScript and TypeScript module specifiers on lines that import or re-export.
fn script(text: &str, dir: &Path, out: &mut Vec<Target>) {
    // Comments (a commented-out import) import nothing; the specifiers are strings, kept.
    let text = crate::lexer::lex(crate::lexer::Lang::Script, text).uncommented;
    for spec in script_specifiers(&text) {
        specifier(spec, dir, out);
    }
}

/// The quoted strings of lines that import or re-export (`from`, `require`, `import`), as
/// written: a file's module specifiers, over-approximate.
pub fn script_specifiers(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        if !(line.contains("from") || line.contains("require") || line.contains("import")) {
            continue;
        }
        let mut rest = line;
        while let Some(start) = rest.find(['\'', '"', '`']) {
            let quote = rest.as_bytes()[start] as char;
            let after = &rest[start + 1..];
            let Some(end) = after.find(quote) else { break };
            out.push(&after[..end]);
            rest = &after[end + 1..];
        }
    }
    out
}

/// A module specifier without its script extension, and the file it names when it is relative
/// (resolved from `dir`; `None` for a bare specifier).
pub fn script_module<'a>(spec: &'a str, dir: &Path) -> (&'a str, Option<PathBuf>) {
    let bare = ["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"]
        .iter()
        .find_map(|e| spec.strip_suffix(&format!(".{e}")))
        .unwrap_or(spec);
    let relative = bare.starts_with("./") || bare.starts_with("../") || bare == "." || bare == "..";
    (bare, relative.then(|| normal(&dir.join(bare))))
}

/// A module specifier, its script extension left off: relative ones resolved from `dir`.
fn specifier(spec: &str, dir: &Path, out: &mut Vec<Target>) {
    if spec.is_empty() || spec.contains(' ') {
        return;
    }
    let (bare, relative) = script_module(spec, dir);
    if let Some(path) = relative {
        out.push(Target::Exact(path));
    } else {
        // Path aliases (`@/lib/math`, `~/lib/math`, `#lib/math`): the rest, by suffix.
        let rest = ["@/", "~/", "#/", "#", "@"]
            .iter()
            .find_map(|p| bare.strip_prefix(p))
            .unwrap_or(bare);
        out.push(Target::Suffix(rest.to_string()));
    }
}

/// `#include "x.h"` (from the file's folder, or anywhere by suffix) and `#include <x.h>`.
fn c(text: &str, dir: &Path, out: &mut Vec<Target>) {
    for line in text.lines() {
        let t = line.trim_start();
        let Some(rest) = t.strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("include") else {
            continue;
        };
        let rest = rest.trim();
        if let Some(inc) = rest.strip_prefix('"').and_then(|r| r.split('"').next()) {
            out.push(Target::Exact(normal(&dir.join(inc))));
            out.push(Target::Suffix(inc.to_string()));
        } else if let Some(inc) = rest.strip_prefix('<').and_then(|r| r.split('>').next()) {
            out.push(Target::Suffix(inc.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_imports_resolve_absolute_and_relative_forms() {
        let dir = Path::new("/r/pkg/sub");
        let text = "import os, a.b.util as u\nfrom .models import User\nfrom .. import (\n  helpers,  # noqa\n  other)\n\
                    from z.y import \\\n  cont\nx = 1  # import nothing\n";
        let got = imports_of(Family::Python, &dir.join("m.py"), text);
        for t in [
            Target::Suffix("os".into()),
            Target::Suffix("a/b/util".into()),
            Target::Exact("/r/pkg/sub/models".into()),
            Target::Exact("/r/pkg/sub/models/User".into()),
            Target::Exact("/r/pkg".into()),
            Target::Exact("/r/pkg/helpers".into()),
            Target::Exact("/r/pkg/other".into()),
            Target::Suffix("z/y/cont".into()),
        ] {
            assert!(got.contains(&t), "{t:?} in {got:?}");
        }
        assert!(
            !got.iter()
                .any(|t| matches!(t, Target::Suffix(s) if s.contains("nothing")))
        );
        // A docstring's or a string's words and a comment import nothing.
        let text = "\"\"\"Usage:\nfrom secret import key\nimport hidden\n\"\"\"\nx = 'import quoted'\n# import commented\nimport real\n";
        let got = imports_of(Family::Python, &dir.join("m.py"), text);
        assert_eq!(got, [Target::Suffix("real".into())]);
        let got = imports_of(
            Family::Script,
            &dir.join("m.ts"),
            "// import { a } from './commented';\n/* import b from './block' */\nimport c from './real';\n",
        );
        assert_eq!(got, [Target::Exact("/r/pkg/sub/real".into())]);
        let root = Path::new("/r");
        let util = keys(Path::new("/r/src/a/b/util.py"), Family::Python);
        assert!(names(&Target::Suffix("a/b/util".into()), root, &util));
        assert!(!names(&Target::Suffix("b/util2".into()), root, &util));
        assert!(!names(&Target::Suffix("xa/b/util".into()), root, &util));
        let init = keys(Path::new("/r/pkg/__init__.py"), Family::Python);
        assert!(names(&Target::Exact("/r/pkg".into()), root, &init));
        // Statements after the first on a line.
        let got = imports_of(
            Family::Python,
            &dir.join("m.py"),
            "import os; import mymod\nif TYPE_CHECKING: from .types import T\n",
        );
        assert!(got.contains(&Target::Suffix("mymod".into())), "{got:?}");
        assert!(got.contains(&Target::Suffix("os".into())), "{got:?}");
        assert!(
            got.contains(&Target::Exact("/r/pkg/sub/types".into())),
            "{got:?}"
        );
    }

    #[test]
    fn script_and_c_imports_resolve_from_their_folder() {
        let dir = Path::new("/r/src");
        let text = "import { a } from './lib/util.js';\nexport * from \"../core\";\n\
                    const x = require('pkg/dep');\nconst s = 'from nowhere';\n";
        let got = imports_of(Family::Script, &dir.join("m.ts"), text);
        assert!(
            got.contains(&Target::Exact("/r/src/lib/util".into())),
            "{got:?}"
        );
        assert!(got.contains(&Target::Exact("/r/core".into())), "{got:?}");
        assert!(got.contains(&Target::Suffix("pkg/dep".into())), "{got:?}");
        let alias = imports_of(
            Family::Script,
            &dir.join("m.ts"),
            "import {x} from \"@/lib/math\";\n",
        );
        assert_eq!(alias, vec![Target::Suffix("lib/math".into())]);
        let math = keys(Path::new("/r/src/lib/math.ts"), Family::Script);
        assert!(names(&alias[0], Path::new("/r"), &math));
        let index = keys(Path::new("/r/core/index.ts"), Family::Script);
        assert!(names(
            &Target::Exact("/r/core".into()),
            Path::new("/r"),
            &index
        ));
        let c = imports_of(
            Family::C,
            &dir.join("m.c"),
            "#include \"geo/shape.h\"\n# include <vector>\n",
        );
        assert!(
            c.contains(&Target::Exact("/r/src/geo/shape.h".into())),
            "{c:?}"
        );
        assert!(c.contains(&Target::Suffix("vector".into())), "{c:?}");
    }
}
