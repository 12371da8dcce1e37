//! Unit tests of the declaration fingerprints.
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
        // A constructor's body may set properties whose types are inferred from it.
        a.replace("this.n = 2;", "this.n = 3; // }"),
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

#[test]
fn what_changes_what_importers_see_counts() {
    let script = |a: &str, b: &str| fp(Family::Script, a) != fp(Family::Script, b);
    // A triple-slash directive changes what the file (and a global script's readers) see.
    let m = "export function f(a: number): number {\n  return a;\n}\n";
    assert!(script(m, &format!("/// <reference types=\"node\" />\n{m}")));
    assert!(!script(m, &format!("// a comment\n{m}")));
    // A body-less overload whose return type ends in an object type: that type counts.
    let o = "export function f(x: string): A | { kind: \"s\" };\nexport function f(x: any): any {\n  return x;\n}\n";
    assert!(script(o, &o.replace("kind: \"s\"", "kind: \"t\"")));
    let d = "declare function load(): Base & { sync: true };\n";
    assert!(script(d, &d.replace("sync: true", "sync: false")));
    // After an arrow the last braces are a return type, after a generic's close the body
    // (rxjs's `operate`, under a generic return type: 144 of its 502 files were asked again
    // after an edit of its body).
    let arrow = "declare function mk(): () => { a: number }\n";
    assert!(script(arrow, &arrow.replace("a: number", "a: string")));
    let generic = "export function operate<T, R>(\n  init: (s: T) => (() => void) | void\n): OperatorFunction<T, R> {\n  throw new TypeError('no');\n}\n";
    assert!(!script(
        generic,
        &generic.replace(
            "throw new TypeError('no');",
            "const why = 'no';\n  throw new TypeError(why);"
        )
    ));
    // `declare function require(…)` in a declaration file is no CommonJS: it stays global.
    let g = "declare function require(id: string): any;\ndeclare const API_URL: string;\n";
    assert!(declarations(Family::Script, g).is_some_and(|d| d.global));
    let cjs = "const x = require('./x');\nmodule.exports = x;\n";
    assert!(declarations(Family::Script, cjs).is_some_and(|d| !d.global));
    // Python: a method whose `self` is annotated still counts when it sets attributes.
    let py = "class A:\n    def __init__(self: \"A\") -> None:\n        self.x = 1\n";
    assert_ne!(
        fp(Family::Python, py),
        fp(Family::Python, &py.replace("self.x = 1", "self.x = \"s\""))
    );
}
