//! Which servers a workspace has: its lspgate.toml's first (in file order), then the presets,
//! per language the first found (companions join), and for languages nobody serves the first
//! missing one (to say how to install it). A file that is not trusted takes nothing from the
//! built-ins: its servers wait for `lspgate trust` while the built-ins they would replace serve
//! in their place (`Deferred`), and once it is trusted they take over, in running sessions too.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{Entry, Registry, RegistryOptions};
use crate::workspace::config::Config;
use crate::workspace::presets::{self, Launch, PRESETS, Preset, Restricted, ServerSpec};
use crate::workspace::trust::Untrusted;
use crate::workspace::{Languages, Root};

/// How trusting the workspace's lspgate.toml changes what an entry serves: a server the file
/// defines waits (`after`: the languages built-ins serve meanwhile), a built-in stands in
/// (`until`: the languages it gives back then).
pub(super) struct Deferred {
    untrusted: Untrusted,
    /// Served only once the file is trusted.
    after: Vec<String>,
    /// Served only until then.
    until: Vec<String>,
    /// What an answer tells a session while this waits (a server of the file's, waiting).
    says: Option<String>,
    /// The file was found trusted: for good, as a lifted launch is (`Entry::untrusted`).
    granted: AtomicBool,
    /// The languages given back were handed over (`handed_over`).
    handed: AtomicBool,
}

impl Deferred {
    fn granted(&self) -> bool {
        if self.granted.load(Ordering::Acquire) {
            return true;
        }
        let now = self.untrusted.granted();
        if now {
            self.granted.store(true, Ordering::Release);
        }
        now
    }

    /// Whether the entry serves `language` (one it lists) now.
    pub(super) fn serves(&self, language: &str) -> bool {
        let is = |l: &Vec<String>| l.iter().any(|x| x == language);
        if is(&self.after) {
            self.granted()
        } else if is(&self.until) {
            !self.granted()
        } else {
            true
        }
    }

    /// True once, when a built-in that stood in first finds the file trusted: its instances
    /// hold documents of languages it serves no more, so they stop.
    pub(super) fn handed_over(&self) -> bool {
        !self.until.is_empty() && self.granted() && !self.handed.swap(true, Ordering::AcqRel)
    }

    /// What an answer says of this entry while it waits, if it does.
    pub(super) fn waits(&self) -> Option<String> {
        self.says.clone().filter(|_| !self.granted())
    }
}

/// A found preset to register: its spec (serving its languages until the file is trusted, if
/// it stands in) and the languages it gives back then.
struct Found {
    spec: ServerSpec,
    until: Vec<String>,
}

/// What the registry says of a preset standing in for the file's definition of the same name.
const STANDS_IN: &str = "the built-in serves until lspgate.toml's own definition is trusted";

impl Registry {
    /// The registry for a workspace: config servers first (in file order), then presets —
    /// per language the first one found (companions join), and for languages nobody serves
    /// the first missing preset, so `--install` can fetch it and errors can say how.
    pub fn with_config(root: Root, config: &Config, opts: RegistryOptions) -> Arc<Registry> {
        let path = opts.path.clone();
        Registry::with_config_using(root, config, opts, move |p| {
            presets::locate_in(p, path.as_deref())
        })
    }

    /// `with_config`, finding preset executables with `locate`.
    pub fn with_config_using(
        root: Root,
        config: &Config,
        opts: RegistryOptions,
        locate: impl Fn(&Preset) -> Option<PathBuf>,
    ) -> Arc<Registry> {
        let languages = Languages::new(root.path(), &config.languages);
        let reg = Registry::new(root, languages, opts);
        if let Some(u) = &config.workspace {
            let _ = reg.workspace.set(u.clone());
        }
        let trust = config.workspace.as_ref();
        // The file's servers wait while it is not trusted; the built-ins serve as if it
        // defined none.
        let waiting = config.untrusted.as_ref().filter(|u| !u.granted());
        let Survey {
            found,
            in_place,
            missing,
            mut after,
        } = survey(config, waiting, locate);
        reg.register_config_servers(config, waiting, &in_place, &found);
        for f in found {
            reg.insert(found_entry(f, waiting));
        }
        for p in missing {
            let langs = unserved(p, &after);
            if !langs.is_empty() {
                after.extend(langs.iter().cloned());
                reg.register(serving(p.spec_for(None, trust), langs));
            }
        }
        reg
    }

