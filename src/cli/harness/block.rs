//! The TOML merge engine: lspgate's entries go in one block of their own at the end of the file,
//! between `# >>> lspgate setup` and `# <<< lspgate setup` lines, and nothing else in the file
//! changes; the result is parsed again to check each entry lands where it should.

use serde_json::Value;

use super::merge;
use super::table::{Entry, J, Ours, ours};

const BEGIN: &str = "# >>> lspgate setup";
const END: &str = "# <<< lspgate setup";

/// The block's first line.
const HEAD: &str =
    "# >>> lspgate setup: written by `lspgate setup`, taken out by `lspgate setup --remove`";

/// Parses `text` as TOML; the parser's message (with its line and column) when it is not.
pub(super) fn parse(text: &str) -> Result<Value, String> {
    let table: toml::Table =
        toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())?;
    serde_json::to_value(table).map_err(|e| e.to_string())
}

/// Where lspgate's block is: from its first line to past its last line's newline.
fn find(text: &str) -> Option<(usize, usize)> {
    let mut at = 0;
    let mut begin = None;
    for line in text.split_inclusive('\n') {
        if begin.is_none() && line.starts_with(BEGIN) {
            begin = Some(at);
        } else if let Some(b) = begin
            && line.starts_with(END)
        {
            return Some((b, at + line.len()));
        }
        at += line.len();
    }
    None
}

/// How a note names lspgate's block.
pub(super) const NAMED: &str = "the lspgate block (`# >>> lspgate setup` to `# <<< lspgate setup`)";

/// Where the line ending `put` writes before the block at `start` begins.
fn before(text: &str, start: usize) -> usize {
    let head = &text[..start];
    if head.ends_with("\r\n") {
        start - 2
    } else if head.ends_with('\n') {
        start - 1
    } else {
        start
    }
}

/// `text` without lspgate's block, whatever it holds, and the line ending `put` added before it.
fn strip(text: &str) -> String {
    let Some((start, end)) = find(text) else {
        return text.to_string();
    };
    format!("{}{}", &text[..before(text, start)], &text[end..])
}

/// The block holding `entries`, its lines ended with `nl`: empty for none.
fn block(entries: &[&Entry], nl: &str) -> String {
    if entries.is_empty() {
        return String::new();
    }
    let tables: Vec<String> = entries.iter().map(|e| render(e)).collect();
    format!("{HEAD}\n{}{END}\n", tables.join("\n")).replace('\n', nl)
}

/// Whether `written` (a block as `find` finds it) is one `put` writes, for some of `entries`
/// (which of them the rest of the file lacked then), whatever its line endings: the block
/// holds nothing the user changed.
fn own(written: &str, entries: &[Entry]) -> bool {
    let written = written.replace("\r\n", "\n");
    let n = entries.len().min(16);
    (1..1u32 << n).any(|mask| {
        let some: Vec<&Entry> = (0..n)
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| &entries[i])
            .collect();
        block(&some, "\n") == written
    })
}

/// `text` without lspgate's block when it is one `put` writes for `entries`, and without the
/// line ending `put` added before it; a block that differs is left in, and named.
pub(super) fn take(text: &str, entries: &[Entry]) -> (String, Vec<String>) {
    match find(text) {
        None => (text.to_string(), Vec::new()),
        Some((start, end)) if own(&text[start..end], entries) => (strip(text), Vec::new()),
        Some(_) => (text.to_string(), vec![NAMED.to_string()]),
    }
}

/// `text` with lspgate's block holding `entries`, except those the rest of the file has
/// already (an `mcp_servers.lspgate` table, a hook group running lspgate: named when they
/// differ from `entries`); unchanged when the block is as it should be, and when it is not
/// one `put` writes (it is named: the user changed it).
pub(super) fn put(
    text: &str,
    entries: &[Entry],
    cmd: &str,
) -> Result<(String, Vec<String>), String> {
    parse(text)?;
    let outside = parse(&strip(text))?;
    let (theirs, wanted): (Vec<&Entry>, Vec<&Entry>) =
        entries.iter().partition(|e| has(&outside, e, cmd));
    let mut kept: Vec<String> = theirs
        .iter()
        .filter(|e| !holds(&outside, e))
        .map(|e| e.named())
        .collect();
    let nl = merge::newline(text);
    let block = block(&wanted, nl);
    let out = match find(text) {
        Some((start, end)) if text[start..end] == block => return Ok((text.to_string(), kept)),
        Some((start, end)) if !own(&text[start..end], entries) => {
            kept.push(NAMED.to_string());
            return Ok((text.to_string(), kept));
        }
        Some((start, end)) if block.is_empty() => {
            format!("{}{}", &text[..before(text, start)], &text[end..])
        }
        Some((start, end)) => format!("{}{block}{}", &text[..start], &text[end..]),
        None if block.is_empty() => text.to_string(),
        None if text.is_empty() => block,
        None => format!("{text}{nl}{block}"),
    };
    let parsed = parse(&out).map_err(|e| format!("lspgate's block would not parse there: {e}"))?;
    if let Some(e) = wanted.iter().find(|e| !holds(&parsed, e)) {
        return Err(format!(
            "lspgate's block would not set `{}` (the file defines it in a way a block at its end cannot extend)",
            e.path().join(".")
        ));
    }
    Ok((out, kept))
}

