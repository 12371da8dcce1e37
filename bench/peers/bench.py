#!/usr/bin/env python3
"""Side-by-side benchmark: lspgate and peer MCP bridges (cclsp, mcpls, Serena) over pyright.

Every bridge is started as a new user would start it, talks to the same pyright, and is driven
by the same MCP client (the `mcp` Python SDK) on the same generated workspace; a bare LSP client
gives the floor. One run prints one table of medians, with ratios against lspgate's row, and says
which of lspgate's targets were met. Run it through `bench/peers/run.sh`, which builds lspgate and
installs the peers into a cache folder; a peer that cannot run here is reported, never faked.
"""

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

FILES = 30
CALLS_PER_FILE = 3
EXPECTED_REFS = FILES * (CALLS_PER_FILE + 1)  # an import and three calls per file
CALL_TIMEOUT = float(os.environ.get("BENCH_CALL_TIMEOUT", 180))

LIB = 'def compute(x: int) -> int:\n    """Doubles x."""\n    return x * 2\n'
MOD = (
    "from lib import compute\n\n\n"
    "def run_{n:02}() -> int:\n"
    "    a = compute(1)\n"
    "    b = compute(2)\n"
    "    c = compute(3)\n"
    "    return a + b + c\n"
)
# The freshness probe rewrites line 5 of mod_00.py: first with a type error, then with a
# correct line of the same size whose mtime is put back to the erroneous version's.
CLEAN_LINE = "    a = compute(1)\n"
BAD_LINE = '    a = compute("1")\n'
SAME_SIZE_GOOD_LINE = "    a = compute(111)\n"


def make_workspace(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "lib.py").write_text(LIB)
    for n in range(FILES):
        (root / f"mod_{n:02}.py").write_text(MOD.format(n=n))
    (root / "pyrightconfig.json").write_text('{"include": ["."]}\n')


def refs_in(text: str) -> int:
    """Reference sites to `compute` in the mod files, counted from any bridge's output: JSON
    with file and line fields, `mod_NN.py:L:C` lines, or `mod_NN.py` headers followed by
    `L:C` positions (on the same line or the lines under it)."""
    try:
        found = set(json_sites(json.loads(text), None))
        if found:
            return len(found)
    except ValueError:
        pass
    return len(set(text_sites(text)))


def json_sites(v, current):
    if isinstance(v, dict):
        for key in ("uri", "file", "path", "file_path", "relative_path", "filePath"):
            m = re.search(r"mod_(\d\d)\.py", str(v.get(key, "")))
            if m:
                current = m.group(1)
        line = v.get("line")
        if line is None and isinstance(v.get("range"), dict):
            line = v["range"].get("start", {}).get("line")
        if current is not None and isinstance(line, int):
            yield (current, line)
        for k, sub in v.items():
            if k != "range":
                keyed = re.fullmatch(r".*mod_(\d\d)\.py", k)
                yield from json_sites(sub, keyed.group(1) if keyed else current)
    elif isinstance(v, list):
        for sub in v:
            yield from json_sites(sub, current)
    elif isinstance(v, str) and v.lstrip().startswith(("{", "[")):
        try:
            yield from json_sites(json.loads(v), current)
        except ValueError:
            pass
    elif isinstance(v, str) and current is not None:
        # Serena marks the reference's line in a snippet: "  >   4:    a = compute(1)".
        for m in re.finditer(r"(?m)^\s*>\s*(\d+):", v):
            yield (current, int(m.group(1)))


def text_sites(text: str):
    current = None
    for raw in text.splitlines():
        for m in re.finditer(r"mod_(\d\d)\.py|(?<![\w.])(\d+):(\d+)", raw):
            if m.group(1):
                current = m.group(1)
            elif current is not None:
                yield (current, int(m.group(2)))
        if "mod_" not in raw and ".py" in raw:
            current = None


