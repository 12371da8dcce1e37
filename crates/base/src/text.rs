//! Pure text logic shared by every layer: line indexes, conversion between agents' 1-based
//! code-point columns and the server's UTF-8/16/32 offsets, whole-word symbol search, digests.

use sha2::{Digest, Sha256};

/// A position encoding a server may negotiate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    Utf8,
    #[default]
    Utf16,
    Utf32,
}

impl Encoding {
    pub fn from_lsp(kind: &str) -> Option<Encoding> {
        match kind {
            "utf-8" => Some(Encoding::Utf8),
            "utf-16" => Some(Encoding::Utf16),
            "utf-32" => Some(Encoding::Utf32),
            _ => None,
        }
    }

    fn units(self, c: char) -> u32 {
        match self {
            Encoding::Utf8 => c.len_utf8() as u32,
            Encoding::Utf16 => c.len_utf16() as u32,
            Encoding::Utf32 => 1,
        }
    }
}

/// Start offsets of each line. Lines end at `\n`, `\r\n` or a lone `\r`, as LSP counts them.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        // Every file a location names is indexed per answer: found by memchr's vector search,
        // not byte by byte.
        for i in memchr::memchr2_iter(b'\n', b'\r', bytes) {
            match bytes[i] {
                // A `\r\n` ends its line at the `\n`.
                b'\r' if bytes.get(i + 1) == Some(&b'\n') => {}
                _ => starts.push(i + 1),
            }
        }
        LineIndex {
            starts,
            len: text.len(),
        }
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The text of 0-based line `line`, without its line ending.
    pub fn line<'a>(&self, text: &'a str, line: usize) -> Option<&'a str> {
        let start = *self.starts.get(line)?;
        let end = self.starts.get(line + 1).copied().unwrap_or(self.len);
        let s = text.get(start..end)?;
        Some(s.trim_end_matches(['\n', '\r']))
    }
}

/// Why a 1-based position does not fit the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    #[error("line {line} is past the end of the file ({lines} lines)")]
    LineOutOfRange { line: u32, lines: usize },
    #[error("column {column} is past the end of line {line} ({chars} characters)")]
    ColumnOutOfRange {
        line: u32,
        column: u32,
        chars: usize,
    },
}

/// Converts an agent position (1-based line, 1-based code-point column) to the server's
/// (0-based line, 0-based units of `enc`). A column one past the last character is allowed.
pub fn to_wire(
    text: &str,
    index: &LineIndex,
    line: u32,
    column: u32,
    enc: Encoding,
) -> Result<(u32, u32), PositionError> {
    let l = line.saturating_sub(1) as usize;
    let Some(src) = index.line(text, l) else {
        return Err(PositionError::LineOutOfRange {
            line,
            lines: index.line_count(),
        });
    };
    let want = column.saturating_sub(1) as usize;
    let mut units = 0u32;
    let mut count = 0usize;
    for c in src.chars() {
        if count == want {
            return Ok((l as u32, units));
        }
        units += enc.units(c);
        count += 1;
    }
    if count == want {
        return Ok((l as u32, units));
    }
    Err(PositionError::ColumnOutOfRange {
        line,
        column,
        chars: count,
    })
}

/// Converts a server position to an agent's (1-based line, 1-based code-point column).
/// Positions past the line's end (or inside a character) are clamped, never an error: servers
/// are not always exact, and an answer is better than none.
pub fn from_wire(
    text: &str,
    index: &LineIndex,
    line: u32,
    character: u32,
    enc: Encoding,
) -> (u32, u32) {
    let Some(src) = index.line(text, line as usize) else {
        // Past the end (e.g. a range ending on the line after the last): clamp to the end.
        let last = index.line_count().saturating_sub(1);
        let chars = index.line(text, last).map_or(0, |s| s.chars().count());
        return (last as u32 + 1, chars as u32 + 1);
    };
    let mut units = 0u32;
    let mut col = 0u32;
    for c in src.chars() {
        if units >= character {
            break;
        }
        units += enc.units(c);
        col += 1;
    }
    (line + 1, col + 1)
}

/// A position's `character` on `line` (the line's text), counted in `from`'s units, counted in
/// `to`'s instead (a position inside a character or past the line's end is clamped to the
/// character's start or the line's end).
pub fn convert_character(line: &str, character: u32, from: Encoding, to: Encoding) -> u32 {
    if from == to {
        return character;
    }
    let (mut seen, mut out) = (0u32, 0u32);
    for c in line.chars() {
        if seen >= character {
            break;
        }
        seen += from.units(c);
        if seen > character {
            break;
        }
        out += to.units(c);
    }
    out
}

