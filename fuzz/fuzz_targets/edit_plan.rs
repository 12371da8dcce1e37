//! Fuzz target: a server's workspace edit, from raw JSON (`lsp::workspace_edit`, both forms,
//! resource operations included) to a plan (`ops::edit::plan_workspace_edit`) against a temp
//! root holding UTF-8 and non-UTF-8 files, a folder, symlinks in and out, dangling ones and a
//! loop, with a secret file beside the root. Checks: never a panic; a plan only names
//! canonical paths inside the root (no symlink on the way, no `..`), with each file's content
//! before as the disk has it; anything else is refused with an error code of docs/protocol.md. Inputs are either
//! structured (paths picked from the tricky ones, or arbitrary URIs) or raw JSON in which
//! `$ROOT` stands for the root.

#![no_main]

use std::os::unix::fs::symlink;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use lspgate::error::Code;
use lspgate::text::Encoding;
use lspgate::workspace::Root;
use serde_json::{Value, json};

/// Paths under the root, as a server might name them.
const KNOWN: &[&str] = &[
    "a.txt",
    "u.txt",
    "sub/b.txt",
    "sub",
    "bin.dat",
    "empty.txt",
    "new.txt",
    "sub/new/deep.txt",
    "link_out",
    "link_out/secret.txt",
    "link_secret",
    "link_in",
    "dangling_out",
    "dangling_in",
    "loop1",
    "sub/up/a.txt",
    "sub/escape/secret.txt",
    "../outside/secret.txt",
    "sub/../../outside/x.txt",
    "%2e%2e/outside/secret.txt",
    "sub%2F..%2F..%2Foutside%2Fsecret.txt",
    "a.txt/child",
    "",
    ".",
    "caf\u{e9} space.txt",
];

struct Fixture {
    root: Root,
    outside: PathBuf,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("lspgate-fuzz-plan-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("root");
        let outside = base.join("outside");
        let w = |p: &Path, b: &[u8]| std::fs::write(p, b).expect("fixture file");
        std::fs::create_dir_all(root.join("sub")).expect("fixture dir");
        std::fs::create_dir_all(&outside).expect("fixture dir");
        w(&outside.join("secret.txt"), b"secret\n");
        w(
            &root.join("a.txt"),
            b"def f(x):\n    return x + 1\n\nprint(f(2))\n",
        );
        w(
            &root.join("u.txt"),
            "let s = \"😀\"; total\r\n名前 = 1\r\n\te\u{301}x\rlast".as_bytes(),
        );
        w(&root.join("sub/b.txt"), b"b\n");
        w(&root.join("bin.dat"), &[0xff, 0xfe, 0, b'\n']);
        w(&root.join("empty.txt"), b"");
        w(&root.join("caf\u{e9} space.txt"), b"x\n");
        let l = |target: &str, at: &str| symlink(target, root.join(at)).expect("fixture link");
        l("../outside", "link_out");
        l("../outside/secret.txt", "link_secret");
        l("a.txt", "link_in");
        l("../outside/nothing-yet.txt", "dangling_out");
        l("sub/later.txt", "dangling_in");
        l("loop2", "loop1");
        l("loop1", "loop2");
        l("..", "sub/up");
        l("../../outside", "sub/escape");
        Fixture {
            root: Root::new(&root).expect("fixture root"),
            outside,
        }
    })
}

#[derive(Arbitrary, Debug)]
enum Target {
    /// A known path, as `file://ROOT/path` (not percent-encoded).
    Known(u8),
    /// A known path made into a URI by `Url::from_file_path`.
    Path(u8),
    /// Arbitrary text after a known path.
    Under(u8, String),
    /// Any URI at all.
    Uri(String),
}

#[derive(Arbitrary, Debug)]
struct Edit {
    start: (u8, u16),
    end: (u8, u16),
    huge_end: bool,
    new_text: String,
    annotated: bool,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Edit {
        target: Target,
        version: Option<i32>,
        edits: Vec<Edit>,
    },
    Create {
        target: Target,
        overwrite: Option<bool>,
        ignore_if_exists: Option<bool>,
    },
    Rename {
        old: Target,
        new: Target,
        overwrite: Option<bool>,
        ignore_if_exists: Option<bool>,
    },
    Delete {
        target: Target,
        recursive: Option<bool>,
        ignore_if_not_exists: Option<bool>,
    },
}

#[derive(Arbitrary, Debug)]
struct Structured {
    enc: u8,
    open_version: Option<i32>,
    changes_form: bool,
    ops: Vec<Op>,
}

fn uri(root: &Path, t: &Target) -> String {
    let known = |i: &u8| KNOWN[*i as usize % KNOWN.len()];
    match t {
        Target::Known(i) => format!("file://{}/{}", root.display(), known(i)),
        Target::Path(i) => url::Url::from_file_path(root.join(known(i)))
            .map(String::from)
            .unwrap_or_default(),
        Target::Under(i, s) => format!("file://{}/{}/{s}", root.display(), known(i)),
        Target::Uri(s) => s.clone(),
    }
}

