//! The watcher against a real filesystem: every write is in the very next `take`, bursts
//! coalesce, ignored folders stay quiet, and the polling fallback sees the same changes.

use super::*;

fn tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("pkg/sub")).unwrap();
    std::fs::create_dir_all(root.join("node_modules/dep")).unwrap();
    std::fs::create_dir_all(root.join(".lspgate")).unwrap();
    std::fs::write(root.join("a.py"), "a = 1\n").unwrap();
    std::fs::write(root.join("pkg/b.py"), "b = 1\n").unwrap();
    std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
    (dir, root)
}

fn kinds(b: &Batch, root: &Path) -> Vec<(String, &'static str)> {
    let mut v: Vec<_> = b
        .changes
        .iter()
        .map(|c| {
            (
                c.path.strip_prefix(root).unwrap().display().to_string(),
                c.kind.name(),
            )
        })
        .collect();
    v.sort();
    v
}

async fn watcher(root: &Path, limit: Option<usize>) -> Arc<Watcher> {
    Watcher::start(
        root,
        WatchOptions {
            limit,
            ..WatchOptions::default()
        },
    )
    .await
}

/// The same scenario for both modes: every write is in the next `take`, with no wait.
async fn sees_every_change_at_once(w: &Watcher, root: &Path) {
    assert!(w.take().await.is_empty(), "nothing happened yet");

    std::fs::write(root.join("a.py"), "a = 2\n").unwrap();
    assert_eq!(kinds(&w.take().await, root), [("a.py".into(), "changed")]);

    std::fs::write(root.join("pkg/sub/new.py"), "n = 1\n").unwrap();
    std::fs::remove_file(root.join("pkg/b.py")).unwrap();
    assert_eq!(
        kinds(&w.take().await, root),
        [
            ("pkg/b.py".into(), "deleted"),
            ("pkg/sub/new.py".into(), "created")
        ]
    );

    // An editor's atomic save: a temporary file renamed over the original. The temporary
    // file never shows.
    std::fs::write(root.join("a.py.tmp"), "a = 3\n").unwrap();
    std::fs::rename(root.join("a.py.tmp"), root.join("a.py")).unwrap();
    let b = w.take().await;
    assert_eq!(b.changes.len(), 1, "{:?}", b.changes);
    assert_eq!(b.changes[0].path, root.join("a.py"));
    assert_ne!(b.changes[0].kind, ChangeKind::Deleted);

    // Created and deleted within one batch: nothing to tell.
    std::fs::write(root.join("gone.py"), "").unwrap();
    std::fs::remove_file(root.join("gone.py")).unwrap();
    // Ignored: .gitignore'd files, dependency folders, lspgate's state.
    std::fs::write(root.join("run.log"), "x").unwrap();
    std::fs::write(root.join("node_modules/dep/index.js"), "x").unwrap();
    std::fs::write(root.join(".lspgate/state.db"), "x").unwrap();
    assert!(w.take().await.is_empty(), "{:?}", w.take().await.changes);

    // A folder created with files in it, then one more file in it.
    std::fs::create_dir_all(root.join("newpkg/deep")).unwrap();
    std::fs::write(root.join("newpkg/deep/m.py"), "m = 1\n").unwrap();
    assert_eq!(
        kinds(&w.take().await, root),
        [("newpkg/deep/m.py".into(), "created")]
    );
    std::fs::write(root.join("newpkg/deep/n.py"), "n = 1\n").unwrap();
    assert_eq!(
        kinds(&w.take().await, root),
        [("newpkg/deep/n.py".into(), "created")]
    );
}

#[tokio::test]
async fn inotify_sees_every_change_in_the_next_take() {
    let (_d, root) = tree();
    let w = watcher(&root, None).await;
    assert_eq!(w.status().mode, "inotify");
    // A root's own share of the user's watches by default.
    assert!((1..=MAX_DEFAULT_LIMIT).contains(&default_limit()));
    // root, pkg, pkg/sub (node_modules and .lspgate are skipped).
    assert_eq!(w.status().watched, 3);
    sees_every_change_at_once(&w, &root).await;
    // Folders that appeared are watched too.
    assert_eq!(w.status().watched, 5);
}

#[tokio::test]
async fn past_the_watch_limit_it_polls_and_says_so() {
    let (_d, root) = tree();
    let w = watcher(&root, Some(2)).await;
    let s = w.status();
    assert_eq!(s.mode, "poll");
    assert!(
        s.note.as_deref().is_some_and(|n| n.contains("limit")),
        "{s:?}"
    );
    sees_every_change_at_once(&w, &root).await;
}

