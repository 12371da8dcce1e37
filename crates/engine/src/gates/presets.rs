//! Task presets for the toolchains whose markers the workspace holds: cargo, tsc, cc, nim,
//! pytest, make, go. Each is an argv run directly, never through a shell. Only `cc` and `nim` take
//! anything from the repository into their command line: file names (from lspgate's own
//! walk, `./`-prefixed so none reads as a flag), and for `cc` the flags of
//! `compile_flags.txt` (one argument per line, as clangd reads it) that shape diagnostics, and
//! no others (see `cc_flags`).
//!
//! cargo (build scripts, proc macros), make (its recipes), pytest (conftest.py) and nim
//! (compile-time `staticExec`) run the repository's own code by their nature; they run only
//! when a task is asked for by name.
//!
//! Extra arguments (`run_task`'s `args`) are refused on a workspace that is not trusted
//! (`trust::workspace`), for every preset, each for its own reason (`ARGS_RUN_COMMANDS`): cargo
//! (`--config build.rustc-wrapper=…`, `--config target.….runner=…`), tsc (`--noEmit false
//! --outDir DIR`, `--generateTrace DIR`: writes files anywhere), cc (`-wrapper`, `-B`,
//! `-fplugin=`, `-specs=`), nim (`--eval:`, `--import:` of any file, whose compile-time code
//! runs), pytest (`-p` loads a plugin module, `-o`/`-c` replace its configuration, `--basetemp`
//! deletes a folder), make (`--eval`, `SHELL=`, `-f` of any makefile). Once the workspace is
//! trusted they pass through as given.

use std::path::Path;

use super::Task;

/// Task presets for the toolchains whose markers `root` holds and that are on `path` (the
/// session's PATH; `None`: lspgate's own). Walks the workspace for `cc` (blocking: call it off
/// the runtime thread).
pub fn presets(root: &Path, path: Option<&std::ffi::OsStr>) -> Vec<Task> {
    // Asked once per lookup; the task asks again (`Untrusted::granted`) when it runs.
    let workspace = crate::workspace::trust::workspace(root);
    let has = |marker: &str| crate::workspace::has_marker(root, marker);
    let on_path = |c: &str| crate::workspace::presets::which_in(c, path).is_some();
    let task = |name: &str, steps: Vec<Vec<String>>, parser: &str| Task {
        name: name.into(),
        steps,
        parser: Some(parser.into()),
        untrusted: None,
        args_untrusted: ARGS_RUN_COMMANDS
            .contains(&name)
            .then(|| workspace.clone())
            .flatten(),
        notes: Vec::new(),
    };
    let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    let mut out = Vec::new();
    if has("Cargo.toml") && on_path("cargo") {
        out.push(task(
            "cargo",
            vec![argv(&["cargo", "check", "--message-format=json"])],
            "cargo-json",
        ));
    }
    if has("tsconfig.json") && on_path("tsc") {
        out.push(task(
            "tsc",
            vec![argv(&["tsc", "--noEmit", "--pretty", "false"])],
            "tsc",
        ));
    }
    if has("compile_flags.txt") && on_path("cc") {
        let sources = c_sources(root);
        if !sources.is_empty() {
            // The root's own file, never through a link (its lines are shown in the task's
            // notes) nor a FIFO.
            let text = lspgate_base::regular::read(&root.join("compile_flags.txt"), false)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            let (flags, left_out) = cc_flags(&text);
            let mut step = argv(&["cc", "-fsyntax-only"]);
            step.extend(flags);
            step.extend(sources);
            let mut t = task("cc", vec![step], "gcc");
            if !left_out.is_empty() {
                t.notes.push(format!(
                    "left out of compile_flags.txt (only flags that shape diagnostics are passed; these may load or run code, or write files): {}",
                    left_out.join(" ")
                ));
            }
            out.push(t);
        }
    }
    if (has("*.nimble") || has("*.nim")) && on_path("nim") {
        let steps: Vec<Vec<String>> = top_level(root, "nim")
            .into_iter()
            .map(|f| {
                let mut s = argv(&["nim", "check", "--hints:off"]);
                s.push(f);
                s
            })
            .collect();
        if !steps.is_empty() {
            out.push(task("nim", steps, "nim"));
        }
    }
    let pytest_markers = has("pytest.ini") || has("conftest.py") || has("tests/conftest.py");
    if pytest_markers && on_path("pytest") {
        out.push(task(
            "pytest",
            vec![argv(&[
                "pytest",
                "-q",
                "--tb=line",
                "-p",
                "no:cacheprovider",
            ])],
            r"^(?P<file>[^\s:]+\.py):(?P<line>\d+): (?P<message>.*)$",
        ));
    }
    if has("go.mod") && on_path("go") {
        // `go build ./...` writes the executable when the module is one main package: the
        // build's result goes nowhere.
        let null = if cfg!(windows) { "NUL" } else { "/dev/null" };
        out.push(task(
            "go",
            vec![
                argv(&["go", "build", "-o", null, "./..."]),
                argv(&["go", "vet", "./..."]),
            ],
            "go",
        ));
    }
    if has("Makefile") && on_path("make") {
        out.push(task("make", vec![argv(&["make"])], "gcc"));
    }
    out
}

