//! One lexer for Python, TypeScript/JavaScript and Go source, for the scanners that read code
//! without a parser (surfaces, imports, fingerprints, hints): it tells code from string
//! literals and comments, so a scanner can count brackets and find statements on `masked`
//! (the text with every literal's contents and every comment blanked, line structure and
//! columns kept) and still read a literal's words in the text itself.
//!
//! Python: `#` comments; strings with any prefix (`r`, `b`, `f`, `rb`, `u`, …), triple quotes,
//! backslashes (a raw string's `\"` does not end it either), f-strings whose replacement fields
//! hold strings of their own (same quotes included, as Python 3.12 allows). Scripts: `//` and
//! `/* */` comments, quotes, template literals with `${…}` fields (nested templates included),
//! and regular expression literals (told from division by what comes before the `/`). Go:
//! `//` and `/* */` comments, interpreted strings and runes, and raw strings in backquotes
//! (no escapes, any number of lines).
//!
//! Every scanner that reads code without a parser reads it through this one: the hooks' statement
//! cutter (`hook::surface`), the import readers (`hook::imports`), the re-check fingerprints
//! (`gates::declarations`) and the derived hints' call scanner (`hints::scan`), all tested together
//! on annotated fixtures (`ops::scanner_fixtures` in lspgate-engine).

use std::ops::Range;

/// Which language's rules to read a text by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Python,
    /// TypeScript and JavaScript.
    Script,
    Go,
}

impl Lang {
    /// Whether `//` and `/* */` start comments.
    fn c_comments(self) -> bool {
        matches!(self, Lang::Script | Lang::Go)
    }
}

/// A text as the lexer read it.
#[derive(Debug)]
pub struct Lexed {
    /// The text with the contents of every literal (strings, templates, regular expressions)
    /// and every comment replaced by spaces (line breaks kept): code only, at the same byte
    /// offsets. A literal keeps its prefix and delimiters.
    pub masked: String,
    /// The text with every comment replaced by spaces (line breaks kept), literals as written.
    pub uncommented: String,
    /// Every string literal (template, regular expression) of the text, prefix and delimiters
    /// included, in order. Those inside an f-string's or template's fields are not listed
    /// apart: they are part of the outer literal.
    pub strings: Vec<Range<usize>>,
    /// Every comment of the text (`#` or `//` to the end of its line, the line break left out;
    /// `/* … */` whole), in order; those inside an f-string's or template's fields are part of
    /// the literal, not listed.
    pub comments: Vec<Range<usize>>,
}

impl Lexed {
    /// `masked` char for char with `text` (the text it was lexed from): a blanked character
    /// of several bytes is one space there, so that scanners counting code points (columns,
    /// char indexes) read code at the text's own indexes.
    pub fn masked_chars(&self, text: &str) -> Vec<char> {
        let (masked, bytes) = (self.masked.as_bytes(), text.as_bytes());
        text.char_indices()
            .map(|(b, c)| {
                if masked.get(b) == bytes.get(b) {
                    c
                } else {
                    ' '
                }
            })
            .collect()
    }
}

/// Reads `text` by `lang`'s rules.
pub fn lex(lang: Lang, text: &str) -> Lexed {
    let mut l = Lexer {
        src: text.as_bytes(),
        out: text.as_bytes().to_vec(),
        bare: text.as_bytes().to_vec(),
        pos: 0,
        strings: Vec::new(),
        comments: Vec::new(),
        lang,
    };
    l.code(None);
    // Only ASCII spaces replaced ASCII-or-not bytes of whole characters: still UTF-8.
    let utf8 = |bytes: Vec<u8>| {
        String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    };
    Lexed {
        masked: utf8(l.out),
        uncommented: utf8(l.bare),
        strings: l.strings,
        comments: l.comments,
    }
}

