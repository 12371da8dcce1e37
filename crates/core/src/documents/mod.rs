//! Open documents of one server: opened on demand, checked against the disk on every access
//! (its `FileVersion`, then content) so no answer is computed on stale text, capped by an LRU,
//! `source` overlays that never touch the disk, fresh diagnostics per document version, and
//! reopened with their current text (overlays included) in a restarted server process. An
//! overlay holds the server's view exclusively (`lsp::View`): no one else's request is in
//! flight while the server sees it, and no push computed on it is kept for another document.
//!
//! `lease` returns the document as the server has it, synced with the disk first: its `FileVersion`
//! is compared on every access and, until a check has found that version settled (its ctime two
//! seconds before the check, so a later write must move it), its content too; a change is sent as
//! `didChange` + `didSave` before the request. An overlay is replaced by the disk's content when
//! its lease ends. A restarted process gets a new client slot and every document reopened there (a
//! per-document generation says which process has it open). Waits for diagnostics are always
//! bounded.

mod diagnostics;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tokio::sync::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock};
use url::Url;

use crate::error::{CoreError, Kind};
use crate::lsp::wire::{WireDiagnostic, WirePos, WireRange};
use crate::lsp::{LspClient, View};
use crate::text::{self, Encoding, LineIndex};
use crate::watch::FileVersion;

/// How long a task showing the server an overlay waits for another document (see `lease`).
const OVERLAY_WAIT: Duration = Duration::from_secs(5);

/// How long an overlay waits for the requests in flight on its server (one of them may be
/// waiting for the document the overlay holds: a command's edit, say).
const VIEW_WAIT: Duration = Duration::from_secs(30);

struct DocState {
    open: bool,
    version: i32,
    text: Arc<str>,
    index: Arc<LineIndex>,
    /// What of the disk `text` was read from; `None` while an overlay is in place.
    disk: Option<DiskCopy>,
}

/// A text read from a file, and how to tell cheaply whether the file still holds it.
pub struct DiskCopy {
    version: FileVersion,
    /// The content was checked against the disk after the version had settled, so an unchanged
    /// version means unchanged content: a later write would have moved the status-change time.
    trusted: AtomicBool,
}

impl DiskCopy {
    /// Reads `path`: its text (invalid UTF-8 replaced) and its copy record.
    pub fn read(path: &Path) -> std::io::Result<(String, DiskCopy)> {
        let meta = std::fs::metadata(path)?;
        if !meta.is_file() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        let bytes = lspgate_base::regular::read(path, true)?;
        let text = match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        Ok((
            text,
            DiskCopy {
                version: FileVersion::of(&meta),
                trusted: AtomicBool::new(false),
            },
        ))
    }

    /// Whether `path` still holds `text`. The version (device, inode, size, ctime) must match;
    /// the content is compared too until a check finds the version settled, so a same-size
    /// rewrite within one timestamp tick, or with the mtime put back, is caught.
    pub fn is_fresh(&self, path: &Path, text: &str) -> bool {
        let Ok(meta) = std::fs::metadata(path) else {
            return false;
        };
        if FileVersion::of(&meta) != self.version {
            return false;
        }
        if self.trusted.load(Ordering::Acquire) {
            return true;
        }
        let checked = SystemTime::now();
        let same = match lspgate_base::regular::read(path, true) {
            Ok(bytes) => match std::str::from_utf8(&bytes) {
                Ok(s) => s == text,
                Err(_) => String::from_utf8_lossy(&bytes) == text,
            },
            Err(_) => false,
        };
        if same && self.version.settled(checked) {
            self.trusted.store(true, Ordering::Release);
        }
        same
    }
}

/// The server process documents are sent to; replaced when the server restarts.
struct ClientSlot {
    client: std::sync::RwLock<Arc<LspClient>>,
    /// What the server's answers may see; every process of the server is under it.
    view: Arc<View>,
    /// The documents the server has open, by path.
    docs: Mutex<HashMap<PathBuf, Arc<Doc>>>,
    /// Bumped on each replacement; a document opened in an older one must be reopened.
    generation: AtomicU64,
    /// Counts the changes the server was sent (a document's new text, or a file on disk it
    /// was told of), with the latest one's document: a push for another document sent before
    /// it may not know of it (`Documents::lease_current`).
    last_change: Mutex<(u64, Option<Url>)>,
}

