//! `lspgate setup` and symbolic links: a project's files are written only inside the root and
//! through no link (a cloned repository's `.mcp.json`, `.claude` or `.codex` aimed at the user's
//! own configuration is refused, naming the link, and nothing is written for any harness file);
//! the user's own files under HOME are written through their links, as dotfile managers make
//! them.

use super::*;

/// Runs `setup ARGS` expecting the refusal of `link` (relative to the root) leading to `to`.
fn refused(env: &Env, args: &[&str], link: &str, to: &Path) {
    let o = env.setup(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}\n{err}", stdout(&o));
    assert!(
        err.contains(&format!(
            "{link} is a symbolic link (to {}): setup writes a project's files only inside the project and through no link",
            to.display()
        )),
        "{args:?}: {err}"
    );
    assert!(err.contains("nothing written"), "{args:?}: {err}");
    assert!(stdout(&o).is_empty(), "{args:?}: {}", stdout(&o));
}

#[test]
fn a_project_file_linked_out_of_the_root_is_refused_and_its_target_untouched() {
    let env = Env::new();
    let elsewhere = temp();
    let real = elsewhere.path().join("mcp.json");
    let original = "{\"mcpServers\": {\"mine\": {\"command\": \"mine\"}}}\n";
    std::fs::write(&real, original).unwrap();
    std::os::unix::fs::symlink(&real, env.root.path().join(".mcp.json")).unwrap();
    for args in [
        vec!["claude-code"],
        vec!["claude-code", "--dry-run"],
        vec!["claude-code", "--remove"],
    ] {
        refused(&env, &args, ".mcp.json", &real);
        assert_eq!(std::fs::read_to_string(&real).unwrap(), original);
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 1);
        // The other file of the harness is not written either.
        assert!(!env.root.path().join(".claude").exists());
    }
}

#[test]
fn a_project_folder_linked_out_of_the_root_is_refused_and_nothing_made_there() {
    let env = Env::new();
    let elsewhere = temp();
    std::os::unix::fs::symlink(elsewhere.path(), env.root.path().join(".claude")).unwrap();
    refused(&env, &["claude-code"], ".claude", elsewhere.path());
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    // `.mcp.json` comes first and would have been written before `.claude/settings.json`.
    assert!(!env.root.path().join(".mcp.json").exists());
}

#[test]
fn a_codex_folder_aimed_at_the_users_own_is_refused() {
    let env = Env::new();
    let codex = env.home.path().join(".codex");
    std::fs::create_dir(&codex).unwrap();
    let config = "model = \"gpt-5\"\n";
    std::fs::write(codex.join("config.toml"), config).unwrap();
    std::os::unix::fs::symlink(&codex, env.root.path().join(".codex")).unwrap();
    for args in [vec!["codex"], vec!["codex", "--remove"]] {
        refused(&env, &args, ".codex", &codex);
        assert_eq!(
            std::fs::read_to_string(codex.join("config.toml")).unwrap(),
            config
        );
        assert_eq!(std::fs::read_dir(&codex).unwrap().count(), 1);
    }
    // Linked to a folder with no configuration yet: none is made there.
    std::fs::remove_file(codex.join("config.toml")).unwrap();
    refused(&env, &["codex"], ".codex", &codex);
    assert_eq!(std::fs::read_dir(&codex).unwrap().count(), 0);
}

#[test]
fn a_link_inside_the_root_is_refused_too() {
    // Where a link leads can change after it is looked at: setup follows none in a project.
    let env = Env::new();
    env.write("config/cursor/mcp.json", "{}\n");
    std::os::unix::fs::symlink("config/cursor", env.root.path().join(".cursor")).unwrap();
    let before = snapshot(env.root.path());
    refused(&env, &["cursor"], ".cursor", Path::new("config/cursor"));
    assert_eq!(snapshot(env.root.path()), before);
    // A file linked within a real folder, too.
    std::fs::remove_file(env.root.path().join(".cursor")).unwrap();
    std::fs::create_dir(env.root.path().join(".cursor")).unwrap();
    std::os::unix::fs::symlink(
        "../config/cursor/mcp.json",
        env.root.path().join(".cursor/mcp.json"),
    )
    .unwrap();
    refused(
        &env,
        &["cursor"],
        ".cursor/mcp.json",
        Path::new("../config/cursor/mcp.json"),
    );
    assert_eq!(env.read("config/cursor/mcp.json"), "{}\n");
    assert!(!env.root.path().join(".cursor/hooks.json").exists());
}

#[test]
fn user_files_keep_their_permissions_and_are_written_through_links() {
    let env = Env::new();
    let elsewhere = temp();
    let real = elsewhere.path().join("claude.json");
    std::fs::write(&real, "{\"numStartups\": 3}\n").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = env.home.path().join(".claude.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    ok(env.setup(&["claude-code", "--user"]));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(text.contains("\"lspgate\""), "{text}");
    let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // No temporary file left beside it.
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 1);
}

#[test]
fn project_files_keep_their_permissions() {
    let env = Env::new();
    let mine = "{\"mcpServers\": {\"mine\": {\"command\": \"mine\"}}}\n";
    env.write(".mcp.json", mine);
    let path = env.root.path().join(".mcp.json");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    ok(env.setup(&["claude-code"]));
    assert!(env.read(".mcp.json").contains("\"lspgate\""));
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    ok(env.setup(&["claude-code", "--remove"]));
    assert_eq!(env.read(".mcp.json"), mine);
    assert!(!env.root.path().join(".claude").exists());
}
