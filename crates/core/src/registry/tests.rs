//! The registry's routing and lifecycle, without servers of real use: presets by what is
//! found, config overrides, register/replace/remove, one start for concurrent first uses.

use super::*;
use crate::error::Kind;
use crate::workspace::config::Config;
use crate::workspace::trust::Untrusted;
use std::path::Path;

fn opts() -> RegistryOptions {
    RegistryOptions {
        open_documents: 10,
        request_timeout: Duration::from_secs(1),
        ..RegistryOptions::default()
    }
}

fn registry(config: &str, found: &[&str]) -> (tempfile::TempDir, Arc<Registry>) {
    registry_trusted(config, found, true)
}

/// `registry`, its lspgate.toml trusted or not (never trusted: no record can match).
fn registry_trusted(
    config: &str,
    found: &[&str],
    trusted: bool,
) -> (tempfile::TempDir, Arc<Registry>) {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path()).unwrap();
    let mut config = Config::parse(config, Path::new("lspgate.toml")).unwrap();
    if !trusted {
        let u = Untrusted {
            config: root.path().join("lspgate.toml"),
            root: root.path().to_path_buf(),
            digest: "not a digest".into(),
            changed: false,
        };
        config.untrusted = Some(u.clone());
        config.workspace = Some(u);
    }
    let found: Vec<String> = found.iter().map(|s| s.to_string()).collect();
    let reg = Registry::with_config_using(root, &config, opts(), |p| {
        found
            .iter()
            .any(|f| f == p.short_name())
            .then(|| PathBuf::from(format!("/bin/{}", p.command)))
    });
    (dir, reg)
}

#[test]
fn presets_take_the_first_found_per_language_and_companions_join() {
    let (_d, reg) = registry("", &["pylsp", "basedpyright", "ruff", "clangd"]);
    // pyright is missing: basedpyright (next in preference) serves python, pylsp does not.
    assert_eq!(
        reg.by_language("python"),
        ["builtin/basedpyright", "builtin/ruff"]
    );
    assert_eq!(reg.by_language("c"), ["builtin/clangd"]);
    // A language nobody found keeps its first missing preset, to say how to install it.
    assert_eq!(
        reg.by_language("typescript"),
        ["builtin/typescript-language-server"]
    );
    assert!(reg.by_language("cobol").is_empty());
}

#[test]
fn config_servers_come_first_and_override_presets_by_name() {
    let (_d, reg) = registry(
        "[[server]]\nname = \"local/fast-c\"\ncommand = \"x\"\nlanguages = [\"c\"]\n\n\
         [[server]]\nname = \"builtin/pyright\"\ncommand = \"my-pyright\"\nlanguages = [\"python\"]\n",
        &["pyright", "clangd"],
    );
    assert_eq!(reg.by_language("c"), ["local/fast-c"]);
    // clangd still serves what the config left to it.
    assert_eq!(reg.by_language("cpp"), ["builtin/clangd"]);
    assert_eq!(reg.by_language("python"), ["builtin/pyright"]);
    assert_eq!(reg.by_namespace("local"), ["local/fast-c"]);
    let list = reg.list();
    assert_eq!(&list[..2], ["local/fast-c", "builtin/pyright"]);
    assert_eq!(list.iter().filter(|n| *n == "builtin/pyright").count(), 1);
}

const UNTRUSTED: &str = "[[server]]\nname = \"local/pyls\"\ncommand = \"x\"\nlanguages = [\"python\", \"cobol\"]\n\n\
    [[server]]\nname = \"builtin/clangd\"\ncommand = \"my-clangd\"\nlanguages = [\"c\"]\n";

#[test]
fn an_untrusted_configs_servers_wait_while_the_builtins_serve() {
    let found = ["pyright", "ruff", "clangd"];
    let (_d, reg) = registry_trusted(UNTRUSTED, &found, false);
    // pyright stands in for local/pyls; ruff joins as ever.
    assert_eq!(
        reg.by_language("python"),
        ["builtin/pyright", "builtin/ruff"]
    );
    // Nothing stands in for cobol: local/pyls answers it (`untrusted_config`, with how to
    // trust the file).
    assert_eq!(reg.by_language("cobol"), ["local/pyls"]);
    // The file's builtin/clangd is the preset's command until trusted.
    assert_eq!(reg.by_language("c"), ["builtin/clangd"]);
    let clangd = reg
        .statuses()
        .into_iter()
        .find(|s| s.name == "builtin/clangd");
    let clangd = clangd.unwrap();
    assert_eq!(
        clangd.command,
        "/bin/clangd --log=error (the built-in serves until lspgate.toml's own definition is trusted)"
    );
    // Listed, saying so.
    assert_eq!(&reg.list()[..2], ["local/pyls", "builtin/clangd"]);
    let pyls = reg
        .statuses()
        .into_iter()
        .find(|s| s.name == "local/pyls")
        .unwrap();
    assert_eq!(pyls.state, "untrusted");
    let note = pyls.note.unwrap();
    assert!(
        note.contains("waits for `lspgate trust --root")
            && note.contains("builtin/pyright serves python"),
        "{note}"
    );
    let pyright = reg
        .statuses()
        .into_iter()
        .find(|s| s.name == "builtin/pyright")
        .unwrap();
    assert!(
        pyright
            .note
            .unwrap()
            .starts_with("serves python until lspgate.toml is trusted")
    );
    let waiting = reg.waiting();
    assert_eq!(waiting.len(), 2, "{waiting:?}");
    assert!(waiting[0].contains("defines `local/pyls`"), "{waiting:?}");
    assert!(
        waiting[1].contains("redefines `builtin/clangd`"),
        "{waiting:?}"
    );

    // Trusted, the same file takes what it defines.
    let (_d, reg) = registry_trusted(UNTRUSTED, &found, true);
    assert_eq!(reg.by_language("python"), ["local/pyls", "builtin/ruff"]);
    assert_eq!(reg.by_language("c"), ["builtin/clangd"]);
    assert!(reg.waiting().is_empty());
    // A definition replacing pyright by name: pyright alone serves in its place.
    let (_d, reg) = registry_trusted(
        "[[server]]\nname = \"builtin/pyright\"\ncommand = \"my-pyright\"\nlanguages = [\"python\"]\n",
        &["pyright", "basedpyright"],
        false,
    );
    assert_eq!(reg.by_language("python"), ["builtin/pyright"]);
    // With no built-in that starts for python, its server answers (saying how to trust it).
    let (_d, reg) = registry_trusted(UNTRUSTED, &["ruff"], false);
    assert_eq!(reg.by_language("python"), ["local/pyls", "builtin/ruff"]);
}

