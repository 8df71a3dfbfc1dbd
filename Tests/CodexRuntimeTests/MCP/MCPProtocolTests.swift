@testable import CodexRuntime
import CodexSchema
import Testing

/// The JSON-RPC codec, the line framer and the request table: pure parts, no server.
@Suite struct MCPProtocolTests {
    private func decode(_ text: String, limit: Int = 1 << 20) throws(MCPError) -> [MCPMessage] {
        try MCPMessage.decode(Array(text.utf8), maximumBytes: limit)
    }

    private func code(_ text: String, limit: Int = 1 << 20) -> String? {
        do {
            _ = try decode(text, limit: limit)
            return nil
        } catch {
            return error.code.rawValue
        }
    }

    @Test func decodesEachKindOfMessage() throws {
        #expect(try decode(#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#) == [.request(id: .number(7), method: "ping", params: nil)])
        #expect(try decode(#"{"jsonrpc":"2.0","id":"a","method":"roots/list","params":{}}"#) == [.request(id: .string("a"), method: "roots/list", params: .object(JSONObject()))])
        #expect(try decode(#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#) == [.notification(method: "notifications/tools/list_changed", params: nil)])
        #expect(try decode(#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#) == [.result(id: .number(1), result: ["tools": []])])
        #expect(try decode(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#) == [.error(id: nil, MCPRemoteError(code: -32700, message: "Parse error", data: nil))])
        #expect(try decode(#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]"#).count == 2)
    }

    @Test func refusesWhatIsNotJSONRPC() {
        #expect(code("not json") == "mcp_malformed_message")
        #expect(code(#"{"jsonrpc":"1.0","id":1,"result":{}}"#) == "mcp_malformed_message")
        #expect(code(#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#) == "mcp_malformed_message")
        #expect(code(#"{"jsonrpc":"2.0","id":{},"method":"x"}"#) == "mcp_malformed_message")
        #expect(code(#"{"jsonrpc":"2.0","method":7}"#) == "mcp_malformed_message")
        #expect(code(#"{"jsonrpc":"2.0","id":1}"#) == "mcp_malformed_message")
        #expect(code(#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#) == "mcp_malformed_message")
        #expect(code(#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"y"}}"#) == "mcp_malformed_message")
        #expect(code(#"{"jsonrpc":"2.0","method":"x","params":3}"#) == "mcp_malformed_message")
        #expect(code("[]") == "mcp_malformed_message")
        #expect(code(#"{"jsonrpc":"2.0","method":"x","params":{"a":1}}"#, limit: 20) == "mcp_message_too_large")
        #expect(code(String(repeating: "[", count: 200) + String(repeating: "]", count: 200)) == "mcp_malformed_message")
    }

    @Test func encodesOneLineThatDecodesToTheSameMessage() throws {
        let messages: [MCPMessage] = [
            .request(id: .number(3), method: "tools/call", params: ["name": "echo", "arguments": ["text": "a\nb"]]),
            .notification(method: "notifications/cancelled", params: ["requestId": 3]),
            .result(id: .string("s1"), result: [:]),
            .error(id: .string("s2"), MCPRemoteError(code: -32601, message: "Method not found", data: nil)),
        ]
        for message in messages {
            let bytes = message.encoded()
            #expect(!bytes.contains(UInt8(ascii: "\n")))
            #expect(try MCPMessage.decode(bytes, maximumBytes: 1 << 20) == [message])
        }
    }

    @Test func framerSplitsLinesAcrossReadsAndEnforcesTheLimitWhileReading() throws {
        var framer = MCPLineFramer(maximumLineBytes: 8)
        #expect(try framer.append(Array("ab".utf8)) == [])
        #expect(try framer.append(Array("c\r\n\n  \nde".utf8)) == [Array("abc".utf8)])
        #expect(try framer.append(Array("f\n12345678\n".utf8)) == [Array("def".utf8), Array("12345678".utf8)])
        #expect(framer.finish() == nil)
        var unterminated = MCPLineFramer(maximumLineBytes: 8)
        #expect(try unterminated.append(Array("xyz".utf8)) == [])
        #expect(unterminated.finish() == Array("xyz".utf8))
        var long = MCPLineFramer(maximumLineBytes: 8)
        #expect(try long.append(Array("12345".utf8)) == [])
        // The ninth and tenth bytes arrive without a newline: refused before the line ends.
        #expect(throws: MCPError.self) { try long.append(Array("67890".utf8)) }
    }