impl ClientSlot {
    /// The document open at `path`, if any.
    fn doc(&self, path: &Path) -> Option<Arc<Doc>> {
        self.docs.lock().ok()?.get(path).cloned()
    }

    /// Records that `uri` changed as the server sees it, now; returns the change's number.
    fn changed(&self, uri: &Url) -> u64 {
        match self.last_change.lock() {
            Ok(mut last) => {
                *last = (last.0 + 1, Some(uri.clone()));
                last.0
            }
            Err(_) => 0,
        }
    }

    /// The number of the latest change sent.
    fn changes(&self) -> u64 {
        self.last_change.lock().map(|l| l.0).unwrap_or(0)
    }

    /// Whether the server was sent a change of another document after `doc`'s latest text.
    fn behind(&self, doc: &Doc) -> bool {
        let mine = doc.sent_no.load(Ordering::Acquire);
        self.last_change
            .lock()
            .is_ok_and(|l| l.0 > mine && l.1.as_ref().is_some_and(|u| *u != doc.uri))
    }

    fn current(&self) -> (Arc<LspClient>, u64) {
        let c = self.client.read().map(|c| c.clone());
        let c = match c {
            Ok(c) => c,
            Err(p) => p.into_inner().clone(),
        };
        (c, self.generation.load(Ordering::Acquire))
    }
}

struct Doc {
    uri: Url,
    path: PathBuf,
    language_id: String,
    state: Arc<RwLock<DocState>>,
    last_used: AtomicU64,
    /// Version whose pushed diagnostics have settled (-1: none).
    settled: AtomicI64,
    /// Client generation the document was last opened in.
    opened_gen: AtomicU64,
    /// Publish counter of that client when the last open/change went out.
    change_seq: AtomicU64,
    /// The slot's change number (`ClientSlot::changed`) when its latest text went out.
    sent_no: AtomicU64,
    /// Serializes "is it open in the current process? else open it".
    reopen: Mutex<()>,
}

/// Opens `doc` in the current server process if it was opened in an older one.
fn reopen_doc(slot: &ClientSlot, doc: &Doc, text: &str, version: i32) {
    let Ok(_g) = doc.reopen.lock() else { return };
    let (client, generation) = slot.current();
    if doc.opened_gen.load(Ordering::Acquire) != generation {
        doc.change_seq
            .store(client.publish_seq(), Ordering::Release);
        doc.sent_no.store(slot.changes(), Ordering::Release);
        doc.settled.store(-1, Ordering::Release);
        client.did_open(&doc.uri, &doc.language_id, version, text);
        doc.opened_gen.store(generation, Ordering::Release);
    }
}

/// An immutable view of a document as the server has it, for the duration of one operation.
#[derive(Clone)]
pub struct Snapshot {
    pub uri: Url,
    pub path: PathBuf,
    pub version: i32,
    pub text: Arc<str>,
    pub index: Arc<LineIndex>,
    pub encoding: Encoding,
}

impl Snapshot {
    /// 1-based line and code-point column to the server's position.
    pub fn to_wire(&self, line: u32, column: u32) -> Result<WirePos, CoreError> {
        let (line, character) = text::to_wire(&self.text, &self.index, line, column, self.encoding)
            .map_err(|e| CoreError::invalid(e.to_string()))?;
        Ok(WirePos { line, character })
    }

    /// The server's position to 1-based line and code-point column.
    pub fn from_wire(&self, pos: WirePos) -> (u32, u32) {
        text::from_wire(
            &self.text,
            &self.index,
            pos.line,
            pos.character,
            self.encoding,
        )
    }

    pub fn range(&self, r: WireRange) -> (u32, u32, u32, u32) {
        let (l, c) = self.from_wire(r.start);
        let (el, ec) = self.from_wire(r.end);
        (l, c, el, ec)
    }

    /// The text of 1-based `line`, without its line ending.
    pub fn line(&self, line: u32) -> Option<&str> {
        self.index.line(&self.text, line.checked_sub(1)? as usize)
    }
}