    /// Registers the file's servers first, in its order; each waits (while the file is not
    /// trusted, `waiting`) for the languages a built-in serves meanwhile, or takes the place
    /// of the preset of its name (`in_place`).
    fn register_config_servers(
        &self,
        config: &Config,
        waiting: Option<&Untrusted>,
        in_place: &[(String, ServerSpec)],
        found: &[Found],
    ) {
        for c in &config.servers {
            let spec = ServerSpec::from_config(c, config.untrusted.as_ref());
            let Some(u) = waiting else {
                self.register(spec);
                continue;
            };
            if let Some((_, preset)) = in_place.iter().find(|(name, _)| *name == c.name) {
                self.insert(stand_in(preset.clone(), spec, u));
                continue;
            }
            let meanwhile: Vec<&Found> = found
                .iter()
                .filter(|f| c.languages.iter().any(|l| f.until.contains(l)))
                .collect();
            let after: Vec<String> = c
                .languages
                .iter()
                .filter(|l| meanwhile.iter().any(|f| f.until.contains(l)))
                .cloned()
                .collect();
            if after.is_empty() {
                self.register(spec);
                continue;
            }
            self.insert(waiting_entry(&c.name, spec, u, &meanwhile, after));
        }
    }
}

/// What the presets found make of a workspace's languages, its lspgate.toml's servers taken
/// into account.
struct Survey {
    /// The presets to register, in order.
    found: Vec<Found>,
    /// A file's definition that replaces a preset by name, and the preset that serves it
    /// until the file is trusted.
    in_place: Vec<(String, ServerSpec)>,
    /// The presets not found, in order.
    missing: Vec<&'static Preset>,
    /// The languages served once the file is trusted.
    after: HashSet<String>,
}

/// Goes through the presets, finding their executables with `locate`: per language the first
/// one found (companions join), those the file's servers replace by name, and those missing;
/// while the file is not trusted (`waiting`) a found built-in serves its servers' languages.
fn survey(
    config: &Config,
    waiting: Option<&Untrusted>,
    locate: impl Fn(&Preset) -> Option<PathBuf>,
) -> Survey {
    let trust = config.workspace.as_ref();
    let named = |p: &Preset| config.servers.iter().find(|c| c.name == p.name);
    // Languages served once the file is trusted, and until then.
    let mut after: HashSet<String> = config
        .servers
        .iter()
        .flat_map(|c| c.languages.iter().cloned())
        .collect();
    let mut before: HashSet<String> = match waiting {
        Some(_) => HashSet::new(),
        None => after.clone(),
    };
    let mut found: Vec<Found> = Vec::new();
    let mut in_place: Vec<(String, ServerSpec)> = Vec::new();
    let mut missing = Vec::new();
    for p in PRESETS.iter() {
        let exe = locate(p);
        let spec = exe.as_ref().map(|exe| p.spec_for(Some(exe), trust));
        // Only a built-in that starts stands in.
        let stands_in = waiting.is_some() && spec.as_ref().is_some_and(starts);
        if let Some(c) = named(p) {
            if let (Some(spec), true) = (spec, stands_in) {
                before.extend(c.languages.iter().cloned());
                in_place.push((c.name.clone(), spec));
            }
            continue;
        }
        if p.companion {
            if let Some(spec) = spec {
                found.push(Found {
                    spec,
                    until: Vec::new(),
                });
            }
            continue;
        }
        // A preset serves only the languages nobody serves yet.
        let langs = unserved(p, &after);
        let Some(spec) = spec else {
            missing.push(p);
            continue;
        };
        let (serves, until) = if stands_in {
            let meanwhile = unserved(p, &before);
            let until: Vec<String> = meanwhile
                .iter()
                .filter(|l| !langs.contains(l))
                .cloned()
                .collect();
            (meanwhile, until)
        } else {
            (langs.clone(), Vec::new())
        };
        if serves.is_empty() {
            continue;
        }
        after.extend(langs);
        before.extend(serves.iter().cloned());
        found.push(Found {
            spec: serving(spec, serves),
            until,
        });
    }
    Survey {
        found,
        in_place,
        missing,
        after,
    }
}

