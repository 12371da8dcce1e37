//! The workspace's files as a walk finds them (`workspace::walk`), kept between requests while
//! the watcher vouches for them: a hook's import walk, a check's survey and the turn-end gate
//! each needed a walk of the whole tree (tens of milliseconds on Django).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::Registry;
use crate::watch::{Change, ChangeKind};

/// A kept walk is walked again after this long, whatever the watcher said: it skips a few
/// folders a walk enters (`target`, `venv`), where a new file would go unseen until then.
const TREE_KEPT_FOR: Duration = Duration::from_secs(60);

/// Names of the files whose change may change what a walk keeps.
const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore", ".git"];

/// The kept walk and the generation of what the watcher delivered when it began.
#[derive(Default)]
pub(super) struct Tree {
    /// Moves on whenever a delivered change may add a file to the walk or take one away.
    generation: AtomicU64,
    kept: std::sync::Mutex<Option<Kept>>,
}

struct Kept {
    generation: u64,
    at: Instant,
    files: Arc<Vec<PathBuf>>,
}

impl Tree {
    /// Takes note of delivered changes: a file created that the walk did not hold (an
    /// existing file replaced by a rename is held; a hidden one or one gone again would not
    /// be; a folder moved in counts), one deleted that it held or a folder holding some, an ignore file changed, or a
    /// rescan, and the next walk is a fresh one.
    pub(super) fn delivered(&self, root: &Path, changes: &[Change], rescan: bool) {
        let kept = match self.kept.lock() {
            Ok(k) => k.as_ref().map(|k| k.files.clone()),
            Err(_) => None,
        };
        let Some(files) = kept else {
            self.generation.fetch_add(1, Ordering::AcqRel);
            return;
        };
        let held = |p: &Path| files.binary_search_by(|f| f.as_path().cmp(p)).is_ok();
        // A folder deleted or moved away: the first file at or after it in path order is in
        // it, if any is.
        let holds_under = |dir: &Path| {
            let at = files.partition_point(|f| f.as_path() < dir);
            files.get(at).is_some_and(|f| f.starts_with(dir))
        };
        let moved = rescan
            || changes.iter().any(|c| {
                let ignore_file = c
                    .path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| IGNORE_FILES.contains(&n));
                ignore_file
                    || match c.kind {
                        ChangeKind::Created => {
                            !held(&c.path) && !hidden(root, &c.path) && c.path.exists()
                        }
                        ChangeKind::Deleted => held(&c.path) || holds_under(&c.path),
                        ChangeKind::Changed => false,
                    }
            });
        if moved {
            self.generation.fetch_add(1, Ordering::AcqRel);
        }
    }
}

/// Whether a walk leaves `path` out as hidden: a name under `root` that begins with a dot.
fn hidden(root: &Path, path: &Path) -> bool {
    path.strip_prefix(root).is_ok_and(|rel| {
        rel.components()
            .any(|c| c.as_os_str().to_str().is_some_and(|n| n.starts_with('.')))
    })
}

impl Registry {
    /// The workspace's files (`workspace::walk` of the root, at most `WALK_LIMIT`), walked
    /// again only when the watcher delivered a change that may add or take away one, or
    /// after `TREE_KEPT_FOR`. Without an inotify watcher, walked on every call. Blocking.
    pub fn tree(&self) -> Arc<Vec<PathBuf>> {
        let watched = self
            .watcher
            .get()
            .is_some_and(|w| w.status().mode == "inotify");
        let generation = self.tree.generation.load(Ordering::Acquire);
        if watched
            && let Ok(kept) = self.tree.kept.lock()
            && let Some(k) = kept.as_ref()
            && k.generation == generation
            && k.at.elapsed() < TREE_KEPT_FOR
        {
            return k.files.clone();
        }
        let at = Instant::now();
        let files = Arc::new(crate::workspace::walk(
            self.root.path(),
            crate::workspace::WALK_LIMIT,
        ));
        // Kept only if nothing that could change it was delivered while walking.
        if watched
            && self.tree.generation.load(Ordering::Acquire) == generation
            && let Ok(mut kept) = self.tree.kept.lock()
        {
            *kept = Some(Kept {
                generation,
                at,
                files: files.clone(),
            });
        }
        files
    }
}
