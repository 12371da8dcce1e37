//! A source file's declaration fingerprint, for re-checks (`affected`): what its importers can
//! see of it, read syntactically. Per top-level statement (and per member of a top-level
//! class), a function or method whose parameters and return type are all annotated counts
//! without its body; every other statement counts whole (an unannotated body may change the
//! inferred type). Comments (but TypeScript's `/** … */` doc comments and Python's
//! `# type:` comments) and blank lines are left out. When unsure, text counts: a change the
//! fingerprint misses would leave an importer's answer stale, one it counts only costs a
//! question.

use std::hash::{Hash, Hasher};

use crate::imports::Family;
use crate::lexer::Lang;

/// What a file declares, as its importers see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declarations {
    /// A hash of the declaration parts, in order.
    pub fingerprint: u64,
    /// A script that is no module (no top-level import or export), or one that augments
    /// another module or the global scope (`declare global`, `declare module`): what it
    /// declares is seen by every file of its project, importer or not.
    pub global: bool,
    /// It names files in ways imports do not (`/// <reference path=…>`): it may depend on any.
    pub open: bool,
}

/// The fingerprint of `text`, a file of `family` (C and others have none: `None`).
pub fn declarations(family: Family, text: &str) -> Option<Declarations> {
    let parts = match family {
        Family::Script => script_parts(text),
        Family::Python => python_parts(text),
        Family::C | Family::Go => return None,
    };
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for p in &parts.decls {
        p.hash(&mut h);
    }
    Some(Declarations {
        fingerprint: h.finish(),
        global: parts.global,
        open: parts.open,
    })
}

/// The declaration parts of `text`, in order, as `declarations` hashes them (C and Go: none).
#[cfg(test)]
pub fn parts(family: Family, text: &str) -> Vec<String> {
    match family {
        Family::Script => script_parts(text).decls,
        Family::Python => python_parts(text).decls,
        Family::C | Family::Go => Vec::new(),
    }
}

/// A file's declaration parts, and what `Declarations` says of its scope.
struct Parts {
    decls: Vec<String>,
    global: bool,
    open: bool,
}

/// A text without its (left out) comments, and beside it, char for char, a mask where the
/// contents of string, template and regular expression literals are blanked (`HIDDEN`), so
/// brackets are counted on code only. Read through `lexer`.
struct Clean {
    text: Vec<char>,
    mask: Vec<char>,
}

/// What becomes of a comment in a `Clean` text.
enum Comment {
    /// Left out (its line breaks stay: lines keep their place).
    Out,
    /// Kept, masked whole (`# type:`, `/// <reference …>`): it counts as text.
    Kept,
    /// Kept as a statement of its own (`/** … */`): its first char is code, the rest masked.
    Doc,
}

impl Clean {
    /// `text` read by `lang`'s rules, each comment as `keep` says.
    fn new(lang: Lang, text: &str, keep: impl Fn(&str) -> Comment) -> Clean {
        let lexed = crate::lexer::lex(lang, text);
        let mut out = Clean {
            text: Vec::with_capacity(text.len()),
            mask: Vec::with_capacity(text.len()),
        };
        let (masked, bytes) = (lexed.masked.as_bytes(), text.as_bytes());
        let mut comments = lexed.comments.iter().peekable();
        let mut strings = lexed.strings.iter().peekable();
        let mut chars = text.char_indices();
        // Whether the literal around (if any) has had a line break: the lines it continues on,
        // its closing delimiter included, begin inside it.
        let mut continued = false;
        while let Some((b, c)) = chars.next() {
            if let Some(r) = comments.next_if(|r| r.start == b) {
                let comment = &text[r.clone()];
                match keep(comment) {
                    Comment::Out => comment
                        .chars()
                        .filter(|d| *d == '\n')
                        .for_each(|d| out.push(d, false)),
                    Comment::Kept => comment.chars().for_each(|d| out.push(d, true)),
                    Comment::Doc => {
                        for (k, d) in comment.chars().enumerate() {
                            out.push(d, k > 0);
                        }
                    }
                }
                // Past the comment (it ends at a char boundary).
                while chars.clone().next().is_some_and(|(n, _)| n < r.end) {
                    chars.next();
                }
                continue;
            }
            while strings.next_if(|r| r.end <= b).is_some() {
                continued = false;
            }
            // A literal's contents: what the lexer blanked, and its blanks (a line inside a
            // multi-line string is no indentation), and on its lines after the first, all of it
            // (a closing `"""` or backquote at a line's start starts no statement).
            let inside = strings.peek().is_some_and(|r| r.start <= b);
            let literal =
                inside && (continued || masked.get(b) != bytes.get(b) || c.is_whitespace());
            continued |= inside && c == '\n';
            out.push(c, literal);
        }
        out
    }

    fn push(&mut self, c: char, literal: bool) {
        self.text.push(c);
        self.mask
            .push(if literal && c != '\n' { HIDDEN } else { c });
    }

    /// Lines as (text, mask) ranges, trailing blanks trimmed, blank lines left out.
    fn lines(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut start = 0;
        for i in 0..=self.text.len() {
            if i == self.text.len() || self.text[i] == '\n' {
                let mut end = i;
                while end > start && self.text[end - 1].is_whitespace() {
                    end -= 1;
                }
                if end > start {
                    out.push((start, end));
                }
                start = i + 1;
            }
        }
        out
    }

    fn text_of(&self, from: usize, to: usize) -> String {
        self.text[from..to].iter().collect()
    }
}

/// What a literal's chars are in a mask.
const HIDDEN: char = '\0';

/// How many more brackets `mask[from..to]` opens than it closes.
fn balance(mask: &[char]) -> i32 {
    mask.iter()
        .map(|c| match c {
            '(' | '[' | '{' => 1,
            ')' | ']' | '}' => -1,
            _ => 0,
        })
        .sum()
}

/// Where the bracket at `open` in `mask` closes.
fn matching(mask: &[char], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in mask.iter().enumerate().skip(open) {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The first `c` in `mask` at bracket depth 0.
fn first_at_depth0(mask: &[char], c: char) -> Option<usize> {
    let mut depth = 0i32;
    for (i, m) in mask.iter().enumerate() {
        if *m == c && depth == 0 {
            return Some(i);
        }
        match m {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// `mask` cut at its depth-0 commas (angle brackets count as brackets, but in `=>`), as
/// index ranges.
fn split_params(mask: &[char]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, m) in mask.iter().enumerate() {
        match m {
            '(' | '[' | '{' | '<' => depth += 1,
            '>' if i > 0 && mask[i - 1] == '=' => {}
            ')' | ']' | '}' | '>' => depth -= 1,
            ',' if depth == 0 => {
                out.push((start, i));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push((start, mask.len()));
    out
}

/// Whether a parameter (its mask) is annotated: a `:` at depth 0 before any `=` at depth 0.
fn param_annotated(mask: &[char]) -> bool {
    let s: String = mask.iter().collect();
    let t = s.trim();
    if t.is_empty() {
        return true;
    }
    let mut depth = 0i32;
    for c in t.chars() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth -= 1,
            ':' if depth == 0 => return true,
            '=' if depth == 0 => return false,
            _ => {}
        }
    }
    false
}

// ---------------------------------------------------------------- JavaScript and TypeScript

mod python;
mod script;
#[cfg(test)]
mod tests;

use python::*;
use script::*;