/// The presets whose extra arguments can run commands or write files anywhere (see the module
/// comment for why, one by one): refused on a workspace that is not trusted. All of them.
pub(super) const ARGS_RUN_COMMANDS: &[&str] =
    &["cargo", "tsc", "cc", "nim", "pytest", "make", "go"];

/// The C sources of the workspace (lspgate's walk: .gitignore respected, hidden folders and
/// node_modules skipped, no symlink followed), as `./`-prefixed root-relative paths.
fn c_sources(root: &Path) -> Vec<String> {
    crate::workspace::walk(root, crate::workspace::WALK_LIMIT)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .filter_map(|p| p.strip_prefix(root).ok().map(dot_slash))
        .collect()
}

/// The regular files directly in `root` ending in `.EXT`, as `./NAME`, sorted.
fn top_level(root: &Path, ext: &str) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .filter_map(|p| p.strip_prefix(root).ok().map(dot_slash))
        .collect();
    out.sort();
    out
}

fn dot_slash(rel: &Path) -> String {
    format!("./{}", rel.to_string_lossy())
}

/// Flags that take their value as the next argument, kept with it when the value is not
/// itself a flag.
const WITH_VALUE: &[&str] = &[
    "-I",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-D",
    "-U",
    "-x",
    "-target",
];

/// Flags kept as they are.
const EXACT: &[&str] = &[
    "-w",
    "-pedantic",
    "-pedantic-errors",
    "-ansi",
    "-nostdinc",
    "-nostdinc++",
    "-trigraphs",
];

/// Prefixes of flags kept with their value attached (`-Iinclude`, `-std=c11`, `-Wall`, …).
const JOINED: &[&str] = &[
    "-I",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-D",
    "-U",
    "-std=",
    "--std=",
    "--target=",
    "-O",
    "-g",
    "-W",
    "-f",
    "-m",
];

/// `-f` and `-m` flags left out although their family is kept: they load code (`-fplugin=`,
/// `-fpass-plugin=`), write files (dumps, profiles, module caches, records) or hand options to
/// another program (`-mllvm`).
const DENIED: &[&str] = &[
    "-fplugin",
    "-fpass-plugin",
    "-fload",
    "-fdump",
    "-fprofile",
    "-fcoverage",
    "-fstack-usage",
    "-fcallgraph-info",
    "-fcrash-diagnostics",
    "-fsave-optimization-record",
    "-foptimization-record",
    "-fmodules-cache-path",
    "-fmodule-file",
    "-fprebuilt-module-path",
    "-fsanitize-blacklist",
    "-fsanitize-ignorelist",
    "-fxray",
    "-mllvm",
];

