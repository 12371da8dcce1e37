#!/usr/bin/env python3
"""Runs the MCP server command given (stdio), initializes, asks tools/list and checks the answer
names lspgate's tools: used by scripts/install-check.sh."""
import json
import subprocess
import sys

proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def send(msg):
    proc.stdin.write((json.dumps(msg) + "\n").encode())
    proc.stdin.flush()


def answer(id_):
    for line in proc.stdout:
        msg = json.loads(line)
        if msg.get("id") == id_:
            return msg
    sys.exit(f"mcp-tools-list: {sys.argv[1:]} closed stdout before answering {id_}")


send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "install-check", "version": "0"}}})
init = answer(1)
if init.get("result", {}).get("serverInfo", {}).get("name") is None:
    sys.exit(f"mcp-tools-list: initialize answered {init}")
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
tools = [t["name"] for t in answer(2)["result"]["tools"]]
proc.stdin.close()
proc.wait(timeout=30)
if "check" not in tools:
    sys.exit(f"mcp-tools-list: tools/list answered {tools}")
print(f"{sys.argv[1:]}: tools/list answered {len(tools)} tools")
