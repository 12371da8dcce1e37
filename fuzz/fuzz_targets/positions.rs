//! Fuzz target: position conversion (`text`: line index, agent code-point columns to and from
//! UTF-8/16/32 units, byte offsets, splices, whole-word symbol search). Checks: never a panic;
//! every position inside a line (columns 1 to one past its last character) round-trips
//! through `to_wire` and `from_wire` in all three encodings and lands on the right byte; a
//! server's position, however wrong, clamps to a valid agent position; offsets are character
//! boundaries; a found symbol is at the column reported, on word boundaries.

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use lspgate::text::{self, Encoding, LineIndex, PositionError};

#[derive(Arbitrary, Debug)]
struct Input {
    text: String,
    line: u32,
    character: u32,
    enc: u8,
    symbol: String,
    occurrence: u8,
    edits: Vec<(u16, u16, String)>,
}

const ENCODINGS: [Encoding; 3] = [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32];

fn units(c: char, enc: Encoding) -> u32 {
    match enc {
        Encoding::Utf8 => c.len_utf8() as u32,
        Encoding::Utf16 => c.len_utf16() as u32,
        Encoding::Utf32 => 1,
    }
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Lines as LSP counts them (`\n`, `\r\n`, lone `\r`), each with its start byte.
fn reference_lines(text: &str) -> Vec<(usize, &str)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\n' || b[i] == b'\r' {
            out.push((start, &text[start..i]));
            if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') {
                i += 1;
            }
            start = i + 1;
        }
        i += 1;
    }
    out.push((start, &text[start..]));
    out
}

fuzz_target!(|input: Input| {
    let t = input.text.as_str();
    let index = LineIndex::new(t);
    let lines = reference_lines(t);
    assert_eq!(index.line_count(), lines.len());
    let enc = ENCODINGS[input.enc as usize % 3];

    // Positions inside every line, in every encoding (bounded work per input).
    if t.len() <= 2048 {
        for (l, &(start, src)) in lines.iter().enumerate() {
            assert_eq!(index.line(t, l), Some(src));
            let chars: Vec<(usize, char)> = src.char_indices().collect();
            for e in ENCODINGS {
                // Every column of a short line; of a long one, about a hundred, evenly spread
                // (each conversion walks the line: all of them would be quadratic).
                let step = (chars.len() / 100).max(1);
                let mut u = 0u32;
                for col in 1..=chars.len() + 1 {
                    if let Some(&(_, c)) = chars.get(col - 1)
                        && col % step != 0
                        && col != 1
                    {
                        u += units(c, e);
                        continue;
                    }
                    let (wl, wc) = text::to_wire(t, &index, l as u32 + 1, col as u32, e)
                        .expect("a position inside the line converts");
                    assert_eq!((wl, wc), (l as u32, u), "{e:?} col {col} of {src:?}");
                    assert_eq!(
                        text::from_wire(t, &index, wl, wc, e),
                        (l as u32 + 1, col as u32),
                        "round trip {e:?} col {col} of {src:?}"
                    );
                    let byte = chars.get(col - 1).map_or(src.len(), |&(b, _)| b);
                    assert_eq!(text::offset_of(t, &index, wl, wc, e), start + byte);
                    if let Some(&(_, c)) = chars.get(col - 1) {
                        u += units(c, e);
                    }
                }
                assert!(matches!(
                    text::to_wire(t, &index, l as u32 + 1, chars.len() as u32 + 2, e),
                    Err(PositionError::ColumnOutOfRange { .. })
                ));
            }
        }
        assert!(matches!(
            text::to_wire(t, &index, lines.len() as u32 + 1, 1, Encoding::Utf16),
            Err(PositionError::LineOutOfRange { .. })
        ));
    }

    // Whatever a server says: clamped to a valid agent position, offsets on boundaries.
    for (line, character) in [
        (input.line, input.character),
        (input.line % (lines.len() as u32 + 2), input.character % 64),
    ] {
        let (al, ac) = text::from_wire(t, &index, line, character, enc);
        assert!(al >= 1 && al as usize <= lines.len(), "line {al}");
        let chars = lines[al as usize - 1].1.chars().count();
        assert!(
            ac >= 1 && ac as usize <= chars + 1,
            "column {ac} of {chars}"
        );
        assert!(text::to_wire(t, &index, al, ac, enc).is_ok());
        let off = text::offset_of(t, &index, line, character, enc);
        assert!(off <= t.len() && t.is_char_boundary(off), "offset {off}");
    }

    // Agent positions with arbitrary numbers: a result or an error, never a panic.
    if let Ok((l, c)) = text::to_wire(t, &index, input.line, input.character, enc) {
        assert!((l as usize) < lines.len());
        let _ = c;
    }

    // Symbol search on one line.
    let l = input.line as usize % lines.len();
    let src = lines[l].1;
    let occurrence = u32::from(input.occurrence % 8);
    let sym = input.symbol.as_str();
    if let Some(col) = text::find_symbol(src, sym, occurrence) {
        assert!(!sym.is_empty() && occurrence >= 1);
        let at = src
            .char_indices()
            .nth(col as usize - 1)
            .map(|(b, _)| b)
            .expect("the column is inside the line");
        assert!(
            src[at..].starts_with(sym),
            "{sym:?} at column {col} of {src:?}"
        );
        if sym.chars().next().is_some_and(is_word) {
            assert!(!src[..at].chars().next_back().is_some_and(is_word));
        }
        if sym.chars().next_back().is_some_and(is_word) {
            assert!(!src[at + sym.len()..].chars().next().is_some_and(is_word));
        }
        assert!(text::to_wire(t, &index, l as u32 + 1, col, enc).is_ok());
    }

    // Splices: a result or an error for any ranges; a result has the expected length.
    let spans: Vec<(usize, usize, &str)> = input
        .edits
        .iter()
        .map(|(s, e, n)| {
            let s = *s as usize % (t.len() + 1);
            let e = *e as usize % (t.len() + 1);
            (s, e, n.as_str())
        })
        .collect();
    if let Ok(out) = text::splice(t, &spans) {
        let removed: usize = spans.iter().map(|(s, e, _)| e - s).sum();
        let added: usize = spans.iter().map(|(_, _, n)| n.len()).sum();
        assert_eq!(out.len(), t.len() - removed + added);
    }
    let _ = Encoding::from_lsp(sym);
});
