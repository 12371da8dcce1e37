//! The JSON/JSONC merge engine: puts an entry into a file's text (or takes it out) by editing
//! the text around the spans `json` finds, never by serializing the document again, so every
//! byte outside lspgate's entries stays as it was. Insertion and removal are each other's
//! inverse: taking out what was put in gives back the original bytes.
//!
//! Nothing records what `setup` wrote, so an lspgate entry that differs from what it writes
//! may be the user's (or hold the user's changes): `put` leaves it as it is and `take` leaves
//! it in, each naming it for a note.

use super::json::{self, Node, comments_end, skip_blank};
use super::table::{Entry, J, Ours, ours};

/// A merge's result: the text, and the entry left as it was because it differs from what
/// `setup` writes (named as a note names it).
pub(super) type Merged = (String, Option<String>);

/// The file's own line ending: its first line's.
pub(super) fn newline(text: &str) -> &'static str {
    match text.find('\n') {
        Some(n) if text[..n].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

/// A text edit: replace `text[start..end]` with `with`.
struct Edit {
    start: usize,
    end: usize,
    with: String,
}

/// `edits` applied to `text` (they must not overlap), new lines written as the file writes
/// them (`\r\n` when it does).
fn apply(text: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| std::cmp::Reverse(e.start));
    let nl = newline(text);
    let mut out = text.to_string();
    for e in edits {
        let with = if nl == "\n" {
            e.with
        } else {
            e.with.replace('\n', nl)
        };
        out.replace_range(e.start..e.end, &with);
    }
    out
}

/// Parses `text` for editing: a JSON object at the top.
pub(super) fn parse(text: &str, jsonc: bool) -> Result<Node, String> {
    let root = json::parse(text, jsonc).map_err(|e| e.to_string())?;
    if !root.is_object() {
        return Err("the top level is not an object".into());
    }
    Ok(root)
}

/// `text` with `entry` in it: inserted when lspgate has no entry there; unchanged when it has
/// one, and that one named when it differs from `entry` (it is left as it is).
pub(super) fn put(text: &str, jsonc: bool, entry: &Entry, cmd: &str) -> Result<Merged, String> {
    let root = parse(text, jsonc)?;
    let path = entry.path();
    // The objects to walk: for a hook, all but the array at the end.
    let walk = match entry {
        Entry::Member { .. } => path,
        Entry::Hook { .. } => &path[..path.len().saturating_sub(1)],
    };
    let mut node = &root;
    for (i, key) in walk.iter().enumerate() {
        match node.member(key) {
            Some((_, item)) if item.value.is_object() => node = &item.value,
            Some(_) => return Err(format!("`{}` is not an object", path[..=i].join("."))),
            None => {
                let value = nest(&path[i + 1..], entry);
                return Ok((insert(text, &root, node, Some(key), &value), None));
            }
        }
    }
    let same = Ok((text.to_string(), None));
    let kept = Ok((text.to_string(), Some(entry.named())));
    match entry {
        Entry::Member { key, value, .. } => match node.member(key) {
            None => Ok((insert(text, &root, node, Some(key), value), None)),
            Some((_, item)) if json::value_of(text, &item.value) == value.value() => same,
            Some(_) => kept,
        },
        Entry::Hook { path, value } => {
            let Some(last) = path.last() else {
                return Err("a hook entry with no path".into());
            };
            let array = match node.member(last) {
                None => {
                    let with = insert(text, &root, node, Some(last), &J::Arr(vec![value.clone()]));
                    return Ok((with, None));
                }
                Some((_, item)) if item.value.is_array() => &item.value,
                Some(_) => return Err(format!("`{}` is not an array", path.join("."))),
            };
            let groups: Vec<_> = array
                .items()
                .iter()
                .map(|i| json::value_of(text, &i.value))
                .collect();
            if groups.contains(&value.value()) {
                return same;
            }
            if groups.iter().any(|g| ours(g, cmd) != Ours::No) {
                return kept;
            }
            Ok((insert(text, &root, array, None, value), None))
        }
    }
}