struct Lexer<'a> {
    src: &'a [u8],
    out: Vec<u8>,
    /// Comments blanked only.
    bare: Vec<u8>,
    pos: usize,
    strings: Vec<Range<usize>>,
    comments: Vec<Range<usize>>,
    lang: Lang,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        self.src.get(self.pos + ahead).copied()
    }

    /// Blanks `range` of the output, keeping line breaks.
    fn blank(&mut self, range: Range<usize>) {
        for b in &mut self.out[range] {
            if *b != b'\n' && *b != b'\r' {
                *b = b' ';
            }
        }
    }

    /// Code until the end, or (inside a field of an f-string or template) until the `}` that
    /// closes the field, which is consumed. `close` is that field's nesting: `Some(0)` at its
    /// start.
    fn code(&mut self, mut close: Option<usize>) {
        // For scripts: whether a `/` here would start a regular expression.
        let mut regex_ok = true;
        while let Some(c) = self.peek(0) {
            match c {
                b'{' | b'(' | b'[' => {
                    if let Some(d) = close.as_mut() {
                        *d += 1;
                    }
                    self.pos += 1;
                    regex_ok = true;
                }
                b'}' | b')' | b']' => {
                    if c == b'}'
                        && let Some(d) = close.as_mut()
                    {
                        if *d == 0 {
                            self.pos += 1;
                            return;
                        }
                        *d -= 1;
                    } else if let Some(d) = close.as_mut() {
                        *d = d.saturating_sub(1);
                    }
                    self.pos += 1;
                    regex_ok = false;
                }
                b'#' if self.lang == Lang::Python => self.line_comment(),
                // An f-string field's format spec: text, with fields of its own.
                b':' if self.lang == Lang::Python && close == Some(0) => {
                    self.pos += 1;
                    self.format_spec();
                    return;
                }
                b'/' if self.lang.c_comments() && self.peek(1) == Some(b'/') => self.line_comment(),
                b'/' if self.lang.c_comments() && self.peek(1) == Some(b'*') => {
                    self.block_comment()
                }
                b'/' if self.lang == Lang::Script && regex_ok => {
                    self.regex();
                    regex_ok = false;
                }
                b'"' | b'\'' => {
                    self.string(self.pos);
                    regex_ok = false;
                }
                b'`' if self.lang == Lang::Script => {
                    self.template();
                    regex_ok = false;
                }
                b'`' if self.lang == Lang::Go => self.raw(),
                c if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80 => {
                    let start = self.pos;
                    while self.peek(0).is_some_and(|c| {
                        c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
                    }) {
                        self.pos += 1;
                    }
                    let word = &self.src[start..self.pos];
                    if self.lang == Lang::Python
                        && matches!(self.peek(0), Some(b'"' | b'\''))
                        && is_prefix(word)
                    {
                        self.string(start);
                        regex_ok = false;
                        continue;
                    }
                    // After a keyword an expression starts; after a name or number, division.
                    regex_ok = matches!(
                        word,
                        b"return"
                            | b"typeof"
                            | b"instanceof"
                            | b"in"
                            | b"of"
                            | b"new"
                            | b"delete"
                            | b"void"
                            | b"throw"
                            | b"case"
                            | b"do"
                            | b"else"
                            | b"yield"
                            | b"await"
                    );
                }
                c if c.is_ascii_whitespace() => self.pos += 1,
                _ => {
                    self.pos += 1;
                    regex_ok = true;
                }
            }
        }
    }

    /// The rest of an f-string field after its `:`, to the field's closing `}` (consumed).
    fn format_spec(&mut self) {
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                b'{' => self.code(Some(0)),
                b'}' | b'\n' => return,
                _ => {}
            }
        }
    }

    fn line_comment(&mut self) {
        let start = self.pos;
        while self.peek(0).is_some_and(|c| c != b'\n') {
            self.pos += 1;
        }
        self.comment(start..self.pos);
    }

    /// Blanks a comment in both outputs.
    fn comment(&mut self, range: Range<usize>) {
        self.comments.push(range.clone());
        self.blank(range.clone());
        for b in &mut self.bare[range] {
            if *b != b'\n' && *b != b'\r' {
                *b = b' ';
            }
        }
    }

    fn block_comment(&mut self) {
        let start = self.pos;
        self.pos += 2;
        while let Some(c) = self.peek(0) {
            if c == b'*' && self.peek(1) == Some(b'/') {
                self.pos += 2;
                break;
            }
            self.pos += 1;
        }
        self.pos = self.pos.min(self.src.len());
        self.comment(start..self.pos);
    }

    /// A string literal whose prefix (if any) starts at `start` and whose quote is at `pos`.
    fn string(&mut self, start: usize) {
        let prefix = &self.src[start..self.pos];
        let formatted =
            self.lang == Lang::Python && prefix.iter().any(|c| matches!(c, b'f' | b'F'));
        let Some(q) = self.peek(0) else { return };
        let triple =
            self.lang == Lang::Python && self.peek(1) == Some(q) && self.peek(2) == Some(q);
        let width = if triple { 3 } else { 1 };
        self.pos += width;
        let mut piece = self.pos;
        loop {
            let Some(c) = self.peek(0) else {
                // Unterminated at the end of the text.
                self.pos = self.src.len();
                self.blank(piece.min(self.pos)..self.pos);
                break;
            };
            if c == b'\\' {
                self.pos = (self.pos + 2).min(self.src.len());
                continue;
            }
            if c == q && (!triple || (self.peek(1) == Some(q) && self.peek(2) == Some(q))) {
                self.blank(piece..self.pos);
                self.pos += width;
                break;
            }
            if c == b'\n' && !triple {
                // An unterminated one-line string ends with its line.
                self.blank(piece..self.pos);
                break;
            }
            if formatted && c == b'{' {
                if self.peek(1) == Some(b'{') {
                    self.pos += 2;
                    continue;
                }
                self.blank(piece..self.pos);
                self.field(1);
                piece = self.pos;
                continue;
            }
            self.pos += 1;
        }
        self.strings.push(start..self.pos);
    }

    /// A field of an f-string or template (`{…}`, `${…}`: `open` bytes open it) at `pos`: read
    /// as code to its closing `}`, then blanked whole (it is part of the literal, and the
    /// literals and comments in it are not listed apart).
    fn field(&mut self, open: usize) {
        let start = self.pos;
        let (listed, noted) = (self.strings.len(), self.comments.len());
        self.pos += open;
        self.code(Some(0));
        self.pos = self.pos.min(self.src.len());
        self.strings.truncate(listed);
        self.comments.truncate(noted);
        self.blank(start..self.pos);
    }

    /// A template literal, its `${…}` fields read as code.
    fn template(&mut self) {
        let start = self.pos;
        self.pos += 1;
        let mut piece = self.pos;
        while let Some(c) = self.peek(0) {
            match c {
                b'\\' => self.pos = (self.pos + 2).min(self.src.len()),
                b'`' => {
                    self.blank(piece..self.pos);
                    self.pos += 1;
                    self.strings.push(start..self.pos);
                    return;
                }
                b'$' if self.peek(1) == Some(b'{') => {
                    self.blank(piece..self.pos);
                    self.field(2);
                    piece = self.pos;
                }
                _ => self.pos += 1,
            }
        }
        self.pos = self.pos.min(self.src.len());
        self.blank(piece.min(self.pos)..self.pos);
        self.strings.push(start..self.pos);
    }

    /// A Go raw string: backquotes around anything but a backquote, line breaks included.
    fn raw(&mut self) {
        let start = self.pos;
        self.pos += 1;
        let body = self.pos;
        while self.peek(0).is_some_and(|c| c != b'`') {
            self.pos += 1;
        }
        self.blank(body..self.pos);
        self.pos = (self.pos + 1).min(self.src.len());
        self.strings.push(start..self.pos);
    }

    /// A regular expression literal: `/`, its body (a `/` in a class `[…]` does not end it),
    /// `/`, its flags. An unterminated one ends with its line.
    fn regex(&mut self) {
        let start = self.pos;
        self.pos += 1;
        let body = self.pos;
        let mut class = false;
        while let Some(c) = self.peek(0) {
            match c {
                b'\\' => self.pos = (self.pos + 2).min(self.src.len()),
                b'[' => {
                    class = true;
                    self.pos += 1;
                }
                b']' => {
                    class = false;
                    self.pos += 1;
                }
                b'/' if !class => break,
                b'\n' => break,
                _ => self.pos += 1,
            }
        }
        self.pos = self.pos.min(self.src.len());
        self.blank(body..self.pos);
        if self.peek(0) == Some(b'/') {
            self.pos += 1;
            while self.peek(0).is_some_and(|c| c.is_ascii_alphabetic()) {
                self.pos += 1;
            }
        }
        self.strings.push(start..self.pos);
    }
}