fn edit_json(root: &Path, op: &Op) -> Option<Value> {
    Some(match op {
        Op::Edit {
            target,
            version,
            edits,
        } => json!({
            "textDocument": {"uri": uri(root, target), "version": version},
            "edits": edits.iter().map(text_edit).collect::<Vec<_>>(),
        }),
        Op::Create {
            target,
            overwrite,
            ignore_if_exists,
        } => json!({
            "kind": "create", "uri": uri(root, target),
            "options": {"overwrite": overwrite, "ignoreIfExists": ignore_if_exists},
        }),
        Op::Rename {
            old,
            new,
            overwrite,
            ignore_if_exists,
        } => json!({
            "kind": "rename", "oldUri": uri(root, old), "newUri": uri(root, new),
            "options": {"overwrite": overwrite, "ignoreIfExists": ignore_if_exists},
        }),
        Op::Delete {
            target,
            recursive,
            ignore_if_not_exists,
        } => json!({
            "kind": "delete", "uri": uri(root, target),
            "options": {"recursive": recursive, "ignoreIfNotExists": ignore_if_not_exists},
        }),
    })
}

fn text_edit(e: &Edit) -> Value {
    let end_char = if e.huge_end {
        u32::MAX
    } else {
        u32::from(e.end.1)
    };
    let mut v = json!({
        "range": {
            "start": {"line": e.start.0, "character": e.start.1},
            "end": {"line": e.end.0, "character": end_char},
        },
        "newText": e.new_text,
    });
    if e.annotated {
        v["annotationId"] = json!("fuzz");
    }
    v
}

fn workspace_edit(root: &Path, s: &Structured) -> Value {
    if s.changes_form {
        let mut changes = serde_json::Map::new();
        for op in &s.ops {
            if let Op::Edit { target, edits, .. } = op {
                changes.insert(
                    uri(root, target),
                    Value::Array(edits.iter().map(text_edit).collect()),
                );
            }
        }
        json!({ "changes": changes })
    } else {
        json!({ "documentChanges": s.ops.iter().filter_map(|o| edit_json(root, o)).collect::<Vec<_>>() })
    }
}

/// The plan's paths are canonical and inside the root: under it, no `..` or `.`, no symlink
/// at any existing step; and each `before` is what the disk holds.
fn check_plan(f: &Fixture, plan: &lspgate::edits::Plan) {
    let root = f.root.path();
    for c in &plan.changes {
        let p = &c.path;
        assert!(
            p.starts_with(root),
            "{} is outside {}",
            p.display(),
            root.display()
        );
        assert!(!p.starts_with(&f.outside));
        assert!(
            p.components()
                .all(|c| matches!(c, Component::RootDir | Component::Normal(_))),
            "not canonical: {}",
            p.display()
        );
        let mut at = PathBuf::from(root);
        for part in p.strip_prefix(root).expect("under the root").components() {
            at.push(part);
            if let Ok(m) = std::fs::symlink_metadata(&at) {
                assert!(
                    !m.file_type().is_symlink(),
                    "a symlink on the way: {}",
                    at.display()
                );
            }
        }
        match std::fs::read(p) {
            Ok(b) => assert_eq!(c.before.as_deref(), Some(b.as_slice()), "{}", p.display()),
            Err(e) => {
                assert_eq!(
                    e.kind(),
                    std::io::ErrorKind::NotFound,
                    "{}: {e}",
                    p.display()
                );
                assert!(c.before.is_none());
            }
        }
        assert_ne!(c.before, c.after);
    }
    let _ = lspgate::edits::diff(plan, |p| f.root.relative(p));
}

fuzz_target!(|data: &[u8]| {
    let f = fixture();
    let root = f.root.path();
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (value, enc, open_version) = if mode % 2 == 0 {
        let Ok(s) = Structured::arbitrary_take_rest(Unstructured::new(rest)) else {
            return;
        };
        (workspace_edit(root, &s), s.enc, s.open_version)
    } else {
        let Ok(text) = std::str::from_utf8(rest) else {
            return;
        };
        let text = text.replace("$ROOT", &root.display().to_string());
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            return;
        };
        (v, mode / 2, Some(i32::from(mode / 4)))
    };
    let enc = [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32][enc as usize % 3];
    let Ok(ops) = lspgate::lsp::workspace_edit(value) else {
        return;
    };
    let a_txt = root.join("a.txt");
    match lspgate::ops::edit::plan_workspace_edit(
        &f.root,
        enc,
        |p| (p == a_txt).then_some(open_version).flatten(),
        &ops,
    ) {
        Ok(plan) => check_plan(f, &plan),
        Err(e) => assert!(
            matches!(
                e.code,
                Code::OutsideRoot
                    | Code::InvalidParams
                    | Code::ServerError
                    | Code::RevisionConflict
                    | Code::FileNotFound
            ),
            "{e:?}"
        ),
    }
});