enum Guard {
    Shared(#[allow(dead_code)] OwnedRwLockReadGuard<DocState>),
    /// The document's text, and the server's view, held until the disk's text went back.
    Overlay(
        OwnedRwLockWriteGuard<DocState>,
        Option<crate::lsp::view::Exclusive>,
    ),
}

/// A document held for one operation: no other operation can change what the server sees
/// of it until the lease is dropped. An overlay lease restores the disk content when dropped.
pub struct Lease {
    pub snap: Snapshot,
    guard: Guard,
    slot: Arc<ClientSlot>,
    doc: Arc<Doc>,
}

impl Lease {
    /// Whether the lease holds an overlay (text given instead of the disk's).
    pub fn is_overlay(&self) -> bool {
        matches!(self.guard, Guard::Overlay(..))
    }

    /// Makes sure the (possibly restarted) server process has this document open, as the
    /// lease sees it. Call before retrying a request after a restart.
    pub fn reopen(&self) {
        reopen_doc(&self.slot, &self.doc, &self.snap.text, self.snap.version);
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Guard::Overlay(st, view) = &mut self.guard {
            let back = match read_disk(&self.doc.path) {
                Ok((text, copy)) => {
                    set_text(&self.slot, &self.doc, st, text, Some(copy));
                    Some(st.version)
                }
                Err(_) => {
                    self.slot.current().0.did_close(&self.doc.uri);
                    st.open = false;
                    None
                }
            };
            self.slot.view.restored(&self.doc.uri, back);
            // The view is free again only now, with the disk's text sent.
            drop(view.take());
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(resend_dropped(self.slot.clone()));
            }
        }
    }
}

/// The documents one server has open.
pub struct Documents {
    slot: Arc<ClientSlot>,
    cap: usize,
    /// Room above `cap` while a batch (a `check`) runs, shared by every server's documents:
    /// closing files a batch opened would make the server analyse them again.
    room: Arc<AtomicUsize>,
    clock: AtomicU64,
}

/// Diagnostics of one document, and whether they are known to match its current content.
pub struct DocDiagnostics {
    pub diagnostics: Vec<WireDiagnostic>,
    pub fresh: bool,
}

impl Documents {
    pub fn new(client: Arc<LspClient>, cap: usize, room: Arc<AtomicUsize>) -> Documents {
        let view = Arc::new(View::default());
        client.attach(&view);
        Documents {
            slot: Arc::new(ClientSlot {
                client: std::sync::RwLock::new(client),
                view,
                docs: Mutex::default(),
                generation: AtomicU64::new(0),
                last_change: Mutex::new((0, None)),
            }),
            cap: cap.max(1),
            room,
            clock: AtomicU64::new(0),
        }
    }

    /// Closes least recently used documents past the cap (and any batch room), skipping those
    /// in use; `keep` is never closed.
    fn trim(&self, docs: &mut HashMap<PathBuf, Arc<Doc>>, keep: Option<&Arc<Doc>>) {
        let limit = self.cap + self.room.load(Ordering::Acquire);
        while docs.len() > limit {
            let victim = docs
                .values()
                .filter(|d| keep.is_none_or(|k| !Arc::ptr_eq(d, k)))
                .filter(|d| Arc::strong_count(d) == 1)
                .min_by_key(|d| d.last_used.load(Ordering::Relaxed))
                .cloned();
            let Some(victim) = victim else { break };
            let Ok(mut st) = victim.state.try_write() else {
                break;
            };
            if st.open {
                let (client, generation) = self.slot.current();
                if victim.opened_gen.load(Ordering::Acquire) == generation {
                    client.did_close(&victim.uri);
                }
                st.open = false;
            }
            drop(st);
            docs.remove(&victim.path);
        }
    }

    /// Brings the open documents back under the cap (after a batch ends).
    pub fn trim_to_cap(&self) {
        if let Ok(mut docs) = self.slot.docs.lock() {
            self.trim(&mut docs, None);
        }
    }

    /// The server process documents go to now.
    pub fn client(&self) -> Arc<LspClient> {
        self.slot.current().0
    }