/// The byte offset of a server position (0-based line, units of `enc`), clamped to the line's
/// end (a position past the last line is the end of the text).
pub fn offset_of(text: &str, index: &LineIndex, line: u32, character: u32, enc: Encoding) -> usize {
    let Some(start) = index.starts.get(line as usize).copied() else {
        return text.len();
    };
    let src = index.line(text, line as usize).unwrap_or("");
    let mut units = 0u32;
    for (i, c) in src.char_indices() {
        if units >= character {
            return start + i;
        }
        units += enc.units(c);
    }
    start + src.len()
}

/// Replaces byte ranges of `text`. Ranges must not overlap; an insertion at the same offset
/// as another edit keeps the order given.
pub fn splice(text: &str, edits: &[(usize, usize, &str)]) -> Result<String, String> {
    let mut order: Vec<usize> = (0..edits.len()).collect();
    order.sort_by_key(|&i| (edits[i].0, edits[i].1, i));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for i in order {
        let (start, end, new) = edits[i];
        if start < at || end < start || end > text.len() {
            return Err(format!(
                "edits overlap or fall outside the text (at byte {start})"
            ));
        }
        if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            return Err(format!("an edit splits a character (at byte {start})"));
        }
        out.push_str(&text[at..start]);
        out.push_str(new);
        at = end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// Whether `c` can be part of an identifier for whole-word matching.
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Finds the `occurrence`-th (1-based) whole-word match of `symbol` in `line_text` and returns
/// its 1-based code-point column.
pub fn find_symbol(line_text: &str, symbol: &str, occurrence: u32) -> Option<u32> {
    if symbol.is_empty() || occurrence == 0 {
        return None;
    }
    let starts_word = symbol.chars().next().is_some_and(is_word);
    let ends_word = symbol.chars().next_back().is_some_and(is_word);
    let mut seen = 0;
    let mut from = 0;
    while let Some(off) = line_text[from..].find(symbol) {
        let at = from + off;
        let end = at + symbol.len();
        let before_ok = !starts_word || !line_text[..at].chars().next_back().is_some_and(is_word);
        let after_ok = !ends_word || !line_text[end..].chars().next().is_some_and(is_word);
        if before_ok && after_ok {
            seen += 1;
            if seen == occurrence {
                return Some(line_text[..at].chars().count() as u32 + 1);
            }
        }
        from = at + symbol.chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// `text` with every whole-word `old` replaced by `new`.
pub fn replace_word(text: &str, old: &str, new: &str) -> String {
    if old.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut prev: Option<char> = None;
    while let Some(i) = rest.find(old) {
        let before = rest[..i].chars().next_back().or(prev);
        let after = rest[i + old.len()..].chars().next();
        out.push_str(&rest[..i]);
        if before.is_some_and(is_word) || after.is_some_and(is_word) {
            out.push_str(old);
        } else {
            out.push_str(new);
        }
        prev = old.chars().next_back();
        rest = &rest[i + old.len()..];
    }
    out.push_str(rest);
    out
}

/// The whole word at 1-based code-point `column` of `line_text`, if a word is there.
pub fn word_at(line_text: &str, column: u32) -> Option<&str> {
    let at = line_text
        .char_indices()
        .nth((column as usize).checked_sub(1)?)
        .filter(|(_, c)| is_word(*c))?
        .0;
    let start = line_text[..at]
        .char_indices()
        .rev()
        .find(|(_, c)| !is_word(*c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let end = line_text[at..]
        .char_indices()
        .find(|(_, c)| !is_word(*c))
        .map_or(line_text.len(), |(i, _)| at + i);
    Some(&line_text[start..end])
}

/// Hex SHA-256 of some bytes: the digest agents see (`expected_digest`, `revision_conflict`).
pub fn digest(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Whether two byte strings are equal, in time that does not depend on where they differ (only
/// on their length, which is no secret where lspgate compares: digests, seals).
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    a.len() == b.len() && std::hint::black_box(diff) == 0
}

/// Lowercase hex of some bytes.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_at_a_column() {
        let line = "let größe = old_x.y($a);";
        assert_eq!(word_at(line, 5), Some("größe"));
        assert_eq!(
            word_at(line, 7),
            Some("größe"),
            "from within, past a multi-byte char"
        );
        assert_eq!(word_at(line, 13), Some("old_x"));
        assert_eq!(word_at(line, 21), Some("$a"));
        assert_eq!(word_at(line, 4), None, "a space");
        assert_eq!(word_at(line, 99), None, "past the end");
        assert_eq!(word_at(line, 0), None);
    }

    #[test]
    fn lines_end_at_lf_crlf_and_a_lone_cr() {
        let t = "a\r\nb\rc\n\r\n\rd";
        let idx = LineIndex::new(t);
        let lines: Vec<&str> = (0..idx.line_count())
            .map(|l| idx.line(t, l).unwrap_or("?"))
            .collect();
        assert_eq!(lines, ["a", "b", "c", "", "", "d"]);
        assert_eq!(LineIndex::new("").line_count(), 1);
        assert_eq!(LineIndex::new("x\n").line_count(), 2);
        assert_eq!(LineIndex::new("x\r").line_count(), 2);
    }

    fn roundtrip(text: &str, line: u32, col: u32, enc: Encoding) -> (u32, u32) {
        let idx = LineIndex::new(text);
        let (l, c) = to_wire(text, &idx, line, col, enc).unwrap();
        assert_eq!(
            from_wire(text, &idx, l, c, enc),
            (line, col),
            "{text:?} {enc:?}"
        );
        (l, c)
    }

    #[test]
    fn emoji_counts_two_utf16_units_four_utf8_bytes() {
        let t = "let s = \"😀\"; total\n";
        // `total` starts at code-point column 14.
        assert_eq!(find_symbol("let s = \"😀\"; total", "total", 1), Some(14));
        assert_eq!(roundtrip(t, 1, 14, Encoding::Utf16), (0, 14));
        assert_eq!(roundtrip(t, 1, 14, Encoding::Utf8), (0, 16));
        assert_eq!(roundtrip(t, 1, 14, Encoding::Utf32), (0, 13));
    }

    #[test]
    fn cjk_combining_marks_and_tabs() {
        let t = "名前 = 1\n\te\u{301}x = 2\n";
        assert_eq!(roundtrip(t, 1, 4, Encoding::Utf16), (0, 3));
        assert_eq!(roundtrip(t, 1, 4, Encoding::Utf8), (0, 7));
        // Tab is one character; the combining mark is its own code point.
        assert_eq!(roundtrip(t, 2, 4, Encoding::Utf16), (1, 3));
        assert_eq!(roundtrip(t, 2, 4, Encoding::Utf8), (1, 4));
    }

    #[test]
    fn crlf_and_lone_cr_end_lines() {
        let t = "a\r\nbé c\rlast";
        let idx = LineIndex::new(t);
        assert_eq!(idx.line_count(), 3);
        assert_eq!(idx.line(t, 1), Some("bé c"));
        assert_eq!(idx.line(t, 2), Some("last"));
        assert_eq!(roundtrip(t, 2, 4, Encoding::Utf8), (1, 4));
        // Column one past the end is the end of the line, not the line break.
        assert_eq!(roundtrip(t, 1, 2, Encoding::Utf16), (0, 1));
    }

    #[test]
    fn out_of_range_positions_are_errors_and_server_overshoot_clamps() {
        let t = "ab\ncd";
        let idx = LineIndex::new(t);
        assert!(matches!(
            to_wire(t, &idx, 3, 1, Encoding::Utf16),
            Err(PositionError::LineOutOfRange { .. })
        ));
        assert!(matches!(
            to_wire(t, &idx, 1, 4, Encoding::Utf16),
            Err(PositionError::ColumnOutOfRange { .. })
        ));
        assert_eq!(from_wire(t, &idx, 0, 99, Encoding::Utf16), (1, 3));
        assert_eq!(from_wire(t, &idx, 7, 0, Encoding::Utf16), (2, 3));
        // A character offset inside a surrogate pair lands after the character.
        let e = "😀x";
        let ei = LineIndex::new(e);
        assert_eq!(from_wire(e, &ei, 0, 1, Encoding::Utf16), (1, 2));
    }

    #[test]
    fn symbol_search_is_whole_word_with_occurrences() {
        let line = "total = subtotal + total_x + total";
        assert_eq!(find_symbol(line, "total", 1), Some(1));
        assert_eq!(find_symbol(line, "total", 2), Some(30));
        assert_eq!(find_symbol(line, "total", 3), None);
        assert_eq!(find_symbol("ß total", "total", 1), Some(3));
        assert_eq!(find_symbol("a->b", "->", 1), Some(2));
        assert_eq!(find_symbol("x", "", 1), None);
    }

    #[test]
    fn offsets_and_splices() {
        let t = "a😀b\nxyz\n";
        let idx = LineIndex::new(t);
        assert_eq!(offset_of(t, &idx, 0, 3, Encoding::Utf16), 5); // after the emoji
        assert_eq!(offset_of(t, &idx, 0, 5, Encoding::Utf8), 5);
        assert_eq!(offset_of(t, &idx, 1, 99, Encoding::Utf16), 10);
        assert_eq!(offset_of(t, &idx, 9, 0, Encoding::Utf16), t.len());
        assert_eq!(
            splice(t, &[(0, 1, "A"), (7, 8, "X"), (5, 5, "+")]).unwrap(),
            "A😀+b\nXyz\n"
        );
        assert!(splice(t, &[(0, 3, ""), (2, 4, "")]).is_err());
        assert!(splice(t, &[(2, 3, "")]).is_err(), "inside the emoji");
    }

    #[test]
    fn digest_is_sha256_hex() {
        assert_eq!(
            digest(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
