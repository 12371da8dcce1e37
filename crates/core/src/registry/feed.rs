//! What the registry reports for the durable event log: server lifecycle (started, restarted,
//! failed, stopped) and the files each delivery of changes on disk carried, split by who wrote
//! them. The registry knows no database: the workspace that owns it gives it a sink (`feed_to`)
//! that puts each one, in the order they happened, on the channel its event log writes from
//! (`crate::events`), behind the workspace's own events. Nothing is lost to a slow reader (unlike
//! the `ServerEvent` broadcast, which only informs live clients).
//!
//! An edit claims its paths before writing (`claim_writes`), so a watcher delivery that carries
//! them first still counts them as lspgate's, and each is reported once.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// One thing the registry saw happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryEvent {
    /// A server instance's first process answered `initialize`.
    Started { server: String, root: PathBuf },
    /// A crashed process was replaced; `reason` is why the old one ended.
    Restarted {
        server: String,
        root: PathBuf,
        reason: String,
    },
    /// The server could not start, or its supervisor gave it up.
    Failed {
        server: String,
        root: PathBuf,
        reason: String,
    },
    /// lspgate stopped it (idle, restart asked, shutdown, replaced).
    Stopped {
        server: String,
        root: PathBuf,
        reason: String,
    },
    /// One delivery of changes on disk: the files lspgate's own edits wrote, and the rest.
    FilesChanged {
        own: Vec<PathBuf>,
        outside: Vec<PathBuf>,
    },
}

/// Where registry events go: a channel's sending end, in practice.
pub type Sink = Box<dyn Fn(RegistryEvent) + Send + Sync>;

/// Files an edit of lspgate's is writing now (path → whether a delivery already carried the
/// write): a watcher may see them before the edit hands them over (`sync_with`). Shared by the
/// registries whose changes go to one log (the daemon's workspaces on one root), so that one
/// workspace's edit is its own in another's deliveries too.
pub type Claims = Arc<Mutex<HashMap<PathBuf, bool>>>;

/// The sink, once the workspace gave one, and lspgate's own writes in flight.
#[derive(Default)]
pub(super) struct Feed {
    sink: OnceLock<Sink>,
    claimed: OnceLock<Claims>,
}

impl Feed {
    /// Sets the sink and the claims it shares (once; a later sink is refused and returned).
    pub(super) fn set(&self, sink: Sink, claims: Claims) -> Result<(), Sink> {
        self.sink.set(sink)?;
        let _ = self.claimed.set(claims);
        Ok(())
    }

    fn claims(&self) -> &Mutex<HashMap<PathBuf, bool>> {
        self.claimed.get_or_init(Claims::default)
    }

    pub(super) fn send(&self, e: RegistryEvent) {
        // A registry nobody records (no workspace over it) drops what it sees.
        if let Some(sink) = self.sink.get() {
            sink(e);
        }
    }

    pub(super) fn claim(&self, paths: &[PathBuf]) {
        if let Ok(mut c) = self.claims().lock() {
            for p in paths {
                c.insert(p.clone(), false);
            }
        }
    }

    /// Ends claims that no delivery will end (the edit failed or was dropped).
    pub(super) fn unclaim(&self, paths: &[PathBuf]) {
        if let Ok(mut c) = self.claims().lock() {
            for p in paths {
                c.remove(p);
            }
        }
    }

    /// Splits a delivery into lspgate's own writes and the rest. `own` are the files an edit
    /// handed over: their claims end here, and a file a watcher delivery already carried (and
    /// so already reported) is not reported twice.
    pub(super) fn split(
        &self,
        own: &[PathBuf],
        delivered: &[PathBuf],
    ) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let Ok(mut claimed) = self.claims().lock() else {
            return (own.to_vec(), Vec::new());
        };
        let mut mine = Vec::new();
        let mut outside = Vec::new();
        for p in delivered {
            // lspgate's own temporary files (written, exchanged, removed) are no one's news.
            if p.file_name().is_some_and(crate::edits::fs::is_temp) {
                continue;
            }
            if own.contains(p) {
                if claimed.remove(p) != Some(true) {
                    mine.push(p.clone());
                }
            } else if let Some(seen) = claimed.get_mut(p) {
                *seen = true;
                mine.push(p.clone());
            } else {
                outside.push(p.clone());
            }
        }
        for p in own {
            claimed.remove(p);
        }
        (mine, outside)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    #[test]
    fn own_writes_are_reported_once_whoever_delivers_them_first() {
        let feed = Feed::default();
        feed.claim(&[p("/r/a.py"), p("/r/b.py")]);
        // The watcher delivers a.py (lspgate's write) with c.py (someone else's) first.
        let (mine, outside) = feed.split(&[], &[p("/r/a.py"), p("/r/c.py")]);
        assert_eq!((mine, outside), (vec![p("/r/a.py")], vec![p("/r/c.py")]));
        // Then the edit hands both over: a.py was reported already.
        let (mine, outside) =
            feed.split(&[p("/r/a.py"), p("/r/b.py")], &[p("/r/a.py"), p("/r/b.py")]);
        assert_eq!((mine, outside), (vec![p("/r/b.py")], vec![]));
        // The claims are over: a later write of a.py is someone else's.
        let (mine, outside) = feed.split(&[], &[p("/r/a.py")]);
        assert_eq!((mine, outside), (vec![], vec![p("/r/a.py")]));
    }

    /// Two registries reporting to one log (the daemon's workspaces on one root): one's edit
    /// in flight is lspgate's in the other's delivery too, and reported once.
    #[test]
    fn an_edit_in_flight_is_lspgates_in_every_registry_sharing_the_claims() {
        let claims = Claims::default();
        let (editing, other) = (Feed::default(), Feed::default());
        for f in [&editing, &other] {
            assert!(f.set(Box::new(|_| {}), claims.clone()).is_ok());
        }
        editing.claim(&[p("/r/a.py")]);
        let (mine, outside) = other.split(&[], &[p("/r/a.py")]);
        assert_eq!((mine, outside), (vec![p("/r/a.py")], vec![]));
        let (mine, outside) = editing.split(&[p("/r/a.py")], &[p("/r/a.py")]);
        assert_eq!((mine, outside), (vec![], vec![]));
        // Without shared claims the other registry would call it someone else's.
        let alone = Feed::default();
        editing.claim(&[p("/r/b.py")]);
        assert_eq!(alone.split(&[], &[p("/r/b.py")]).1, vec![p("/r/b.py")]);
    }
}
