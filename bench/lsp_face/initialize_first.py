#!/usr/bin/env python3
"""Runs a language server (argv[1:]) and holds back what it says before its first response.

lspmux 0.3.0 takes the server's first message for its `initialize` response; pyright logs
(`window/logMessage`) before answering. This shim passes the client's input through as it comes
and the server's output through once the first response went out, that response first. Only the
`lsp_mux` bench uses it (a cost of the lspmux side it reports apart).
"""

import subprocess
import sys
import threading


def read_frame(stream):
    headers = b""
    while not headers.endswith(b"\r\n\r\n"):
        byte = stream.read(1)
        if not byte:
            return None
        headers += byte
    length = 0
    for line in headers.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return headers + stream.read(length)


def pump_in(server):
    src = sys.stdin.buffer
    while True:
        chunk = src.read1(65536)
        if not chunk:
            break
        server.stdin.write(chunk)
        server.stdin.flush()
    server.stdin.close()


def main():
    server = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    threading.Thread(target=pump_in, args=(server,), daemon=True).start()
    out = sys.stdout.buffer
    held = []
    answered = False
    while True:
        frame = read_frame(server.stdout)
        if frame is None:
            break
        if not answered:
            body = frame.split(b"\r\n\r\n", 1)[1]
            # A response: an id and no method.
            if b'"method"' not in body and b'"id"' in body:
                answered = True
                out.write(frame)
                for h in held:
                    out.write(h)
                held = []
            else:
                held.append(frame)
                continue
        else:
            out.write(frame)
        out.flush()
    sys.exit(server.wait())


if __name__ == "__main__":
    main()
