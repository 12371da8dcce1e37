//! `lspgate setup` writes the command the user runs lspgate with: `npx -y lspgate` when the npm
//! launcher ran it through npx, `uvx lspgate` when uvx did (its throwaway environment under uv's
//! cache), the launcher's own path or `lspgate` for an npm install; the words of a launcher's
//! line go into the harness's `command` and `args`, and into hooks as one command line that a
//! second run recognizes as lspgate's own.

use super::*;

/// Runs `exe setup ARGS` for `env` with `vars` set.
fn setup_as(env: &Env, exe: &Path, args: &[&str], vars: &[(&str, &str)]) -> String {
    let mut c = Command::new(exe);
    c.arg("setup")
        .args(args)
        .arg("--root")
        .arg(env.root.path())
        .env("HOME", env.home.path())
        .env("PATH", env.path.path())
        .env_remove("LSPGATE_LAUNCHER")
        .env_remove("LSPGATE_LAUNCHER_PATH")
        .current_dir(env.root.path());
    for (k, v) in vars {
        c.env(k, v);
    }
    ok(c.output().unwrap())
}

#[test]
fn through_npx_setup_writes_npx_and_recognizes_it_again() {
    let env = Env::new();
    let npx = [("LSPGATE_LAUNCHER", "npx")];
    setup_as(&env, Path::new(BIN), &["claude-code"], &npx);
    let mcp = parse(".mcp.json", &env.read(".mcp.json"));
    assert_eq!(
        mcp["mcpServers"]["lspgate"],
        json!({"command": "npx", "args": ["-y", "lspgate", "serve"]})
    );
    let settings = env.read(".claude/settings.json");
    assert!(
        settings.contains("\"npx -y lspgate hook pre-edit --format claude-code\""),
        "{settings}"
    );
    let written = snapshot(env.root.path());
    let out = setup_as(&env, Path::new(BIN), &["claude-code"], &npx);
    assert!(out.contains("already set up"), "{out}");
    assert_eq!(snapshot(env.root.path()), written);
    setup_as(&env, Path::new(BIN), &["claude-code", "--remove"], &npx);
    assert!(snapshot(env.root.path()).is_empty());
}

#[test]
fn through_uvx_setup_writes_uvx_in_every_shape() {
    let env = Env::new();
    // uvx runs the wheel's binary from an environment in uv's cache: no variable says so.
    let cache = temp();
    // Any cache folder (UV_CACHE_DIR): what counts is `archive-v0/ID/bin`.
    let bin = cache.path().join("uvc/archive-v0/Xk3/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let exe = bin.join("lspgate");
    if std::fs::hard_link(BIN, &exe).is_err() {
        std::fs::copy(BIN, &exe).unwrap();
    }
    setup_as(&env, &exe, &["opencode"], &[]);
    let v = parse("opencode.json", &env.read("opencode.json"));
    assert_eq!(
        v["mcp"]["lspgate"]["command"],
        json!(["uvx", "lspgate", "serve"])
    );
    assert_eq!(
        v["lsp"]["lspgate"]["command"],
        json!(["uvx", "lspgate", "lsp"])
    );
    setup_as(&env, &exe, &["copilot"], &[]);
    let v = parse(".github/mcp.json", &env.read(".github/mcp.json"));
    assert_eq!(v["mcpServers"]["lspgate"]["command"], "uvx");
    assert_eq!(
        v["mcpServers"]["lspgate"]["args"],
        json!(["lspgate", "serve"])
    );
    setup_as(
        &env,
        Path::new(BIN),
        &["codex"],
        &[("LSPGATE_LAUNCHER", "uvx")],
    );
    let toml = env.read(".codex/config.toml");
    assert!(toml.contains("command = \"uvx\""), "{toml}");
    assert!(toml.contains("args = [\"lspgate\", \"serve\"]"), "{toml}");
    assert!(
        toml.contains("command = \"uvx lspgate hook post-edit --format codex\""),
        "{toml}"
    );
    let out = setup_as(&env, &exe, &["codex"], &[]);
    assert!(out.contains("already set up"), "{out}");
}

#[test]
fn an_npm_install_writes_lspgate_on_path_or_the_launchers_path() {
    let env = Env::new();
    let prefix = temp();
    let launcher = prefix
        .path()
        .join("lib/node_modules/lspgate/bin/lspgate.js");
    std::fs::create_dir_all(launcher.parent().unwrap()).unwrap();
    std::fs::write(&launcher, "#!/usr/bin/env node\n").unwrap();
    std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).unwrap();
    let shown = launcher.to_string_lossy().into_owned();
    let npm = [
        ("LSPGATE_LAUNCHER", "npm"),
        ("LSPGATE_LAUNCHER_PATH", shown.as_str()),
    ];
    // Not on PATH (a project's node_modules): the launcher's absolute path.
    setup_as(&env, Path::new(BIN), &["cursor"], &npm);
    let v = parse(".cursor/mcp.json", &env.read(".cursor/mcp.json"));
    assert_eq!(v["mcpServers"]["lspgate"]["command"], shown.as_str());
    // A global install puts a link to it on PATH: `lspgate`.
    let env = Env::new();
    std::os::unix::fs::symlink(&launcher, env.path.path().join("lspgate")).unwrap();
    setup_as(&env, Path::new(BIN), &["cursor"], &npm);
    let v = parse(".cursor/mcp.json", &env.read(".cursor/mcp.json"));
    assert_eq!(v["mcpServers"]["lspgate"]["command"], "lspgate");
}