    /// Points the documents at a restarted server process and reopens every document not in
    /// use right now with its current text (overlays included); those in use are reopened by
    /// their lease (`Lease::reopen`) before a retry.
    pub fn replace_client(&self, client: Arc<LspClient>) {
        client.attach(&self.slot.view);
        if let Ok(mut c) = self.slot.client.write() {
            *c = client;
            self.slot.generation.fetch_add(1, Ordering::AcqRel);
        }
        let docs: Vec<Arc<Doc>> = self
            .slot
            .docs
            .lock()
            .map(|d| d.values().cloned().collect())
            .unwrap_or_default();
        for doc in docs {
            if let Ok(st) = doc.state.try_read()
                && st.open
            {
                reopen_doc(&self.slot, &doc, &st.text, st.version);
            }
        }
    }

    /// How many documents the server has open now.
    pub fn open_count(&self) -> usize {
        self.slot.docs.lock().map(|d| d.len()).unwrap_or(0)
    }

    /// Holds `path` for an operation, synchronized with the disk first; with `overlay`, the
    /// server sees that text instead until the lease is dropped.
    pub async fn lease(
        &self,
        path: &Path,
        language_id: &str,
        overlay: Option<&str>,
    ) -> Result<Lease, CoreError> {
        let doc = self.entry(path, language_id)?;
        if let Some(src) = overlay {
            let mut st = self.held(&doc, doc.state.clone().write_owned()).await?;
            // The document first, then the view: a request holding the view waits for nothing.
            let Some(view) = self.slot.view.exclusive(&doc.uri, VIEW_WAIT).await else {
                return Err(CoreError::new(
                    Kind::Timeout,
                    format!(
                        "the server was busy with other requests for {} s; try again",
                        VIEW_WAIT.as_secs()
                    ),
                ));
            };
            set_text(&self.slot, &doc, &mut st, Arc::from(src), None);
            let snap = self.snapshot(&doc, &st);
            return Ok(Lease {
                snap,
                guard: Guard::Overlay(st, Some(view)),
                slot: self.slot.clone(),
                doc,
            });
        }
        {
            let st = self.held(&doc, doc.state.clone().read_owned()).await?;
            if st.open && is_fresh(&doc.path, &st) {
                return Ok(self.shared(doc, st));
            }
        }
        let mut st = self.held(&doc, doc.state.clone().write_owned()).await?;
        if !(st.open && is_fresh(&doc.path, &st)) {
            match read_disk(&doc.path) {
                Ok((text, copy)) => set_text(&self.slot, &doc, &mut st, text, Some(copy)),
                Err(e) => {
                    if st.open {
                        self.client().did_close(&doc.uri);
                        st.open = false;
                    }
                    drop(st);
                    self.forget(&doc.path);
                    return Err(e);
                }
            }
        }
        Ok(self.shared(doc, st.downgrade()))
    }

    /// Waits for `doc` (`lock`). A task showing the server an overlay keeps other overlays
    /// waiting, and one of them may hold `doc` meanwhile, waiting for the view: such a task
    /// waits a bounded time, so the two never wait for each other for good.
    async fn held<G>(&self, doc: &Doc, lock: impl Future<Output = G>) -> Result<G, CoreError> {
        if !self.slot.view.held_here() {
            return Ok(lock.await);
        }
        tokio::time::timeout(OVERLAY_WAIT, lock).await.map_err(|_| {
            CoreError::new(
                Kind::Timeout,
                format!("{} is held by another overlay", doc.path.display()),
            )
        })
    }

    fn shared(&self, doc: Arc<Doc>, st: OwnedRwLockReadGuard<DocState>) -> Lease {
        // Opened in a process that has since been replaced: open it in this one first.
        reopen_doc(&self.slot, &doc, &st.text, st.version);
        let snap = self.snapshot(&doc, &st);
        Lease {
            snap,
            guard: Guard::Shared(st),
            slot: self.slot.clone(),
            doc,
        }
    }

    fn snapshot(&self, doc: &Doc, st: &DocState) -> Snapshot {
        Snapshot {
            uri: doc.uri.clone(),
            path: doc.path.clone(),
            version: st.version,
            text: st.text.clone(),
            index: st.index.clone(),
            encoding: self.client().encoding(),
        }
    }

