//! Presets on a workspace that is not trusted (`trust::workspace`): which of the built-in servers
//! run the repository's own code, and how each starts until `lspgate trust`.
//!
//! - rust-analyzer runs build scripts (`build.rs`) and proc macros, and `cargo check` on save
//!   (which builds both): it starts with `cargo.buildScripts.enable`, `procMacro.enable` and
//!   `checkOnSave` false (its documented settings, sent as `initializationOptions` and under
//!   `rust-analyzer` on `workspace/configuration`). It does not start at all while the
//!   workspace holds a `rust-analyzer.toml` (its settings override those, an `overrideCommand`
//!   included), a `.cargo/config.toml` or `.cargo/config` (`build.rustc-wrapper`, `build.rustc`:
//!   programs the `cargo metadata` it always runs would start) or a `rust-toolchain.toml` or
//!   `rust-toolchain` (rustup runs a toolchain `path` of the repository's choosing, rust-analyzer
//!   itself when it is rustup's proxy). That scan is made when an instance starts.
//! - nimlangserver: nimsuggest evaluates the project's NimScript (`config.nims`, `*.nims`, the
//!   `.nimble` file) and its compile-time code (`staticExec`, `gorge`), with no switch to stop
//!   it: it does not start.
//! - typescript-language-server loads the workspace's own `node_modules/typescript` (the
//!   repository's JavaScript) unless told which tsserver to use: lspgate names the TypeScript
//!   installed beside it (`Preset::spec`); when there is none, it does not start.
//! - The others read the repository as data: pyright and basedpyright (the Python they ask for
//!   its search paths is the one on the user's PATH), pylsp (jedi loads no extension module of
//!   the project unless told to), ruff, clangd (it drops `-fplugin`/`-load` from compile flags
//!   and runs no compiler named in compile_commands.json without `--query-driver`), gopls (`go
//!   list`; Go allowlists cgo flags), bash-language-server (shellcheck), the vscode JSON, CSS and
//!   HTML servers, yaml-language-server and taplo (they may fetch a schema a file names, and
//!   never run it), marksman. There is no ESLint or Biome preset (ESLint's server loads the
//!   repository's JavaScript config): one configured in lspgate.toml is a `[[server]]`, which
//!   runs only once that file is trusted.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{Launch, Preset, ServerSpec};
use crate::workspace::trust::Untrusted;

/// A preset held back on an untrusted workspace (`ServerSpec::restricted`).
#[derive(Debug, Clone)]
pub struct Restricted {
    /// The workspace's trust: once `granted`, the server starts from `full`.
    pub untrusted: Untrusted,
    /// What it goes without (it starts), or what it would run (it does not); for people.
    pub note: &'static str,
    /// The spec it starts from once the workspace is trusted.
    pub full: ServerSpec,
    /// Files (by name, anywhere in the workspace) that keep it from starting at all.
    pub blockers: &'static [&'static str],
}

const RUST_ANALYZER: &str = "untrusted workspace: build scripts, proc macros and check on save off";
const NIM: &str = "nimsuggest evaluates the project's NimScript (config.nims, *.nims, the .nimble file) and compile-time code (staticExec)";
const TYPESCRIPT: &str = "with no TypeScript installed beside it, typescript-language-server loads the workspace's own node_modules/typescript (the repository's JavaScript)";
/// What makes rust-analyzer run programs of the repository's choosing whatever it is told.
const RUST_ANALYZER_BLOCKERS: &[&str] = &[
    "rust-analyzer.toml",
    ".cargo/config.toml",
    ".cargo/config",
    "rust-toolchain.toml",
    "rust-toolchain",
];

/// For `lspgate trust`: the presets that run the repository's code, and what trusting it
/// lets them do.
pub fn repository_code() -> &'static [(&'static str, &'static str)] {
    &[
        (
            "builtin/rust-analyzer",
            "build scripts, proc macros and `cargo check` on save (and rust-analyzer.toml, .cargo/config.toml, rust-toolchain.toml honoured)",
        ),
        (
            "builtin/nimlangserver",
            "nimsuggest, which evaluates NimScript and compile-time code",
        ),
        (
            "builtin/typescript-language-server",
            "the workspace's own TypeScript, when none is installed beside the server",
        ),
    ]
}

/// `full` (the preset's spec) as it starts on a workspace that is not trusted.
pub(super) fn restrict(preset: &'static Preset, full: ServerSpec, u: &Untrusted) -> ServerSpec {
    let installed = !matches!(full.launch, Launch::Missing(_));
    let mut spec = full.clone();
    let (note, starts, blockers) = match preset.name {
        "builtin/rust-analyzer" => {
            let off = json!({
                "cargo": {"buildScripts": {"enable": false}},
                "procMacro": {"enable": false},
                "checkOnSave": false,
            });
            merge(&mut spec.initialization, &off);
            merge(&mut spec.settings, &json!({ "rust-analyzer": off }));
            (RUST_ANALYZER, true, RUST_ANALYZER_BLOCKERS)
        }
        "builtin/nimlangserver" => (NIM, false, &[][..]),
        // Not installed yet: once installed (`--install`), its TypeScript is beside it.
        "builtin/typescript-language-server"
            if installed && full.initialization["tsserver"]["path"].is_null() =>
        {
            (TYPESCRIPT, false, &[][..])
        }
        _ => return full,
    };
    // A missing one keeps its install hint; it is restricted when installed.
    if !starts && installed {
        spec.launch = Launch::Untrusted(Box::new(spec.launch), Box::new(u.clone()));
    }
    spec.restricted = Some(Box::new(Restricted {
        untrusted: u.clone(),
        note,
        full,
        blockers,
    }));
    spec
}

