//! What one server's answers may see: while an operation shows the server a text that is not on
//! disk (an overlay: a client's unsaved buffer, an agent's `source`), no request of anyone else
//! is in flight on that server, and what it pushes for other documents meanwhile is dropped
//! (it was computed on that text) until the server has taken the disk's text back.
//!
//! Requests hold the view shared for as long as they are in flight; an overlay holds it
//! exclusively from the moment its text is sent until the disk's is sent back. The task that
//! holds it exclusively passes freely (an operation asks its own questions about its own
//! overlay), and an exclusive holder waiting keeps new shared holders out for a while, so a
//! stream of requests does not starve an overlay and a request the overlay's wait depends on
//! still goes on.
//!
//! The documents whose pushes were dropped are sent again once the disk's text is back
//! (`resend_dropped` in lspgate-core's `documents`).

use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use url::Url;

/// After an overlay's document got its disk text back, how long other documents' pushes are
/// still dropped when the server publishes nothing for that document to show it took the
/// text back (a server that sends no diagnostics for it, or none with versions).
const SETTLE_AFTER_RESTORE: Duration = Duration::from_secs(2);

/// How long a request gives way to an overlay waiting for its turn (one in place it always
/// waits for).
const COURTESY: std::time::Duration = std::time::Duration::from_secs(1);

/// One server's view, shared by all its processes (a restart keeps it).
#[derive(Default)]
pub struct View {
    state: Mutex<State>,
    changed: Notify,
}

#[derive(Default)]
struct State {
    /// Requests in flight (shared holders), by the task that holds them.
    shared: std::collections::HashMap<Option<tokio::task::Id>, usize>,
    /// The task holding the view exclusively, and how many times it holds it.
    owner: Option<(Option<tokio::task::Id>, usize)>,
    /// Exclusive holders waiting for it.
    waiting: usize,
    /// Overlays in place or lately taken back, whose taint other documents' pushes carry.
    overlays: Vec<Overlay>,
    /// Overlays begun so far.
    begun: u64,
    /// Documents whose pushes were dropped, to be sent again once no overlay is about.
    dropped: std::collections::HashSet<Url>,
}

struct Overlay {
    uri: Url,
    /// `None` while in place; then the version the disk's text went back as (`None`: closed
    /// instead) and when.
    restored: Option<(Option<i32>, Instant)>,
}

impl State {
    /// Forgets overlays taken back long enough ago (a server that pushes nothing never says
    /// it took them back).
    fn prune(&mut self) {
        let now = Instant::now();
        self.overlays.retain(|o| {
            o.restored
                .is_none_or(|(_, at)| now.duration_since(at) <= SETTLE_AFTER_RESTORE)
        });
    }
}

fn me() -> Option<tokio::task::Id> {
    tokio::task::try_id()
}

/// A request's hold on the view, released when dropped.
pub struct Shared {
    view: Option<(Arc<View>, Option<tokio::task::Id>)>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Some((view, task)) = &self.view {
            view.update(|s| {
                if let Some(n) = s.shared.get_mut(task) {
                    *n -= 1;
                    if *n == 0 {
                        s.shared.remove(task);
                    }
                }
            });
        }
    }
}

/// An overlay's hold on the view, released when dropped (after the disk's text was sent back).
pub struct Exclusive {
    view: Arc<View>,
}

impl Drop for Exclusive {
    fn drop(&mut self) {
        self.view.update(|s| {
            if let Some((_, depth)) = &mut s.owner {
                *depth -= 1;
                if *depth == 0 {
                    s.owner = None;
                }
            }
        });
    }
}

/// Counts an exclusive holder as waiting for as long as it waits (also if its wait is dropped).
struct Waiting<'a>(&'a View);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.update(|s| s.waiting = s.waiting.saturating_sub(1));
    }
}

impl View {
    fn update(&self, f: impl FnOnce(&mut State)) {
        if let Ok(mut s) = self.state.lock() {
            f(&mut s);
        }
        self.changed.notify_waiters();
    }

