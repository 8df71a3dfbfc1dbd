# A stdio MCP server that misbehaves on purpose, for CodexKit's tests (no SDK: raw JSON-RPC lines).
#   python hostile_server.py MODE
# Every mode answers the handshake (`initialize`) like a 2025-11-25 server and refuses the stateless
# probe (`server/discover`) with -32601, then misbehaves on `tools/call`:
#   malformed        writes a line that is not JSON-RPC
#   oversize         writes a 2 MiB line
#   huge             writes a 256 MiB line, 1 MiB at a time (for measuring the client's peak memory)
#   silent           never answers (and says "silent: cancelled <id>" on stderr when told to cancel)
#   die              exits with status 3 mid-call
#   flood            writes 20,000 progress notifications for an unknown token, then answers
#   many-tools       lists 10,001 tools on one page
#   duplicate-tools  lists poke twice (with two descriptions)
#   bad-output       lists poke with an output schema (a number `result`) and answers with a string one
#   bad-output-error the same, with the answer marked isError (not held to the schema)
#   request-flood    writes 100,000 ping requests to the client without reading its answers, then
#                    answers (the client answers a few at a time and drops the rest)
#   requests         sends sampling/createMessage, elicitation/create, roots/list and ping to the client,
#                    then answers the call with the replies it got (as JSON text)
#   exit-on-probe    exits when it sees server/discover (a server that cannot bear an unknown method)
#   future           answers initialize with protocol version 2099-01-01
#   older            answers initialize with protocol version 2025-03-26
#   stateless-only   answers server/discover with -32022 (supports only 2030-01-01)
#   mute             says its pid on stderr ("mute: pid N"), then never writes anything
#   orphan           on tools/call starts a grandchild that keeps standard output open (its pid on
#                    stderr: "orphan: grandchild N"), then exits
import json
import os
import subprocess
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "silent"
TOOLS = [{"name": "poke", "description": "Misbehaves.", "inputSchema": {"type": "object", "properties": {}}}]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def reply(request_id, result):
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def error(request_id, code, message, data=None):
    body = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    send({"jsonrpc": "2.0", "id": request_id, "error": body})


if MODE == "mute":
    print(f"mute: pid {os.getpid()}", file=sys.stderr, flush=True)
    for _ in sys.stdin:
        pass
    sys.exit(0)

pending_call = None
client_replies = {}
asked = ["sampling/createMessage", "elicitation/create", "roots/list", "ping"]

for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    message = json.loads(line)
    method = message.get("method")
    request_id = message.get("id")
    if method is None:
        # A reply from the client to one of our requests.
        client_replies[str(request_id)] = message.get("result", message.get("error"))
        if MODE == "requests" and len(client_replies) == len(asked) and pending_call is not None:
            reply(pending_call, {"content": [{"type": "text", "text": json.dumps(client_replies, sort_keys=True)}]})
            pending_call = None
        continue
    if method == "server/discover":
        if MODE == "exit-on-probe":
            sys.exit(0)
        if MODE == "stateless-only":
            error(request_id, -32022, "Unsupported protocol version", {"supported": ["2030-01-01"], "requested": "2026-07-28"})
            continue
        error(request_id, -32601, "Method not found")
        continue
    if method == "initialize":
        version = {"future": "2099-01-01", "older": "2025-03-26"}.get(MODE, "2025-11-25")
        reply(request_id, {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "hostile", "version": "0"}})
        continue
    if method == "notifications/cancelled":
        print(f"{MODE}: cancelled {message['params']['requestId']}", file=sys.stderr, flush=True)
        continue
    if request_id is None:
        continue
    if method == "ping":
        reply(request_id, {})
    elif method == "tools/list":
        if MODE.startswith("bad-output"):
            schema = {"type": "object", "properties": {"result": {"type": "number"}}, "required": ["result"]}
            reply(request_id, {"tools": [dict(TOOLS[0], outputSchema=schema)]})
        elif MODE == "many-tools":
            reply(request_id, {"tools": [{"name": f"t{n}", "inputSchema": {"type": "object"}} for n in range(10001)]})
        elif MODE == "duplicate-tools":
            reply(request_id, {"tools": [TOOLS[0], dict(TOOLS[0], description="Another meaning.")]})
        else:
            reply(request_id, {"tools": TOOLS})
    elif method == "tools/call":
        if MODE == "malformed":
            sys.stdout.write('{"jsonrpc": "1.0", "id": ' + json.dumps(request_id) + "}\n")
            sys.stdout.flush()
        elif MODE == "oversize":
            sys.stdout.write('{"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "' + "x" * (2 << 20) + '"}}\n')
            sys.stdout.flush()
        elif MODE == "huge":
            try:
                sys.stdout.write('{"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "')
                for _ in range(256):
                    sys.stdout.write("x" * (1 << 20))
                sys.stdout.flush()
            except BrokenPipeError:
                sys.exit(0)
        elif MODE == "silent":
            pass
        elif MODE == "die":
            sys.exit(3)
        elif MODE == "orphan":
            child = subprocess.Popen(["sleep", "3600"], stdout=sys.stdout, stdin=subprocess.DEVNULL)
            print(f"orphan: grandchild {child.pid}", file=sys.stderr, flush=True)
            os._exit(4)
        elif MODE == "flood":
            for n in range(20000):
                send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "nobody", "progress": n}})
            reply(request_id, {"content": [{"type": "text", "text": "survived"}]})
        elif MODE.startswith("bad-output"):
            reply(request_id, {"content": [{"type": "text", "text": "{\"result\": \"x\"}"}], "structuredContent": {"result": "x"}, "isError": MODE == "bad-output-error"})
        elif MODE == "request-flood":
            for n in range(100000):
                sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": f"p{n}", "method": "ping"}) + "\n")
            sys.stdout.flush()
            reply(request_id, {"content": [{"type": "text", "text": "survived"}]})
        elif MODE == "requests":
            pending_call = request_id
            for index, asked_method in enumerate(asked):
                send({"jsonrpc": "2.0", "id": f"s{index}", "method": asked_method, "params": {}})
        else:
            reply(request_id, {"content": [{"type": "text", "text": "ok"}]})
    else:
        error(request_id, -32601, "Method not found")
