//! What importers see of the names a write changed: each one's hover at its definition (its
//! signature or type, inferred where not written), after its decorators. When every changed name shows the same
//! before and after the write (the pre-edit hook's hovers, or the old text shown to the server
//! as an overlay), no importer can be affected: only the written file is asked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::imports::Family;
use super::surface::{self, Kind};
use crate::lsp::Cap;
use crate::ops::Engine;

/// Names hovered at a pre-edit hook, at most.
pub(super) const MAX_NAMES: usize = 200;

/// Hover texts by name.
pub(super) type Signatures = BTreeMap<String, String>;

impl Engine {
    /// The hover of each of `names` (all of the file's typed top-level names when `None`, up
    /// to `MAX_NAMES`) at its definition in `path`, as `text` (an overlay) or as on disk. A
    /// name that is not defined, or whose hover does not show what importers see, is left out.
    pub(super) async fn signatures(
        &self,
        path: &Path,
        text: Option<&str>,
        names: Option<&BTreeSet<String>>,
    ) -> Signatures {
        let mut out = Signatures::new();
        let Some(family) = Family::of(path) else {
            return out;
        };
        let language = self.languages().detect(path);
        let Ok(server) = self
            .registry
            .first_supporting(path, &language, Cap::Hover, "hover")
            .await
        else {
            return out;
        };
        // An overlay only where answers are asked for: a push computed under it would outlive it.
        if text.is_some() && !super::before::pulls(&server) {
            return out;
        }
        let Ok(lease) = server.docs.lease(path, &language, text).await else {
            return out;
        };
        let defs = surface::definitions(family, &lease.snap.text);
        let wanted: Vec<&String> = match names {
            Some(n) => n.iter().collect(),
            None => defs
                .iter()
                .filter(|(_, d)| d.kind == Kind::Typed)
                .map(|(n, _)| n)
                .take(MAX_NAMES)
                .collect(),
        };
        for name in wanted {
            let Some(def) = defs.get(name).filter(|d| d.kind == Kind::Typed) else {
                continue;
            };
            let Ok(pos) = lease.snap.to_wire(def.line, def.column) else {
                continue;
            };
            let uri = &lease.snap.uri;
            let hover = server
                .request(Some(&lease), |c| async move { c.hover(uri, pos).await })
                .await;
            // A hover cut short (`...`) may hide what changed.
            if let Ok(Some(h)) = hover
                && !h.contents.trim().is_empty()
                && !h.contents.contains("...")
                && !h.contents.contains('…')
            {
                let shown = format!("{}{}", def.decorators, code_only(&h.contents));
                out.insert(name.clone(), shown);
            }
        }
        out
    }
}

/// A hover's code blocks without its documentation (a docstring or comment edit changes what
/// a hover says, not what importers see): the text of each fenced block, or all of it when
/// it has none.
fn code_only(contents: &str) -> String {
    let mut out = Vec::new();
    let mut inside = false;
    for line in contents.lines() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
        } else if inside {
            out.push(line);
        }
    }
    if out.is_empty() {
        contents.trim().to_string()
    } else {
        out.join("\n")
    }
}

/// Whether every one of `names` shows the same in `before` and `after`.
pub(super) fn unchanged(names: &BTreeSet<String>, before: &Signatures, after: &Signatures) -> bool {
    names
        .iter()
        .all(|n| before.get(n).is_some_and(|b| after.get(n) == Some(b)))
}

#[cfg(test)]
mod tests {
    use super::code_only;

    #[test]
    fn documentation_is_not_a_signature() {
        let a = "```python\n(function) def total(x: int) -> int\n```\n---\nAdds things up.";
        let b = "```python\n(function) def total(x: int) -> int\n```\n---\nSums them.";
        assert_eq!(code_only(a), code_only(b));
        assert_eq!(code_only(a), "(function) def total(x: int) -> int");
        let c = "```python\n(function) def total(x: int) -> str\n```\n---\nAdds things up.";
        assert_ne!(code_only(a), code_only(c));
        assert_eq!(code_only("plain text "), "plain text");
    }
}
