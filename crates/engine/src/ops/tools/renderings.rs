//! What the answers read like, as snapshots (expect-test; `UPDATE_EXPECT=1 cargo test -p
//! lspgate-engine renderings` rewrites them after a deliberate change): each tool's result
//! rendered full and terse, the text agents and the CLI get.

use expect_test::{Expect, expect};

use super::definition::LocationsResult;
use super::diagnostics::DiagnosticsResult;
use super::document_symbols::{DocumentSymbolsResult, Symbol};
use super::hover::HoverResult;
use super::references::ReferencesResult;
use crate::ops::render::Render;
use crate::ops::types::{Diag, FileDiagnostics, Loc, Severity, SymbolSource, TextOmitted};

fn loc(file: &str, line: u32, text: &str) -> Loc {
    Loc {
        file: file.into(),
        line,
        column: 5,
        end_line: line,
        end_column: 12,
        text: text.into(),
        text_omitted: None,
    }
}

/// `r` rendered full, a line of dashes, then terse.
fn check(r: &impl Render, want: Expect) {
    want.assert_eq(&format!("{}\n-----\n{}\n", r.render(false), r.render(true)));
}

#[test]
fn references() {
    let locations = vec![
        loc("pkg/models.py", 10, "class User(Base):"),
        loc("pkg/models.py", 42, "    owner: User"),
        loc("app/views.py", 7, "from pkg.models import User"),
        loc("app/views.py", 19, "    return User.objects.get(pk=pk)"),
    ];
    check(
        &ReferencesResult {
            total: locations.len(),
            locations,
            next_cursor: Some("c2".into()),
            partial: false,
            reason: None,
        },
        expect![[r#"
            4 references in 2 files
            pkg/models.py
              10:5 class User(Base):
              42:5     owner: User
            app/views.py
              7:5 from pkg.models import User
              19:5     return User.objects.get(pk=pk)
            … 4 of 4 shown; cursor "c2" for more
            -----
            pkg/models.py 10:5 42:5
            app/views.py 7:5 19:5
            … 4 of 4 shown; cursor "c2" for more
        "#]],
    );
}

#[test]
fn definition_inside_and_outside_the_root() {
    let outside = Loc {
        text: String::new(),
        text_omitted: Some(TextOmitted::OutsideRoot),
        ..loc("/usr/include/stdio.h", 3, "")
    };
    check(
        &LocationsResult {
            locations: vec![loc("a.c", 1, "int total = compute(x, y);"), outside],
            partial: true,
            reason: Some("clangd is still indexing".into()),
        },
        expect![[r#"
            partial: clangd is still indexing
            a.c
              1:5 int total = compute(x, y);
            /usr/include/stdio.h
              3:5 (not read: outside the workspace root)
            -----
            partial: clangd is still indexing
            a.c 1:5
            /usr/include/stdio.h 3:5
        "#]],
    );
}

#[test]
fn hover() {
    check(
        &HoverResult {
            contents: "```python\ndef compute(x: int, y: int) -> int\n```\nAdds them.".into(),
            range: None,
            hints: Some(" 12  total: int = compute(x=1, y=2)".into()),
        },
        expect![[r#"
            ```python
            def compute(x: int, y: int) -> int
            ```
            Adds them.

            hints: 12  total: int = compute(x=1, y=2)
            -----
            ```python
            def compute(x: int, y: int) -> int
            ```
            Adds them.

            hints: 12  total: int = compute(x=1, y=2)
        "#]],
    );
}

#[test]
fn document_symbols() {
    let method = Symbol {
        name: "area".into(),
        kind: "method".into(),
        line: 5,
        column: 5,
        end_line: 6,
        detail: Some("(self) -> float".into()),
        children: Vec::new(),
    };
    check(
        &DocumentSymbolsResult {
            symbols: vec![Symbol {
                name: "Shape".into(),
                kind: "class".into(),
                line: 3,
                column: 1,
                end_line: 6,
                detail: None,
                children: vec![method],
            }],
            total: 2,
            source: SymbolSource::Server,
            next_cursor: None,
        },
        expect![[r#"
            class Shape 3-6
              method area 5-6 — (self) -> float
            -----
            3 class Shape
              5 method area
        "#]],
    );
}

#[test]
fn diagnostics() {
    let diag = |severity, line, message: &str, code: Option<&str>| Diag {
        severity,
        line,
        column: 9,
        end_line: line,
        end_column: 14,
        code: code.map(str::to_string),
        source: Some("Pyright".into()),
        message: message.into(),
    };
    check(
        &DiagnosticsResult {
            files: vec![FileDiagnostics {
                file: "app/views.py".into(),
                diagnostics: vec![
                    diag(
                        Severity::Error,
                        4,
                        "\"Usr\" is not defined",
                        Some("reportUndefinedVariable"),
                    ),
                    diag(Severity::Warning, 9, "Import \"os\" is not accessed", None),
                ],
            }],
            total: 2,
            next_cursor: None,
            partial: false,
            reason: None,
            notes: vec!["builtin/ruff: not installed".into()],
        },
        expect![[r#"
            note: builtin/ruff: not installed
            app/views.py:4:9 error [reportUndefinedVariable]: "Usr" is not defined
            app/views.py:9:9 warning: Import "os" is not accessed
            -----
            note: builtin/ruff: not installed
            app/views.py:4:9 "Usr" is not defined
            app/views.py:9:9 Import "os" is not accessed
        "#]],
    );
}

#[test]
fn an_empty_partial_answer_says_it_is_partial() {
    check(
        &LocationsResult {
            locations: Vec::new(),
            partial: true,
            reason: Some("pyright is still loading the workspace".into()),
        },
        expect![[r#"
            partial: pyright is still loading the workspace
            no locations
            -----
            partial: pyright is still loading the workspace
            no locations
        "#]],
    );
}