    fn entry(&self, path: &Path, language_id: &str) -> Result<Arc<Doc>, CoreError> {
        let tick = self.clock.fetch_add(1, Ordering::Relaxed);
        let mut docs = self
            .slot
            .docs
            .lock()
            .map_err(|_| CoreError::new(Kind::ServerFailed, "document table poisoned"))?;
        if let Some(d) = docs.get(path) {
            d.last_used.store(tick, Ordering::Relaxed);
            return Ok(d.clone());
        }
        let uri = Url::from_file_path(path).map_err(|_| {
            CoreError::invalid(format!("{} is not an absolute path", path.display()))
        })?;
        let doc = Arc::new(Doc {
            uri,
            path: path.to_path_buf(),
            language_id: language_id.to_string(),
            state: Arc::new(RwLock::new(DocState {
                open: false,
                version: 0,
                text: Arc::from(""),
                index: Arc::new(LineIndex::new("")),
                disk: None,
            })),
            last_used: AtomicU64::new(tick),
            settled: AtomicI64::new(-1),
            opened_gen: AtomicU64::new(0),
            change_seq: AtomicU64::new(0),
            sent_no: AtomicU64::new(0),
            reopen: Mutex::new(()),
        });
        docs.insert(path.to_path_buf(), doc.clone());
        // Past the cap, close the least recently used documents nobody is using right now.
        self.trim(&mut docs, Some(&doc));
        Ok(doc)
    }

    fn forget(&self, path: &Path) {
        if let Ok(mut docs) = self.slot.docs.lock() {
            docs.remove(path);
        }
    }

    /// The version the server has of an open document.
    pub fn open_version(&self, path: &Path) -> Option<i32> {
        let doc = self.slot.doc(path)?;
        let st = doc.state.try_read().ok()?;
        st.open.then_some(st.version)
    }

    /// Closes a document (deleted or renamed away) and forgets it.
    pub fn close(&self, path: &Path) {
        let doc = self.slot.docs.lock().ok().and_then(|mut d| d.remove(path));
        if let Some(doc) = doc
            && let Ok(mut st) = doc.state.try_write()
            && st.open
        {
            let (client, generation) = self.slot.current();
            if doc.opened_gen.load(Ordering::Acquire) == generation {
                client.did_close(&doc.uri);
            }
            st.open = false;
        }
    }

    /// Whether what the server published for `path` at `version` (when it sent one) was
    /// computed on the disk's content: the document is not open through lspgate (the server
    /// reads the disk), or it is open with the disk's text at that version, not an overlay.
    pub fn shows_disk(&self, path: &Path, version: Option<i32>) -> bool {
        let Some(doc) = self.slot.doc(path) else {
            return true;
        };
        // An overlay holds the document's write lock for as long as it is in place.
        let Ok(st) = doc.state.try_read() else {
            return false;
        };
        !st.open || (st.disk.is_some() && version.is_none_or(|v| v == st.version))
    }

    /// Whether the server has `path` open (through lspgate).
    pub fn is_open(&self, path: &Path) -> bool {
        self.slot.docs.lock().is_ok_and(|d| d.contains_key(path))
    }

    /// Makes the server's copy of an open document follow the disk: sent again when the file's
    /// content changed (with `force`, always, as a new version: a server that rereads what a
    /// document includes only when the document changes then rereads it), closed when the
    /// file is gone. A document in use is brought up to date as soon as its lease ends; one
    /// holding an overlay gets the disk content back when the overlay's lease ends anyway.
    pub fn refresh(&self, path: &Path, force: bool) {
        let Some(doc) = self.slot.doc(path) else {
            return;
        };
        match doc.state.clone().try_write_owned() {
            Ok(mut st) => {
                if !refresh_doc(&self.slot, &doc, &mut st, force) {
                    drop(st);
                    self.forget(path);
                }
            }
            Err(_) => {
                let slot = self.slot.clone();
                tokio::spawn(async move {
                    let mut st = doc.state.clone().write_owned().await;
                    refresh_doc(&slot, &doc, &mut st, force);
                });
            }
        }
    }

