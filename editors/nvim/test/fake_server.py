#!/usr/bin/env python3
"""A tiny stand-in for `weft lsp`, to prove the Neovim test harness works.

Standard library only. Speaks LSP over stdio (Content-Length framed JSON-RPC):

- initialize: hover, definition, executeCommand (weft.server.runEntry), full text sync
- textDocument/didOpen, didChange: publishes one diagnostic on the first line,
  "fake-server: <N> lines" (N = the document's line count)
- textDocument/hover: "`WORD` (fake hover)" for the word under the position
- textDocument/definition: the first `def WORD` / `entry WORD` in the document
- workspace/executeCommand weft.server.runEntry {uri, entry}: a run result;
  weft.server.runOnGpu {uri, entry}: a GPU run result, and a window/showMessage
- weft/showKernel: {uri: "weft-kernel:///NAME.cl", text: an OpenCL kernel saying how many
  views were served, lines: line 0 linked to the word asked about, line 1 to the file's
  last line}
- shutdown / exit

Anything else that is a request gets MethodNotFound. With FAKE_LSP_LOG=path every
message received is appended to that file (one JSON a line), for debugging.
"""

import json
import os
import re
import sys

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_']*")

docs = {}  # uri -> text
log_path = os.environ.get("FAKE_LSP_LOG")


def log(msg):
    if log_path:
        with open(log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(msg) + "\n")


