//! What an edit changed in the diagnostics: findings matched across the edit (positions may
//! move; after a rename, messages may name the new name), and the names a rename changed.
//!
//! Findings are matched by file, severity, code and message, nearest line first; after a rename
//! (and its undo) a message naming the new name where it named the old one is the same finding.

use super::super::types::FileDiag;
use crate::lsp::wire::WirePos;
use crate::text;

/// What changed between two sets of diagnostics: matched by file, severity, code and message
/// (positions may move), nearest line first. After a rename (`renamed`: old name, new name),
/// a message that names the new name where the one before named the old is the same finding.
pub fn delta(
    before: &[FileDiag],
    after: &[FileDiag],
    renamed: Option<(&str, &str)>,
) -> (Vec<FileDiag>, Vec<FileDiag>) {
    let same = |a: &FileDiag, b: &FileDiag| {
        a.file == b.file
            && a.diag.severity == b.diag.severity
            && a.diag.code == b.diag.code
            && (a.diag.message == b.diag.message
                || renamed.is_some_and(|(old, new)| {
                    a.diag.message == text::replace_word(&b.diag.message, old, new)
                }))
    };
    let mut unmatched: Vec<Option<&FileDiag>> = before.iter().map(Some).collect();
    let mut introduced = Vec::new();
    for a in after {
        let best = unmatched
            .iter()
            .enumerate()
            .filter_map(|(i, b)| {
                b.filter(|b| same(a, b))
                    .map(|b| (i, b.diag.line.abs_diff(a.diag.line)))
            })
            .min_by_key(|(_, d)| *d)
            .map(|(i, _)| i);
        match best {
            Some(i) => unmatched[i] = None,
            None => introduced.push(a.clone()),
        }
    }
    let resolved = unmatched.into_iter().flatten().cloned().collect();
    (introduced, resolved)
}

/// The old and new names of a journaled rename, from its summary (`rename OLD to NEW`).
pub(super) fn renamed_in(tool: &str, summary: &str) -> Option<(String, String)> {
    let (old, new) = summary.strip_prefix("rename ")?.split_once(" to ")?;
    (tool == "rename" && !old.is_empty() && !new.is_empty())
        .then(|| (old.to_string(), new.to_string()))
}

/// The identifier at `pos` in `snap`, if there is one.
pub(super) fn identifier_at(snap: &crate::documents::Snapshot, pos: WirePos) -> Option<String> {
    let (line, column) = text::from_wire(
        &snap.text,
        &snap.index,
        pos.line,
        pos.character,
        snap.encoding,
    );
    text::word_at(snap.line(line)?, column).map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::wire::Severity;
    use crate::ops::types::Diag;

    fn d(file: &str, line: u32, msg: &str) -> FileDiag {
        FileDiag {
            file: file.into(),
            diag: Diag {
                severity: Severity::Error,
                line,
                column: 1,
                end_line: line,
                end_column: 2,
                code: None,
                source: None,
                message: msg.into(),
            },
        }
    }

    #[test]
    fn deltas_follow_moved_diagnostics() {
        let before = vec![d("a", 3, "x"), d("a", 9, "y")];
        let after = vec![d("a", 4, "x"), d("a", 5, "z")];
        let (intro, res) = delta(&before, &after, None);
        assert_eq!(intro, vec![d("a", 5, "z")]);
        assert_eq!(res, vec![d("a", 9, "y")]);
    }

    /// After a rename, a finding whose message names the new name where it named the old one is
    /// the same finding, not one introduced and one resolved; a name that merely contains the old
    /// one is not renamed in it.
    #[test]
    fn a_renamed_symbol_in_a_message_is_the_same_finding() {
        let before = vec![
            d("a", 3, "\"cached_property\" is not iterable"),
            d("a", 7, "\"has_cached_property\" is unknown"),
        ];
        let after = vec![
            d("a", 3, "\"cached_prop\" is not iterable"),
            d("a", 7, "\"has_cached_property\" is unknown"),
        ];
        let renamed = Some(("cached_property", "cached_prop"));
        assert_eq!(delta(&before, &after, renamed), (vec![], vec![]));
        // Without knowing the rename, both would be news.
        assert_eq!(delta(&before, &after, None).0.len(), 1);
        // A rename that did change a finding still shows it.
        let changed = vec![
            d("a", 3, "\"cached_prop\" is not callable"),
            after[1].clone(),
        ];
        let (intro, res) = delta(&before, &changed, renamed);
        assert_eq!((intro.len(), res.len()), (1, 1));
        assert_eq!(
            text::replace_word("x.old_x old_x old", "old", "new"),
            "x.old_x old_x new"
        );
        assert_eq!(text::replace_word("old(old)", "old", "new"), "new(new)");
        assert_eq!(
            renamed_in("rename", "rename Widget to Gadget"),
            Some(("Widget".into(), "Gadget".into()))
        );
        assert_eq!(renamed_in("rename", "rename to Gadget"), None);
        assert_eq!(renamed_in("edit", "rename Widget to Gadget"), None);
    }
}
