//! A source file's declaration fingerprint, for re-checks (`affected`): what its importers can
//! see of it, read syntactically. Per top-level statement (and per member of a top-level
//! class), a function or method whose parameters and return type are all annotated counts
//! without its body; every other statement counts whole (an unannotated body may change the
//! inferred type). Comments (but TypeScript's `/** … */` doc comments and Python's
//! `# type:` comments) and blank lines are left out. When unsure, text counts: a change the
//! fingerprint misses would leave an importer's answer stale, one it counts only costs a
//! question.

use std::hash::{Hash, Hasher};

use crate::ops::hook::Family;

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
        Family::C => return None,
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

/// A file's declaration parts, and what `Declarations` says of its scope.
struct Parts {
    decls: Vec<String>,
    global: bool,
    open: bool,
}

/// A text without its (left out) comments, and beside it, char for char, a mask where the
/// contents of string, template and regular expression literals are blanked (`HIDDEN`), so
/// brackets are counted on code only.
struct Clean {
    text: Vec<char>,
    mask: Vec<char>,
}

impl Clean {
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

/// Comments out (doc comments kept), literals masked; regular expressions told from division
/// by what comes before them. Template literals are masked whole, their `${…}` too.
fn script_clean(text: &str) -> Clean {
    script_clean_with(text, true)
}

/// A script's code without any comment (doc comments too): where its imports are read, so
/// that an example in a doc comment (`import { map } from 'rxjs'`) is no import.
pub fn script_code(text: &str) -> String {
    script_clean_with(text, false).text.into_iter().collect()
}

fn script_clean_with(text: &str, keep_docs: bool) -> Clean {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Clean {
        text: Vec::with_capacity(chars.len()),
        mask: Vec::with_capacity(chars.len()),
    };
    let mut i = 0;
    // The last code char pushed (not whitespace), for regular expressions.
    let mut last: Option<char> = None;
    let mut last_word = String::new();
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            let doc = keep_docs && chars.get(i + 2) == Some(&'*') && chars.get(i + 3) != Some(&'/');
            let start = i;
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i = (i + 2).min(chars.len());
            if doc {
                // Its own statement, counted whole: its `/` is code.
                for (k, &d) in chars[start..i].iter().enumerate() {
                    out.push(d, k > 0);
                }
            } else {
                // Its line breaks stay: lines keep their place.
                for &d in &chars[start..i] {
                    if d == '\n' {
                        out.push('\n', false);
                    }
                }
            }
            continue;
        }
        let regex = c == '/'
            && (last.is_none_or(|l| "(,=:[!&|?{};+-*%<>~^".contains(l))
                || matches!(
                    last_word.as_str(),
                    "return"
                        | "typeof"
                        | "case"
                        | "do"
                        | "else"
                        | "in"
                        | "of"
                        | "new"
                        | "delete"
                        | "void"
                        | "throw"
                        | "yield"
                        | "await"
                ));
        if c == '"' || c == '\'' || regex {
            out.push(c, false);
            i += 1;
            let mut class = false;
            while i < chars.len() && chars[i] != '\n' {
                let d = chars[i];
                out.push(d, true);
                i += 1;
                if d == '\\' {
                    if let Some(&e) = chars.get(i) {
                        out.push(e, true);
                        i += 1;
                    }
                    continue;
                }
                if regex && d == '[' {
                    class = true;
                } else if regex && d == ']' {
                    class = false;
                } else if d == c && !class {
                    // The closing quote is code.
                    if let Some(m) = out.mask.last_mut() {
                        *m = c;
                    }
                    break;
                }
            }
            last = Some(c);
            last_word.clear();
            continue;
        }
        if c == '`' {
            out.push(c, false);
            i += 1;
            let mut depth = 0usize;
            while i < chars.len() {
                let d = chars[i];
                out.push(d, true);
                i += 1;
                match d {
                    '\\' => {
                        if let Some(&e) = chars.get(i) {
                            out.push(e, true);
                            i += 1;
                        }
                    }
                    '$' if chars.get(i) == Some(&'{') => {
                        out.push('{', true);
                        i += 1;
                        depth += 1;
                    }
                    '}' if depth > 0 => depth -= 1,
                    '`' if depth == 0 => {
                        if let Some(m) = out.mask.last_mut() {
                            *m = '`';
                        }
                        break;
                    }
                    _ => {}
                }
            }
            last = Some('`');
            last_word.clear();
            continue;
        }
        out.push(c, false);
        if !c.is_whitespace() {
            last = Some(c);
            if c.is_alphanumeric() || c == '_' || c == '$' {
                last_word.push(c);
            } else {
                last_word.clear();
            }
        } else if !last_word.is_empty() {
            // A word ended; it stays the last word until code follows.
        }
        i += 1;
    }
    out
}