/// `text` without `entry` (each lspgate MCP/LSP member at its place, each hook group, equal
/// to what `put` writes), and without the objects and arrays on its path that this left
/// empty; an lspgate entry there that differs is left in, and named.
pub(super) fn take(text: &str, jsonc: bool, entry: &Entry, cmd: &str) -> Result<Merged, String> {
    let mut text = text.to_string();
    let path = entry.path();
    let wanted = match entry {
        Entry::Member { value, .. } | Entry::Hook { value, .. } => value.value(),
    };
    let mut took = false;
    loop {
        let root = parse(&text, jsonc)?;
        let Some(container) = find(&root, entry.path()) else {
            break;
        };
        let at = match entry {
            Entry::Member { key, .. } => container
                .member(key)
                .filter(|(_, i)| json::value_of(&text, &i.value) == wanted)
                .map(|(at, _)| at),
            Entry::Hook { .. } if container.is_array() => container
                .items()
                .iter()
                .position(|i| json::value_of(&text, &i.value) == wanted),
            Entry::Hook { .. } => None,
        };
        let Some(at) = at else { break };
        let shorter = remove(&text, container, at);
        if shorter == text {
            return Err("cannot take lspgate's entry out of this text".into());
        }
        text = shorter;
        took = true;
    }
    let root = parse(&text, jsonc)?;
    let left = find(&root, path).is_some_and(|container| match entry {
        Entry::Member { key, .. } => container.member(key).is_some(),
        Entry::Hook { .. } => container
            .items()
            .iter()
            .any(|i| ours(&json::value_of(&text, &i.value), cmd) != Ours::No),
    });
    // The containers on the path that are empty now held only what was taken out.
    let mut depth = path.len();
    while took && depth > 0 {
        let root = parse(&text, jsonc)?;
        let (Some(parent), Some(child)) =
            (find(&root, &path[..depth - 1]), find(&root, &path[..depth]))
        else {
            break;
        };
        if !child.items().is_empty() {
            break;
        }
        let Some((at, _)) = parent.member(&path[depth - 1]) else {
            break;
        };
        text = remove(&text, parent, at);
        depth -= 1;
    }
    Ok((text, left.then(|| entry.named())))
}

/// Whether `text` holds `entry` as `put` writes it (for a hook, or any group running
/// lspgate's hook, which `put` leaves as it is).
pub(super) fn holds(text: &str, jsonc: bool, entry: &Entry, cmd: &str) -> Result<bool, String> {
    let root = parse(text, jsonc)?;
    let Some(container) = find(&root, entry.path()) else {
        return Ok(false);
    };
    Ok(match entry {
        Entry::Member { key, value, .. } => container
            .member(key)
            .is_some_and(|(_, i)| json::value_of(text, &i.value) == value.value()),
        Entry::Hook { value, .. } => container.items().iter().any(|i| {
            let v = json::value_of(text, &i.value);
            v == value.value() || ours(&v, cmd) != Ours::No
        }),
    })
}

/// The object or array at `path` under `root`.
fn find<'n>(root: &'n Node, path: &[String]) -> Option<&'n Node> {
    let mut node = root;
    for key in path {
        node = &node.member(key)?.1.value;
    }
    Some(node)
}

/// `entry`'s value wrapped in the objects `rest` names: the containers missing on its path
/// (for a hook, the last of them is the array's name).
fn nest(rest: &[String], entry: &Entry) -> J {
    let mut inner = match entry {
        Entry::Member { key, value, .. } => J::Obj(vec![(key.clone(), value.clone())]),
        Entry::Hook { value, .. } => J::Arr(vec![value.clone()]),
    };
    for k in rest.iter().rev() {
        inner = J::Obj(vec![(k.clone(), inner)]);
    }
    inner
}

/// The indentation one level adds in this file: that of its least indented line, tabs when
/// it starts with a tab, else two spaces.
pub(super) fn indent_unit(text: &str) -> String {
    let mut least: Option<usize> = None;
    for line in text.lines() {
        let body = line.trim_start_matches([' ', '\t']);
        let lead = &line[..line.len() - body.len()];
        if body.is_empty() || lead.is_empty() {
            continue;
        }
        if lead.starts_with('\t') {
            return "\t".into();
        }
        least = Some(least.map_or(lead.len(), |l| l.min(lead.len())));
    }
    " ".repeat(least.unwrap_or(2).min(8))
}

