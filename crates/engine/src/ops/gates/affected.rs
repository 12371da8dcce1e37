//! Re-checks that ask the servers again only about files a change can affect. Every fresh
//! answer a check computes is kept per (file, server) with the change clock's tick it was
//! asked at and a key: a hash of the workspace's file list, the file's content, the
//! declaration fingerprints (`declarations`) of every file it imports, transitively (a Merkle
//! hash over the import graph's strongly connected components), and of the scripts every file
//! of its project sees (global scripts, module augmentations). A later check takes the answer
//! again iff the server instance is the same (no restart since), the key is the same, and the
//! clock still knows every change since that tick and each was to a source file of the graph
//! or to a file no server reads for an answer (`INERT`: a compiler's build info, logs,
//! documentation, pictures). A change to anything else — tsconfig.json, package.json,
//! pyrightconfig.json, a lockfile, a hidden file — and any other file created or deleted
//! makes every file be asked again. When in doubt, the server is asked.
//! `tests/it/recheck.rs` holds a taken-again answer to what a check from scratch says.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use super::declarations::{Declarations, declarations};
use crate::ops::hook::{
    Family, Target, content_hash, imports_of, keys, script_module, script_specifiers,
};
use crate::ops::read_in_root;
use crate::ops::types::Diag;
use crate::registry::{Registry, Server};
use crate::workspace::Root;

/// Answers kept, at most (the oldest go first).
const MAX_ANSWERS: usize = 100_000;

/// The fresh answers checks computed, and each source file's parse by its content.
#[derive(Default)]
pub(crate) struct Answers {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    answers: HashMap<(PathBuf, String), Answer>,
    parsed: HashMap<PathBuf, Arc<Parsed>>,
}

/// One server's fresh answer for one file.
struct Answer {
    /// The change clock when it was asked (no change was delivered until it was in).
    tick: u64,
    /// The server instance that answered, and its restart generation then.
    server: Weak<Server>,
    generation: u64,
    /// The file's key (see the module's doc) then.
    key: u64,
    diags: Vec<Diag>,
}

/// A source file as read: its content's hash, declarations and imports.
struct Parsed {
    content: u64,
    /// `None`: none could be read; every change counts.
    decl: Option<Declarations>,
    targets: Vec<Target>,
    /// It imports a module lspgate cannot place (a bare specifier that is no installed
    /// package: a path alias, a `baseUrl` import): it may depend on any file.
    open: bool,
}

/// What one check knows of the workspace: each source file's key at `tick`.
pub(super) struct Survey {
    tick: u64,
    keys: HashMap<PathBuf, u64>,
    sources: HashSet<PathBuf>,
    answers: Arc<Answers>,
    /// Per answer tick: whether every change since was to a source file (see `quiet_since`).
    quiet: Mutex<HashMap<u64, bool>>,
    /// Fresh answers of this check, kept once it ends with no change delivered meanwhile.
    fresh: Mutex<Vec<Fresh>>,
}

/// A fresh answer of this check: the file, the server's name, instance and generation.
type Fresh = (PathBuf, String, Weak<Server>, u64, Vec<Diag>);

impl Answers {
    /// Reads the workspace's source files (Python, JavaScript, TypeScript) among `tree` (its
    /// walk) and keys them, at `tick` (taken after the changes before the check were
    /// delivered). Blocking.
    pub(super) fn survey(self: &Arc<Self>, root: &Root, tree: &[PathBuf], tick: u64) -> Survey {
        let clock = std::time::Instant::now();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        // Files no server reads for an answer (build info, logs, pictures) come and go freely.
        tree.iter()
            .filter(|p| !inert(p))
            .for_each(|p| p.hash(&mut h));
        // What the walk and the watcher skip but imports read: installed packages.
        installs(root.path()).hash(&mut h);
        let tree_digest = h.finish();
        let sources: Vec<(PathBuf, Family)> = tree
            .iter()
            .filter_map(|p| match Family::of(p) {
                Some(f @ (Family::Python | Family::Script)) => Some((p.clone(), f)),
                _ => None,
            })
            .collect();
        let known: HashMap<PathBuf, Arc<Parsed>> = match self.inner.lock() {
            Ok(inner) => inner.parsed.clone(),
            Err(_) => HashMap::new(),
        };
        let mut parsed: Vec<Arc<Parsed>> = Vec::with_capacity(sources.len());
        for (path, family) in &sources {
            let bytes = read_in_root(root, path).ok().flatten();
            let text = bytes.as_deref().map(String::from_utf8_lossy);
            let content = match &text {
                Some(t) => content_hash(t),
                // Unreadable: a key of its own each time.
                None => clock.elapsed().as_nanos() as u64 ^ 0x9e37_79b9,
            };
            let p = match known.get(path) {
                Some(p) if p.content == content && text.is_some() => p.clone(),
                _ => Arc::new(parse(root.path(), path, *family, text.as_deref(), content)),
            };
            parsed.push(p);
        }
        let keys = keyed(root.path(), tree_digest, &sources, &parsed);
        if let Ok(mut inner) = self.inner.lock() {
            inner.parsed = sources
                .iter()
                .map(|(p, _)| p.clone())
                .zip(parsed.iter().cloned())
                .collect();
        }
        tracing::debug!(
            files = tree.len(),
            sources = sources.len(),
            ms = clock.elapsed().as_secs_f64() * 1e3,
            "surveyed the workspace for a re-check"
        );
        Survey {
            tick,
            keys,
            sources: sources.into_iter().map(|(p, _)| p).collect(),
            answers: self.clone(),
            quiet: Mutex::default(),
            fresh: Mutex::default(),
        }
    }
}

