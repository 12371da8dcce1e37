"""Fixture of the scanners that read code through the lexer (src/ops/scanner_fixtures.rs).

Each `# expect KIND: VALUE` comment says what one of them finds, and they find nothing else:
`name` the hooks' top-level names (and an edit of its statement changes that name alone),
`import` the import scanner's targets, `decl` the first line of each declaration part of the
re-check fingerprint, `call` each call the hints scanner sees (callee and arguments).
Words in a docstring are no code: import sys, def hidden(x): f(1) [(
"""
# expect decl: """Fixture of the scanners that read code through the lexer (src/ops/scanner_fixtures.rs).

# expect import: os
# expect import: os/path
# expect decl: import os.path
import os.path

# expect import: pkg/mod
# expect import: pkg/mod/thing
# expect import: pkg/mod/other
# expect decl: from pkg.mod import (
from pkg.mod import (  # a comment with ) and " and (
    thing,
    other,
)

# A raw string holding both quotes and brackets (Django's html.py:300).
# expect name: SPLIT
# expect decl: SPLIT = compile(r"""([\s<>"']+)""")
# expect call: compile(r"""([\s<>"']+)""")
SPLIT = compile(r"""([\s<>"']+)""")

# Raw and bytes prefixes, either case: a backslash never ends one.
# expect name: RAW
# expect decl: RAW = rb'\'(' + Rb"[\"" + r'\\' + BR"{"
RAW = rb'\'(' + Rb"[\"" + r'\\' + BR"{"


# Python 3.12: an f-string's fields hold strings of the same quotes, and format specs.
# expect name: greeting
# expect decl: def greeting(d: dict[str, str], w: int) -> str:
def greeting(d: dict[str, str], w: int) -> str:
    # expect call: join(f"{d["("]:>{w}} ({d['[']!r}) {{" for _ in "))")
    return "".join(f"{d["("]:>{w}} ({d['[']!r}) {{" for _ in "))")


# expect name: tricky_defaults
# expect decl: def tricky_defaults(a=")", b=f'{"("}', *, c=""")""") -> None:
def tricky_defaults(a=")", b=f'{"("}', *, c=""")""") -> None:
    # expect call: print(a, b, c)
    print(a, b, c)  # print(not, a, call)


# expect name: TEMPLATE
# expect decl: TEMPLATE = """
TEMPLATE = """
def fake(x):
    return f(x
"""


# expect name: Box
# expect decl: class Box:
class Box:
    pattern = r"[(\"]"  # a class in a raw string: [ ( \ "

    # expect call: len(self.items)
    def size(self) -> int:
        return len(self.items)


# expect name: box
# expect decl: box = Box()
# expect call: Box()
box = Box()