def read_message(stream):
    headers = {}
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.decode("ascii").strip()
        if not line:
            break
        key, _, value = line.partition(":")
        headers[key.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    body = stream.read(length)
    return json.loads(body.decode("utf-8"))


def send(msg):
    msg["jsonrpc"] = "2.0"
    body = json.dumps(msg).encode("utf-8")
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def reply(req, result=None, error=None):
    msg = {"id": req["id"]}
    if error is not None:
        msg["error"] = error
    else:
        msg["result"] = result
    send(msg)


def utf16_col_to_index(line, col):
    """LSP columns are UTF-16 code units; Python indexes code points."""
    units = 0
    for i, ch in enumerate(line):
        if units >= col:
            return i
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


# How many kernel views were served (the text says which, so a refresh shows).
views_served = [0]


def word_at(uri, pos):
    lines = docs.get(uri, "").split("\n")
    if pos["line"] >= len(lines):
        return None
    line = lines[pos["line"]]
    idx = utf16_col_to_index(line, pos["character"])
    for m in IDENT.finditer(line):
        if m.start() <= idx <= m.end():
            return m.group(0), pos["line"], m.start(), m.end()
    return None


def publish(uri):
    text = docs.get(uri, "")
    n = len(text.split("\n"))
    first = text.split("\n")[0] if text else ""
    send({
        "method": "textDocument/publishDiagnostics",
        "params": {
            "uri": uri,
            "diagnostics": [{
                "range": {"start": {"line": 0, "character": 0},
                          "end": {"line": 0, "character": len(first)}},
                "severity": 2,
                "code": "fake",
                "source": "weft",
                "message": f"fake-server: {n} lines",
            }],
        },
    })


def handle(msg):
    method = msg.get("method")
    params = msg.get("params") or {}
    is_request = "id" in msg and method is not None
    if method == "initialize":
        reply(msg, {
            "capabilities": {
                "textDocumentSync": {"openClose": True, "change": 1},
                "hoverProvider": True,
                "definitionProvider": True,
                "completionProvider": {},
                "executeCommandProvider": {"commands": ["weft.server.runEntry",
                                                        "weft.server.runOnGpu",
                                                        "weft.server.profile"]},
            },
            "serverInfo": {"name": "weft-fake-server", "version": "0"},
        })
    elif method == "textDocument/didOpen":
        td = params["textDocument"]
        docs[td["uri"]] = td["text"]
        publish(td["uri"])
    elif method == "textDocument/didChange":
        uri = params["textDocument"]["uri"]
        for change in params["contentChanges"]:
            if "range" not in change:
                docs[uri] = change["text"]
        publish(uri)
    elif method == "textDocument/didClose":
        docs.pop(params["textDocument"]["uri"], None)
    elif method == "textDocument/hover":
        w = word_at(params["textDocument"]["uri"], params["position"])
        if w is None:
            reply(msg, None)
        else:
            word, line, start, end = w
            reply(msg, {
                "contents": {"kind": "markdown", "value": f"`{word}` (fake hover)"},
                "range": {"start": {"line": line, "character": start},
                          "end": {"line": line, "character": end}},
            })
    elif method == "textDocument/definition":
        uri = params["textDocument"]["uri"]
        w = word_at(uri, params["position"])
        result = None
        if w is not None:
            decl = re.compile(r"^(def|entry|type)\s+(" + re.escape(w[0]) + r")(?![A-Za-z0-9_'])")
            for i, line in enumerate(docs.get(uri, "").split("\n")):
                m = decl.match(line)
                if m:
                    result = [{"uri": uri, "range": {
                        "start": {"line": i, "character": m.start(2)},
                        "end": {"line": i, "character": m.end(2)}}}]
                    break
        reply(msg, result)
    elif method == "workspace/executeCommand":
        if params.get("command") == "weft.server.runEntry":
            arg = (params.get("arguments") or [{}])[0]
            reply(msg, {"ok": True, "entry": arg.get("entry"), "values": ["32f32"],
                        "message": f"fake run of {arg.get('entry')}", "timeMs": 1.5})
        elif params.get("command") == "weft.server.runOnGpu":
            arg = (params.get("arguments") or [{}])[0]
            message = f"fake GPU run of {arg.get('entry')}: kernels 1.0 µs (2 launches)"
            send({"method": "window/showMessage", "params": {"type": 3, "message": message}})
            reply(msg, {"ok": True, "entry": arg.get("entry"), "values": ["32f32"],
                        "message": message, "timeMs": 40, "kernelNs": 1000,
                        "device": "fake device"})
        elif params.get("command") == "weft.server.profile":
            arg = (params.get("arguments") or [{}])[0]
            entry = arg.get("entry")
            svg = f"/tmp/fake-weft/main.{entry}.profile/summary.svg"
            reply(msg, {"ok": True, "entry": entry, "svg": svg, "report": "work W = 42 (fake)\n",
                        "message": f"profile of `{entry}`: cost graph {svg}", "timeMs": 7})
        else:
            reply(msg, error={"code": -32602, "message": f"unknown command {params.get('command')}"})
    elif method == "weft/showKernel":
        uri = params["textDocument"]["uri"]
        w = word_at(uri, params["position"])
        name = w[0] if w else "kernel"
        views_served[0] += 1
        # Line 0 computes the word asked about, line 1 the last line's first word.
        last = len(docs.get(uri, "").rstrip("\n").split("\n")) - 1
        word = {"start": {"line": w[1], "character": w[2]}, "end": {"line": w[1], "character": w[3]}} if w \
            else {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
        reply(msg, {"uri": f"weft-kernel:///{name}.cl",
                    "text": f"__kernel void {name}(__global const float *xs) {{\n"
                            f"  // fake view {views_served[0]}\n}}\n",
                    "lines": [
                        {"line": 0, "source": {"uri": uri, "range": word}},
                        {"line": 1, "source": {"uri": uri, "range": {
                            "start": {"line": last, "character": 2}, "end": {"line": last, "character": 8}}}},
                    ]})
    elif method == "shutdown":
        reply(msg, None)
    elif method == "exit":
        sys.exit(0)
    elif is_request:
        reply(msg, error={"code": -32601, "message": f"method not found: {method}"})


def main():
    stdin = sys.stdin.buffer
    while True:
        msg = read_message(stdin)
        if msg is None:
            return
        log(msg)
        handle(msg)


if __name__ == "__main__":
    main()