impl Survey {
    /// A survey that reuses nothing (no source file in the check).
    pub(super) fn none(answers: &Arc<Answers>, tick: u64) -> Survey {
        Survey {
            tick,
            keys: HashMap::new(),
            sources: HashSet::new(),
            answers: answers.clone(),
            quiet: Mutex::default(),
            fresh: Mutex::default(),
        }
    }

    /// `server`'s earlier fresh answer for `path`, if nothing it depends on changed since.
    pub(super) fn reuse(
        &self,
        registry: &Registry,
        server: &Arc<Server>,
        path: &Path,
    ) -> Option<Vec<Diag>> {
        let key = *self.keys.get(path)?;
        let (tick, diags) = {
            let inner = self.answers.inner.lock().ok()?;
            let a = inner
                .answers
                .get(&(path.to_path_buf(), server.name.clone()))?;
            let same = a.key == key
                && a.tick <= self.tick
                && Weak::ptr_eq(&a.server, &Arc::downgrade(server))
                && a.generation == server.generation();
            if !same {
                return None;
            }
            (a.tick, a.diags.clone())
        };
        self.quiet_since(registry, tick).then_some(diags)
    }

    /// Whether the clock knows every change delivered after `tick` and each was to a source
    /// file of the survey (whose keys then say what it changed).
    fn quiet_since(&self, registry: &Registry, tick: u64) -> bool {
        if let Ok(q) = self.quiet.lock()
            && let Some(known) = q.get(&tick)
        {
            return *known;
        }
        let quiet = match registry.changed_since_complete(tick) {
            Some(changed) => {
                let other = changed
                    .iter()
                    .find(|p| !self.sources.contains(*p) && !inert(p));
                if let Some(p) = other {
                    tracing::debug!(file = %p.display(), "a change to a file outside the import graph: every file is asked again");
                }
                other.is_none()
            }
            None => false,
        };
        if let Ok(mut q) = self.quiet.lock() {
            q.insert(tick, quiet);
        }
        quiet
    }

    /// A fresh answer of `server` (of restart generation `generation` when asked) for `path`.
    pub(super) fn fresh(&self, server: &Arc<Server>, generation: u64, path: &Path, diags: &[Diag]) {
        if !self.keys.contains_key(path) || server.generation() != generation {
            return;
        }
        if let Ok(mut f) = self.fresh.lock() {
            f.push((
                path.to_path_buf(),
                server.name.clone(),
                Arc::downgrade(server),
                generation,
                diags.to_vec(),
            ));
        }
    }

    /// Keeps this check's fresh answers, when no change was delivered since the survey (else
    /// some answer may know of a change its key does not).
    pub(super) fn keep(&self, registry: &Registry) {
        let fresh = match self.fresh.lock() {
            Ok(mut f) => std::mem::take(&mut *f),
            Err(_) => return,
        };
        if registry.tick() != self.tick {
            tracing::debug!("changes were delivered during the check: its answers are not kept");
            return;
        }
        let Ok(mut inner) = self.answers.inner.lock() else {
            return;
        };
        for (path, server, weak, generation, diags) in fresh {
            let Some(key) = self.keys.get(&path).copied() else {
                continue;
            };
            inner.answers.insert(
                (path, server),
                Answer {
                    tick: self.tick,
                    server: weak,
                    generation,
                    key,
                    diags,
                },
            );
        }
        if inner.answers.len() > MAX_ANSWERS {
            let mut ticks: Vec<u64> = inner.answers.values().map(|a| a.tick).collect();
            ticks.sort_unstable();
            let keep_from = ticks[ticks.len() - MAX_ANSWERS / 2];
            inner.answers.retain(|_, a| a.tick >= keep_from);
        }
    }
}