/// Splits `compile_flags.txt` (one argument per line, no quoting, no expansion) into the
/// flags passed to `cc -fsyntax-only` and those left out. Kept: include paths, macros, the
/// language and its standard, warnings (not `-Wl,`/`-Wa,`/`-Wp,`, which hand options to other
/// programs), `-f` features and `-m`/`-O`/`-g`/target options (not `DENIED`). Everything else
/// is left out: what loads or runs code (`-Xclang -load`, `-load`, `-B`, `-specs=`,
/// `-wrapper`, `-fplugin=`, `@file` response files), writes files (`-o`, `-MF`, `-save-temps`),
/// and file names (lspgate names the sources itself).
pub(crate) fn cc_flags(text: &str) -> (Vec<String>, Vec<String>) {
    let args: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let (mut kept, mut left_out) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        i += 1;
        if WITH_VALUE.contains(&a) {
            match args.get(i) {
                Some(v) if !v.starts_with('-') && !v.starts_with('@') && plain_value(a, v) => {
                    kept.extend([a.to_string(), v.to_string()]);
                    i += 1;
                }
                _ => left_out.push(a.to_string()),
            }
            continue;
        }
        let joined = JOINED.iter().any(|p| a.len() > p.len() && a.starts_with(p));
        let denied =
            DENIED.iter().any(|d| a.starts_with(d)) || (a.starts_with("-W") && a.contains(','));
        if EXACT.contains(&a) || (joined && !denied) {
            kept.push(a.to_string());
        } else {
            left_out.push(a.to_string());
        }
    }
    (kept, left_out)
}