    @Test func requestTableMatchesRepliesProgressAndServerRequests() {
        var table = MCPRequestTable<String>()
        let first = table.open(method: "tools/call", wantsProgress: true, waiter: "first")
        let second = table.open(method: "tools/list", wantsProgress: false, waiter: "second")
        #expect(first.id == 1 && second.id == 2 && first.progressToken == "ck-progress-1" && second.progressToken == nil)

        guard case .progress(let entry, let progress) = table.receive(.notification(method: "notifications/progress", params: ["progressToken": "ck-progress-1", "progress": 2, "total": 4, "message": "half"])) else {
            Issue.record("progress was not matched")
            return
        }
        #expect(entry.waiter == "first" && progress == MCPProgress(progress: 2, total: 4, message: "half"))
        guard case .ignore = table.receive(.notification(method: "notifications/progress", params: ["progressToken": "other", "progress": 1])) else {
            Issue.record("a foreign token was matched")
            return
        }
        guard case .complete(let done, .success(let value)) = table.receive(.result(id: .number(2), result: ["tools": []])) else {
            Issue.record("the reply was not matched")
            return
        }
        #expect(done.waiter == "second" && value == ["tools": []] && table.count == 1)
        guard case .ignore = table.receive(.result(id: .number(2), result: [:])) else {
            Issue.record("a second reply was matched")
            return
        }
        #expect(table.remove(1)?.waiter == "first")
        guard case .ignore = table.receive(.error(id: .number(1), MCPRemoteError(code: -1, message: "late", data: nil))) else {
            Issue.record("a reply to a withdrawn request was matched")
            return
        }
        guard case .reply(let pong) = table.receive(.request(id: .string("p"), method: "ping", params: nil)),
              case .reply(let refusal) = table.receive(.request(id: .number(9), method: "sampling/createMessage", params: [:]))
        else {
            Issue.record("server requests were not answered")
            return
        }
        #expect(pong == .result(id: .string("p"), result: [:]))
        guard case .error(.number(9)?, let error) = refusal else {
            Issue.record("the refusal names another request")
            return
        }
        #expect(error.code == -32601)
        guard case .toolsChanged = table.receive(.notification(method: "notifications/tools/list_changed", params: nil)) else {
            Issue.record("a list change was not reported")
            return
        }
        _ = table.open(method: "a", wantsProgress: false, waiter: "x")
        _ = table.open(method: "b", wantsProgress: false, waiter: "y")
        #expect(table.drain().map(\.waiter) == ["x", "y"] && table.count == 0)
    }

    @Test func toolNamesArePrefixedSanitizedCutAndDeterministic() {
        let names = MCPToolNaming.agentToolNames(server: "files", tools: ["read", "admin.tools.list", "a b", "a_b", String(repeating: "x", count: 80)])
        #expect(names["read"] == "files__read")
        #expect(names["admin.tools.list"] == "files__admin_tools_list")
        // "a b" and "a_b" collide after sanitizing; "a b" sorts first and keeps the plain name.
        #expect(names["a b"] == "files__a_b")
        let hashed = names["a_b"] ?? ""
        #expect(hashed.hasPrefix("files__a_b_") && hashed.utf8.count == "files__a_b_".utf8.count + 8)
        let long = names[String(repeating: "x", count: 80)] ?? ""
        #expect(long.utf8.count == 64 && long.hasPrefix("files__xxx"))
        let reversed = MCPToolNaming.agentToolNames(server: "files", tools: ["a_b", "a b"])
        #expect(reversed["a_b"] == hashed && reversed["a b"] == "files__a_b")
    }

    @Test func schemaSubsetDropsOnlyWhatCannotBeEnforced() throws {
        let schema: JSONValue = [
            "type": "object", "required": ["code"],
            "properties": ["code": ["type": "string", "pattern": "^[A-Z]+$", "maxLength": 5, "format": "hostname"]],
        ]
        let subset = MCPSchemaSubset.enforceable(schema)
        #expect(subset.dropped.sorted() == ["/properties/code/format", "/properties/code/pattern"])
        #expect(subset.schema == ["type": "object", "required": ["code"], "properties": ["code": ["type": "string", "maxLength": 5]]])
        let plain: JSONValue = ["type": "object", "properties": ["a": ["type": "integer"]]]
        #expect(MCPSchemaSubset.enforceable(plain).schema == plain && MCPSchemaSubset.enforceable(plain).dropped.isEmpty)
        #expect(MCPSchemaSubset.enforceable(["type": "object", "required": 3]).schema == ["type": "object"])
    }