/// Kinds of files no language server lspgate runs reads to answer for a source file: the
/// build info and maps a compiler writes beside the sources, logs, documentation, pictures,
/// translations and templates (not style sheets: a tsserver plugin may type CSS modules). A
/// change to one leaves every answer as it was.
const INERT: &[&str] = &[
    "tsbuildinfo",
    "map",
    "log",
    "pyc",
    "pyo",
    "md",
    "markdown",
    "rst",
    "txt",
    "png",
    "jpg",
    "jpeg",
    "gif",
    "svg",
    "ico",
    "webp",
    "po",
    "mo",
    "html",
    "htm",
];

/// Whether `path` is of a kind in `INERT`.
fn inert(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| INERT.iter().any(|i| e.eq_ignore_ascii_case(i)))
}

/// Reads one source file's declarations and imports.
fn parse(root: &Path, path: &Path, family: Family, text: Option<&str>, content: u64) -> Parsed {
    let Some(text) = text else {
        return Parsed {
            content,
            decl: None,
            targets: Vec::new(),
            open: true,
        };
    };
    // A generated bundle is not read for declarations: any change to it counts everywhere.
    if text.len() > MAX_PARSED {
        return Parsed {
            content,
            decl: None,
            targets: Vec::new(),
            open: true,
        };
    }
    let mut decl = declarations(family, text);
    // JSX is not told from regular expressions by the fingerprint's scanner: the whole text
    // counts.
    let jsx = path.extension().is_some_and(|e| e == "tsx" || e == "jsx");
    if jsx && let Some(d) = decl.as_mut() {
        d.fingerprint = content;
    }
    let (targets, open) = match family {
        Family::Script => {
            let dir = path.parent().unwrap_or(root);
            let mut targets = Vec::new();
            let mut open = false;
            // Comments (a doc comment's example `import { map } from 'rxjs'`) import nothing.
            let code = crate::lexer::lex(crate::lexer::Lang::Script, text).uncommented;
            for spec in script_specifiers(&code) {
                if spec.is_empty() || spec.contains(char::is_whitespace) {
                    continue;
                }
                if let (_, Some(path)) = script_module(spec, dir) {
                    targets.push(Target::Exact(path));
                } else if !installed(root, dir, spec) {
                    open = true;
                }
            }
            (targets, open)
        }
        _ => (imports_of(family, path, text), false),
    };
    Parsed {
        content,
        decl,
        targets,
        open,
    }
}

/// Whether a bare module specifier names a Node built-in or a package installed in a
/// `node_modules` between the importing file's folder and the root.
fn installed(root: &Path, dir: &Path, spec: &str) -> bool {
    const BUILTIN: &[&str] = &[
        "assert",
        "buffer",
        "child_process",
        "crypto",
        "events",
        "fs",
        "http",
        "https",
        "net",
        "os",
        "path",
        "process",
        "stream",
        "url",
        "util",
        "zlib",
        "worker_threads",
        "readline",
        "tty",
        "vm",
        "timers",
        "querystring",
        "string_decoder",
        "dns",
        "cluster",
        "module",
    ];
    if spec.starts_with("node:") || BUILTIN.contains(&spec.split('/').next().unwrap_or("")) {
        return true;
    }
    let mut parts = spec.split('/');
    let package = match parts.next() {
        Some(scope) if scope.starts_with('@') => match parts.next() {
            Some(name) => format!("{scope}/{name}"),
            None => return false,
        },
        Some(name) => name.to_string(),
        None => return false,
    };
    // A workspace package (npm, yarn, pnpm workspaces link it into node_modules) is a source
    // of the tree, whose files the import does not name: not installed, so the importer may
    // depend on any file.
    dir.ancestors()
        .take_while(|d| d.starts_with(root))
        .map(|d| d.join("node_modules").join(&package))
        .find(|p| p.exists())
        .and_then(|p| p.canonicalize().ok())
        .is_some_and(|real| {
            !real.starts_with(root)
                || real
                    .components()
                    .any(|c| c.as_os_str() == "node_modules" || c.as_os_str() == ".pnpm")
        })
}