/// The indentation of the line `at` is on.
fn line_indent(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    let line = &text[start..];
    let body = line.trim_start_matches([' ', '\t']);
    &line[..line.len() - body.len()]
}

/// Whether only indentation precedes `at` on its line.
fn starts_line(text: &str, at: usize) -> bool {
    let start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    text[start..at].chars().all(|c| c == ' ' || c == '\t')
}

/// `value` as JSON text: over several lines at `indent` (`unit` a level), or on one.
pub(super) fn render(value: &J, indent: &str, unit: &str, multiline: bool) -> String {
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_default();
    match value {
        J::Str(s) => quote(s),
        J::Int(n) => n.to_string(),
        J::Bool(b) => b.to_string(),
        J::Arr(a) if a.is_empty() => "[]".into(),
        J::Obj(o) if o.is_empty() => "{}".into(),
        J::Arr(a) if !multiline || a.iter().all(J::is_scalar) => {
            let items: Vec<String> = a.iter().map(|v| render(v, indent, unit, false)).collect();
            format!("[{}]", items.join(", "))
        }
        J::Obj(o) if !multiline => {
            let members: Vec<String> = o
                .iter()
                .map(|(k, v)| format!("{}: {}", quote(k), render(v, indent, unit, false)))
                .collect();
            format!("{{{}}}", members.join(", "))
        }
        J::Arr(a) => {
            let inner = format!("{indent}{unit}");
            let items: Vec<String> = a
                .iter()
                .map(|v| format!("{inner}{}", render(v, &inner, unit, true)))
                .collect();
            format!("[\n{}\n{indent}]", items.join(",\n"))
        }
        J::Obj(o) => {
            let inner = format!("{indent}{unit}");
            let members: Vec<String> = o
                .iter()
                .map(|(k, v)| format!("{inner}{}: {}", quote(k), render(v, &inner, unit, true)))
                .collect();
            format!("{{\n{}\n{indent}}}", members.join(",\n"))
        }
    }
}

/// An item (a member `key`, or an array element) written at `indent`.
fn item_text(key: Option<&str>, value: &J, indent: &str, unit: &str, multiline: bool) -> String {
    let value = render(value, indent, unit, multiline);
    match key {
        Some(k) => format!("{}: {value}", serde_json::to_string(k).unwrap_or_default()),
        None => value,
    }
}

/// `text` with a new last item in `container` (an object when `key` is set, else an array).
fn insert(text: &str, root: &Node, container: &Node, key: Option<&str>, value: &J) -> String {
    let unit = indent_unit(text);
    let (open, close) = (container.start, container.end - 1);
    let own = line_indent(text, open).to_string();
    let Some(last) = container.items().last() else {
        let multiline = root.items().is_empty() || text[root.start..root.end].contains('\n');
        let inner = &text[open + 1..close];
        let blank = inner.trim().is_empty();
        let with = if multiline {
            let child = format!("{own}{unit}");
            let item = item_text(key, value, &child, &unit, true);
            if blank {
                format!("\n{child}{item}\n{own}")
            } else {
                format!("\n{child}{item}")
            }
        } else {
            item_text(key, value, &own, &unit, false)
        };
        let end = if blank { close } else { open + 1 };
        return apply(
            text,
            vec![Edit {
                start: open + 1,
                end,
                with,
            }],
        );
    };
    let end = last.value.end;
    // A trailing comma (JSONC) stays the file's style: the new item gets one too.
    let trailing = comma_after(text, end);
    if !text[open..close].contains('\n') {
        let item = item_text(key, value, &own, &unit, false);
        let (at, with) = match trailing {
            Some(c) => (c + 1, format!(" {item},")),
            None => (end, format!(", {item}")),
        };
        return apply(
            text,
            vec![Edit {
                start: at,
                end: at,
                with,
            }],
        );
    }
    let child = if starts_line(text, last.start) {
        line_indent(text, last.start).to_string()
    } else {
        format!("{own}{unit}")
    };
    let item = item_text(key, value, &child, &unit, true);
    // Comments closing the last item's line stay with it.
    let after = trailing.map_or(end, |c| c + 1);
    let line_end = line_comments_end(text, after);
    let edits = match (trailing, line_end) {
        (Some(_), _) => {
            let at = line_end.unwrap_or(after);
            vec![Edit {
                start: at,
                end: at,
                with: format!("\n{child}{item},"),
            }]
        }
        (None, Some(at)) => vec![
            Edit {
                start: end,
                end,
                with: ",".into(),
            },
            Edit {
                start: at,
                end: at,
                with: format!("\n{child}{item}"),
            },
        ],
        (None, None) => vec![Edit {
            start: end,
            end,
            with: format!(",\n{child}{item}"),
        }],
    };
    apply(text, edits)
}