/// The entry of the file's server `name` (its `spec`) while the file is not trusted: it waits
/// for the languages `after` that the built-ins `meanwhile` serve until then, and says so.
fn waiting_entry(
    name: &str,
    spec: ServerSpec,
    u: &Untrusted,
    meanwhile: &[&Found],
    after: Vec<String>,
) -> Entry {
    let by: Vec<String> = meanwhile
        .iter()
        .map(|f| {
            let langs: Vec<&str> = f
                .until
                .iter()
                .filter(|l| after.contains(l))
                .map(String::as_str)
                .collect();
            format!("{} serves {}", f.spec.name, langs.join(", "))
        })
        .collect();
    let says = format!(
        "{} defines `{}`, which waits for `{}`: its commands run only once the file is trusted; meanwhile {}",
        u.config.display(),
        name,
        u.command(),
        by.join(", ")
    );
    let mut entry = Entry::new(spec);
    entry.note = std::sync::Mutex::new(Some((says.clone(), u.clone())));
    entry.deferred = Some(deferred(u, after, Vec::new(), Some(says)));
    entry
}

/// The entry of a found preset: one standing in while the file is not trusted (`waiting`)
/// notes the languages it serves until then.
fn found_entry(f: Found, waiting: Option<&Untrusted>) -> Entry {
    let mut entry = Entry::new(f.spec);
    if let (Some(u), false) = (waiting, f.until.is_empty()) {
        let note = format!(
            "serves {} until lspgate.toml is trusted (its own server waits for `{}`)",
            f.until.join(", "),
            u.command()
        );
        let note = match entry.note.lock().ok().and_then(|mut n| n.take()) {
            Some((other, _)) => format!("{other}; {note}"),
            None => note,
        };
        entry.note = std::sync::Mutex::new(Some((note, u.clone())));
        entry.deferred = Some(deferred(u, Vec::new(), f.until, None));
    }
    entry
}

fn deferred(
    u: &Untrusted,
    after: Vec<String>,
    until: Vec<String>,
    says: Option<String>,
) -> Deferred {
    Deferred {
        untrusted: u.clone(),
        after,
        until,
        says,
        granted: AtomicBool::new(false),
        handed: AtomicBool::new(false),
    }
}

/// Whether a preset's spec starts on this workspace (not missing, not held back until trust).
fn starts(spec: &ServerSpec) -> bool {
    !matches!(spec.launch, Launch::Missing(_) | Launch::Untrusted(..))
}

/// The entry of a file's definition `own` that replaces `preset` by name, the file not trusted:
/// the preset serves the definition's languages until it is, then the definition does (a
/// restricted spec, lifted by `Entry::untrusted`).
fn stand_in(preset: ServerSpec, own: ServerSpec, u: &Untrusted) -> Entry {
    let languages = own.languages.clone();
    let (note, blockers) = match &preset.restricted {
        Some(r) => (r.note, r.blockers),
        None => (STANDS_IN, &[][..]),
    };
    let mut spec = serving(preset, languages);
    spec.restricted = Some(Box::new(Restricted {
        untrusted: u.clone(),
        note,
        full: own.clone(),
        blockers,
    }));
    let says = format!(
        "{} redefines `{}`, which waits for `{}`: its commands run only once the file is trusted; meanwhile the built-in serves {}",
        u.config.display(),
        own.name,
        u.command(),
        own.languages.join(", ")
    );
    let mut entry = Entry::new(spec);
    entry.deferred = Some(deferred(u, Vec::new(), Vec::new(), Some(says)));
    entry
}

/// `spec` serving only `languages` (so does the full spec of a restricted one).
pub(super) fn serving(mut spec: ServerSpec, languages: Vec<String>) -> ServerSpec {
    if let Some(r) = spec.restricted.as_mut() {
        r.full.languages = languages.clone();
    }
    spec.languages = languages;
    spec
}

fn unserved(p: &Preset, served: &HashSet<String>) -> Vec<String> {
    p.languages
        .iter()
        .filter(|l| !served.contains(**l))
        .map(|l| l.to_string())
        .collect()
}
