# CodexKit test server on the official Python SDK (mcp 2.x, low-level Server API): tools/list is paginated,
# five tools two per page with an opaque nextCursor; an unknown cursor is a -32602 error.
#   python paged_server.py             stdio
#   python paged_server.py --http       Streamable HTTP at http://127.0.0.1:PORT/mcp (PORT printed first)
import sys

import anyio
import uvicorn
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

PAGE_SIZE = 2
TOOLS = [
    Tool(name=f"tool_{n}", description=f"Paged tool number {n}", input_schema={"type": "object", "properties": {}})
    for n in range(1, 6)
]


async def list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
    cursor = params.cursor if params is not None else None
    start = 0
    if cursor is not None:
        if not cursor.startswith("page-") or not cursor[5:].isdigit() or int(cursor[5:]) >= len(TOOLS):
            raise MCPError(code=INVALID_PARAMS, message=f"Invalid cursor: {cursor}")
        start = int(cursor[5:])
    end = start + PAGE_SIZE
    return ListToolsResult(tools=TOOLS[start:end], next_cursor=f"page-{end}" if end < len(TOOLS) else None)


async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
    if params.name not in {tool.name for tool in TOOLS}:
        return CallToolResult(content=[TextContent(type="text", text=f"Unknown tool: {params.name}")], is_error=True)
    return CallToolResult(content=[TextContent(type="text", text=f"called {params.name}")])


server = Server("paged-server", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def run_stdio() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--http":
        from reference_server import serve_http

        serve_http(server.streamable_http_app())
    else:
        anyio.run(run_stdio)
