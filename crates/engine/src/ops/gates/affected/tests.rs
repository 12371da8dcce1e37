//! Tests of the re-check keys: what a body edit, a signature change, inert files and a created
//! file do to them; and a probe on rxjs (`AFFECTED_PROBE=DIR`, ignored by default).

use super::*;

/// The root's walk, as a check's survey gets it from the registry.
fn walk(root: &Root) -> Vec<PathBuf> {
    crate::workspace::walk(root.path(), crate::workspace::WALK_LIMIT)
}

#[test]
fn components_come_after_what_they_reach() {
    // 0 → 1 ⇄ 2 → 3; 4 alone.
    let edges = vec![vec![1], vec![2], vec![1, 3], vec![], vec![]];
    let (comp_of, comps) = components(&edges);
    assert_eq!(comp_of[1], comp_of[2]);
    assert!(comp_of[3] < comp_of[1] && comp_of[1] < comp_of[0]);
    assert_eq!(comps.len(), 4);
}

#[test]
fn a_key_moves_with_what_the_file_imports_declare_and_no_more() {
    let dir = tempfile::Builder::new()
        .prefix("affected")
        .tempdir()
        .unwrap();
    let root = dir.path();
    let write = |p: &str, t: &str| std::fs::write(root.join(p), t).unwrap();
    write(
        "core.ts",
        "export function f(a: number): number {\n  return a;\n}\n",
    );
    write("mid.ts", "export { f } from './core';\n");
    write("user.ts", "import { f } from './mid';\nf(1);\n");
    // An example in a doc comment is no import (it would make the file depend on any).
    write(
        "other.ts",
        "/** `import { x } from 'aliased'` */\nexport const x = 1;\n",
    );
    let root_ = Root::new(root).unwrap();
    let answers = Arc::new(Answers::default());
    let key = |s: &Survey, p: &str| s.keys[&root_.path().join(p)];
    let first = answers.survey(&root_, &walk(&root_), 0);
    write(
        "core.ts",
        "export function f(a: number): number {\n  return a + 1;\n}\n",
    );
    let body = answers.survey(&root_, &walk(&root_), 1);
    for p in ["mid.ts", "user.ts", "other.ts"] {
        assert_eq!(key(&first, p), key(&body, p), "{p}");
    }
    assert_ne!(key(&first, "core.ts"), key(&body, "core.ts"));
    write(
        "core.ts",
        "export function f(a: string): number {\n  return 1;\n}\n",
    );
    let sig = answers.survey(&root_, &walk(&root_), 2);
    assert_ne!(key(&body, "user.ts"), key(&sig, "user.ts"));
    assert_ne!(key(&body, "mid.ts"), key(&sig, "mid.ts"));
    assert_eq!(key(&body, "other.ts"), key(&sig, "other.ts"));
    // What tsc --incremental and a writer of notes leave beside the sources.
    write("tsconfig.tsbuildinfo", "{}");
    write("NOTES.md", "# notes\n");
    let inert = answers.survey(&root_, &walk(&root_), 3);
    for p in ["core.ts", "mid.ts", "user.ts", "other.ts"] {
        assert_eq!(key(&sig, p), key(&inert, p), "{p}");
    }
    write("new.ts", "export {};\n");
    let created = answers.survey(&root_, &walk(&root_), 3);
    assert_ne!(key(&sig, "other.ts"), key(&created, "other.ts"));
}

mod probe {
    use super::*;

    /// `AFFECTED_PROBE=DIR`: how many keys a signature change of rxjs's lift.ts keeps.
    #[test]
    #[ignore]
    fn rxjs_signature_change_keeps_the_keys_of_non_dependents() {
        let Some(dir) = std::env::var_os("AFFECTED_PROBE") else {
            return;
        };
        let root = Root::new(Path::new(&dir)).unwrap();
        let answers = Arc::new(Answers::default());
        let t = std::time::Instant::now();
        let before = answers.survey(&root, &walk(&root), 0);
        eprintln!("first survey {:?}", t.elapsed());
        let lift = root.path().join("src/internal/util/lift.ts");
        let text = std::fs::read_to_string(&lift).unwrap();
        std::fs::write(
            &lift,
            text.replacen(
                "=> (() => void) | void\n):",
                "=> (() => void) | void,\n  name: string\n):",
                1,
            ),
        )
        .unwrap();
        let t = std::time::Instant::now();
        let after = answers.survey(&root, &walk(&root), 1);
        eprintln!("second survey {:?}", t.elapsed());
        std::fs::write(&lift, text).unwrap();
        let same = before
            .keys
            .iter()
            .filter(|(p, k)| after.keys.get(*p) == Some(k))
            .count();
        let src_same = before
            .keys
            .iter()
            .filter(|(p, k)| {
                p.starts_with(root.path().join("src")) && after.keys.get(*p) == Some(k)
            })
            .count();
        eprintln!("{} keys, {same} kept, {src_same} in src", before.keys.len());
    }
}
