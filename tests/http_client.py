"""Drives lspgate's Streamable HTTP endpoint with the Python MCP SDK's own client (its
`streamable_http_client` transport and `ClientSession`), for tests/http.rs and bench/http_load.rs.

Usage: python http_client.py PLAN_JSON

PLAN: {
  "url": "http://127.0.0.1:PORT/mcp",
  "headers": {"Authorization": "Bearer ..."},      # sent on every request
  "mode": "initialize" | "discover",               # MCP 2025 sessions, or 2026-07-28 stateless
  "sessions": 1,                                   # sessions run at once, each doing every call
  "calls": [["tool", {args}], ...],
  "repeat": 1,                                     # the calls, this many times over
  "list_tools": false,
  "hold": "PATH",                                  # optional: with every session open and its
                                                   # calls done, print "ready" and wait for PATH
  "subscribe": {"uri": URI, "write": [PATH, TEXT]} # optional, after the calls: subscribe to URI,
                                                   # write TEXT to PATH (a plain write), wait for
                                                   # resources/updated of URI, then read it
}

Prints one JSON object: {"sessions": [{"ok", "protocol", "capabilities", "tools", "results":
[{"is_error", "structured", "text", "ms"}], "updated": [URI...], "read": TEXT, "error"}],
"statuses": [[method, status,
www-authenticate], ...]} where statuses are every HTTP response the client got.
"""

import json
import os
import sys
import time

import anyio
import mcp.types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def describe(e):
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(describe(x) for x in e.exceptions)
    return f"{type(e).__name__}: {e}"


async def one(plan, statuses, everyone_open):
    async def hook(response):
        statuses.append(
            [
                response.request.method,
                response.status_code,
                response.headers.get("www-authenticate"),
            ]
        )

    out = {"ok": False}
    updates = []
    heard = anyio.Event()

    async def on_message(message):
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(message.params.uri)
            heard.set()

    client = create_mcp_http_client(headers=plan.get("headers") or {})
    client.event_hooks["response"].append(hook)
    try:
        async with client:
            async with streamable_http_client(plan["url"], http_client=client) as (read, write):
                async with ClientSession(
                    read, write, read_timeout_seconds=60, message_handler=on_message
                ) as session:
                    if plan.get("mode") == "discover":
                        result = await session.discover()
                    else:
                        result = await session.initialize()
                    out["protocol"] = session.protocol_version
                    out["capabilities"] = result.capabilities.model_dump(
                        mode="json", by_alias=True, exclude_none=True
                    )
                    if plan.get("list_tools"):
                        tools = await session.list_tools()
                        out["tools"] = [t.name for t in tools.tools]
                    results = []
                    for _ in range(plan.get("repeat", 1)):
                        for tool, args in plan.get("calls", []):
                            start = time.perf_counter()
                            r = await session.call_tool(tool, args)
                            ms = (time.perf_counter() - start) * 1000
                            text = "".join(c.text for c in r.content if getattr(c, "type", "") == "text")
                            results.append(
                                {
                                    "is_error": bool(r.is_error),
                                    "structured": r.structured_content,
                                    "text": text,
                                    "ms": ms,
                                }
                            )
                    out["results"] = results
                    sub = plan.get("subscribe")
                    if sub:
                        await session.subscribe_resource(sub["uri"])
                        path, text = sub["write"]
                        with open(path, "w") as f:
                            f.write(text)
                        with anyio.fail_after(60):
                            while sub["uri"] not in updates:
                                await heard.wait()
                                heard = anyio.Event()
                        out["updated"] = updates
                        read_back = await session.read_resource(sub["uri"])
                        out["read"] = read_back.contents[0].text
                    out["ok"] = True
                    await everyone_open()
    except Exception as e:  # noqa: BLE001 - reported to the test, which decides
        out["error"] = describe(e)
        await everyone_open()
    return out


async def main():
    plan = json.loads(sys.argv[1])
    statuses = []
    n = plan.get("sessions", 1)
    outs = [None] * n
    arrived = 0
    all_here = anyio.Event()

    async def everyone_open():
        # With `hold`: the sessions stay open until each has done its calls and the test says go.
        nonlocal arrived
        arrived += 1
        if arrived == n:
            all_here.set()
            if plan.get("hold"):
                print("ready", flush=True)
                with anyio.fail_after(60):
                    while not os.path.exists(plan["hold"]):
                        await anyio.sleep(0.02)
        await all_here.wait()
        if plan.get("hold"):
            with anyio.fail_after(60):
                while not os.path.exists(plan["hold"]):
                    await anyio.sleep(0.02)

    async def run(i):
        outs[i] = await one(plan, statuses, everyone_open)

    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(run, i)
    print(json.dumps({"sessions": outs, "statuses": statuses}), flush=True)


anyio.run(main)
