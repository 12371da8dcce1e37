//! A small Python scanner for derived hints: the calls of a range of lines with their
//! arguments, and where a `def`'s parameter list ends. Structure (brackets, commas, names) is
//! read on the code as `lexer` masks it (literals' contents and comments blanked), words on
//! the text. Positions are 1-based lines and code-point columns.

/// A call: where its arguments start (just after `(`) and each argument.
#[derive(Debug, Clone, PartialEq)]
pub struct CallSite {
    pub open: (u32, u32),
    pub args: Vec<Arg>,
}

/// One argument: where its first character is and its text (trimmed).
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    pub at: (u32, u32),
    pub text: String,
}

impl Arg {
    /// A positional argument: not `name=…`, `*xs` or `**kw`.
    pub fn positional(&self) -> bool {
        if self.text.starts_with('*') {
            return false;
        }
        let ident_end = self
            .text
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(self.text.len());
        let rest = self.text[ident_end..].trim_start();
        !(ident_end > 0 && rest.starts_with('=') && !rest.starts_with("=="))
    }
}

const KEYWORDS: &[&str] = &[
    "and", "as", "assert", "await", "del", "elif", "else", "except", "for", "from", "global", "if",
    "import", "in", "is", "lambda", "nonlocal", "not", "or", "raise", "return", "while", "with",
    "yield",
];

struct Frame {
    call: Option<usize>,
    /// Where the open argument starts: position and char index.
    arg: Option<((u32, u32), usize)>,
}

impl Frame {
    fn new(call: Option<usize>) -> Frame {
        Frame { call, arg: None }
    }
}

/// Every call whose `(` is on lines `first..=last` of `text`, with its arguments.
pub fn calls(text: &Text, first: u32, last: u32) -> Vec<CallSite> {
    let (chars, code) = (&text.chars, &text.code);
    let mut out: Vec<CallSite> = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let (mut line, mut col) = (1u32, 1u32);
    let mut i = 0;
    let mut prev_word = String::new();
    let mut last_word: Option<String> = None; // an identifier just before, for `name(`
    // Advances one char, keeping line and column.
    macro_rules! step {
        () => {{
            if code[i] == '\n' {
                line += 1;
                col = 1;
            } else {
                col += 1;
            }
            i += 1;
        }};
    }
    while i < code.len() {
        if line > last && stack.is_empty() {
            break;
        }
        let c = code[i];
        // The innermost call's open argument starts at the first thing that is not space.
        if !c.is_whitespace()
            && !matches!(c, ',' | ')' | ']' | '}')
            && let Some(f) = stack.last_mut()
            && f.call.is_some()
            && f.arg.is_none()
        {
            f.arg = Some(((line, col), i));
        }
        match c {
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while i < code.len() && (code[i].is_alphanumeric() || code[i] == '_') {
                    step!();
                }
                prev_word = last_word.take().unwrap_or_default();
                // A string prefix (`f` of `f"…"`) is read as a name; the quote after it ends it.
                last_word = Some(chars[start..i].iter().collect());
                continue;
            }
            '(' => {
                let callee = last_word.take().filter(|w| {
                    !KEYWORDS.contains(&w.as_str()) && prev_word != "def" && prev_word != "class"
                });
                step!();
                let call = callee.filter(|_| line >= first && line <= last).map(|_| {
                    out.push(CallSite {
                        open: (line, col),
                        args: Vec::new(),
                    });
                    out.len() - 1
                });
                stack.push(Frame::new(call));
                continue;
            }
            '[' | '{' => {
                stack.push(Frame::new(None));
                last_word = None;
            }
            ')' | ']' | '}' => {
                if let Some(mut f) = stack.pop() {
                    end_arg(&mut out, &mut f, &chars[..i]);
                }
                // `f(x)(y)`, `xs[0](y)`: what follows is not a named call.
                last_word = None;
            }
            ',' => {
                if let Some(f) = stack.last_mut() {
                    end_arg(&mut out, f, &chars[..i]);
                }
                last_word = None;
            }
            c => {
                if !c.is_whitespace() {
                    last_word = None;
                    prev_word.clear();
                } else if c == '\n' && stack.is_empty() {
                    last_word = None;
                }
            }
        }
        step!();
    }
    out
}

/// Ends `f`'s open argument at the end of `upto`.
fn end_arg(out: &mut [CallSite], f: &mut Frame, upto: &[char]) {
    let (Some(call), Some((at, start))) = (f.call, f.arg.take()) else {
        return;
    };
    let text: String = upto.get(start..).unwrap_or_default().iter().collect();
    let text = text.trim().to_string();
    if !text.is_empty()
        && let Some(site) = out.get_mut(call)
    {
        site.args.push(Arg { at, text });
    }
}

/// A text as chars and as code (`lexer`'s mask, char for char: literals' contents and
/// comments blanked), with where each line starts: positions to indexes and back.
pub struct Text {
    pub chars: Vec<char>,
    pub code: Vec<char>,
    starts: Vec<usize>,
}

impl Text {
    pub fn new(text: &str) -> Text {
        let chars: Vec<char> = text.chars().collect();
        let code = crate::lexer::lex(crate::lexer::Lang::Python, text).masked_chars(text);
        let mut starts = vec![0];
        starts.extend(
            chars
                .iter()
                .enumerate()
                .filter(|(_, c)| **c == '\n')
                .map(|(i, _)| i + 1),
        );
        Text {
            chars,
            code,
            starts,
        }
    }

