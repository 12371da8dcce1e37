//! Declaration fingerprints of Python: code with comments left out (`# type:` kept), top-level
//! blocks, annotated functions and class members without bodies.

use super::*;

/// Comments out (`# type:` and `# pyright:` ones kept), literals masked.
pub(super) fn python_clean(text: &str) -> Clean {
    Clean::new(Lang::Python, text, |comment| {
        if comment.contains("type:") || comment.contains("pyright:") {
            Comment::Kept
        } else {
            Comment::Out
        }
    })
}

/// Line ranges cut into statements at `indent`: a line at that indentation, at depth 0 and
/// outside a string, starts one; decorators join the statement they decorate.
pub(super) fn python_blocks(
    clean: &Clean,
    lines: &[(usize, usize)],
    indent: usize,
) -> Vec<(usize, usize)> {
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

pub(super) fn python_parts(text: &str) -> Parts {
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
pub(super) fn python_statement(
    clean: &Clean,
    from: usize,
    to: usize,
    owner: Option<()>,
) -> Option<String> {
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
pub(super) fn header_end(clean: &Clean, start: usize, to: usize) -> Option<usize> {
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

pub(super) fn python_function(
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
        if method && k == 0 && !p.contains('=') {
            // `self` or `self: "A"`: its name, for the attributes the body sets.
            let name = p.split(':').next().unwrap_or(p).trim();
            first_name = Some(name.to_string());
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
pub(super) fn assigns_attribute(body: &str, me: &str) -> bool {
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

pub(super) fn mentions_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

pub(super) fn python_class(clean: &Clean, from: usize, to: usize, class: usize) -> Option<String> {
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