    /// Sends every open document again as a new version (see `refresh`).
    pub fn resync(&self) {
        let paths: Vec<PathBuf> = self
            .slot
            .docs
            .lock()
            .map(|d| d.keys().cloned().collect())
            .unwrap_or_default();
        for p in paths {
            self.refresh(&p, true);
        }
    }

    /// Paths and languages of the documents open now.
    pub fn open_paths(&self) -> Vec<(PathBuf, String)> {
        self.slot
            .docs
            .lock()
            .map(|d| {
                d.values()
                    .map(|doc| (doc.path.clone(), doc.language_id.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Once the server has taken an overlay back, sends again (as a new version) the open
/// documents whose pushes were dropped meanwhile (computed on the overlay): a server that
/// publishes only when a document changes would not send their diagnostics again.
async fn resend_dropped(slot: Arc<ClientSlot>) {
    for _ in 0..40 {
        if !slot.view.tainted() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for uri in slot.view.take_dropped() {
        let Ok(path) = uri.to_file_path() else {
            continue;
        };
        let doc = slot.doc(&path);
        let Some(doc) = doc else { continue };
        let mut st = doc.state.clone().write_owned().await;
        refresh_doc(&slot, &doc, &mut st, true);
    }
}

/// `Documents::refresh` for one document whose state is held; false when the file is gone
/// (the document is then closed).
fn refresh_doc(slot: &ClientSlot, doc: &Doc, st: &mut DocState, force: bool) -> bool {
    if !st.open || st.disk.is_none() {
        return true;
    }
    if !force && is_fresh(&doc.path, st) {
        return true;
    }
    match read_disk(&doc.path) {
        Ok((text, copy)) => {
            set_text(slot, doc, st, text, Some(copy));
            true
        }
        Err(_) => {
            let (client, generation) = slot.current();
            if doc.opened_gen.load(Ordering::Acquire) == generation {
                client.did_close(&doc.uri);
            }
            st.open = false;
            false
        }
    }
}

fn set_text(
    slot: &ClientSlot,
    doc: &Doc,
    st: &mut DocState,
    text: Arc<str>,
    disk: Option<DiskCopy>,
) {
    st.version += 1;
    if let Ok(_g) = doc.reopen.lock() {
        let (client, generation) = slot.current();
        doc.change_seq
            .store(client.publish_seq(), Ordering::Release);
        // Opening a document with the disk's text, or sending it again unchanged, changes
        // nothing another document's diagnostics could depend on; an overlay does.
        let no = if (st.open && *st.text != *text) || (!st.open && disk.is_none()) {
            slot.changed(&doc.uri)
        } else {
            slot.changes()
        };
        doc.sent_no.store(no, Ordering::Release);
        if st.open && doc.opened_gen.load(Ordering::Acquire) == generation {
            client.did_change(&doc.uri, st.version, &text);
            if disk.is_some() {
                client.did_save(&doc.uri, &text);
            }
        } else {
            client.did_open(&doc.uri, &doc.language_id, st.version, &text);
            doc.opened_gen.store(generation, Ordering::Release);
            st.open = true;
        }
    }
    st.index = Arc::new(LineIndex::new(&text));
    st.text = text;
    st.disk = disk;
}

fn is_fresh(path: &Path, st: &DocState) -> bool {
    st.disk.as_ref().is_some_and(|d| d.is_fresh(path, &st.text))
}

fn read_disk(path: &Path) -> Result<(Arc<str>, DiskCopy), CoreError> {
    DiskCopy::read(path)
        .map(|(text, copy)| (Arc::from(text), copy))
        .map_err(|e| CoreError::io("read", &path.display().to_string(), &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Until its version has settled, a copy is checked against the content; a same-size
    /// rewrite with the mtime put back is a new version.
    #[test]
    fn a_copy_is_trusted_on_its_version_only_once_it_has_settled() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.py");
        std::fs::write(&path, "x = 1\n").unwrap();
        let (text, copy) = DiskCopy::read(&path).unwrap();
        assert!(copy.is_fresh(&path, &text));
        assert!(!copy.trusted.load(Ordering::Acquire), "not settled yet");
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&path, "x = 2\n").unwrap();
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(mtime).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), mtime);
        assert!(!copy.is_fresh(&path, &text));
    }
}
