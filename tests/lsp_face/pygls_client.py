"""A pygls (2.x) LanguageClient driven by the same step language as nvim_client.lua.

Run with .tools/lsp-venv/bin/python. Environment: LSPF_CMD (the server command, a JSON list),
LSPF_ROOT, LSPF_OUT (observations appended as JSON lines), LSPF_SIGNALS, LSPF_STEPS (see
nvim_client.lua for the steps) and LSPF_ENCODINGS (optional: a JSON list offered as
`general.positionEncodings`; positions are then counted in the one the server picks).
"""

import asyncio
import json
import os
import pathlib
import sys
import time

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.protocol import default_converter

ROOT = pathlib.Path(os.environ["LSPF_ROOT"])
SIGNALS = pathlib.Path(os.environ.get("LSPF_SIGNALS", ROOT))
OUT = open(os.environ["LSPF_OUT"], "a", encoding="utf-8")
CONVERTER = default_converter()
LANGUAGES = {"py": "python", "ts": "typescript", "js": "javascript", "c": "c"}


def emit(obj):
    obj["t"] = int(time.monotonic() * 1000)
    OUT.write(json.dumps(obj) + "\n")
    OUT.flush()


def plain(value):
    return CONVERTER.unstructure(value)


def uri_of(file):
    return (ROOT / file).as_uri()


client = LanguageClient("lspf-pygls", "1")
published = {}  # uri -> [(seq, diagnostics)]
state = {"seq": 0, "encoding": "utf-16", "exited": None}
marks = {}
buffers = {}  # file -> (version, text)


@client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
def on_diagnostics(ls, params: types.PublishDiagnosticsParams):
    state["seq"] += 1
    diagnostics = plain(params.diagnostics)
    published.setdefault(params.uri, []).append((state["seq"], diagnostics))
    emit({"event": "diagnostics", "seq": state["seq"], "uri": params.uri,
          "version": params.version, "diagnostics": diagnostics})


@client.feature(types.WINDOW_LOG_MESSAGE)
def on_log(ls, params):
    pass


@client.feature(types.WORKSPACE_CONFIGURATION)
def on_configuration(ls, params: types.ConfigurationParams):
    return [None for _ in params.items]


@client.feature(types.CLIENT_REGISTER_CAPABILITY)
def on_register(ls, params):
    return None


@client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
def on_progress_create(ls, params):
    return None


def character(line, byte_free_index):
    """The column of code-point index `byte_free_index` of `line` in the negotiated encoding."""
    before = line[:byte_free_index]
    if state["encoding"] == "utf-8":
        return len(before.encode("utf-8"))
    if state["encoding"] == "utf-32":
        return len(before)
    return len(before.encode("utf-16-le")) // 2


def position(step):
    text = buffers[step["file"]][1]
    line = text.split("\n")[step["line"] - 1]
    at = -1
    for _ in range(step.get("occurrence", 1)):
        at = line.index(step["symbol"], at + 1)
    return types.TextDocumentIdentifier(uri=uri_of(step["file"])), types.Position(
        line=step["line"] - 1, character=character(line, at))


def fresh_match(step):
    uri = uri_of(step["file"])
    since = 0 if step.get("fresh") is False else marks.get(uri, 0)
    for seq, diagnostics in published.get(uri, []):
        if seq <= since:
            continue
        if step.get("empty"):
            if not diagnostics:
                return {"seq": seq, "diagnostics": diagnostics}
        elif "match" in step:
            if any(step["match"] in d["message"] for d in diagnostics):
                return {"seq": seq, "diagnostics": diagnostics}
        else:
            return {"seq": seq, "diagnostics": diagnostics}
    return None


async def until(predicate, timeout_ms):
    deadline = time.monotonic() + timeout_ms / 1000
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        await asyncio.sleep(0.02)
    return predicate()


async def step_open(step):
    file = step["file"]
    text = (ROOT / file).read_text(encoding="utf-8")
    buffers[file] = (1, text)
    marks[uri_of(file)] = state["seq"]
    language = step.get("filetype") or LANGUAGES.get(file.rsplit(".", 1)[-1], "plaintext")
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri_of(file), language_id=language,
                                             version=1, text=text)))
    return True


async def step_edit(step):
    file = step["file"]
    version = buffers[file][0] + 1
    buffers[file] = (version, step["text"])
    marks[uri_of(file)] = state["seq"]
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri_of(file), version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=step["text"])]))
    return version