@dataclass
class Row:
    name: str
    status: str = "ok"
    hover_ms: float | None = None
    refs_ms: float | None = None
    first_refs: str = "n/a"
    first_refs_ms: float | None = None
    fresh: str = "n/a"
    rss_mib: float | None = None
    chars_per_ref: float | None = None
    chars_per_ref_terse: float | None = None
    structured_bytes: int | None = None
    tool_list: dict | None = None
    notes: list = field(default_factory=list)


@dataclass
class Bridge:
    name: str
    command: list
    env: dict
    cwd: Path
    hover: tuple | None  # (tool, args)
    refs: tuple  # (tool, args)
    diagnostics: tuple | None  # (tool, args-for-mod_00)
    has_error: object = None  # text -> bool
    terse_refs: tuple | None = None


def pid_wrapper(pidfile: Path, command: list) -> list:
    return ["sh", "-c", 'echo $$ > "$0"; exec "$@"', str(pidfile), *command]


def peak_rss_mib(pidfile: Path) -> float | None:
    try:
        pid = pidfile.read_text().strip()
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        return None
    return None


def is_error(result) -> bool:
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


def text_of(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in (result.content or []))


async def call(session, tool_args, timeout=CALL_TIMEOUT):
    tool, args = tool_args
    result = await asyncio.wait_for(session.call_tool(tool, args), timeout)
    return result, text_of(result)


async def timed(session, tool_args, n: int, check=None):
    for _ in range(3):
        await call(session, tool_args)
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        result, text = await call(session, tool_args)
        samples.append(time.perf_counter() - t)
        if check is not None:
            check(result, text)
    return statistics.median(samples) * 1000


def client_validation_ms(schema, result) -> float | None:
    """What the Python SDK spends checking a result against the tool's output schema."""
    content = getattr(result, "structured_content", None)
    if not schema or content is None:
        return None
    import jsonschema

    validator = jsonschema.validators.validator_for(schema)(schema)
    samples = []
    for _ in range(20):
        t = time.perf_counter()
        errors = list(validator.iter_errors(content))
        samples.append(time.perf_counter() - t)
        assert not errors, errors[0]
    return statistics.median(samples) * 1000


def tool_list_figures(result) -> dict:
    """What a session pays for `tools/list` before it asks anything, counted as `json.dumps`
    writes it: `visible` is what clients put in the model's context (each tool's name,
    description and input schema), `annotated` adds title and annotations, `full` is the whole
    result (output schemas included, which the SDK parses and validates results against)."""
    dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    tools = dumped.get("tools", [])

    def size(keys):
        return sum(len(json.dumps({k: t[k] for k in keys if k in t})) for t in tools)

    return {
        "tools": len(tools),
        "visible": size(("name", "description", "inputSchema")),
        "annotated": size(("name", "title", "description", "inputSchema", "annotations")),
        "full": len(json.dumps(dumped)),
        "annotations": sum(1 for t in tools if t.get("annotations")),
    }