#[tokio::test]
async fn a_folder_that_crosses_the_limit_later_switches_to_polling_without_losing_it() {
    let (_d, root) = tree();
    let w = watcher(&root, Some(3)).await;
    assert_eq!(w.status().mode, "inotify");
    std::fs::create_dir_all(root.join("late")).unwrap();
    std::fs::write(root.join("late/x.py"), "x = 1\n").unwrap();
    let b = w.take().await;
    assert_eq!(w.status().mode, "poll");
    assert_eq!(kinds(&b, &root), [("late/x.py".into(), "created")]);
    std::fs::write(root.join("late/x.py"), "x = 2\n").unwrap();
    assert_eq!(
        kinds(&w.take().await, &root),
        [("late/x.py".into(), "changed")]
    );
}

#[tokio::test]
async fn a_burst_becomes_one_batch_and_wait_wakes_for_it() {
    let (_d, root) = tree();
    let w = watcher(&root, None).await;
    let waiter = {
        let w = w.clone();
        tokio::spawn(async move { w.wait().await })
    };
    for i in 0..500 {
        std::fs::write(root.join(format!("pkg/f{i}.py")), format!("x = {i}\n")).unwrap();
    }
    tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("wait() wakes when changes are pending")
        .unwrap();
    let b = w.take().await;
    assert_eq!(b.changes.len(), 500);
    assert!(b.changes.iter().all(|c| c.kind == ChangeKind::Created));
    assert!(!b.rescan);
}

#[tokio::test]
async fn a_deleted_folder_is_reported_and_unwatched() {
    let (_d, root) = tree();
    let w = watcher(&root, None).await;
    std::fs::remove_dir_all(root.join("pkg")).unwrap();
    let k = kinds(&w.take().await, &root);
    assert!(k.contains(&("pkg/b.py".into(), "deleted")), "{k:?}");
    assert!(k.contains(&("pkg".into(), "deleted")), "{k:?}");
    assert_eq!(w.status().watched, 1, "only the root is left");
}

#[tokio::test]
async fn off_means_off() {
    let (_d, root) = tree();
    let w = Watcher::start(
        &root,
        WatchOptions {
            enabled: false,
            ..WatchOptions::default()
        },
    )
    .await;
    std::fs::write(root.join("a.py"), "a = 9\n").unwrap();
    assert!(w.take().await.is_empty());
    assert_eq!(w.status().mode, "off");
}

/// A flood past `MAX_PENDING` files collapses to one rescan (what was pending dropped, what
/// comes after it too), so what a root holds between two takes is bounded; the next take is
/// file by file again.
#[tokio::test]
async fn a_flood_collapses_to_a_rescan() {
    let (_d, root) = tree();
    let w = watcher(&root, None).await;
    for i in 0..MAX_PENDING + 10 {
        std::fs::write(root.join(format!("pkg/f{i}.py")), "x\n").unwrap();
        if i % 4096 == 0 {
            // Drained now and then, as the debounce loop would, so the kernel's queue holds.
            w.wait().await;
        }
    }
    let b = w.take().await;
    assert!(b.rescan, "{} changes", b.changes.len());
    assert!(b.changes.is_empty(), "{} changes", b.changes.len());
    std::fs::write(root.join("a.py"), "a = 5\n").unwrap();
    let b = w.take().await;
    assert!(!b.rescan);
    assert_eq!(kinds(&b, &root), [("a.py".into(), "changed")]);
}

/// Its status is read without waiting for a drain that holds the state, and a take waits for
/// one on the blocking pool, the runtime's thread serving others meanwhile.
#[tokio::test]
async fn its_status_never_waits_for_a_drain() {
    let (_d, root) = tree();
    let w = watcher(&root, None).await;
    // A long drain, as a flood would make: the state held for a while on another thread.
    let state = w.state.clone();
    let (held, released) = (std::sync::mpsc::channel(), std::sync::mpsc::channel::<()>());
    let holder = std::thread::spawn(move || {
        let _state = state.lock().unwrap();
        held.0.send(()).unwrap();
        let _ = released.1.recv_timeout(Duration::from_secs(10));
    });
    held.1.recv().unwrap();
    let started = std::time::Instant::now();
    assert_eq!(w.status().mode, "inotify");
    assert!(started.elapsed() < Duration::from_secs(1));
    std::fs::write(root.join("a.py"), "a = 6\n").unwrap();
    let take = tokio::spawn({
        let w = w.clone();
        async move { w.take().await }
    });
    // The runtime's one thread is free while the take waits.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!take.is_finished());
    released.0.send(()).unwrap();
    holder.join().unwrap();
    let b = tokio::time::timeout(Duration::from_secs(10), take)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(kinds(&b, &root), [("a.py".into(), "changed")]);
}