async def step_mark(step):
    marks[uri_of(step["file"])] = state["seq"]
    return state["seq"]


async def step_wait_diagnostics(step):
    found = await until(lambda: fresh_match(step), step.get("timeout_ms", 60000))
    if not found:
        raise RuntimeError(f"no matching publishDiagnostics for {step['file']}")
    return found


async def request(step, call):
    doc, pos = position(step)
    return plain(await asyncio.wait_for(call(doc, pos), step.get("timeout_ms", 30000) / 1000))


async def step_hover(step):
    return await request(step, lambda doc, pos: client.text_document_hover_async(
        types.HoverParams(text_document=doc, position=pos)))


async def step_definition(step):
    return await request(step, lambda doc, pos: client.text_document_definition_async(
        types.DefinitionParams(text_document=doc, position=pos)))


async def step_references(step):
    return await request(step, lambda doc, pos: client.text_document_references_async(
        types.ReferenceParams(text_document=doc, position=pos,
                              context=types.ReferenceContext(include_declaration=True))))


async def step_close(step):
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri_of(step["file"]))))
    buffers.pop(step["file"], None)
    return True


async def step_sleep(step):
    await asyncio.sleep(step["ms"] / 1000)
    return True


async def step_wait_go(step):
    path = SIGNALS / step["name"]
    if not await until(path.exists, step.get("timeout_ms", 120000)):
        raise RuntimeError(f"no signal {step['name']}")
    return True


async def step_stop(step):
    await asyncio.wait_for(client.shutdown_async(None), step.get("timeout_ms", 10000) / 1000)
    client.exit(None)
    server = client._server
    code = await asyncio.wait_for(server.wait(), step.get("timeout_ms", 10000) / 1000)
    state["exited"] = {"code": code}
    emit({"event": "exit", "code": code})
    return state["exited"]


async def copy_stderr(stream):
    with open(os.environ.get("LSPF_STDERR", os.devnull), "ab") as sink:
        while chunk := await stream.read(65536):
            sink.write(chunk)
            sink.flush()


STEPS = {name[len("step_"):]: fn for name, fn in globals().items() if name.startswith("step_")}


async def main():
    cmd = json.loads(os.environ["LSPF_CMD"])
    await client.start_io(cmd[0], *cmd[1:], cwd=str(ROOT))
    # pygls pipes the server's stderr and never reads it: drain it into a file, lest a chatty
    # server block on a full pipe. (Not through `sh -c 'exec … 2>FILE'`: dash drops variables
    # whose names are not shell names, so the server would get another environment.)
    drain = asyncio.create_task(copy_stderr(client._server.stderr))
    state["tasks"] = [drain]
    general = None
    if os.environ.get("LSPF_ENCODINGS"):
        general = types.GeneralClientCapabilities(position_encodings=[
            types.PositionEncodingKind(e) for e in json.loads(os.environ["LSPF_ENCODINGS"])])
    capabilities = types.ClientCapabilities(
        general=general,
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
            hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
        ),
    )
    result = await asyncio.wait_for(client.initialize_async(types.InitializeParams(
        process_id=os.getpid(), root_uri=ROOT.as_uri(), capabilities=capabilities,
        workspace_folders=[types.WorkspaceFolder(uri=ROOT.as_uri(), name=ROOT.name)])), 60)
    state["encoding"] = result.capabilities.position_encoding or "utf-16"
    emit({"event": "initialized", "capabilities": plain(result.capabilities),
          "offset_encoding": state["encoding"], "server_info": plain(result.server_info)})
    client.initialized(types.InitializedParams())
    for i, step in enumerate(json.loads(os.environ["LSPF_STEPS"]), start=1):
        line = {"event": "step", "i": i, "do": step["do"], "label": step.get("label"),
                "file": step.get("file")}
        try:
            line["result"] = await STEPS[step["do"]](step)
        except Exception as e:  # noqa: BLE001 - every failure is an observation
            line["err"] = f"{type(e).__name__}: {e}"
        emit(line)
    if state["exited"] is None and client._server and client._server.returncode is None:
        client._server.kill()


try:
    asyncio.run(main())
except Exception as e:  # noqa: BLE001
    emit({"event": "error", "where": "run", "message": f"{type(e).__name__}: {e}"})
emit({"event": "done"})
sys.exit(0)