def rewrite_line(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


async def freshness(session, bridge: Bridge, ws: Path) -> str:
    if bridge.diagnostics is None:
        return "no diagnostics tool"
    target = ws / "mod_00.py"
    _, before = await call(session, bridge.diagnostics)
    if bridge.has_error(before):
        return f"unclear (error before the edit: {before[:80]!r})"
    rewrite_line(target, CLEAN_LINE, BAD_LINE)
    _, after_bad = await call(session, bridge.diagnostics)
    bad_seen = bridge.has_error(after_bad)
    # Same size, and the mtime of the erroneous version put back: only content tells.
    st = target.stat()
    rewrite_line(target, BAD_LINE, SAME_SIZE_GOOD_LINE)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    _, after_good = await call(session, bridge.diagnostics)
    good_seen = not bridge.has_error(after_good)
    rewrite_line(target, SAME_SIZE_GOOD_LINE, CLEAN_LINE)
    if bad_seen and good_seen:
        return "yes"
    if not bad_seen:
        return "**no** (keeps the old answer)"
    return "**no** for a same-size rewrite within one mtime"


async def run_bridge(bridge: Bridge, ws: Path, args) -> Row:
    row = Row(bridge.name)
    pidfile = Path(tempfile.mkstemp(prefix="bench-pid-")[1])
    params = StdioServerParameters(
        command="sh",
        args=pid_wrapper(pidfile, bridge.command)[1:],
        env=bridge.env,
        cwd=str(bridge.cwd),
    )
    errlog = open(ws.parent / f"{bridge.name.split()[0]}.stderr.log", "w")
    try:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                started = time.perf_counter()
                await asyncio.wait_for(session.initialize(), CALL_TIMEOUT)
                listing = await session.list_tools()
                row.tool_list = tool_list_figures(listing)
                if args.tool_list:
                    return row
                listed = listing.tools
                tools = {t.name for t in listed}
                schemas = {t.name: getattr(t, "output_schema", None) for t in listed}
                for tool_args in filter(None, [bridge.hover, bridge.refs, bridge.diagnostics]):
                    if tool_args[0] not in tools:
                        raise RuntimeError(f"no tool {tool_args[0]} (has {sorted(tools)})")
                # First references call, as soon as the session is up.
                try:
                    result, text = await call(session, bridge.refs)
                    row.first_refs_ms = (time.perf_counter() - started) * 1000
                    n = refs_in(text)
                    if is_error(result):
                        row.first_refs = f"**error** {text[:60]!r}"
                    elif n == EXPECTED_REFS:
                        row.first_refs = "complete"
                    else:
                        row.first_refs = f"**{n} of {EXPECTED_REFS}**"
                except Exception as e:  # noqa: BLE001 - reported in the table
                    row.first_refs = f"**failed**: {e!r}"[:80]
                # Warm references: as a user would, retry until the bridge answers.
                deadline = time.perf_counter() + CALL_TIMEOUT
                while True:
                    try:
                        result, text = await call(session, bridge.refs)
                        if not is_error(result) and refs_in(text) > 0:
                            break
                        why = text[: int(os.environ.get("BENCH_SHOW") or 120)]
                    except Exception as e:  # noqa: BLE001 - retried, then reported
                        why = str(e)[:120]
                    if time.perf_counter() > deadline:
                        if os.environ.get("BENCH_SHOW"):
                            print(f"--- {bridge.name} answered:\n{why}", file=sys.stderr)
                        raise RuntimeError(f"references never answered: {why}")
                    await asyncio.sleep(1)
                if os.environ.get("BENCH_SHOW"):
                    print(f"--- {bridge.name} references:\n{text[: int(os.environ['BENCH_SHOW'])]}", file=sys.stderr)
                n = refs_in(text)
                if n != EXPECTED_REFS:
                    row.notes.append(f"warm references found {n} of {EXPECTED_REFS}")
                if n:
                    row.chars_per_ref = len(text) / n
                row.refs_ms = await timed(session, bridge.refs, args.refs_calls)
                content = getattr(result, "structured_content", None)
                if content is not None:
                    # As it crosses the wire: compact JSON.
                    row.structured_bytes = len(json.dumps(content, separators=(",", ":")))
                validation = client_validation_ms(schemas.get(bridge.refs[0]), result)
                if validation is not None:
                    row.notes.append(
                        f"{validation:.2f} ms of each warm references call is the MCP client validating "
                        f"the {row.structured_bytes or 0:,}-byte structured result "
                        "against the tool's output schema (a compiled validator, as the SDK caches it)"
                    )
                if bridge.terse_refs is not None:
                    _, terse = await call(session, bridge.terse_refs)
                    if refs_in(terse):
                        row.chars_per_ref_terse = len(terse) / refs_in(terse)
                if bridge.hover is not None:

                    def hover_ok(result, text):
                        if "int" not in text:
                            raise RuntimeError(f"hover answered {text[:80]!r}")

                    row.hover_ms = await timed(session, bridge.hover, args.hover_calls, hover_ok)
                row.fresh = await freshness(session, bridge, ws)
                row.rss_mib = peak_rss_mib(pidfile)
    except Exception as e:  # noqa: BLE001 - a peer that fails is reported, not hidden
        while getattr(e, "exceptions", None):  # an exception group: report its first cause
            e = e.exceptions[0]
        row.status = f"failed: {type(e).__name__}: {e}"[:200]
    finally:
        errlog.close()
        pidfile.unlink(missing_ok=True)
    return row


# ---- the direct LSP client (the floor) ----


class Lsp:
    def __init__(self, proc, settings=None):
        self.proc = proc
        self.settings = settings or {}
        self.next_id = 0
        self.waiting = {}
        self.reader = asyncio.create_task(self.read_loop())

    async def read_loop(self):
        out = self.proc.stdout
        while True:
            length = 0
            while True:
                line = await out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            msg = json.loads(await out.readexactly(length))
            if "method" in msg and "id" in msg:
                result = None
                if msg["method"] == "workspace/configuration":
                    result = [self.settings.get(i.get("section")) for i in msg["params"]["items"]]
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            elif "id" in msg and msg["id"] in self.waiting:
                self.waiting.pop(msg["id"]).set_result(msg)

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def request(self, method, params):
        self.next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = fut
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        await self.proc.stdin.drain()
        return await asyncio.wait_for(fut, CALL_TIMEOUT)

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})