/// A separate value of `flag` that is what it should be (`-x` takes a language name).
fn plain_value(flag: &str, value: &str) -> bool {
    flag != "-x"
        || value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::wire::Severity;
    use std::time::Duration;

    #[test]
    fn presets_follow_markers() {
        let dir = tempfile::tempdir().unwrap();
        let names = |d: &Path| {
            presets(d, None)
                .into_iter()
                .map(|t| t.name)
                .collect::<Vec<_>>()
        };
        assert!(names(dir.path()).is_empty());
        std::fs::write(dir.path().join("compile_flags.txt"), "-std=c11\n").unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "").unwrap();
        // compile_flags.txt and no C file: nothing for cc to check.
        assert!(!names(dir.path()).contains(&"cc".to_string()));
        std::fs::write(dir.path().join("a.c"), "int x;\n").unwrap();
        let found = names(dir.path());
        if crate::workspace::presets::which("cc").is_some() {
            assert!(found.contains(&"cc".to_string()), "{found:?}");
        }
        if crate::workspace::presets::which("cargo").is_some() {
            assert!(found.contains(&"cargo".to_string()), "{found:?}");
        }
    }

    #[test]
    fn no_preset_runs_a_shell() {
        let dir = tempfile::tempdir().unwrap();
        for f in [
            "Cargo.toml",
            "tsconfig.json",
            "compile_flags.txt",
            "a.c",
            "app.nim",
            "pytest.ini",
            "Makefile",
            "go.mod",
        ] {
            std::fs::write(dir.path().join(f), "").unwrap();
        }
        let shells = ["sh", "bash", "dash", "zsh", "/bin/sh", "/bin/bash"];
        for t in presets(dir.path(), None) {
            for step in &t.steps {
                assert!(!shells.contains(&step[0].as_str()), "{}: {step:?}", t.name);
                assert!(!step.iter().any(|a| a == "-c"), "{}: {step:?}", t.name);
            }
        }
    }

    #[test]
    fn compile_flags_keep_what_shapes_diagnostics_and_nothing_that_loads_code() {
        let text = "\
-std=c11
-Iinclude
-I
third party/include
-isystem
/usr/include/x
-DNAME=\"a b\"
-DEVIL=$(touch /tmp/pwned)
-Wall
-Wextra
-Werror=return-type
-fno-exceptions
-O2
-x
c

-fplugin=./evil.so
-fplugin-arg-evil-x=1
-fpass-plugin=./evil.so
-Xclang
-load
-Xclang
./evil.so
-B/tmp/evil
-B
/tmp/evil
-specs=evil.specs
-wrapper
/tmp/evil
-Wl,-rpath,/x
-Wp,-fplugin=./evil.so
@more-flags.txt
-o
/tmp/out
-MD
-MF
/tmp/deps
-save-temps
-fdump-tree-all
-fmodules-cache-path=/tmp/m
-mllvm
-x
-fplugin=./evil.so
main.c
";
        let (kept, left_out) = cc_flags(text);
        assert_eq!(
            kept,
            [
                "-std=c11",
                "-Iinclude",
                "-I",
                "third party/include",
                "-isystem",
                "/usr/include/x",
                "-DNAME=\"a b\"",
                "-DEVIL=$(touch /tmp/pwned)",
                "-Wall",
                "-Wextra",
                "-Werror=return-type",
                "-fno-exceptions",
                "-O2",
                "-x",
                "c",
            ]
        );
        for bad in [
            "-fplugin=./evil.so",
            "-fplugin-arg-evil-x=1",
            "-fpass-plugin=./evil.so",
            "-Xclang",
            "-load",
            "-B/tmp/evil",
            "-B",
            "-specs=evil.specs",
            "-wrapper",
            "-Wl,-rpath,/x",
            "-Wp,-fplugin=./evil.so",
            "@more-flags.txt",
            "-o",
            "-MF",
            "-save-temps",
            "-fdump-tree-all",
            "-fmodules-cache-path=/tmp/m",
            "-mllvm",
            "main.c",
        ] {
            assert!(left_out.contains(&bad.to_string()), "{bad}: {left_out:?}");
            assert!(!kept.contains(&bad.to_string()), "{bad} kept");
        }
        // `-x` followed by a flag is not given that flag as its value.
        assert!(left_out.contains(&"-x".to_string()));
    }

    #[tokio::test]
    async fn the_cc_preset_runs_without_a_shell_and_parses() {
        if crate::workspace::presets::which("cc").is_none() {
            panic!("cc is needed for this test");
        }
        let dir = tempfile::tempdir().unwrap();
        // A flag with a space (one argument per line), a plugin that must not load, and a
        // source file whose name has a space and one that looks like a flag.
        std::fs::create_dir(dir.path().join("my include")).unwrap();
        std::fs::write(dir.path().join("my include/defs.h"), "#define ANSWER 42\n").unwrap();
        std::fs::write(
            dir.path().join("compile_flags.txt"),
            "-std=c11\n-I\nmy include\n-fplugin=./missing-plugin.so\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("bad file.c"),
            "#include \"defs.h\"\nint main(void) { return ANSWER + x; }\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("-fsyntax-only.c"),
            "int ok(void) { return 0; }\n",
        )
        .unwrap();
        let task = presets(dir.path(), None)
            .into_iter()
            .find(|t| t.name == "cc")
            .unwrap();
        assert!(
            task.steps[0].contains(&"./bad file.c".to_string())
                && task.steps[0].contains(&"./-fsyntax-only.c".to_string()),
            "{:?}",
            task.steps
        );
        let run = super::super::run(&task, &[], dir.path(), None, Duration::from_secs(60))
            .await
            .unwrap();
        assert_ne!(run.exit_code, Some(0));
        assert!(
            run.stderr.contains("left out of compile_flags.txt")
                && run.stderr.contains("-fplugin=./missing-plugin.so"),
            "{}",
            run.stderr
        );
        // The plugin was not loaded (cc would have failed on it before any diagnostic), the
        // include folder with a space was found (ANSWER is defined), and `x` is the error.
        assert!(!run.stderr.contains("missing-plugin.so:"), "{}", run.stderr);
        let errors: Vec<_> = run
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        assert_eq!(errors.len(), 1, "{}", run.stderr);
        assert!(
            errors[0].file.ends_with("bad file.c") && errors[0].line == 2,
            "{errors:?}"
        );
        assert!(errors[0].message.contains('x'), "{errors:?}");
    }
}
