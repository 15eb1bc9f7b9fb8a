#!/usr/bin/env python3
"""Writes the hand-written late-2026 samples (request-state, header-mismatch,
accept-header, cache-refetch, cache-changed, app-tool-visibility) next to this
folder, and their passing twins in pass/. Run: python3 gen/late2026.py (from
testdata/captures/lint)."""
import json, os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "host", "version": "1.0"}}
URL = "http://127.0.0.1:3001/mcp"


class Capture:
    def __init__(self, http):
        self.recs, self.seq, self.ms = [], 0, 0
        h = {"type": "header", "format": "sonde-capture", "version": "1.0", "sonde": "hand-written",
             "start": "2026-12-02T12:00:00Z"}
        h.update({"transport": "http", "url": URL} if http else {"transport": "stdio", "command": ["server"]})
        self.recs.append(h)
        self.add({"type": "process", "what": "connect" if http else "start", "argv": [URL] if http else ["server"]})

    def add(self, rec):
        self.seq += 1
        self.ms += 1
        out = {"type": rec.pop("type"), "seq": self.seq, "t": self.ms * 1000000}
        out.update(rec)
        self.recs.append(out)

    def frame(self, d, msg, verdict):
        raw = json.dumps(msg, separators=(",", ":"))
        rec = {"type": "frame", "dir": d}
        if "id" in msg:
            rec["id"] = msg["id"]
        if "method" in msg:
            rec["method"] = msg["method"]
        rec.update({"kind": ("request" if "id" in msg else "notification") if "method" in msg else "response", "raw": raw, "size": len(raw), "verdict": verdict})
        self.add(rec)

    def req(self, i, method, params):
        p = dict(params)
        p["_meta"] = META
        self.frame("out", {"jsonrpc": "2.0", "id": i, "method": method, "params": p}, "sent")

    def res(self, i, result):
        self.frame("in", {"jsonrpc": "2.0", "id": i, "result": result}, "resolved")

    def http(self, i, lines):
        self.add({"type": "http", "http": {"method": "POST", "url": URL, "status": 200, "header": lines,
                                           "duration": 1000000, "stream": "POST %d" % i, "id": i}})

    def discover(self):
        self.req(1, "server/discover", {})
        self.res(1, {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                     "ttlMs": 0, "cacheScope": "connection"})

    def write(self, name):
        self.recs.append({"type": "end", "t": (self.ms + 1) * 1000000, "events": self.seq})
        with open(os.path.join(OUT, name), "w") as f:
            for r in self.recs:
                f.write(json.dumps(r, separators=(",", ":")) + "\n")


ASK = {"resultType": "input_required",
       "inputRequests": {"ok": {"method": "elicitation/create", "params": {"message": "Delete?", "requestedSchema": {"type": "object", "properties": {}}}}},
       "requestState": "s-1"}
DONE = {"resultType": "complete", "content": [{"type": "text", "text": "deleted"}]}


def request_state():
    # An MRTR chain: input_required with requestState "s-1"; the retry
    # echoes "s-2" (changed).
    c = Capture(False)
    c.discover()
    c.req(2, "tools/call", {"name": "delete", "arguments": {}})
    c.res(2, ASK)
    c.req(3, "tools/call", {"name": "delete", "arguments": {}, "inputResponses": {"ok": {"action": "accept"}}, "requestState": "s-2"})
    c.res(3, DONE)
    c.write("request-state.jsonl")


def header_mismatch():
    # Over HTTP, the modern tools/call's body says 2026-07-28, its header
    # MCP-Protocol-Version another revision.
    c = Capture(True)
    c.discover()
    c.http(1, ["> MCP-Protocol-Version: 2026-07-28", "> Mcp-Method: server/discover", "< Content-Type: application/json"])
    c.req(2, "tools/call", {"name": "echo", "arguments": {"value": "x"}})
    c.http(2, ["> MCP-Protocol-Version: 2025-11-25", "> Mcp-Method: tools/call", "> Mcp-Name: echo", "< Content-Type: application/json"])
    c.res(2, DONE)
    c.write("header-mismatch.jsonl")