/// Top-level statements as line ranges: a line at depth 0 that does not begin with
/// whitespace or a closing bracket (or `.`) starts one.
fn statements(
    clean: &Clean,
    lines: &[(usize, usize)],
    top: impl Fn(&[char]) -> bool,
) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut depth = 0i32;
    for &(from, to) in lines {
        let line = &clean.mask[from..to];
        if depth <= 0 && top(line) {
            out.push((from, to));
        } else if let Some(last) = out.last_mut() {
            last.1 = to;
        } else {
            out.push((from, to));
        }
        depth += balance(line);
    }
    out
}

/// The leading words of a statement that do not change what it is.
fn strip_modifiers<'a>(mut s: &'a str, words: &[&str]) -> &'a str {
    loop {
        let before = s;
        for w in words {
            if let Some(rest) = s.strip_prefix(w)
                && rest.starts_with(char::is_whitespace)
            {
                s = rest.trim_start();
            }
        }
        if s == before {
            return s;
        }
    }
}

fn script_parts(text: &str) -> Parts {
    let clean = script_clean(text);
    let lines = clean.lines();
    let stmts = statements(&clean, &lines, |l| {
        !l.first()
            .is_some_and(|c| c.is_whitespace() || matches!(*c, '}' | ')' | ']' | '.' | HIDDEN))
    });
    let mut module = false;
    let mut decls = Vec::with_capacity(stmts.len());
    for &(from, to) in &stmts {
        let whole = clean.text_of(from, to);
        let head = whole.trim_start();
        if head.starts_with("import ")
            || head.starts_with("import{")
            || head.starts_with("import\"")
            || head.starts_with("import'")
            || head.starts_with("export ")
            || head.starts_with("export{")
            || head.starts_with("export*")
            || head.starts_with("export=")
        {
            module = true;
        }
        let kind = strip_modifiers(head, &["export", "default", "declare", "async", "abstract"]);
        let decl = if kind.starts_with("function") {
            script_function(&clean, from, to, false).unwrap_or(whole)
        } else if kind.starts_with("class ") || kind.starts_with("class{") {
            script_class(&clean, from, to).unwrap_or(whole)
        } else {
            whole
        };
        decls.push(decl);
    }
    let cjs =
        text.contains("require(") || text.contains("module.exports") || text.contains("exports.");
    let augments = text.contains("declare global") || text.contains("declare module");
    Parts {
        decls,
        global: !(module || cjs) || augments,
        // `/// <reference lib=…>` and `types=` name no file of the workspace.
        open: text.contains("<reference path"),
    }
}