    /// The index of 1-based (line, column), if the line exists.
    pub fn index(&self, (line, col): (u32, u32)) -> Option<usize> {
        let start = *self.starts.get((line as usize).checked_sub(1)?)?;
        Some((start + (col as usize).saturating_sub(1)).min(self.chars.len()))
    }

    /// The 1-based (line, column) of index `i`.
    pub fn pos(&self, i: usize) -> (u32, u32) {
        let line = self.starts.partition_point(|s| *s <= i).max(1);
        (line as u32, (i - self.starts[line - 1]) as u32 + 1)
    }
}

/// The index of the bracket closing the one at `open` in `code` (a `Text`'s).
pub fn closing(code: &[char], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in code.iter().enumerate().skip(open) {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The top-level comma-separated parts between the bracket at `open` and its closing one.
pub fn parts(text: &Text, open: usize) -> Option<Vec<String>> {
    let close = closing(&text.code, open)?;
    let part = |from: usize, to: usize| -> String {
        text.chars[from..to]
            .iter()
            .collect::<String>()
            .trim()
            .to_string()
    };
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, open + 1);
    for i in open + 1..close {
        match text.code[i] {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(part(start, i));
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = part(start, close);
    if !last.is_empty() {
        out.push(last);
    }
    Some(out)
}

/// Where the parameter list of the `def` whose name ends at index `name_end` of `code` (a
/// `Text`'s) closes: the index just after its `)`, and whether a `->` annotation follows.
/// Type parameters (`def f[T](`) are skipped.
pub fn def_params_end(code: &[char], name_end: usize) -> Option<(usize, bool)> {
    let skip_space = |mut i: usize| {
        while i < code.len() && (code[i].is_whitespace() || code[i] == '\\') {
            i += 1;
        }
        i
    };
    let mut i = skip_space(name_end);
    if code.get(i) == Some(&'[') {
        i = skip_space(closing(code, i)? + 1);
    }
    if code.get(i) != Some(&'(') {
        return None;
    }
    let end = closing(code, i)? + 1;
    let after = skip_space(end);
    let arrow = code.get(after) == Some(&'-') && code.get(after + 1) == Some(&'>');
    Some((end, arrow))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(site: &CallSite) -> Vec<&str> {
        site.args.iter().map(|a| a.text.as_str()).collect()
    }

    #[test]
    fn calls_with_their_arguments_strings_and_comments_respected() {
        let text = "def compute(values, scale=2):\n    return sum(values)  # f(x)\n\nresult = compute([3, 4], 5)\nb = Box().grow(\n    by=3, n='a,(b'\n)\nprint(f\"{x}\", g(1))\n";
        let all = calls(&Text::new(text), 1, 100);
        let names: Vec<(u32, u32)> = all.iter().map(|c| c.open).collect();
        // sum(, compute(, Box(, grow(, print(, g( — not `def compute(` nor the comment's f(.
        assert_eq!(
            names,
            vec![(2, 16), (4, 18), (5, 9), (5, 16), (8, 7), (8, 17)]
        );
        assert_eq!(args(&all[1]), vec!["[3, 4]", "5"]);
        assert_eq!(all[1].args[1].at, (4, 26));
        assert_eq!(args(&all[3]), vec!["by=3", "n='a,(b'"]);
        assert!(!all[3].args[0].positional());
        assert_eq!(args(&all[4]), vec!["f\"{x}\"", "g(1)"]);
        assert!(all[4].args[1].positional());
        assert_eq!(args(&all[5]), vec!["1"]);
        // Only calls opened on the lines asked.
        assert_eq!(calls(&Text::new(text), 4, 4).len(), 1);
    }

    #[test]
    fn triple_quoted_strings_hide_calls() {
        let text = "x = \"\"\"\nf(1)\n\"\"\"\ny = g(2, *rest, **kw)\n";
        let all = calls(&Text::new(text), 1, 10);
        assert_eq!(all.len(), 1);
        assert_eq!(args(&all[0]), vec!["2", "*rest", "**kw"]);
        assert!(!all[0].args[1].positional() && !all[0].args[2].positional());
        assert!(
            Arg {
                at: (1, 1),
                text: "a == b".into()
            }
            .positional()
        );
    }

    #[test]
    fn where_a_def_signature_closes() {
        let src = "def f(a,\n      b=(1, 2)):\n    pass\ndef g(x) -> int:\n    return x\ndef h(a=\")\", b='('):  # (\n    pass\ndef k[T](v: T):\n    pass\n";
        let t = Text::new(src);
        let end = |line, col| {
            let at = t.index((line, col)).expect("a position in the text");
            def_params_end(&t.code, at).map(|(i, arrow)| (t.pos(i), arrow))
        };
        assert_eq!(end(1, 6), Some(((2, 16), false)));
        assert_eq!(end(4, 6), Some(((4, 9), true)));
        assert_eq!(end(6, 6), Some(((6, 20), false)));
        assert_eq!(end(8, 6), Some(((8, 15), false)));
        assert_eq!(t.pos(0), (1, 1));
        assert_eq!(t.index((99, 1)), None);
    }

    #[test]
    fn parts_split_at_top_level_commas() {
        let text = Text::new("(a: int, b: str = \"x,)\", c: dict[str, int] = {})");
        assert_eq!(
            parts(&text, 0),
            Some(vec![
                "a: int".to_string(),
                "b: str = \"x,)\"".to_string(),
                "c: dict[str, int] = {}".to_string()
            ])
        );
        assert_eq!(parts(&Text::new("()"), 0), Some(vec![]));
    }
}
