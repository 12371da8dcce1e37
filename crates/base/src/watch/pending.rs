//! What the watcher has seen since the last take: each path's events coalesced into one change
//! (created then deleted: nothing; an atomic save: one change), at most `MAX_PENDING` of them,
//! past which it collapses to "rescan" (anything may have changed), and checked against the
//! disk when taken.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Batch, Change, ChangeKind};

/// Files (or folders moved or deleted whole) pending at most between two takes; past it the
/// batch collapses to `rescan` (anything may have changed), so a flood costs the same as one
/// kernel queue overflow, however long it lasts.
pub const MAX_PENDING: usize = 10_000;

/// What the kernel said of a path since the last `take`, coalesced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Seen {
    /// Created under a name that did not exist (IN_CREATE).
    New,
    /// Moved in, possibly over an existing file.
    MovedIn,
    Changed,
    Deleted,
}

#[derive(Default)]
pub(super) struct Pending {
    pub(super) map: BTreeMap<PathBuf, Seen>,
    pub(super) rescan: bool,
}

impl Pending {
    pub(super) fn add(&mut self, path: PathBuf, seen: Seen) {
        use Seen::*;
        if self.rescan {
            // Anything may have changed already: the rescan covers this one too.
            return;
        }
        let merged = match (self.map.get(&path).copied(), seen) {
            (None, s) => Some(s),
            (Some(New), Changed | MovedIn | New) => Some(New),
            (Some(New), Deleted) => None,
            (Some(MovedIn), Changed) => Some(MovedIn),
            (Some(_), Deleted) => Some(Deleted),
            // It existed before the batch and exists again.
            (Some(Deleted | Changed), New | MovedIn | Changed) => Some(Changed),
            (Some(MovedIn), New | MovedIn) => Some(MovedIn),
        };
        match merged {
            Some(s) => {
                self.map.insert(path, s);
                if self.map.len() > MAX_PENDING {
                    self.overflow();
                }
            }
            None => {
                self.map.remove(&path);
            }
        }
    }

    /// Too much to tell file by file (a flood, a lost kernel queue): anything may have
    /// changed.
    pub(super) fn overflow(&mut self) {
        self.map = BTreeMap::new();
        self.rescan = true;
    }

    pub(super) fn any(&self) -> bool {
        !self.map.is_empty() || self.rescan
    }

    /// The coalesced changes, each checked against the disk as it is now.
    pub(super) fn take(&mut self) -> Batch {
        let map = std::mem::take(&mut self.map);
        let mut changes = Vec::with_capacity(map.len());
        for (path, seen) in map {
            let exists = std::fs::symlink_metadata(&path).is_ok();
            let kind = match (seen, exists) {
                (Seen::New, false) => continue,
                (Seen::New | Seen::MovedIn, true) => ChangeKind::Created,
                (_, false) => ChangeKind::Deleted,
                (Seen::Changed | Seen::Deleted, true) => ChangeKind::Changed,
            };
            changes.push(Change { path, kind });
        }
        Batch {
            changes,
            rescan: std::mem::take(&mut self.rescan),
        }
    }
}
