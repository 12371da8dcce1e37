//! Declaration fingerprints of JavaScript and TypeScript: code with comments masked (doc
//! comments kept), top-level statements, annotated functions and class members without bodies.

use super::*;

/// Comments out (doc comments and `///` directives kept), literals masked.
pub(super) fn script_clean(text: &str) -> Clean {
    Clean::new(Lang::Script, text, |comment| {
        // A `///` directive (`<reference types=…>`, `lib=`, `path=`) changes what the file
        // sees: it counts, as text.
        if comment
            .strip_prefix("///")
            .is_some_and(|d| d.trim_start().starts_with('<'))
        {
            Comment::Kept
        } else if comment.starts_with("/**") && comment != "/**/" {
            // Its own statement, counted whole: its `/` is code.
            Comment::Doc
        } else {
            Comment::Out
        }
    })
}

/// Top-level statements as line ranges: a line at depth 0 that does not begin with
/// whitespace or a closing bracket (or `.`) starts one.
pub(super) fn statements(
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
pub(super) fn strip_modifiers<'a>(mut s: &'a str, words: &[&str]) -> &'a str {
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

pub(super) fn script_parts(text: &str) -> Parts {
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
    // CommonJS: `require(` in code, not in a declaration (`declare function require(…)`).
    let code = crate::lexer::lex(Lang::Script, text).masked;
    let cjs = code.contains("module.exports")
        || code.contains("exports.")
        || code
            .match_indices("require(")
            .any(|(i, _)| !code[..i].ends_with("function "));
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
pub(super) fn script_function(
    clean: &Clean,
    from: usize,
    to: usize,
    member: bool,
) -> Option<String> {
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
    // `f(): A | { kind: "s" };` has no body: its last braces are a type, as after an arrow
    // (`f(): () => { a: A }`); after a generic's close (`f(): Array<T> {`) they are the body.
    let before = mask[..open].iter().rposition(|c| !c.is_whitespace());
    let arrow = before.is_some_and(|i| mask[i] == '>' && i > 0 && mask[i - 1] == '=');
    if arrow
        || before.is_some_and(|i| matches!(mask[i], '|' | '&' | ':' | ',' | '<' | '?' | '='))
        || mask[end..].contains(&';')
    {
        return None;
    }
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
    // A constructor's body may set properties whose types are inferred from it: it counts.
    if name.ends_with("constructor") {
        return None;
    }
    let setter_like = member && (name.starts_with("set ") || name.contains(" set "));
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
pub(super) fn script_class(clean: &Clean, from: usize, to: usize) -> Option<String> {
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