async def run_direct(pyright: str, ws: Path, args) -> Row:
    row = Row("bare LSP client, no bridge")
    proc = await asyncio.create_subprocess_exec(
        pyright,
        "--stdio",
        cwd=ws,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    lsp = Lsp(proc)
    uri = ws.as_uri()
    started = time.perf_counter()
    await lsp.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": uri,
            "workspaceFolders": [{"uri": uri, "name": "ws"}],
            "capabilities": {"workspace": {"configuration": True}},
        },
    )
    lsp.notify("initialized", {})
    for name in ("lib.py", "mod_00.py"):
        lsp.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": (ws / name).as_uri(),
                    "languageId": "python",
                    "version": 1,
                    "text": (ws / name).read_text(),
                }
            },
        )
    refs = {
        "textDocument": {"uri": (ws / "lib.py").as_uri()},
        "position": {"line": 0, "character": 4},
        "context": {"includeDeclaration": True},
    }

    def count(msg):
        found = msg.get("result") or []
        return len({(x["uri"], x["range"]["start"]["line"]) for x in found if "mod_" in x["uri"]})

    row.notes.append(
        "asks right after `initialized`, as a bare client does: pyright answers from the files it has analysed so far"
    )
    first = await lsp.request("textDocument/references", refs)
    row.first_refs_ms = (time.perf_counter() - started) * 1000
    n = count(first)
    row.first_refs = "complete" if n == EXPECTED_REFS else f"**{n} of {EXPECTED_REFS}**"

    async def median_ms(method, params, n):
        for _ in range(3):
            await lsp.request(method, params)
        samples = []
        for _ in range(n):
            t = time.perf_counter()
            await lsp.request(method, params)
            samples.append(time.perf_counter() - t)
        return statistics.median(samples) * 1000

    row.refs_ms = await median_ms("textDocument/references", refs, args.refs_calls)
    hover = {"textDocument": {"uri": (ws / "mod_00.py").as_uri()}, "position": {"line": 4, "character": 8}}
    row.hover_ms = await median_ms("textDocument/hover", hover, args.hover_calls)
    proc.kill()
    await proc.wait()
    lsp.reader.cancel()
    return row


# ---- the bridges ----