impl Restricted {
    /// What `servers` says about the server: what it goes without and how to lift that.
    pub fn status_note(&self) -> String {
        format!("{}; `{}` lifts this", self.note, self.untrusted.command())
    }

    /// A file of the workspace that keeps the server from starting at all (see `blockers`):
    /// a walk of the whole workspace (hidden folders too, .gitignore not respected, `.git`,
    /// `node_modules` and `target` skipped). Blocking.
    pub fn blocker(&self) -> Option<PathBuf> {
        if self.blockers.is_empty() {
            return None;
        }
        find_blocker(&self.untrusted.root, self.blockers)
    }
}

fn find_blocker(root: &Path, blockers: &[&str]) -> Option<PathBuf> {
    ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(|e| {
            !(e.file_type().is_some_and(|t| t.is_dir())
                && matches!(
                    e.file_name().to_str(),
                    Some(".git" | "node_modules" | "target")
                ))
        })
        .build()
        .flatten()
        .map(|e| e.into_path())
        .find(|p| {
            blockers.iter().any(|b| match b.split_once('/') {
                Some((dir, name)) => {
                    p.file_name().is_some_and(|n| n == name)
                        && p.parent()
                            .and_then(|d| d.file_name())
                            .is_some_and(|d| d == dir)
                }
                None => p.file_name().is_some_and(|n| n == *b),
            })
        })
}

/// Merges `extra` into `base` (objects key by key, anything else replaced).
fn merge(base: &mut Value, extra: &Value) {
    match (base, extra) {
        (Value::Object(b), Value::Object(e)) => {
            for (k, v) in e {
                merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, e) => *b = e.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn untrusted(root: &Path) -> Untrusted {
        Untrusted {
            config: root.to_path_buf(),
            root: root.to_path_buf(),
            digest: String::new(),
            changed: false,
        }
    }

    #[test]
    fn rust_analyzer_starts_without_build_scripts_proc_macros_or_check_untrusted() {
        let p = Preset::by_name("rust-analyzer").unwrap();
        let exe = Path::new("/usr/bin/rust-analyzer");
        let full = p.spec(Some(exe));
        assert!(full.restricted.is_none() && full.initialization.is_null());
        let spec = restrict(p, full, &untrusted(Path::new("/w")));
        let init = &spec.initialization;
        assert_eq!(init["cargo"]["buildScripts"]["enable"], false, "{init}");
        assert_eq!(init["procMacro"]["enable"], false, "{init}");
        assert_eq!(init["checkOnSave"], false, "{init}");
        assert_eq!(spec.settings["rust-analyzer"], *init);
        assert!(matches!(spec.launch, Launch::Stdio(_)), "it starts");
        let r = spec.restricted.as_ref().unwrap();
        assert!(r.full.initialization.is_null(), "trusted: as the preset is");
        assert!(
            spec.command_line().ends_with(
                "(untrusted workspace: build scripts, proc macros and check on save off)"
            ),
            "{}",
            spec.command_line()
        );
        assert!(r.status_note().contains("lspgate trust --root /w"));
    }

    #[test]
    fn nimsuggest_does_not_start_untrusted_and_data_servers_are_as_ever() {
        let p = Preset::by_name("nimlangserver").unwrap();
        let spec = restrict(
            p,
            p.spec(Some(Path::new("/x/nimlangserver"))),
            &untrusted(Path::new("/w")),
        );
        let Launch::Untrusted(_, u) = &spec.launch else {
            panic!("{:?}", spec.launch)
        };
        let e = spec.untrusted_error(u);
        assert_eq!(e.kind, crate::error::Kind::UntrustedConfig);
        assert!(
            e.message
                .contains("server `builtin/nimlangserver` is refused: nimsuggest")
                && e.message.contains("lspgate trust --root /w"),
            "{}",
            e.message
        );
        // Missing: its install hint first.
        let spec = restrict(p, p.spec(None), &untrusted(Path::new("/w")));
        assert!(matches!(spec.launch, Launch::Missing(_)));
        for name in ["pyright", "clangd", "gopls", "ruff", "taplo"] {
            let p = Preset::by_name(name).unwrap();
            let spec = restrict(
                p,
                p.spec(Some(Path::new("/x/y"))),
                &untrusted(Path::new("/w")),
            );
            assert!(spec.restricted.is_none(), "{name}");
        }
    }

    #[test]
    fn cargo_and_rustup_configuration_anywhere_blocks_rust_analyzer() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("crates/a/src")).unwrap();
        std::fs::create_dir_all(root.join("target/.cargo")).unwrap();
        std::fs::write(root.join("target/.cargo/config.toml"), "").unwrap();
        std::fs::write(root.join("config.toml"), "").unwrap();
        assert_eq!(find_blocker(root, RUST_ANALYZER_BLOCKERS), None);
        std::fs::create_dir_all(root.join("crates/a/.cargo")).unwrap();
        std::fs::write(root.join("crates/a/.cargo/config.toml"), "").unwrap();
        assert_eq!(
            find_blocker(root, RUST_ANALYZER_BLOCKERS),
            Some(root.join("crates/a/.cargo/config.toml"))
        );
        std::fs::remove_file(root.join("crates/a/.cargo/config.toml")).unwrap();
        std::fs::write(root.join("crates/a/rust-analyzer.toml"), "").unwrap();
        assert!(find_blocker(root, RUST_ANALYZER_BLOCKERS).is_some());
    }
}