/// Files bigger than this are not parsed (content only; they may affect any file).
const MAX_PARSED: usize = 1 << 20;

/// What installed packages look like now: the modification times of the places package
/// managers change on every install (node_modules and its lock, a virtualenv's site-packages).
/// Neither the walk nor the watcher looks inside them.
fn installs(root: &Path) -> Vec<(PathBuf, Option<std::time::SystemTime>)> {
    let mut places: Vec<PathBuf> = [
        "node_modules",
        "node_modules/.package-lock.json",
        "node_modules/.modules.yaml",
        "node_modules/.yarn-state.yml",
        "node_modules/.prisma",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect();
    for venv in [".venv", "venv", "env"] {
        let lib = root.join(venv).join("lib");
        if let Ok(entries) = std::fs::read_dir(&lib) {
            for e in entries.flatten() {
                places.push(e.path().join("site-packages"));
            }
        }
    }
    places.sort();
    places
        .into_iter()
        .map(|p| {
            let mtime = std::fs::metadata(&p).and_then(|m| m.modified()).ok();
            (p, mtime)
        })
        .collect()
}

/// Each source file's key (see the module's doc).
fn keyed(
    root: &Path,
    tree_digest: u64,
    sources: &[(PathBuf, Family)],
    parsed: &[Arc<Parsed>],
) -> HashMap<PathBuf, u64> {
    let names = Names::of(root, sources);
    let unresolved = names.unresolved(sources, parsed);
    let edges = names.edges(sources, parsed);
    let (comp_of, comps) = components(&edges);
    let digest = component_digests(sources, parsed, &edges, &comp_of, &comps);
    let (seen_by_all, everything) = family_digests(sources, parsed, &digest, &comp_of);
    sources
        .iter()
        .enumerate()
        .map(|(i, (path, family))| {
            let p = &parsed[i];
            let open = p.open || unresolved[i] || p.decl.as_ref().is_none_or(|d| d.open);
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (
                tree_digest,
                p.content,
                digest[comp_of[i]],
                seen_by_all.get(family),
                open.then(|| everything.get(family)),
            )
                .hash(&mut h);
            (path.clone(), h.finish())
        })
        .collect()
}

/// What of a file its dependents see: its declarations' fingerprint, or (with none) its
/// content's hash.
fn fingerprint(parsed: &Parsed) -> u64 {
    parsed
        .decl
        .as_ref()
        .map(|d| d.fingerprint)
        .unwrap_or(parsed.content)
}

/// How imports name the surveyed files: exactly (a path without extension), or by the end of
/// one.
struct Names {
    /// Each file's keys, and the files of each.
    exact: HashMap<PathBuf, Vec<usize>>,
    /// Each file name, and the files of that name with their paths relative to the root.
    by_name: HashMap<String, Vec<(String, usize)>>,
}

impl Names {
    /// The names of `sources` (paths in `root`).
    fn of(root: &Path, sources: &[(PathBuf, Family)]) -> Names {
        let mut exact: HashMap<PathBuf, Vec<usize>> = HashMap::new();
        let mut by_name: HashMap<String, Vec<(String, usize)>> = HashMap::new();
        for (i, (path, family)) in sources.iter().enumerate() {
            for k in keys(path, *family) {
                let rel = k
                    .strip_prefix(root)
                    .unwrap_or(&k)
                    .to_string_lossy()
                    .into_owned();
                let name = rel.rsplit('/').next().unwrap_or(&rel).to_string();
                by_name.entry(name).or_default().push((rel, i));
                exact.entry(k).or_default().push(i);
            }
        }
        Names { exact, by_name }
    }

    /// Per file, whether it is a script with a relative import of a file the survey did not
    /// read (gitignored, generated, not code): that may change unseen, so the importer may
    /// depend on any file.
    fn unresolved(&self, sources: &[(PathBuf, Family)], parsed: &[Arc<Parsed>]) -> Vec<bool> {
        parsed
            .iter()
            .enumerate()
            .map(|(i, p)| {
                sources[i].1 == Family::Script
                    && p.targets
                        .iter()
                        .any(|t| matches!(t, Target::Exact(k) if !self.exact.contains_key(k)))
            })
            .collect()
    }

    /// Per file, the files of its family (not itself) its imports name, in order.
    fn edges(&self, sources: &[(PathBuf, Family)], parsed: &[Arc<Parsed>]) -> Vec<Vec<usize>> {
        parsed
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut out: Vec<usize> = Vec::new();
                for t in &p.targets {
                    match t {
                        Target::Exact(k) => out.extend(self.exact.get(k).into_iter().flatten()),
                        Target::Suffix(s) => {
                            let name = s.rsplit('/').next().unwrap_or(s);
                            out.extend(
                                self.by_name
                                    .get(name)
                                    .into_iter()
                                    .flatten()
                                    .filter(|(rel, _)| rel == s || rel.ends_with(&format!("/{s}")))
                                    .map(|(_, j)| *j),
                            );
                        }
                    }
                }
                out.retain(|j| *j != i && sources[*j].1 == sources[i].1);
                out.sort_unstable();
                out.dedup();
                out
            })
            .collect()
    }
}