def accept_header():
    # A tapped host's POSTs (every request header listed): the first Accept
    # lists both types, the second only application/json.
    c = Capture(True)
    c.discover()
    c.http(1, ["> Accept: application/json, text/event-stream", "> Content-Type: application/json", "> Mcp-Method: server/discover",
               "> MCP-Protocol-Version: 2026-07-28", "< Content-Type: application/json"])
    c.req(2, "tools/call", {"name": "echo", "arguments": {"value": "x"}})
    c.http(2, ["> Accept: application/json", "> Content-Type: application/json", "> Mcp-Method: tools/call",
               "> MCP-Protocol-Version: 2026-07-28", "< Content-Type: application/json"])
    c.res(2, DONE)
    c.write("accept-header.jsonl")


def tools_list(tools, ttl):
    return {"resultType": "complete", "tools": tools, "ttlMs": ttl, "cacheScope": "private"}


ECHO = {"name": "echo", "description": "Echo a value", "inputSchema": {"type": "object"}}
ADD = {"name": "add", "description": "Add two numbers", "inputSchema": {"type": "object"}}


def cache_refetch():
    # tools/list answered with ttlMs 60000; the host asks again 1 ms later.
    c = Capture(False)
    c.discover()
    c.req(2, "tools/list", {})
    c.res(2, tools_list([ECHO], 60000))
    c.req(3, "tools/list", {})
    c.res(3, tools_list([ECHO], 60000))
    c.write("cache-refetch.jsonl")


def cache_changed():
    # Two tools/list in flight at once (no re-fetch of a fresh result): the
    # first answer has ttlMs 60000, the second, 1 ms later, another list.
    c = Capture(False)
    c.discover()
    c.req(2, "tools/list", {})
    c.req(3, "tools/list", {})
    c.res(2, tools_list([ECHO], 60000))
    c.res(3, tools_list([ECHO, ADD], 60000))
    c.write("cache-changed.jsonl")


def cache_fresh_ok():
    # The passing twin of both: ttlMs 1000; the server announces a change
    # (notifications/tools/list_changed), the host asks again and gets the
    # new list; then it waits the TTL out and asks again: another list.
    c = Capture(False)
    c.discover()
    c.req(2, "tools/list", {})
    c.res(2, tools_list([ECHO], 1000))
    c.frame("in", {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}, "notification")
    c.req(3, "tools/list", {})
    c.res(3, tools_list([ECHO, ADD], 1000))
    c.ms += 1500
    c.req(4, "tools/list", {})
    c.res(4, tools_list([ADD], 1000))
    c.write("pass/cache-fresh.jsonl")


UI = "io.modelcontextprotocol/ui"


def app_tool(name, *visibility):
    return {"name": name, "description": "An app tool", "inputSchema": {"type": "object"},
            "_meta": {"ui": {"resourceUri": "ui://charts/chart.html", "visibility": list(visibility)}}}


def app_session(name, declare, calls):
    # tools/list shows show_chart (model, app), refresh_chart (app only) and
    # export_chart (model only); then the given tools are called, the
    # requests declaring the ui extension or not.
    c = Capture(False)
    c.discover()
    c.req(2, "tools/list", {})
    c.res(2, tools_list([app_tool("show_chart", "model", "app"), app_tool("refresh_chart", "app"), app_tool("export_chart", "model")], 0))
    meta = dict(META)
    if declare:
        meta["io.modelcontextprotocol/clientCapabilities"] = {"extensions": {UI: {"mimeTypes": ["text/html;profile=mcp-app"]}}}
    for i, tool in enumerate(calls, start=3):
        c.frame("out", {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": tool, "arguments": {}, "_meta": meta}}, "sent")
        c.res(i, {"resultType": "complete", "content": [{"type": "text", "text": tool + ": done"}]})
    c.write(name)


request_state()
header_mismatch()
accept_header()
cache_refetch()
cache_changed()
cache_fresh_ok()
# A host without MCP Apps calls the app-only tool: no app can have.
app_session("app-tool-visibility.jsonl", False, ["show_chart", "refresh_chart"])
# Its twin: the host declares the extension (its app calls refresh_chart),
# and the model calls the model-only tool.
app_session("pass/app-tool-visibility.jsonl", True, ["refresh_chart", "export_chart", "show_chart"])