/// Whether `word` is a Python string prefix (`r`, `b`, `f`, `u`, `rb`, `br`, `fr`, `rf`, `t`,
/// in either case).
fn is_prefix(word: &[u8]) -> bool {
    let lower: Vec<u8> = word.iter().map(u8::to_ascii_lowercase).collect();
    matches!(
        lower.as_slice(),
        b"r" | b"b" | b"f" | b"u" | b"t" | b"rb" | b"br" | b"fr" | b"rf" | b"tr" | b"rt"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(lang: Lang, text: &str) -> String {
        let l = lex(lang, text);
        assert_eq!(l.masked.len(), text.len());
        assert_eq!(l.uncommented.len(), text.len());
        l.masked
    }

    /// Django's html.py:300: a raw triple-quoted string holding both quotes and brackets.
    #[test]
    fn a_raw_string_with_quotes_and_brackets_leaves_no_bracket_open() {
        let text = "trailing_punctuation_chars_no_semicolon = r\"\"\"([\\s<>\"']+)\"\"\"\n\ndef avoid_wrapping(value):\n    return value\n";
        let m = masked(Lang::Python, text);
        assert_eq!(
            m.lines().next().unwrap(),
            "trailing_punctuation_chars_no_semicolon = r\"\"\"           \"\"\""
        );
        assert!(!m.contains('['));
        assert!(m.contains("def avoid_wrapping(value):"));
    }

    #[test]
    fn python_comments_prefixes_and_triple_quotes() {
        let text = "x = b'a#b'  # c 'd\ny = \"\"\"doc\n(still\"\"\" + rb\"\\\"(\"\nz = '''a'''\n";
        let m = masked(Lang::Python, text);
        assert_eq!(
            m,
            "x = b'   '        \ny = \"\"\"   \n      \"\"\" + rb\"   \"\nz = '''a'''\n"
                .replace("'''a'''", "''' '''")
        );
        let l = lex(Lang::Python, text);
        assert_eq!(l.uncommented.lines().next(), Some("x = b'a#b'        "));
        assert_eq!(l.strings.len(), 4);
        assert_eq!(&text[l.strings[2].clone()], "rb\"\\\"(\"");
    }

    /// An f-string's fields hold code, strings of the same quotes included (Python 3.12).
    #[test]
    fn f_strings_with_nested_quotes() {
        let text = "a = f\"{d[\"k\"]}:{x!r:>{w}} {{lit}} {n:#x}\" + (1\nb = 2\n";
        let m = masked(Lang::Python, text);
        assert!(m.starts_with("a = f\""), "{m}");
        let first = m.lines().next().unwrap();
        assert_eq!(first.matches('(').count(), 1, "{m}");
        assert!(first.ends_with("\" + (1"), "{m}");
        assert_eq!(lex(Lang::Python, text).strings.len(), 1);
    }

    /// The text of an f-string or a template before a field is the literal's too.
    #[test]
    fn literal_text_before_a_field_is_blanked() {
        for (lang, text) in [
            (
                Lang::Python,
                "x = f\"({a}\" + f'[{b}{{(' + rf\"\\({c!r}\"\n",
            ),
            (Lang::Script, "x = `(${a}[${b}(`;\n"),
        ] {
            let m = masked(lang, text);
            assert!(!m.contains(['(', '[', '{']), "{m}");
        }
    }

    /// `masked_chars` is `masked` char for char with the text, whatever the literals hold.
    #[test]
    fn masked_chars_keep_the_texts_indexes() {
        let text = "s = \"é(\" + g(\"ü\")  # ö(\n";
        let l = lex(Lang::Python, text);
        let code = l.masked_chars(text);
        assert_eq!(code.len(), text.chars().count());
        let open: Vec<usize> = code
            .iter()
            .enumerate()
            .filter(|(_, c)| **c == '(')
            .map(|(i, _)| i)
            .collect();
        assert_eq!(open, vec![text.chars().position(|c| c == 'g').unwrap() + 1]);
        assert_eq!(l.comments.len(), 1);
        assert_eq!(&text[l.comments[0].clone()], "# ö(");
    }

    #[test]
    fn script_comments_templates_and_regexes() {
        let text = "const a = `x ${f(`in ${y}`)} }` // )\nconst r = /[/(]+/g.test(s); /* ( */ const d = a / 2 / b;\nreturn /\\)/;\n";
        let m = masked(Lang::Script, text);
        let lines: Vec<&str> = m.lines().collect();
        assert_eq!(lines[0].matches(['(', ')', '{', '}']).count(), 0, "{m}");
        assert!(lines[1].contains("const r = /     /g.test(s);"), "{m}");
        assert!(lines[1].contains("const d = a / 2 / b;"), "{m}");
        assert_eq!(lines[1].matches('(').count(), 1, "{m}");
        assert_eq!(lines[2], "return /  /;");
    }

    #[test]
    fn go_raw_strings_runes_and_comments() {
        let text = "var re = `a\\(\n{` // )\nconst q = '\\''; /* { */ s := \"}\\\"\" + x / y\nfunc f() {}\n";
        let m = masked(Lang::Go, text);
        let lines: Vec<&str> = m.lines().collect();
        assert_eq!(lines[0], "var re = `   ");
        assert_eq!(lines[1], " `     ");
        assert!(lines[2].contains("s := \"   \" + x / y"), "{m}");
        // Only `func f() {}`'s brackets are code.
        assert_eq!(m.matches(['(', ')', '{', '}']).count(), 4, "{m}");
        assert_eq!(lex(Lang::Go, text).strings.len(), 3);
    }

    #[test]
    fn unterminated_literals_end_with_their_line_or_the_text() {
        for (lang, text) in [
            (Lang::Python, "x = 'open\ny = (1)\n"),
            (Lang::Script, "x = \"open\ny = (1)\n"),
            (Lang::Python, "x = \"\"\"never closed ("),
            (Lang::Script, "x = `never ${ closed"),
            (Lang::Script, "x = /never"),
        ] {
            let m = masked(lang, text);
            if text.contains("y = (1)") {
                assert!(m.contains("y = (1)"), "{m:?}");
            }
        }
    }
}
