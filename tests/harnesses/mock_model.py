#!/usr/bin/env python3
"""A scripted model server for tests/harnesses.rs: speaks the Anthropic Messages API, the OpenAI
Responses API and the Gemini API (streaming and not) on 127.0.0.1, answers each agent request
with the next step of a script (a tool call or text), and logs every request body.

Usage: mock_model.py SCRIPT.json LOG.jsonl PORT_FILE

SCRIPT is a JSON list of steps, served in order to the requests that offer tools (the agent
loop); once it runs out, its last step is served again. A step is {"text": "..."} or
{"tool": NAME, "input": {...}} (for a freeform tool such as Codex's apply_patch, "input" is
the text). A request that offers no tools (a title, a classifier, a token count) gets a short
text and does not advance the script. Each request is appended to LOG as one JSON line:
{"n", "method", "path", "main", "step", "body"}. The chosen port is written to PORT_FILE once
listening. Python standard library only.
"""

import json
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = []
LOG_PATH = ""
LOCK = threading.Lock()
STATE = {"n": 0, "step": 0}


def next_step(main):
    with LOCK:
        STATE["n"] += 1
        n = STATE["n"]
        if not main:
            return n, None
        i = min(STATE["step"], len(SCRIPT) - 1)
        STATE["step"] += 1
        return n, SCRIPT[i]


def log(entry):
    with LOCK:
        with open(LOG_PATH, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def sse(events):
    """(event name or None, data) pairs as server-sent events."""
    out = []
    for name, data in events:
        if name:
            out.append("event: %s\n" % name)
        out.append("data: %s\n\n" % json.dumps(data))
    return "".join(out).encode()


# --- Anthropic Messages -------------------------------------------------------------------


def anthropic(body, step):
    model = body.get("model", "mock")
    usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}
    if step is not None and "tool" in step:
        block = {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:20],
                 "name": step["tool"], "input": step["input"]}
        stop = "tool_use"
    else:
        text = step["text"] if step else "ok"
        block = {"type": "text", "text": text}
        stop = "end_turn"
    msg_id = "msg_" + uuid.uuid4().hex[:20]
    if not body.get("stream"):
        return "application/json", json.dumps({
            "id": msg_id, "type": "message", "role": "assistant", "model": model,
            "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage,
        }).encode()
    start = dict(block)
    if block["type"] == "tool_use":
        start["input"] = {}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    else:
        start["text"] = ""
        delta = {"type": "text_delta", "text": block["text"]}
    return "text/event-stream", sse([
        ("message_start", {"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": start}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ])


# --- OpenAI Responses ---------------------------------------------------------------------


def responses(body, step):
    resp_id = "resp_" + uuid.uuid4().hex[:20]
    if step is not None and "tool" in step:
        kinds = {t.get("name"): t.get("type") for t in body.get("tools", [])
                 if isinstance(t, dict)}
        call_id = "call_" + uuid.uuid4().hex[:20]
        if kinds.get(step["tool"]) == "custom":
            text = step["input"] if isinstance(step["input"], str) else json.dumps(step["input"])
            item = {"type": "custom_tool_call", "id": "ctc_" + call_id[5:], "call_id": call_id,
                    "name": step["tool"], "input": text, "status": "completed"}
        else:
            args = step["input"]
            if isinstance(args, str):
                args = {"input": args}
            item = {"type": "function_call", "id": "fc_" + call_id[5:], "call_id": call_id,
                    "name": step["tool"], "arguments": json.dumps(args), "status": "completed"}
    else:
        text = step["text"] if step else "ok"
        item = {"type": "message", "role": "assistant", "id": "msg_" + resp_id[5:],
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 15}
    response = {"id": resp_id, "object": "response", "status": "completed",
                "model": body.get("model", "mock"), "output": [item], "usage": usage}
    if not body.get("stream"):
        return "application/json", json.dumps(response).encode()
    created = dict(response, status="in_progress", output=[])
    return "text/event-stream", sse([
        ("response.created", {"type": "response.created", "response": created}),
        ("response.output_item.added", {"type": "response.output_item.added",
                                        "output_index": 0, "item": item}),
        ("response.output_item.done", {"type": "response.output_item.done",
                                       "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": response}),
    ])


# --- Gemini -------------------------------------------------------------------------------


def gemini(body, step, stream):
    if step is not None and "tool" in step:
        part = {"functionCall": {"name": step["tool"], "args": step["input"]}}
    else:
        part = {"text": step["text"] if step else "ok"}
        schema = (body.get("generationConfig") or {}).get("responseMimeType")
        if step is None and schema == "application/json":
            part = {"text": json.dumps({"reasoning": "mock", "next_speaker": "user",
                                        "model_choice": "flash", "complexity_score": 1})}
    chunk = {"candidates": [{"content": {"role": "model", "parts": [part]},
                             "finishReason": "STOP", "index": 0}],
             "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                               "totalTokenCount": 15},
             "modelVersion": "gemini-mock"}
    if stream:
        return "text/event-stream", sse([(None, chunk)])
    return "application/json", json.dumps(chunk).encode()


def offers_tools(body):
    tools = body.get("tools")
    return isinstance(tools, list) and len(tools) > 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet: the log file holds what matters
        pass

    def reply(self, status, ctype, payload):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self):
        log({"n": None, "method": "GET", "path": self.path, "main": False, "step": None,
             "body": None})
        if "/models" in self.path:
            self.reply(200, "application/json", json.dumps({"data": [], "models": []}).encode())
        else:
            self.reply(404, "application/json", b'{"error": "not found"}')

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            log({"n": None, "method": "POST", "path": self.path, "main": False, "step": None,
                 "body": body})
            return self.reply(200, "application/json", b'{"input_tokens": 10}')
        if path.endswith(":countTokens"):
            log({"n": None, "method": "POST", "path": self.path, "main": False, "step": None,
                 "body": body})
            return self.reply(200, "application/json", b'{"totalTokens": 10}')
        main = offers_tools(body)
        n, step = next_step(main)
        log({"n": n, "method": "POST", "path": self.path, "main": main, "step": step,
             "body": body})
        if path.endswith("/messages"):
            ctype, payload = anthropic(body, step)
        elif path.endswith("/responses"):
            ctype, payload = responses(body, step)
        elif ":streamGenerateContent" in path:
            ctype, payload = gemini(body, step, True)
        elif ":generateContent" in path:
            ctype, payload = gemini(body, step, False)
        else:
            return self.reply(404, "application/json", b'{"error": "unknown endpoint"}')
        self.reply(200, ctype, payload)


def main():
    global SCRIPT, LOG_PATH
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__)
        sys.exit(2)
    with open(sys.argv[1], encoding="utf-8") as f:
        SCRIPT = json.load(f)
    if not SCRIPT:
        sys.exit("the script is empty")
    LOG_PATH = sys.argv[2]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[3] + ".tmp", "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    import os
    os.replace(sys.argv[3] + ".tmp", sys.argv[3])
    server.serve_forever()


if __name__ == "__main__":
    main()