def error_in(text: str) -> bool:
    return bool(re.search(r"reportArgumentType|not assignable|\"Literal\['1'\]\"|error", text, re.I)) and not re.search(
        r"\b0 (errors|diagnostics)\b|no diagnostics|No errors|\"diagnostics\":\s*\[\]", text, re.I
    )


# Each bridge as a new user would set it up, for workspace `ws`: its command, environment and
# configuration files (written beside `ws`), and the tool calls the bench makes.


def lspgate_bridge(cache: Path, lspgate: str, pyright: str, ws: Path, env: dict) -> Bridge:
    return Bridge(
        "lspgate",
        [lspgate, "serve", "--root", str(ws), "--", pyright, "--stdio"],
        env,
        ws,
        hover=("hover", {"file": "mod_00.py", "line": 5, "column": 9}),
        refs=("references", {"file": "lib.py", "line": 1, "column": 5}),
        diagnostics=("diagnostics", {"file": "mod_00.py"}),
        has_error=lambda t: "error" in t and "no diagnostics" not in t,
        terse_refs=("references", {"file": "lib.py", "line": 1, "column": 5, "terse": True}),
    )


def cclsp_bridge(cache: Path, lspgate: str, pyright: str, ws: Path, env: dict) -> Bridge:
    cclsp = cache / "cclsp/node_modules/.bin/cclsp"
    cfg = ws.parent / "cclsp.json"
    cfg.write_text(
        json.dumps({"servers": [{"extensions": ["py"], "command": [pyright, "--stdio"], "rootDir": str(ws)}]})
    )
    return Bridge(
        "cclsp 0.7.0 (Node)",
        [str(cclsp)],
        {**env, "CCLSP_CONFIG_PATH": str(cfg)},
        ws,
        hover=("get_hover", {"file_path": str(ws / "mod_00.py"), "line": 5, "character": 9}),
        refs=("find_references", {"file_path": str(ws / "lib.py"), "symbol_name": "compute"}),
        diagnostics=("get_diagnostics", {"file_path": str(ws / "mod_00.py")}),
        has_error=error_in,
    )


def mcpls_bridge(cache: Path, lspgate: str, pyright: str, ws: Path, env: dict) -> Bridge:
    mcpls = cache / "mcpls/bin/mcpls"
    mcfg = ws.parent / "mcpls.toml"
    mcfg.write_text(
        f'[workspace]\nroots = ["{ws}"]\n\n[[lsp_servers]]\nlanguage_id = "python"\n'
        f'command = "{pyright}"\nargs = ["--stdio"]\nfile_patterns = ["**/*.py"]\n'
    )
    return Bridge(
        "mcpls 0.6.0 (Rust)",
        [str(mcpls)],
        {**env, "MCPLS_CONFIG": str(mcfg)},
        ws,
        hover=("get_hover", {"file_path": str(ws / "mod_00.py"), "line": 5, "character": 9}),
        refs=(
            "get_references",
            {"file_path": str(ws / "lib.py"), "line": 1, "character": 5, "include_declaration": True},
        ),
        diagnostics=("get_diagnostics", {"file_path": str(ws / "mod_00.py")}),
        has_error=error_in,
    )


def serena_bridge(cache: Path, lspgate: str, pyright: str, ws: Path, env: dict) -> Bridge:
    serena = cache / "venv/bin/serena"
    home = ws.parent / "serena-home"
    home.mkdir(exist_ok=True)
    template = next(
        (cache / "venv/lib").glob("python*/site-packages/serena/resources/serena_config.template.yml"), None
    )
    if template is not None:
        text = template.read_text()
        text = re.sub(r"(?m)^web_dashboard: .*$", "web_dashboard: False", text)
        text = re.sub(
            r"(?m)^ls_specific_settings: \{\}$",
            f'ls_specific_settings:\n  python:\n    ls_path: "{pyright}"',
            text,
        )
        (home / "serena_config.yml").write_text(text)
    return Bridge(
        "Serena 2.1.0 (Python)",
        [
            str(serena),
            "start-mcp-server",
            "--project",
            str(ws),
            "--agent-interface",
            "tools",
            "--enable-web-dashboard",
            "False",
            "--open-web-dashboard",
            "False",
        ],
        {**env, "SERENA_HOME": str(home)},
        ws,
        hover=None,
        refs=("find_referencing_symbols", {"name_path": "compute", "relative_path": "lib.py"}),
        diagnostics=None,
        has_error=error_in,
    )