/// The value `entry`'s path leads to in `doc`, if there is one.
fn parent<'a>(doc: &'a Value, entry: &Entry) -> Option<&'a Value> {
    entry.path().iter().try_fold(doc, |node, key| node.get(key))
}

/// Whether `doc` holds `entry` (a hook: any group running lspgate's hook, or equal to it).
pub(super) fn has(doc: &Value, entry: &Entry, cmd: &str) -> bool {
    let Some(node) = parent(doc, entry) else {
        return false;
    };
    match entry {
        Entry::Member { key, .. } => node.get(key).is_some(),
        Entry::Hook { value, .. } => node.as_array().is_some_and(|groups| {
            groups
                .iter()
                .any(|g| *g == value.value() || ours(g, cmd) != Ours::No)
        }),
    }
}

/// Whether `doc` holds `entry` exactly as `put` writes it.
pub(super) fn holds(doc: &Value, entry: &Entry) -> bool {
    let Some(node) = parent(doc, entry) else {
        return false;
    };
    match entry {
        Entry::Member { key, value, .. } => node.get(key) == Some(&value.value()),
        Entry::Hook { value, .. } => node
            .as_array()
            .is_some_and(|groups| groups.contains(&value.value())),
    }
}

/// A key as TOML writes it: bare when it can be.
fn key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        quote(k)
    }
}

/// A TOML basic string (JSON's escapes are TOML's).
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A value on one line.
fn inline(value: &J) -> String {
    match value {
        J::Str(s) => quote(s),
        J::Int(n) => n.to_string(),
        J::Bool(b) => b.to_string(),
        J::Arr(a) => {
            let items: Vec<String> = a.iter().map(inline).collect();
            format!("[{}]", items.join(", "))
        }
        J::Obj(o) => {
            let members: Vec<String> = o
                .iter()
                .map(|(k, v)| format!("{} = {}", key(k), inline(v)))
                .collect();
            format!("{{ {} }}", members.join(", "))
        }
    }
}

/// `entry` as TOML tables.
fn render(entry: &Entry) -> String {
    let path: Vec<String> = entry.path().iter().map(|k| key(k)).collect();
    let mut out = String::new();
    match entry {
        Entry::Member { key: k, value, .. } => {
            let mut header = path.clone();
            header.push(key(k));
            table(&mut out, &header.join("."), false, value);
        }
        Entry::Hook { value, .. } => table(&mut out, &path.join("."), true, value),
    }
    out
}

/// `value` (an object) as the table `header` (an array's element when `element`), its
/// objects and arrays of objects as the tables that follow.
fn table(out: &mut String, header: &str, element: bool, value: &J) {
    let J::Obj(members) = value else {
        return;
    };
    out.push_str(&if element {
        format!("[[{header}]]\n")
    } else {
        format!("[{header}]\n")
    });
    let tables = |v: &J| match v {
        J::Obj(_) => true,
        J::Arr(a) => !a.is_empty() && a.iter().all(|i| matches!(i, J::Obj(_))),
        _ => false,
    };
    for (k, v) in members.iter().filter(|(_, v)| !tables(v)) {
        out.push_str(&format!("{} = {}\n", key(k), inline(v)));
    }
    for (k, v) in members.iter().filter(|(_, v)| tables(v)) {
        let sub = format!("{header}.{}", key(k));
        match v {
            J::Arr(items) => {
                for item in items {
                    out.push('\n');
                    table(out, &sub, true, item);
                }
            }
            _ => {
                out.push('\n');
                table(out, &sub, false, v);
            }
        }
    }
}