/// Each component's digest: its members' paths and fingerprints, and the digests of the
/// components they import (`comps` come after every component they reach, so those are known).
fn component_digests(
    sources: &[(PathBuf, Family)],
    parsed: &[Arc<Parsed>],
    edges: &[Vec<usize>],
    comp_of: &[usize],
    comps: &[Vec<usize>],
) -> Vec<u64> {
    let mut digest: Vec<u64> = Vec::with_capacity(comps.len());
    for (c, members) in comps.iter().enumerate() {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let mut own: Vec<(&PathBuf, u64)> = members
            .iter()
            .map(|&i| (&sources[i].0, fingerprint(&parsed[i])))
            .collect();
        own.sort();
        own.hash(&mut h);
        let mut next: Vec<u64> = members
            .iter()
            .flat_map(|&i| edges[i].iter().map(|&j| comp_of[j]))
            .filter(|&d| d != c)
            .map(|d| digest[d])
            .collect();
        next.sort_unstable();
        next.dedup();
        next.hash(&mut h);
        digest.push(h.finish());
    }
    digest
}

/// Per family: the digest of what every file sees (global scripts), and of everything (for
/// open files), from each file's component `digest`.
fn family_digests(
    sources: &[(PathBuf, Family)],
    parsed: &[Arc<Parsed>],
    digest: &[u64],
    comp_of: &[usize],
) -> (HashMap<Family, u64>, HashMap<Family, u64>) {
    let mut seen_by_all: HashMap<Family, u64> = HashMap::new();
    let mut everything: HashMap<Family, u64> = HashMap::new();
    for family in [Family::Python, Family::Script] {
        // A global script's part is what it imports too (an augmentation naming an imported
        // type changes when that type does).
        let of = |pick: &dyn Fn(usize) -> bool| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            for i in (0..sources.len()).filter(|&i| sources[i].1 == family && pick(i)) {
                (&sources[i].0, fingerprint(&parsed[i]), digest[comp_of[i]]).hash(&mut h);
            }
            h.finish()
        };
        let global = |i: usize| parsed[i].decl.as_ref().is_some_and(|d| d.global);
        let all = of(&|_| true);
        // A global script that brings other files in (`/// <reference path=…>`) makes theirs
        // global too: every file may depend on any. (Its quoted strings on lines that mention
        // `require` are no imports: a script that has any is no global one.)
        let global_open = (0..sources.len()).any(|i| {
            sources[i].1 == family && global(i) && parsed[i].decl.as_ref().is_some_and(|d| d.open)
        });
        seen_by_all.insert(family, if global_open { all } else { of(&global) });
        everything.insert(family, all);
    }
    (seen_by_all, everything)
}

/// The strongly connected components of a graph (Tarjan's, without recursion): each node's
/// component, and the components, each after every component it reaches.
fn components(edges: &[Vec<usize>]) -> (Vec<usize>, Vec<Vec<usize>>) {
    let n = edges.len();
    const NONE: usize = usize::MAX;
    let (mut index, mut low) = (vec![NONE; n], vec![0; n]);
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut comp_of = vec![NONE; n];
    let mut comps: Vec<Vec<usize>> = Vec::new();
    let mut next = 0;
    for start in 0..n {
        if index[start] != NONE {
            continue;
        }
        let mut calls: Vec<(usize, usize)> = vec![(start, 0)];
        index[start] = next;
        low[start] = next;
        next += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&(v, e)) = calls.last() {
            if e < edges[v].len() {
                if let Some(top) = calls.last_mut() {
                    top.1 += 1;
                }
                let w = edges[v][e];
                if index[w] == NONE {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(u, _)) = calls.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] == index[v] {
                let mut members = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp_of[w] = comps.len();
                    members.push(w);
                    if w == v {
                        break;
                    }
                }
                comps.push(members);
            }
        }
    }
    (comp_of, comps)
}

#[cfg(test)]
mod tests;