    @Test func stampsTheStatelessEnvelopeAndTheProgressToken() {
        let stamped = MCPClient.stamped(["name": "echo"], era: .stateless(version: "2026-07-28"), progressToken: "t")
        #expect(stamped["_meta"]?["io.modelcontextprotocol/protocolVersion"] == "2026-07-28")
        #expect(stamped["_meta"]?["io.modelcontextprotocol/clientCapabilities"] == .object(JSONObject()))
        #expect(stamped["_meta"]?["io.modelcontextprotocol/clientInfo"]?["name"] == "codexkit")
        #expect(stamped["_meta"]?["progressToken"] == "t")
        #expect(MCPClient.stamped(["name": "echo"], era: .handshake(version: "2025-11-25"), progressToken: nil) == ["name": "echo"])
    }
}

extension MCPProtocolTests {
    @Test func extensionKeywordsAreDroppedWithoutBeingReported() {
        let schema: JSONValue = ["type": "object", "properties": ["region": ["type": "string", "x-mcp-header": "Region"]]]
        let subset = MCPSchemaSubset.enforceable(schema)
        #expect(subset.dropped.isEmpty && subset.schema == ["type": "object", "properties": ["region": ["type": "string"]]])
    }

    @Test func parameterHeadersFollowTheRules() {
        let valid: JSONValue = ["type": "object", "properties": [
            "region": ["type": "string", "x-mcp-header": "Region"], "nested": ["type": "object", "properties": ["id": ["type": "integer", "x-mcp-header": "Id"]]],
        ]]
        let declared = MCPParameterHeaders.declared(in: valid)
        #expect(declared?.map(\.name).sorted() == ["Id", "Region"])
        #expect(MCPParameterHeaders.values(declared ?? [], arguments: ["region": "eu", "nested": ["id": 7]]) == ["Region": "eu", "Id": "7"])
        #expect(MCPParameterHeaders.values(declared ?? [], arguments: ["region": nil]) == [:])
        for invalid: JSONValue in [
            ["type": "object", "properties": ["amount": ["type": "number", "x-mcp-header": "Amount"]]],
            ["type": "object", "properties": ["a": ["type": "string", "x-mcp-header": ""]]],
            ["type": "object", "properties": ["a": ["type": "string", "x-mcp-header": "A B"]]],
            ["type": "object", "properties": ["a": ["type": "string", "x-mcp-header": "Dup"], "b": ["type": "string", "x-mcp-header": "dup"]]],
            ["type": "object", "anyOf": [["properties": ["a": ["type": "string", "x-mcp-header": "A"]]]]],
            ["type": "object", "x-mcp-header": "Root"],
        ] {
            #expect(MCPParameterHeaders.declared(in: invalid) == nil)
        }
        #expect(MCPHTTPLink.headerValue("eu-west") == "eu-west")
        #expect(MCPHTTPLink.headerValue("über") == "=?base64?w7xiZXI=?=")
        #expect(MCPHTTPLink.headerValue(" padded") == "=?base64?IHBhZGRlZA==?=")
    }
}

extension MCPProtocolTests {
    @Test func theCancellationFollowsTheRequestExactlyOnce() {
        // Withdrawn before it was written: it is never written, and nobody sends a cancellation.
        let early = MCPDelivery()
        #expect(early.withdraw(timedOut: false) == false)
        #expect(early.beginSending() == false)
        // Written, then withdrawn: the withdrawer sends the cancellation.
        let late = MCPDelivery()
        #expect(late.beginSending())
        #expect(late.markWritten() == false)
        #expect(late.withdraw(timedOut: true) == true && late.timedOut)
        // Withdrawn while being written: the writer sends it, after the request.
        let during = MCPDelivery()
        #expect(during.beginSending())
        #expect(during.withdraw(timedOut: false) == false)
        #expect(during.markWritten() == true)
    }

    @Test func argumentsThatMayBeSecretsAreRedactedButPathsAndOptionsAreNot() {
        #expect(MCPConnection.secretCandidates(["/usr/bin/server.py", "--verbose", "--token=sk-abcdef123456", "ghp_0123456789abcdef", "./relative/path"]) == [
            "sk-abcdef123456", "ghp_0123456789abcdef",
        ])
    }
}
