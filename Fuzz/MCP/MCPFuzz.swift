// libFuzzer target `mcp`: the MCP client's message path in CodexRuntime (MCPLineFramer, MCPMessage,
// MCPRequestTable, and the readers of tools/list entries and tools/call results). The harness is
// compiled together with the CodexRuntime sources, so the internal types are called directly.
//
// Input: bytes a stdio server might write. They are framed whole, then again in chunks of 1 to 64 bytes
// (sizes from the input), with a 4 KiB line limit; each line is decoded with the same limit.
//
// Oracle: nothing traps; every framing or decoding failure is an `MCPError` coded
// `mcp_message_too_large` or `mcp_malformed_message`; the chunked framing yields exactly the whole
// framing's lines and failure (split invariance); every decoded message encodes to one line without a
// newline that decodes to the same message; the request table never matches a reply twice, and reading
// any result as a tool list entry or a tool result fails, if at all, with `mcp_protocol_violation`.
import CodexCore
import CodexSchema
import Foundation

private let lineLimit = 4_096

private func frame(_ input: [UInt8], sizes: (Int) -> Int) -> (lines: [[UInt8]], failure: String?) {
    var framer = MCPLineFramer(maximumLineBytes: lineLimit)
    var lines: [[UInt8]] = []
    var start = 0
    var call = 0
    while start < input.count {
        let end = min(input.count, start + sizes(call))
        call += 1
        do {
            lines += try framer.append(input[start..<end])
        } catch {
            return (lines, error.code.rawValue)
        }
        start = end
    }
    if let last = framer.finish() { lines.append(last) }
    return (lines, nil)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMCP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let sizes = input.prefix(8).map { Int($0 % 64) + 1 }
    let whole = frame(input) { _ in input.count }
    let chunked = frame(input) { sizes.isEmpty ? 1 : sizes[$0 % sizes.count] }
    check(whole.failure == chunked.failure, "the failure depends on the chunking")
    if whole.failure == nil { check(whole.lines == chunked.lines, "the lines depend on the chunking") }
    if let failure = whole.failure { check(failure == "mcp_message_too_large", "framing failed with \(failure)") }

    var table = MCPRequestTable<Int>()
    for index in 0..<4 { _ = table.open(method: "m\(index)", wantsProgress: index % 2 == 0, waiter: index) }
    var completed: Set<Int64> = []
    for line in whole.lines {
        let messages: [MCPMessage]
        do {
            messages = try MCPMessage.decode(line, maximumBytes: lineLimit)
        } catch {
            check(error.code == .malformedMessage || error.code == .messageTooLarge, "decoding failed with \(error.code.rawValue)")
            continue
        }
        for message in messages {
            let encoded = message.encoded()
            check(!encoded.contains(UInt8(ascii: "\n")), "an encoded message contains a newline")
            let again = try? MCPMessage.decode(encoded, maximumBytes: Int.max)
            check(again == [message], "a message does not survive encoding")
            if case .complete(let entry, _) = table.receive(message) {
                check(completed.insert(entry.id).inserted, "a request was completed twice")
            }
            if case .result(_, let result) = message {
                readResult(result)
                if case .array(let tools)? = result["tools"] { for tool in tools.prefix(16) { readTool(tool) } }
            }
        }
    }
    return 0
}

private func readResult(_ value: JSONValue) {
    do {
        _ = try MCPToolResult(value)
    } catch {
        check(error.code == .protocolViolation, "a tool result failed with \(error.code.rawValue)")
    }
}

private func readTool(_ value: JSONValue) {
    do {
        _ = try MCPTool(value)
    } catch {
        check(error.code == .protocolViolation, "a tool entry failed with \(error.code.rawValue)")
    }
}

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        FileHandle.standardError.write(Data("mcp oracle failed: \(message())\n".utf8))
        abort()
    }
}