BRIDGES = {"lspgate": lspgate_bridge, "cclsp": cclsp_bridge, "mcpls": mcpls_bridge, "serena": serena_bridge}


def fmt_ms(ms, base):
    if ms is None:
        return "n/a"
    ratio = f" ({ms / base:.2f}×)" if base else ""
    return f"{ms:.2f} ms{ratio}" if ms < 100 else f"{ms:,.0f} ms{ratio}"


def print_tool_lists(rows) -> None:
    listed = [r for r in rows if r.tool_list]
    if not listed:
        return
    print(
        "\nWhat each session pays before its first question (`tools/list`, characters of "
        "`json.dumps`): model-visible is each tool's name + description + input schema, as "
        "clients put them in the model's context.\n"
    )
    print("| bridge | tools | model-visible (per tool) | + title and annotations | full tools/list | annotated tools |")
    print("|---|---|---|---|---|---|")
    for r in listed:
        t = r.tool_list
        per = t["visible"] / t["tools"] if t["tools"] else 0
        print(
            f"| {r.name} | {t['tools']} | {t['visible']:,} ({per:,.0f}) | {t['annotated']:,} "
            f"| {t['full']:,} | {t['annotations']} |"
        )
    for r in rows:
        if not r.tool_list and r.status != "ok":
            print(f"| {r.name} | {r.status} | | | | |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cache", required=True, type=lambda p: Path(p).resolve())
    ap.add_argument("--lspgate", required=True)
    ap.add_argument("--pyright", required=True)
    ap.add_argument("--only", help="comma-separated bridge names (prefixes) to run")
    ap.add_argument("--hover-calls", type=int, default=50)
    ap.add_argument("--refs-calls", type=int, default=20)
    ap.add_argument(
        "--tool-list", action="store_true", help="only measure each bridge's tools/list (no latency runs)"
    )
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="lspgate-peers-"))
    rows = []
    try:
        env = dict(os.environ)
        env["PATH"] = f"{Path(args.pyright).parent}:{env.get('PATH', '')}"
        ws0 = work / "direct" / "ws"
        make_workspace(ws0)
        if not args.tool_list:
            rows.append(asyncio.run(run_direct(args.pyright, ws0, args)))
        for name, bridge in BRIDGES.items():
            if args.only and not any(name.startswith(o.lower()) for o in args.only.split(",")):
                continue
            ws = work / name / "ws"
            make_workspace(ws)
            b = bridge(args.cache, args.lspgate, args.pyright, ws, env)
            exe = Path(b.command[0])
            if not exe.exists():
                rows.append(Row(b.name, status=f"cannot run here: {exe} is not installed"))
                continue
            print(f"… {b.name}", file=sys.stderr, flush=True)
            rows.append(asyncio.run(run_bridge(b, ws, args)))
    finally:
        if not os.environ.get("KEEP_BENCH"):
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}", file=sys.stderr)

    gate = next((r for r in rows if r.name == "lspgate"), None)
    if args.tool_list:
        print_tool_lists(rows)
        return 0 if gate is not None and gate.tool_list else 1
    base_h = gate.hover_ms if gate else None
    base_r = gate.refs_ms if gate else None
    import importlib.metadata as md

    print(
        f"\nSame pyright ({args.pyright}), same MCP client (mcp {md.version('mcp')}), one run; "
        f"workspace: lib.py defines `compute`, {FILES} files import and call it {CALLS_PER_FILE} times "
        f"({EXPECTED_REFS} references). Medians of {args.hover_calls} hovers and {args.refs_calls} "
        "reference calls; (×) is the ratio to lspgate's figure.\n"
    )
    print(
        "| bridge | warm hover | warm references | first references call | fresh after an on-disk edit "
        "| RSS (bridge only) | characters per reference (terse) | structured references answer |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r.status != "ok":
            print(f"| {r.name} | {r.status} | | | | | | |")
            continue
        cpr = "n/a" if r.chars_per_ref is None else f"{r.chars_per_ref:.0f}"
        if r.chars_per_ref_terse is not None:
            cpr += f" ({r.chars_per_ref_terse:.0f})"
        first = r.first_refs
        if r.first_refs_ms is not None and r.name != "bare LSP client, no bridge":
            first += f", {r.first_refs_ms / 1000:.1f} s after start"
        rss = "n/a" if r.rss_mib is None else f"{r.rss_mib:.1f} MiB"
        hover = fmt_ms(r.hover_ms, base_h) if r.hover_ms is not None else "no hover tool"
        structured = "none" if r.structured_bytes is None else f"{r.structured_bytes:,} bytes"
        if r.name == "bare LSP client, no bridge":
            structured = "n/a"
        print(
            f"| {r.name} | {hover} | {fmt_ms(r.refs_ms, base_r)} | {first} | {r.fresh} | {rss} | {cpr} "
            f"| {structured} |"
        )
    for r in rows:
        for n in r.notes:
            print(f"- {r.name}: {n}")
    print_tool_lists(rows)

    if gate is None or gate.status != "ok":
        print("\nlspgate did not run: no targets checked")
        return 1
    peers = [r for r in rows if r.status == "ok" and r is not gate and r.name != "bare LSP client, no bridge"]
    fastest_h = min((r.hover_ms for r in peers if r.hover_ms is not None), default=None)
    fastest_r = min((r.refs_ms for r in peers if r.refs_ms is not None), default=None)
    targets = [
        (
            "warm hover no slower than the fastest peer",
            fastest_h is None or gate.hover_ms <= fastest_h,
            f"{gate.hover_ms:.2f} ms vs {fastest_h:.2f} ms" if fastest_h else "no peer hover",
        ),
        (
            "warm references no slower than the fastest peer",
            fastest_r is None or gate.refs_ms <= fastest_r,
            f"{gate.refs_ms:.2f} ms vs {fastest_r:.2f} ms" if fastest_r else "no peer ran",
        ),
        ("first references call complete", gate.first_refs == "complete", gate.first_refs),
        ("fresh after any change on disk (same-size, mtime kept)", gate.fresh == "yes", gate.fresh),
        ("peak RSS at most 8 MiB", (gate.rss_mib or 99) <= 8, f"{gate.rss_mib:.1f} MiB"),
        (
            "the leanest bridge (peak RSS)",
            all(r.rss_mib is None or (gate.rss_mib or 99) <= r.rss_mib for r in peers),
            f"{gate.rss_mib:.1f} MiB vs "
            + ", ".join(f"{r.name} {r.rss_mib:.1f}" for r in peers if r.rss_mib is not None),
        ),
        (
            f"structured references answer at most 4 KB ({EXPECTED_REFS + 1} references)",
            (gate.structured_bytes or 1 << 30) <= 4096,
            f"{gate.structured_bytes:,} bytes" if gate.structured_bytes else "none",
        ),
        ("at most 40 characters per reference", (gate.chars_per_ref or 99) <= 40, f"{gate.chars_per_ref:.0f}"),
        ("at most 12 with terse", (gate.chars_per_ref_terse or 99) <= 12, f"{gate.chars_per_ref_terse:.0f}"),
    ]
    print("\nlspgate's targets in this run:")
    for what, ok, figure in targets:
        print(f"- {'met' if ok else 'MISSED'}: {what} ({figure})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
