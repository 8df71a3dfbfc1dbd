# CodexKit's reference MCP server for the tests, on the official Python SDK (mcp 2.x).
#   python reference_server.py             stdio
#   python reference_server.py --http       Streamable HTTP at http://127.0.0.1:PORT/mcp (PORT printed first)
import struct
import sys
import zlib

import anyio
from mcp.server import NotificationOptions
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations, ToolListChangedNotification
from pydantic import BaseModel, Field

server = MCPServer("reference-server", version="1.0.0", instructions="Reference server for CodexKit's tests.")

# mcp 2.x advertises tools.listChanged=false on handshake connections by default; add_tool sends it.
_lowlevel = server._lowlevel_server
_default_init_options = _lowlevel.create_initialization_options
_lowlevel.create_initialization_options = lambda *a, **k: _default_init_options(NotificationOptions(tools_changed=True))


def tiny_png() -> bytes:
    """A complete 1x1 RGB PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b"")


@server.tool(structured_output=False)
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def picture() -> Image:
    """Return a 1x1 PNG image."""
    return Image(data=tiny_png(), format="png")


CANCELLED = {"slow": 0}


@server.tool(structured_output=False)
async def slow(steps: int, ctx: Context) -> str:
    """Report `steps` progress notifications, then wait until cancelled (steps < 0 waits at once)."""
    try:
        for step in range(1, max(steps, 0) + 1):
            await ctx.report_progress(step, steps, f"step {step}/{steps}")
        await anyio.sleep(3600)
        return "never"
    except anyio.get_cancelled_exc_class():
        CANCELLED["slow"] += 1
        print("slow: cancelled", file=sys.stderr, flush=True)
        raise


@server.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
async def count_to(n: int, ctx: Context) -> str:
    """Report progress 1..n of n, then answer."""
    for step in range(1, n + 1):
        await ctx.report_progress(step, n, f"counted {step}")
    return f"counted to {n}"


@server.tool(structured_output=False)
def cancelled_count() -> str:
    """How many `slow` calls were cancelled so far."""
    return str(CANCELLED["slow"])


@server.tool(structured_output=False)
def regional(region: str = Field(json_schema_extra={"x-mcp-header": "Region"})) -> str:
    """Answer with the region (a stateless HTTP request mirrors it into the Mcp-Param-Region header)."""
    return f"region {region}"



@server.tool(structured_output=False)
def failing() -> str:
    """Always fails."""
    raise ToolError("this tool always fails")


@server.tool(
    annotations=ToolAnnotations(title="Delete a note", read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False),
    structured_output=False,
)
def delete_note(name: str) -> str:
    """Delete a note."""
    return f"deleted {name}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
def lookup(sku: str) -> str:
    """Read a product."""
    return f"{sku}: 12 EUR"


class Code(BaseModel):
    code: str = Field(pattern="^[A-Z]+$", max_length=5)


@server.tool(structured_output=False)
def code_check(code: str = Field(pattern="^[A-Z]+$", max_length=5)) -> str:
    """Check a code (its schema uses `pattern`)."""
    return f"code {code} ok"


@server.tool(structured_output=False)
def leak() -> str:
    """Write a secret from the environment to standard error."""
    import os

    print(f"token is {os.environ.get('REFERENCE_TOKEN', '')}", file=sys.stderr, flush=True)
    return "leaked"


@server.tool(name="add_tool", structured_output=False)
async def add_tool(name: str, ctx: Context) -> str:
    """Add a tool `name` that answers "hello from <name>", and announce the changed list."""

    def dynamic() -> str:
        return f"hello from {name}"

    server.add_tool(dynamic, name=name, description=f"Added at run time: {name}", structured_output=False)
    await ctx.session.send_notification(ToolListChangedNotification(), related_request_id=ctx.request_id)
    await ctx.notify_tools_changed()
    return f"added tool {name}"


def serve_http(app) -> None:
    """Serves `app` on a port the system picks, printed as the first line of standard output."""
    import socket

    import uvicorn

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(listener.getsockname()[1], flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listener])


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--http":
        serve_http(server.streamable_http_app())
    else:
        server.run("stdio")
