#!/usr/bin/env python3
"""Re-checks as a user runs them (issue 40): one folder, the daemon warm, `lspgate check` from
the command line after an edit, against the project's own checker run in the same folder after
the same edit (so whatever it leaves there, such as tsc's build info, is seen by lspgate too).

  rxjs:   a body-only edit of src/internal/util/lift.ts, undone the next round, then
          `tsc --noEmit --incremental -p .` (its build info from a first run);
  django: cached_property.__init__ given a parameter, undone the next round, then a cold
          `pyright --outputjson` (pyright has no warm mode); the check is of '**/*.py'.

Usage: python3 bench/user_rechecks.py rxjs|django [--rounds N] [--bin PATH] [paths...]
The projects and servers come from .tools/ (scripts/install-test-servers.sh); the binary is
target/release/lspgate (`cargo build --release` first). Each run copies the project into a
temporary folder with a daemon of its own. Prints one line per check and per round's ratio.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(REPO, ".tools")

CASES = {
    "rxjs": {
        "dir": "rxjs-7.8.2",
        "file": "src/internal/util/lift.ts",
        "before": "throw new TypeError('Unable to lift unknown Observable type');",
        "after": "const why = 'Unable to lift unknown Observable type';\n    throw new TypeError(why);",
        "checker": [os.path.join(TOOLS, "node_modules/.bin/tsc"), "--noEmit", "--incremental", "-p", "."],
        "warm_checker": True,
        "paths": [],
    },
    "django": {
        "dir": "django-5.2",
        "file": "django/utils/functional.py",
        # The first `__init__(self, func)` of the file is cached_property's.
        "before": "    def __init__(self, func):\n        self.real_func = func",
        "after": "    def __init__(self, func, owner_hint):\n        self.real_func = func",
        "checker": [os.path.join(TOOLS, "node_modules/.bin/pyright"), "--outputjson"],
        "warm_checker": False,
        "paths": ["**/*.py"],
    },
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--bin", default=os.path.join(REPO, "target/release/lspgate"))
    ap.add_argument("paths", nargs="*", help="what to check (default: the case's)")
    a = ap.parse_intermixed_args()
    case = CASES[a.case]
    paths = a.paths or case["paths"]
    work = tempfile.mkdtemp(prefix="user-rechecks-")
    try:
        run(a, case, paths, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(a, case, paths, work):
    os.makedirs(os.path.join(work, "run"), mode=0o700)
    ws = os.path.join(work, case["dir"])
    shutil.copytree(os.path.join(TOOLS, "projects", case["dir"]), ws, symlinks=True)
    env = dict(
        os.environ,
        XDG_RUNTIME_DIR=os.path.join(work, "run"),
        LSPGATE_HOME=os.path.join(work, "data"),
        PATH=os.pathsep.join([os.path.join(TOOLS, "node_modules/.bin"), os.path.join(TOOLS, "venv/bin"), os.environ.get("PATH", "")]),
    )

    def timed(cmd):
        t = time.monotonic()
        p = subprocess.run(cmd, cwd=ws, env=env, capture_output=True, text=True)
        return time.monotonic() - t, p

    def check():
        dt, p = timed([a.bin, "check", "--json", "--limit", "1", *paths])
        try:
            s = json.loads(p.stdout)["summary"]
        except (ValueError, KeyError):
            sys.exit(f"lspgate check failed: {p.stderr[-500:]}")
        return dt, s

    if case["warm_checker"]:
        timed(case["checker"])
    for i in range(3):
        dt, s = check()
        print(f"check {i} ({'cold' if i == 0 else 'nothing changed'}): {dt:.3f} s, "
              f"{s['files']} files, {s['errors']} errors, {s.get('reused', 0)} answers taken again", flush=True)
    path = os.path.join(ws, case["file"])
    for r in range(a.rounds):
        text = open(path).read()
        if case["before"] in text:
            text, what = text.replace(case["before"], case["after"], 1), "edit"
        else:
            text, what = text.replace(case["after"], case["before"], 1), "undo"
        with open(path, "w") as f:
            f.write(text)
        ours, s = check()
        theirs, _ = timed(case["checker"])
        print(f"round {r} ({what}): lspgate {ours:.3f} s ({s['files']} files, {s['errors']} errors, "
              f"{s.get('reused', 0)} taken again), {os.path.basename(case['checker'][0])} {theirs:.3f} s: "
              f"{ours / theirs:.2f}x", flush=True)
    subprocess.run([a.bin, "daemon", "stop"], env=env, capture_output=True)


if __name__ == "__main__":
    main()
