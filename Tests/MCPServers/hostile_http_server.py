# A Streamable HTTP MCP server of CodexKit's tests that breaks a reply stream on purpose (no SDK):
# a handshake session (2025-11-25) whose tools/call stream sends one numbered event and then closes
# before the reply; the reply comes on the GET the client sends with Last-Event-ID.
# With EXPECTED_BEARER set, a request without `Authorization: Bearer <that value>` gets HTTP 401.
#   python hostile_http_server.py --http    (the port it listens on is printed first)
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE = {"pending": None, "token": None}
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply_json(self, status, body, headers=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def stream(self, events):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for event_id, message in events:
            self.wfile.write(f"id: {event_id}\nevent: message\ndata: {json.dumps(message)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True

    def refused(self):
        expected = os.environ.get("EXPECTED_BEARER")
        if expected is None or self.headers.get("Authorization") == f"Bearer {expected}":
            return False
        self.send_response(401)
        self.send_header("Content-Length", "0")
        self.end_headers()
        return True

    def do_POST(self):
        if self.refused():
            return
        length = int(self.headers.get("Content-Length", "0"))
        message = json.loads(self.rfile.read(length))
        method, request_id = message.get("method"), message.get("id")
        if method == "initialize":
            self.reply_json(200, {"jsonrpc": "2.0", "id": request_id, "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "breaking", "version": "0"}}},
                {"Mcp-Session-Id": "session-1"})
        elif request_id is None:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif method == "tools/list":
            self.reply_json(200, {"jsonrpc": "2.0", "id": request_id, "result": {"tools": [
                {"name": "poke", "inputSchema": {"type": "object", "properties": {}}}]}})
        elif method == "tools/call":
            token = (message.get("params") or {}).get("_meta", {}).get("progressToken")
            with LOCK:
                STATE["pending"], STATE["token"] = request_id, token
            first = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": 1, "total": 2}}
            # The stream ends here, before the reply.
            self.stream([("e1", first)])
        else:
            self.reply_json(404, {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})

    def do_GET(self):
        if self.refused():
            return
        last = self.headers.get("Last-Event-ID")
        if last != "e1":
            self.send_response(405)
            self.send_header("Allow", "POST")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with LOCK:
            pending, token = STATE["pending"], STATE["token"]
        progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": 2, "total": 2}}
        reply = {"jsonrpc": "2.0", "id": pending, "result": {"content": [{"type": "text", "text": "resumed"}]}}
        self.stream([("e2", progress), ("e3", reply)])

    def do_DELETE(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
