//! The TOML merge engine: lspgate's entries go in one block of their own at the end of the file,
//! between `# >>> lspgate setup` and `# <<< lspgate setup` lines, and nothing else in the file
//! changes; the result is parsed again to check each entry lands where it should.

use serde_json::Value;

use super::table::{Entry, J, Ours, ours};

const BEGIN: &str = "# >>> lspgate setup";
const END: &str = "# <<< lspgate setup";

/// The block's first line.
const HEAD: &str =
    "# >>> lspgate setup: written by `lspgate setup`, taken out by `lspgate setup --remove`";

/// Parses `text` as TOML; the parser's message (with its line and column) when it is not.
pub fn parse(text: &str) -> Result<Value, String> {
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

/// `text` without lspgate's block, and the newline `put` added before it.
pub fn take(text: &str) -> String {
    let Some((start, end)) = find(text) else {
        return text.to_string();
    };
    let start = if text[..start].ends_with('\n') {
        start - 1
    } else {
        start
    };
    format!("{}{}", &text[..start], &text[end..])
}

/// `text` with lspgate's block holding `entries`, except those the rest of the file has
/// already (an `mcp_servers.lspgate` table, a hook group running lspgate); unchanged when the
/// block is as it should be.
pub fn put(text: &str, entries: &[Entry], cmd: &str) -> Result<String, String> {
    parse(text)?;
    let outside = parse(&take(text))?;
    let wanted: Vec<&Entry> = entries.iter().filter(|e| !has(&outside, e, cmd)).collect();
    let block = if wanted.is_empty() {
        String::new()
    } else {
        let tables: Vec<String> = wanted.iter().map(|e| render(e)).collect();
        format!("{HEAD}\n{}{END}\n", tables.join("\n"))
    };
    let out = match find(text) {
        Some((start, end)) if block.is_empty() => {
            let start = if text[..start].ends_with('\n') {
                start - 1
            } else {
                start
            };
            format!("{}{}", &text[..start], &text[end..])
        }
        Some((start, end)) => format!("{}{block}{}", &text[..start], &text[end..]),
        None if block.is_empty() => text.to_string(),
        None if text.is_empty() => block,
        None => format!("{text}\n{block}"),
    };
    let parsed = parse(&out).map_err(|e| format!("lspgate's block would not parse there: {e}"))?;
    if let Some(e) = wanted.iter().find(|e| !holds(&parsed, e)) {
        return Err(format!(
            "lspgate's block would not set `{}` (the file defines it in a way a block at its end cannot extend)",
            e.path().join(".")
        ));
    }
    Ok(out)
}

/// Whether `doc` holds `entry` (a hook: any group running lspgate's hook, or equal to it).
pub fn has(doc: &Value, entry: &Entry, cmd: &str) -> bool {
    let mut node = doc;
    for key in entry.path() {
        match node.get(key) {
            Some(n) => node = n,
            None => return false,
        }
    }
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
pub fn holds(doc: &Value, entry: &Entry) -> bool {
    let mut node = doc;
    for key in entry.path() {
        match node.get(key) {
            Some(n) => node = n,
            None => return false,
        }
    }
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