/// The end of the line from `at` (before its `\r\n` or `\n`) when all that is left of it is
/// comments (one at least), each closed on it.
fn line_comments_end(text: &str, mut at: usize) -> Option<usize> {
    let line_end = text[at..].find('\n').map_or(text.len(), |n| at + n);
    let line_end = if text[at..line_end].ends_with('\r') {
        line_end - 1
    } else {
        line_end
    };
    let mut seen = false;
    loop {
        let rest = &text[at..line_end];
        let trimmed = rest.trim_start_matches([' ', '\t', '\r']);
        at += rest.len() - trimmed.len();
        if trimmed.starts_with("//") {
            return Some(line_end);
        }
        if let Some(comment) = trimmed.strip_prefix("/*") {
            at = at + 2 + comment.find("*/")? + 2;
            seen = true;
            continue;
        }
        return (trimmed.is_empty() && seen).then_some(line_end);
    }
}

/// The position of the `,` after `at`, if the next token is one.
fn comma_after(text: &str, at: usize) -> Option<usize> {
    let next = skip_blank(text, at);
    (text.as_bytes().get(next) == Some(&b',')).then_some(next)
}

/// `text` without the item `at` of `container`, and the comma and blank text it brought.
fn remove(text: &str, container: &Node, at: usize) -> String {
    let items = container.items();
    let item = &items[at];
    let (open, close) = (container.start, container.end - 1);
    let own_comma = comma_after(text, item.value.end);
    let end = own_comma.map_or(item.value.end, |c| c + 1);
    if items.len() == 1 {
        let around = format!("{}{}", &text[open + 1..item.start], &text[end..close]);
        if around.trim().is_empty() {
            return apply(
                text,
                vec![Edit {
                    start: open + 1,
                    end: close,
                    with: String::new(),
                }],
            );
        }
        return apply(
            text,
            vec![Edit {
                start: item.start,
                end,
                with: String::new(),
            }],
        );
    }
    if at == items.len() - 1 {
        let prev = &items[at - 1];
        let Some(comma) = comma_after(text, prev.value.end) else {
            return text.to_string();
        };
        let comments = comments_end(text, comma + 1, item.start);
        if let Some(own) = own_comma {
            // Trailing commas: the previous item keeps its own.
            return apply(
                text,
                vec![Edit {
                    start: comments,
                    end: own + 1,
                    with: String::new(),
                }],
            );
        }
        if comments == comma + 1 {
            return apply(
                text,
                vec![Edit {
                    start: comma,
                    end: item.value.end,
                    with: String::new(),
                }],
            );
        }
        return apply(
            text,
            vec![
                Edit {
                    start: comma,
                    end: comma + 1,
                    with: String::new(),
                },
                Edit {
                    start: comments,
                    end: item.value.end,
                    with: String::new(),
                },
            ],
        );
    }
    let mut start = item.start;
    let mut stop = end;
    let rest = &text[stop..];
    stop += rest.len() - rest.trim_start_matches([' ', '\t', '\r']).len();
    if starts_line(text, item.start) && text[stop..].starts_with('\n') {
        start = text[..item.start].rfind('\n').map_or(0, |n| n + 1);
        stop += 1;
    }
    apply(
        text,
        vec![Edit {
            start,
            end: stop,
            with: String::new(),
        }],
    )
}