#[tokio::test]
async fn register_replace_and_remove() {
    let (_d, reg) = registry("", &[]);
    let mut spec = ServerSpec::explicit(&["a-server".to_string()]).unwrap();
    spec.name = "test/a".into();
    spec.languages = vec!["x".into()];
    reg.register(spec.clone());
    assert_eq!(reg.by_language("x"), ["test/a"]);
    spec.languages = vec!["y".into()];
    reg.register(spec);
    assert!(reg.by_language("x").is_empty());
    assert_eq!(reg.get("test/a").await.unwrap().languages, ["y"]);
    assert!(reg.remove("test/a"));
    assert!(!reg.remove("test/a"));
    assert!(reg.get("test/a").await.is_none());
}

#[tokio::test]
async fn concurrent_first_use_starts_one_instance() {
    let (dir, reg) = registry("", &[]);
    let mut spec = ServerSpec::explicit(&["/nonexistent/server".to_string()]).unwrap();
    spec.name = "test/missing".into();
    reg.register(spec);

    let file = dir.path().join("f.txt");
    std::fs::write(&file, "x").unwrap();
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (reg, file) = (reg.clone(), file.clone());
        tasks.push(tokio::spawn(async move {
            reg.servers_for(&file, "plaintext").await
        }));
    }
    for t in tasks {
        let r = t.await.unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(
            r[0].as_ref().err().map(|e| e.kind),
            Some(Kind::ServerFailed)
        );
    }
    let statuses: Vec<_> = reg
        .statuses()
        .into_iter()
        .filter(|s| s.name == "test/missing")
        .collect();
    assert_eq!(statuses.len(), 1, "one instance for one (server, root)");
    assert_eq!(statuses[0].state, "failed");
}

#[tokio::test]
async fn the_kept_walk_follows_files_created_replaced_and_deleted() {
    let (dir, reg) = registry("", &[]);
    let root = reg.root().path().to_path_buf();
    std::fs::create_dir(root.join("pkg")).unwrap();
    for f in ["a.py", "pkg/b.py"] {
        std::fs::write(root.join(f), "x = 1\n").unwrap();
    }
    let names = |t: &[PathBuf]| -> Vec<String> {
        t.iter()
            .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
            .collect()
    };
    // No watcher yet: walked every time.
    let first = reg.tree();
    assert!(!Arc::ptr_eq(&first, &reg.tree()));
    assert_eq!(reg.start_watching().await.mode, "inotify");
    let kept = reg.tree();
    assert_eq!(names(&kept), ["a.py", "pkg/b.py"]);
    assert!(Arc::ptr_eq(&kept, &reg.tree()), "nothing changed: kept");

    // A file written in place, and one replaced by a rename (an editor's atomic save), change
    // what they hold, not the walk.
    std::fs::write(root.join("a.py"), "x = 2\n").unwrap();
    std::fs::write(root.join("pkg/.b.py.tmp"), "x = 3\n").unwrap();
    std::fs::rename(root.join("pkg/.b.py.tmp"), root.join("pkg/b.py")).unwrap();
    reg.sync().await;
    assert!(Arc::ptr_eq(&kept, &reg.tree()), "contents only: kept");

    std::fs::write(root.join("pkg/c.py"), "y = 1\n").unwrap();
    reg.sync().await;
    let grown = reg.tree();
    assert_eq!(names(&grown), ["a.py", "pkg/b.py", "pkg/c.py"]);

    std::fs::remove_file(root.join("a.py")).unwrap();
    reg.sync().await;
    assert_eq!(names(&reg.tree()), ["pkg/b.py", "pkg/c.py"]);

    // A .gitignore that now leaves a file out.
    std::fs::write(root.join(".gitignore"), "pkg/c.py\n").unwrap();
    reg.sync().await;
    assert_eq!(names(&reg.tree()), ["pkg/b.py"]);

    // A folder moved out of the workspace whole (one event, for the folder).
    let away = tempfile::tempdir_in(root.parent().unwrap()).unwrap();
    std::fs::rename(root.join("pkg"), away.path().join("pkg")).unwrap();
    reg.sync().await;
    assert!(reg.tree().is_empty(), "{:?}", names(&reg.tree()));
    // And back in.
    std::fs::rename(away.path().join("pkg"), root.join("lib")).unwrap();
    reg.sync().await;
    assert_eq!(names(&reg.tree()), ["lib/b.py", "lib/c.py"]);
    drop(dir);
}
