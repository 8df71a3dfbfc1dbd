import CodexCore
import CodexSchema
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The demo's MCP server: this executable run again as `codexctl demo mcp-server`, speaking MCP over
/// its standard input and output (the stateless revision through `server/discover`, and the
/// `initialize` handshake for older clients), with one read-only tool, `track_parcel`, that reports
/// progress before it answers. An internal entry point of the demo (it is what a third-party server
/// process would be), not a command to use.
enum DemoMCPServer {
    static let name = "mcp-server"

    /// The tool's answer for any parcel.
    static func status(of parcel: String) -> String {
        parcel == "A-3" ? DemoScript.parcelStatus : "Parcel \(parcel.prefix(32)): no scans yet."
    }

    /// Serves until standard input ends; returns the exit status.
    static func run() -> Int32 {
        while let line = readLine(strippingNewline: true) {
            guard line.utf8.count <= 1 << 20, case .object(let message)? = try? JSONValue(parsing: line), let method = message["method"]?.stringValue else { continue }
            guard let id = message["id"] else { continue }
            let params = message["params"]
            switch method {
            case "server/discover":
                reply(id, [
                    "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": ["tools": [:]], "ttlMs": 0, "cacheScope": "public",
                    "_meta": ["io.modelcontextprotocol/serverInfo": serverInfo],
                ])
            case "initialize":
                reply(id, ["protocolVersion": "2025-11-25", "capabilities": ["tools": [:]], "serverInfo": serverInfo])
            case "ping":
                reply(id, [:])
            case "tools/list":
                reply(id, ["resultType": "complete", "ttlMs": 0, "cacheScope": "public", "tools": [[
                    "name": "track_parcel", "title": "Track a parcel", "description": "Where a parcel is now, from the carrier's scans.",
                    "inputSchema": [
                        "type": "object", "properties": ["parcel_id": ["type": "string", "maxLength": 32]], "required": ["parcel_id"],
                        "additionalProperties": false,
                    ],
                    "annotations": ["readOnlyHint": true, "openWorldHint": true],
                ]]])
            case "tools/call" where params?["name"]?.stringValue == "track_parcel":
                let parcel = params?["arguments"]?["parcel_id"]?.stringValue ?? "?"
                if let token = params?["_meta"]?["progressToken"] {
                    for (step, text) in ["asking the carrier", "reading the scans"].enumerated() {
                        send(["jsonrpc": "2.0", "method": "notifications/progress", "params": [
                            "progressToken": token, "progress": .number(JSONNumber(step + 1)), "total": 2, "message": .string(text),
                        ]])
                    }
                }
                reply(id, ["resultType": "complete", "content": [["type": "text", "text": .string(status(of: parcel))]], "isError": false])
            default:
                send(["jsonrpc": "2.0", "id": id, "error": ["code": -32601, "message": .string("Method not found: \(method.prefix(64))")]])
            }
        }
        return 0
    }

    private static let serverInfo: JSONValue = ["name": "parcel-tracker", "version": .string(CodexKitVersion.current)]

    private static func reply(_ id: JSONValue, _ result: JSONValue) {
        send(["jsonrpc": "2.0", "id": id, "result": result])
    }

    private static func send(_ message: JSONValue) {
        var bytes = message.compactBytes()
        bytes.append(UInt8(ascii: "\n"))
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in write(STDOUT_FILENO, raw.baseAddress.map { $0 + offset }, raw.count - offset) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { exit(1) }
            offset += written
        }
    }
}