/// A function or method in `clean[from..to]` whose parameters and return type are annotated,
/// without its body (`{}` in its place); `None` when it is not one. `member`: a class member
/// (a constructor or setter needs no return type).
fn script_function(clean: &Clean, from: usize, to: usize, member: bool) -> Option<String> {
    let mask = &clean.mask[from..to];
    // The body: the last `{…}` at depth 0, ending the piece (a `;` after it aside).
    let mut end = mask.len();
    while end > 0 && (mask[end - 1].is_whitespace() || mask[end - 1] == ';') {
        end -= 1;
    }
    if end == 0 || mask[end - 1] != '}' {
        return None;
    }
    let close = end - 1;
    let mut depth = 0i32;
    let mut open = None;
    for i in (0..=close).rev() {
        match mask[i] {
            '}' | ')' | ']' => depth += 1,
            '{' | '(' | '[' => {
                depth -= 1;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let open = open?;
    let sig = &mask[..open];
    let paren = first_at_depth0(sig, '(')?;
    let head: String = sig[..paren].iter().collect();
    if head.contains('=') || head.contains(':') || head.contains('{') {
        return None;
    }
    let pclose = matching(sig, paren)?;
    for (a, b) in split_params(&sig[paren + 1..pclose]) {
        let p = &sig[paren + 1 + a..paren + 1 + b];
        if !param_annotated(p) {
            return None;
        }
    }
    let after: String = sig[pclose + 1..].iter().collect();
    let after = after.trim();
    let name = head.trim();
    let setter_like = member
        && (name.ends_with("constructor") || name.starts_with("set ") || name.contains(" set "));
    let typed = after
        .strip_prefix(':')
        .is_some_and(|r| !r.trim().is_empty());
    if !(typed || (after.is_empty() && setter_like)) {
        return None;
    }
    let mut out = clean.text_of(from, from + open);
    out.push_str("{}");
    Some(out)
}

/// A class with its annotated methods' bodies left out, or `None` when its members cannot be
/// told apart (then it counts whole).
fn script_class(clean: &Clean, from: usize, to: usize) -> Option<String> {
    let mask = &clean.mask[from..to];
    let open = first_at_depth0(mask, '{')?;
    let header: String = mask[..open].iter().collect();
    // Generics holding braces would hide the body's brace: unsure.
    let angles = header.matches('<').count() as i64 - header.matches('>').count() as i64
        + header.matches("=>").count() as i64;
    if angles != 0 {
        return None;
    }
    let close = matching(mask, open)?;
    // Members start on lines of their own.
    let rest_of_line = mask[open + 1..].iter().take_while(|c| **c != '\n');
    if rest_of_line.clone().any(|c| !c.is_whitespace()) {
        return None;
    }
    let (body_from, body_to) = (from + open + 1, from + close);
    let lines: Vec<(usize, usize)> = clean
        .lines()
        .into_iter()
        .filter(|(a, b)| *a >= body_from && *b <= body_to)
        .collect();
    // A member starts at a line at the body's depth whose indentation is the first member's.
    let indent = |a: usize| {
        clean.mask[a..]
            .iter()
            .take_while(|c| **c == ' ' || **c == '\t')
            .count()
    };
    let first = lines.first().map(|(a, _)| indent(*a));
    let members = statements(clean, &lines, |l| {
        let n = l.iter().take_while(|c| **c == ' ' || **c == '\t').count();
        Some(n) == first
            && !l
                .get(n)
                .is_some_and(|c| matches!(*c, '}' | ')' | ']' | '.' | HIDDEN))
    });
    let mut out = clean.text_of(from, body_from);
    out.push('\n');
    for (a, b) in members {
        let decl = script_function(clean, a, b, true).unwrap_or_else(|| clean.text_of(a, b));
        out.push_str(&decl);
        out.push('\n');
    }
    out.push_str(&clean.text_of(body_to, to));
    Some(out)
}

// ------------------------------------------------------------------------------------ Python

/// Comments out (`# type:` and `# pyright:` ones kept), string contents masked.
fn python_clean(text: &str) -> Clean {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Clean {
        text: Vec::with_capacity(chars.len()),
        mask: Vec::with_capacity(chars.len()),
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '#' {
            let start = i;
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            let comment: String = chars[start..i].iter().collect();
            if comment.contains("type:") || comment.contains("pyright:") {
                for d in comment.chars() {
                    out.push(d, true);
                }
            }
            continue;
        }
        if c == '"' || c == '\'' {
            let triple = chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
            let n = if triple { 3 } else { 1 };
            for _ in 0..n {
                out.push(c, false);
            }
            i += n;
            while i < chars.len() {
                let d = chars[i];
                if d == '\\' {
                    out.push(d, true);
                    if let Some(&e) = chars.get(i + 1) {
                        out.push(e, true);
                    }
                    i += 2;
                    continue;
                }
                if !triple && d == '\n' {
                    break;
                }
                if d == c
                    && (!triple || (chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c)))
                {
                    for _ in 0..n {
                        out.push(c, false);
                    }
                    i += n;
                    break;
                }
                out.push(d, true);
                i += 1;
            }
            continue;
        }
        out.push(c, false);
        i += 1;
    }
    out
}

/// Line ranges cut into statements at `indent`: a line at that indentation, at depth 0 and
/// outside a string, starts one; decorators join the statement they decorate.
fn python_blocks(clean: &Clean, lines: &[(usize, usize)], indent: usize) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut depth = 0i32;
    let mut decorated = false;
    for &(from, to) in lines {
        let line = &clean.mask[from..to];
        let n = line
            .iter()
            .take_while(|c| **c == ' ' || **c == '\t')
            .count();
        // A line inside a multi-line string is masked from its start.
        let starts = depth <= 0
            && n == indent
            && !line
                .get(n)
                .is_some_and(|c| matches!(*c, ')' | ']' | '}' | HIDDEN));
        match out.last_mut() {
            Some(last) if !starts || decorated => last.1 = to,
            _ => out.push((from, to)),
        }
        if starts {
            decorated = line.get(n) == Some(&'@');
        }
        depth += balance(line);
    }
    out
}

fn python_parts(text: &str) -> Parts {
    let clean = python_clean(text);
    let lines = clean.lines();
    let stmts = python_blocks(&clean, &lines, 0);
    let decls = stmts
        .into_iter()
        .map(|(a, b)| python_statement(&clean, a, b, None).unwrap_or_else(|| clean.text_of(a, b)))
        .collect();
    Parts {
        decls,
        global: false,
        open: false,
    }
}

/// A statement's declaration part: an annotated function without its body, a class with its
/// members' (one level); `None` to count it whole. `owner`: the enclosing class's statement
/// (a method's first parameter needs no annotation).
fn python_statement(clean: &Clean, from: usize, to: usize, owner: Option<()>) -> Option<String> {
    let mask: String = clean.mask[from..to].iter().collect();
    // Past the decorators.
    let mut at = 0;
    for line in mask.split_inclusive('\n') {
        if line.trim_start().starts_with('@') {
            at += line.chars().count();
        } else {
            break;
        }
    }
    let rest: String = mask.chars().skip(at).collect();
    let t = rest.trim_start();
    let lead = rest.chars().count() - t.chars().count();
    let t2 = t.strip_prefix("async ").map(str::trim_start).unwrap_or(t);
    if t2.starts_with("def ") {
        return python_function(clean, from, to, from + at + lead, owner.is_some());
    }
    if t2.starts_with("class ") && owner.is_none() {
        return python_class(clean, from, to, from + at + lead);
    }
    None
}

/// The end (exclusive) of a header: its `:` at depth 0, from `start` in `clean`.
fn header_end(clean: &Clean, start: usize, to: usize) -> Option<usize> {
    let mut depth = 0i32;
    for i in start..to {
        match clean.mask[i] {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ':' if depth == 0 => return Some(i + 1),
            _ => {}
        }
    }
    None
}

fn python_function(
    clean: &Clean,
    from: usize,
    to: usize,
    def: usize,
    method: bool,
) -> Option<String> {
    let end = header_end(clean, def, to)?;
    let header = &clean.mask[def..end];
    let paren = header.iter().position(|c| *c == '(')?;
    let pclose = matching(header, paren)?;
    let params = split_params(&header[paren + 1..pclose]);
    let mut first_name = None;
    for (k, (a, b)) in params.iter().enumerate() {
        let p: String = header[paren + 1 + a..paren + 1 + b].iter().collect();
        let p = p.trim();
        if p.is_empty() || p == "*" || p == "/" {
            continue;
        }
        if method && k == 0 && !p.contains(':') && !p.contains('=') {
            first_name = Some(p.to_string());
            continue;
        }
        let bare = p.trim_start_matches('*');
        let m: Vec<char> = bare.chars().collect();
        if !param_annotated(&m) {
            return None;
        }
    }
    let after: String = header[pclose + 1..].iter().collect();
    if !after.trim_start().starts_with("->") {
        return None;
    }
    let body: String = clean.text[end..to].iter().collect();
    if mentions_word(&body, "global") || mentions_word(&body, "nonlocal") {
        return None;
    }
    if let Some(me) = first_name
        && assigns_attribute(&body, &me)
    {
        return None;
    }
    Some(clean.text_of(from, end))
}

/// Whether `body` may assign an attribute of `me` (`self.x = …`, `self.x: T`, `self.x += …`):
/// a line holding `me.` with a lone `=` (or a `:`) after it.
fn assigns_attribute(body: &str, me: &str) -> bool {
    let needle = format!("{me}.");
    body.lines().any(|line| {
        let Some(at) = line.find(&needle) else {
            return false;
        };
        let after = &line[at..];
        let b = after.as_bytes();
        (0..b.len()).any(|i| {
            (b[i] == b'=' && b.get(i + 1) != Some(&b'=') && !(i > 0 && b"=<>!".contains(&b[i - 1])))
                || b[i] == b':'
        })
    })
}

fn mentions_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

fn python_class(clean: &Clean, from: usize, to: usize, class: usize) -> Option<String> {
    let end = header_end(clean, class, to)?;
    let lines: Vec<(usize, usize)> = clean
        .lines()
        .into_iter()
        .filter(|(a, b)| *a >= end && *b <= to)
        .collect();
    let (first, _) = *lines.first()?;
    // A body on the header's line (`class A: pass`): whole.
    if clean.mask[end..first].iter().all(|c| *c != '\n') {
        return None;
    }
    let indent = clean.mask[first..]
        .iter()
        .take_while(|c| **c == ' ' || **c == '\t')
        .count();
    let mut out = clean.text_of(from, end);
    out.push('\n');
    for (a, b) in python_blocks(clean, &lines, indent) {
        let decl = python_statement(clean, a, b, Some(())).unwrap_or_else(|| clean.text_of(a, b));
        out.push_str(&decl);
        out.push('\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(family: Family, text: &str) -> u64 {
        declarations(family, text)
            .map(|d| d.fingerprint)
            .unwrap_or(0)
    }

    #[test]
    fn an_annotated_typescript_body_is_not_a_declaration() {
        let a = "import { x } from './x';\n// a comment\nexport function f(a: number, b: Map<string, number>): number {\n  return a + 1;\n}\n\nexport class C<T> {\n  private n = 1;\n  constructor(public v: T) {\n    this.n = 2;\n  }\n  get(k: string): T {\n    return this.v;\n  }\n}\n";
        let body = a
            .replace(
                "return a + 1;",
                "const y = `${a}{`;\n  return /}/.test(String(y)) ? a : 2;",
            )
            .replace("this.n = 2;", "this.n = 3; // }")
            .replace(
                "return this.v;",
                "if (k) { return this.v; }\n    return this.v;",
            );
        let comment = a.replace("// a comment", "/* another\n comment */\n\n");
        assert_eq!(fp(Family::Script, a), fp(Family::Script, &body));
        assert_eq!(fp(Family::Script, a), fp(Family::Script, &comment));
        for changed in [
            a.replace(
                "b: Map<string, number>): number",
                "b: Map<string, number>): string",
            ),
            a.replace("a: number, b", "a, b"),
            a.replace("private n = 1;", "private n = 2;"),
            a.replace("get(k: string): T", "get(k: number): T"),
            a.replace("// a comment", "/** @deprecated */"),
        ] {
            assert_ne!(
                fp(Family::Script, a),
                fp(Family::Script, &changed),
                "{changed}"
            );
        }
        let d = declarations(Family::Script, a).unwrap();
        assert!(!d.global && !d.open);
    }

    #[test]
    fn an_unannotated_body_counts_whole() {
        let a = "export function f(a: number) {\n  return a + 1;\n}\n";
        let b = a.replace("a + 1", "String(a)");
        assert_ne!(fp(Family::Script, a), fp(Family::Script, &b));
        let arrow = "export const f = (a: number): number => {\n  return a;\n};\n";
        assert_ne!(
            fp(Family::Script, arrow),
            fp(Family::Script, &arrow.replace("return a;", "return a + 1;"))
        );
        let py = "def f(a: int):\n    return a + 1\n";
        assert_ne!(
            fp(Family::Python, py),
            fp(Family::Python, &py.replace("a + 1", "str(a)"))
        );
        let default = "def f(a=1) -> int:\n    return a\n";
        assert_ne!(
            fp(Family::Python, default),
            fp(Family::Python, &default.replace("return a", "return 2"))
        );
    }

    #[test]
    fn an_annotated_python_body_is_not_a_declaration() {
        let a = "import os\n\n# note\n@decorate\ndef f(a: int, *args: str, b: \"X\" = 1, **kw: int) -> int:\n    \"\"\"Doc.\n\n    def g(x):\n    \"\"\"\n    return a + 1\n\n\nclass C(Base):\n    x: int = 1\n\n    def m(self, y: int) -> int:\n        return y\n\n    def set(self, y: int) -> None:\n        self.x = y\n";
        let body = a
            .replace("return a + 1", "b = a * 2  # type-less\n    return b")
            .replace("return y\n", "z = y\n        return z\n")
            .replace("# note\n", "");
        assert_eq!(fp(Family::Python, a), fp(Family::Python, &body));
        for changed in [
            a.replace("-> int:\n    \"\"\"", "-> str:\n    \"\"\""),
            a.replace("@decorate\n", ""),
            a.replace("x: int = 1", "x: int = 2"),
            a.replace("self.x = y", "self.x = str(y)"),
            a.replace("    return a + 1", "    global q\n    return a + 1"),
            a.replace("import os", "import sys"),
        ] {
            assert_ne!(
                fp(Family::Python, a),
                fp(Family::Python, &changed),
                "{changed}"
            );
        }
    }

    #[test]
    fn scripts_without_modules_are_global() {
        assert!(
            declarations(Family::Script, "declare const X: number;\n")
                .unwrap()
                .global
        );
        assert!(
            declarations(
                Family::Script,
                "export {};\ndeclare global { interface W {} }\n"
            )
            .unwrap()
            .global
        );
        assert!(
            !declarations(Family::Script, "const x = require('y');\n")
                .unwrap()
                .global
        );
        assert!(
            declarations(
                Family::Script,
                "/// <reference path=\"a.d.ts\" />\nexport {};\n"
            )
            .unwrap()
            .open
        );
        assert!(
            !declarations(
                Family::Script,
                "/// <reference lib=\"esnext\" />\nexport {};\n"
            )
            .unwrap()
            .open
        );
        assert!(declarations(Family::C, "int x;").is_none());
    }
}