    /// Holds the view for one request: waits while another task's overlay is in place or
    /// waiting to be. The overlay's own task passes at once.
    pub async fn shared(self: &Arc<Self>) -> Shared {
        let courtesy = tokio::time::Instant::now() + COURTESY;
        let mine = me();
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let only_waiting = {
                let Ok(mut s) = self.state.lock() else {
                    return Shared { view: None };
                };
                let held = s.shared.contains_key(&mine);
                match s.owner {
                    Some((owner, _)) if owner == mine => return Shared { view: None },
                    Some(_) => false,
                    // An overlay only waiting is not in place yet: a request that gave it its
                    // turn goes on (it may be one the overlay's own wait depends on, such as
                    // a server's request answered while another request is in flight), and so
                    // does one of a task with a request in flight (the overlay waits for that
                    // one anyway).
                    None if s.waiting == 0 || held || tokio::time::Instant::now() >= courtesy => {
                        *s.shared.entry(mine).or_default() += 1;
                        return Shared {
                            view: Some((self.clone(), mine)),
                        };
                    }
                    None => true,
                }
            };
            if only_waiting {
                // Woken when something changes, or when the courtesy is over.
                let _ = tokio::time::timeout_at(courtesy, notified).await;
            } else {
                notified.await;
            }
        }
    }

    /// Holds the view for an overlay of `uri`: waits until no request of another task is in
    /// flight and no other overlay is in place. Taken again by the task holding it, it nests.
    /// `None` when that did not come within `bound` (a request in flight may be waiting for
    /// what the caller holds).
    pub async fn exclusive(self: &Arc<Self>, uri: &Url, bound: Duration) -> Option<Exclusive> {
        let deadline = tokio::time::Instant::now() + bound;
        let mut waiting = None;
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let Ok(mut s) = self.state.lock() else {
                    break;
                };
                let mine = me();
                let shared = s.shared.keys().any(|task| *task != mine);
                let free = match &mut s.owner {
                    Some((owner, depth)) if *owner == mine => {
                        *depth += 1;
                        true
                    }
                    Some(_) => false,
                    owner @ None if !shared => {
                        *owner = Some((mine, 1));
                        true
                    }
                    None => false,
                };
                if free {
                    s.prune();
                    s.begun += 1;
                    s.overlays.push(Overlay {
                        uri: uri.clone(),
                        restored: None,
                    });
                    break;
                }
                if waiting.is_none() {
                    s.waiting += 1;
                    waiting = Some(Waiting(self));
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return None;
            }
        }
        drop(waiting);
        Some(Exclusive { view: self.clone() })
    }

    /// `uri`'s overlay is gone: its disk text went back as `version` (`None`: it was closed).
    /// Other documents' pushes are dropped until the server publishes that version for it (so
    /// it has taken it), or for a while.
    pub fn restored(&self, uri: &Url, version: Option<i32>) {
        self.update(|s| {
            if let Some(o) = s
                .overlays
                .iter_mut()
                .find(|o| &o.uri == uri && o.restored.is_none())
            {
                o.restored = Some((version, Instant::now()));
            }
        });
    }

    /// Whether a push for `uri` at `version` was computed on the disk's texts alone, as far
    /// as lspgate can tell; pushes for an overlay's own document always are kept (their
    /// version tells which text they are of).
    pub fn admits_push(&self, uri: &Url, version: Option<i32>) -> bool {
        let Ok(mut s) = self.state.lock() else {
            return true;
        };
        s.prune();
        s.overlays.retain(|o| match o.restored {
            None => true,
            // The server published the restored version: it has taken the disk's text back.
            Some((back, _)) if &o.uri == uri => match (back, version) {
                (Some(b), Some(v)) => v < b,
                _ => false,
            },
            Some(_) => true,
        });
        let admitted = s.overlays.iter().all(|o| &o.uri == uri);
        if !admitted {
            s.dropped.insert(uri.clone());
        }
        admitted
    }

    /// The documents whose pushes were dropped, once no overlay is about (none before).
    pub fn take_dropped(&self) -> Vec<Url> {
        let Ok(mut s) = self.state.lock() else {
            return Vec::new();
        };
        s.prune();
        if !s.overlays.is_empty() {
            return Vec::new();
        }
        s.dropped.drain().collect()
    }

    /// Whether the running task holds the view exclusively (it shows the server an overlay).
    pub fn held_here(&self) -> bool {
        self.state
            .lock()
            .is_ok_and(|s| s.owner.is_some_and(|(owner, _)| owner == me()))
    }

    /// Whether some overlay is in place or lately taken back (pushes for other documents are
    /// being dropped).
    pub fn tainted(&self) -> bool {
        self.state.lock().is_ok_and(|mut s| {
            s.prune();
            !s.overlays.is_empty()
        })
    }

    /// A mark to tell, with `clean_since`, whether an answer that took a while (a whole
    /// workspace's diagnostics, not held as a request) saw an overlay.
    pub fn mark(&self) -> Option<u64> {
        let mut s = self.state.lock().ok()?;
        s.prune();
        s.overlays.is_empty().then_some(s.begun)
    }

    /// Whether no overlay was shown since `mark` (taken with no overlay about).
    pub fn clean_since(&self, mark: Option<u64>) -> bool {
        let Some(mark) = mark else { return false };
        self.state.lock().is_ok_and(|mut s| {
            s.prune();
            s.begun == mark && s.overlays.is_empty()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = Duration::from_secs(30);

    fn uri(name: &str) -> Url {
        Url::parse(&format!("file:///w/{name}")).unwrap()
    }

    /// A request of another task waits while an overlay is in place; the overlay's own task
    /// passes; the request goes on once the overlay is gone.
    #[tokio::test]
    async fn requests_wait_for_another_tasks_overlay() {
        let view = Arc::new(View::default());
        let held = tokio::spawn({
            let view = view.clone();
            async move {
                let ex = view.exclusive(&uri("a.py"), LONG).await.unwrap();
                // Its own requests pass.
                let own = tokio::time::timeout(Duration::from_millis(100), view.shared()).await;
                assert!(own.is_ok());
                tokio::time::sleep(Duration::from_millis(200)).await;
                drop(ex);
            }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        let t = Instant::now();
        let _s = view.shared().await;
        assert!(
            t.elapsed() >= Duration::from_millis(100),
            "{:?}",
            t.elapsed()
        );
        held.await.unwrap();
    }

    /// An overlay waits for the requests in flight, and keeps new ones out meanwhile.
    #[tokio::test]
    async fn an_overlay_waits_for_requests_in_flight_and_is_not_starved() {
        let view = Arc::new(View::default());
        let first = view.shared().await;
        let overlay = tokio::spawn({
            let view = view.clone();
            async move {
                let ex = view.exclusive(&uri("a.py"), LONG).await.unwrap();
                tokio::time::sleep(Duration::from_millis(50)).await;
                drop(ex);
            }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        // A newcomer queues behind the waiting overlay.
        let newcomer = tokio::spawn({
            let view = view.clone();
            async move {
                let _s = view.shared().await;
            }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!newcomer.is_finished());
        assert!(!overlay.is_finished());
        drop(first);
        overlay.await.unwrap();
        newcomer.await.unwrap();
    }

    /// A request that waited its courtesy for an overlay still waiting (on a request in
    /// flight, which may depend on it) goes on: the overlay is not in place yet.
    #[tokio::test]
    async fn a_request_gives_a_waiting_overlay_its_turn_then_goes_on() {
        let view = Arc::new(View::default());
        let first = view.shared().await;
        let overlay = tokio::spawn({
            let view = view.clone();
            async move {
                drop(view.exclusive(&uri("a.py"), LONG).await.unwrap());
            }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let other = tokio::spawn({
            let view = view.clone();
            async move {
                let t = Instant::now();
                let second = view.shared().await;
                (t.elapsed(), second)
            }
        });
        let (waited, second) = other.await.unwrap();
        assert!(waited >= COURTESY, "{waited:?}");
        assert!(!overlay.is_finished());
        drop((first, second));
        overlay.await.unwrap();
    }

    /// A task with a request in flight asks again at once (its overlay-waiting neighbour
    /// waits for its first anyway); an overlay that cannot have its turn within its bound
    /// gives up, and the view is as it was.
    #[tokio::test]
    async fn nested_requests_pass_and_a_bounded_overlay_gives_up() {
        let view = Arc::new(View::default());
        let first = view.shared().await;
        let overlay = tokio::spawn({
            let view = view.clone();
            async move {
                view.exclusive(&uri("a.py"), Duration::from_millis(300))
                    .await
                    .is_none()
            }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let t = Instant::now();
        let nested = view.shared().await;
        assert!(
            t.elapsed() < Duration::from_millis(100),
            "{:?}",
            t.elapsed()
        );
        assert!(overlay.await.unwrap(), "the overlay gave up");
        drop((first, nested));
        assert!(view.exclusive(&uri("a.py"), LONG).await.is_some());
    }

    /// Pushes for other documents are dropped while an overlay is in place and until the
    /// server publishes the restored version of the overlay's document.
    #[tokio::test]
    async fn pushes_for_other_documents_wait_for_the_restored_version() {
        let view = Arc::new(View::default());
        let (a, b) = (uri("a.py"), uri("b.py"));
        assert!(view.admits_push(&b, Some(1)));
        let ex = view.exclusive(&a, LONG).await.unwrap();
        assert!(!view.admits_push(&b, Some(1)));
        assert!(view.admits_push(&a, Some(7)), "the overlay's own");
        view.restored(&a, Some(8));
        drop(ex);
        assert!(
            !view.admits_push(&b, Some(1)),
            "before the server took it back"
        );
        assert!(view.admits_push(&a, Some(7)));
        assert!(!view.admits_push(&b, Some(1)));
        assert!(view.admits_push(&a, Some(8)));
        assert!(view.admits_push(&b, Some(1)), "after");
        assert!(!view.tainted());
        // b.py's dropped pushes are to be asked for again, once.
        assert_eq!(view.take_dropped(), vec![b.clone()]);
        assert!(view.take_dropped().is_empty());
    }

    /// A long answer taken while no overlay was about is clean only if none came meanwhile.
    #[tokio::test]
    async fn a_mark_tells_whether_an_overlay_came_since() {
        let view = Arc::new(View::default());
        let mark = view.mark();
        assert!(view.clean_since(mark));
        let ex = view.exclusive(&uri("a.py"), LONG).await.unwrap();
        assert_eq!(view.mark(), None, "no mark while one is in place");
        assert!(!view.clean_since(view.mark()));
        view.restored(&uri("a.py"), None);
        drop(ex);
        assert!(!view.clean_since(mark));
        // A server that pushes nothing never says it took the text back: the taint ends on
        // its own.
        assert!(view.tainted());
        tokio::time::sleep(SETTLE_AFTER_RESTORE + Duration::from_millis(100)).await;
        assert!(!view.tainted());
        assert!(view.mark().is_some());
    }
}
