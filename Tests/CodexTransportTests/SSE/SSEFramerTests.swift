import CodexCore
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

@Suite struct SSEFramerTests {
    private static func frame(_ chunks: [[UInt8]], maximum: Int = SSEFramer.defaultMaximumEventBytes) throws -> [SSEEvent] {
        var framer = SSEFramer(maximumEventBytes: maximum)
        var events: [SSEEvent] = []
        for chunk in chunks { try framer.feed(chunk, into: &events) }
        _ = framer.finish()
        return events
    }

    private func frame(_ chunks: [[UInt8]], maximum: Int = SSEFramer.defaultMaximumEventBytes) throws -> [SSEEvent] {
        try Self.frame(chunks, maximum: maximum)
    }

    private func frame(_ text: String) throws -> [SSEEvent] {
        try Self.frame([Array(text.utf8)])
    }

    @Test func recordedStreamsMatchTheIndependentSplit() throws {
        #expect(StreamFixtures.names.count == 12)
        for name in StreamFixtures.names {
            let events = try frame([try StreamFixtures.bytes(name)])
            let expected = try StreamFixtures.expected(name)
            #expect(events.count == expected.count, "\(name)")
            for (event, want) in zip(events, expected) {
                #expect(event.type == want.event, "\(name)")
                let payload = try JSONSerialization.jsonObject(with: Data(event.dataBytes)) as? [String: Any]
                #expect(payload?["type"] as? String == want.type, "\(name)")
                #expect(payload?["sequence_number"] as? Int == want.sequence_number, "\(name)")
            }
        }
    }

    @Test func aRecordedStreamWithCRLFAndCRLineEndsFramesLikeTheLFOriginal() async throws {
        let original = try StreamFixtures.bytes("dotnet-FunctionCallStreamingWorks")
        let expected = try Self.frame([original])
        #expect(expected.count > 10)
        let text = String(decoding: original, as: UTF8.self)
        for ending in ["\r\n", "\r"] {
            let converted = Array(text.replacingOccurrences(of: "\n", with: ending).utf8)
            #expect(try Self.frame([converted]) == expected)
            let firstDifferentSplit = try await runOffCooperativePool { try Self.firstSplitThatDiffers(converted, from: expected) }
            #expect(firstDifferentSplit == nil, "\(ending.debugDescription)")
        }
    }

    @Test(arguments: StreamFixtures.names)
    func everySplitPointAndByteAtATimeGiveTheSameEvents(name: String) async throws {
        let bytes = try StreamFixtures.bytes(name)
        let whole = try Self.frame([bytes])
        #expect(!whole.isEmpty)
        #expect(try Self.frame(bytes.map { [$0] }) == whole)
        let firstDifferentSplit = try await runOffCooperativePool { try Self.firstSplitThatDiffers(bytes, from: whole) }
        #expect(firstDifferentSplit == nil, "\(name)")
    }

    /// Frames `bytes` cut in two at every offset and returns the first offset whose events differ from
    /// `expected`, or `nil` when none does.
    private static func firstSplitThatDiffers(_ bytes: [UInt8], from expected: [SSEEvent]) throws -> Int? {
        for split in 0...bytes.count where try frame([Array(bytes[..<split]), Array(bytes[split...])]) != expected {
            return split
        }
        return nil
    }

    /// Events handed over one by one lend the framer's reused data buffer: each sees exactly its own
    /// bytes, whether the one before it was longer, shorter or past the size the framer keeps.
    @Test func eventsHandedOverOneByOneSeeExactlyTheirOwnData() throws {
        let large = String(repeating: "L", count: SSEFramer.keptDataCapacity + 10)
        let datas = ["abcdefgh", "xy", "two\nlines", large, "z", large, "tail"]
        let stream = datas.map { data in data.split(separator: "\n", omittingEmptySubsequences: false).map { "data: \($0)\n" }.joined() + "\n" }.joined()
        var framer = SSEFramer()
        var seen: [(type: String, data: String, offset: Int?)] = []
        let bytes = Array(stream.utf8)
        for start in stride(from: 0, to: bytes.count, by: 7) {
            let chunk = bytes[start..<min(bytes.count, start + 7)]
            try framer.feed(chunk) { type, data, _, _, offset in seen.append((type, String(decoding: data, as: UTF8.self), offset)) }
        }
        #expect(seen.map(\.data) == datas)
        #expect(seen.allSatisfy { $0.type == "message" })
        #expect(seen.first?.offset == 0)
        // The same events through the collecting call, which copies each out of the buffer.
        var collected: [SSEEvent] = []
        var second = SSEFramer()
        try second.feed(Array(stream.utf8), into: &collected)
        #expect(collected.map { String(decoding: $0.dataBytes, as: UTF8.self) } == datas)
    }

    /// An error thrown by the receiver of events stops the chunk there and comes back unchanged; the
    /// rest of the chunk is dropped.
    @Test func anErrorFromTheReceiverStopsTheChunkAndIsRethrown() throws {
        var framer = SSEFramer()
        var seen: [String] = []
        let refusal = AgentRuntimeError(code: .invalidRequest, message: "refused")
        #expect(throws: refusal) {
            try framer.feed(Array("data: 1\n\ndata: 2\n\ndata: 3\n\n".utf8)) { (_, data, _, _, _) throws(AgentRuntimeError) in
                seen.append(String(decoding: data, as: UTF8.self))
                if seen.count == 2 { throw refusal }
            }
        }
        #expect(seen == ["1", "2"])
        #expect(framer.finish() == false)
    }

    @Test func lineEndingsLFCRAndCRLFIncludingACRLFSplitAcrossChunks() throws {
        let expected = [SSEEvent(type: "a", data: "1"), SSEEvent(type: "b", data: "2"), SSEEvent(type: "c", data: "3")]
        #expect(try frame("event: a\ndata: 1\n\nevent: b\rdata: 2\r\revent: c\r\ndata: 3\r\n\r\n") == expected)
        let text = Array("data: x\r\n\r\ndata: y\r\n\r\n".utf8)
        for split in 0...text.count {
            #expect(try frame([Array(text[..<split]), Array(text[split...])]).map(\.data) == ["x", "y"])
        }
        // A multi-line event with CRLF ends, split anywhere: the LF after a chunk-final CR is not a blank line.
        let multi = Array("event: a\r\ndata: 1\r\ndata: 2\r\n\r\nevent: b\rdata: 3\r\r".utf8)
        for split in 0...multi.count {
            #expect(try frame([Array(multi[..<split]), Array(multi[split...])]) == [SSEEvent(type: "a", data: "1\n2"), SSEEvent(type: "b", data: "3")])
        }
        #expect(try frame(multi.map { [$0] }) == [SSEEvent(type: "a", data: "1\n2"), SSEEvent(type: "b", data: "3")])
        // A lone CR at the end of a chunk followed by a non-LF byte still ends the line.
        #expect(try frame([Array("data: x\r".utf8), Array("\rdata: y\n\n".utf8)]).map(\.data) == ["x", "y"])
    }

    @Test func byteOrderMarkIsSkippedOnceEvenWhenSplit() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("data: x\n\n".utf8)
        #expect(try frame([bytes]).map(\.data) == ["x"])
        #expect(try frame(bytes.map { [$0] }).map(\.data) == ["x"])
        #expect(try frame([[0xEF, 0xBB, 0xBF] + bytes]).count == 0) // a second BOM belongs to a field name
    }

    @Test func fieldsFollowTheStandard() throws {
        let events = try frame(": comment\ndata\ndata:first\ndata:  second\nid: 7\nretry: 1500\nunknown: x\n\n: tail\ndata: z\nretry: soon\n\n")
        #expect(events.count == 2)
        #expect(events[0].type == "message")
        #expect(events[0].data == "\nfirst\n second")
        #expect(events[0].lastEventID == "7")
        #expect(events[0].retry == 1500)
        #expect(events[1].lastEventID == "7")
        #expect(events[1].retry == 1500)
        #expect(try frame("id: a\u{0}b\ndata: q\n\n")[0].lastEventID == nil)
        #expect(try frame("event: only\n\n").isEmpty)
        #expect(try frame("data: unterminated").isEmpty)
    }

    @Test func utf8SplitAcrossChunksDecodesPerCompleteLine() throws {
        let bytes = Array("data: héllo 😀 мир\n\n".utf8)
        for split in 0...bytes.count {
            #expect(try frame([Array(bytes[..<split]), Array(bytes[split...])]).map(\.data) == ["héllo 😀 мир"])
        }
        #expect(try frame([[0x64, 0x61, 0x74, 0x61, 0x3A, 0xFF, 0x0A, 0x0A]]).map(\.data) == ["\u{FFFD}"])
    }

    @Test func oversizedEventsAreATypedErrorWithTheByteOffset() throws {
        let error = #expect(throws: AgentRuntimeError.self) {
            try frame([Array("data: 12345\n".utf8), Array("data: 67890\n\n".utf8)], maximum: 10)
        }
        #expect(error?.code == .sseEventTooLarge)
        #expect(error?.byteOffset == 23)
        let longLine = #expect(throws: AgentRuntimeError.self) {
            try frame([Array("data: ".utf8), [UInt8](repeating: 0x61, count: 50)], maximum: 20)
        }
        #expect(longLine?.code == .sseEventTooLarge)
        #expect(longLine?.byteOffset == 56)
        // Comments do not count: a long keep-alive stream is fine.
        #expect(try frame([Array(String(repeating: ": keepalive\n", count: 100).utf8) + Array("data: ok\n\n".utf8)], maximum: 10).map(\.data) == ["ok"])
    }

    @Test func manySmallChunksStayLinear() throws {
        let event = Array("event: response.output_text.delta\ndata: {\"delta\":\"x\"}\n\n".utf8)
        var stream: [UInt8] = []
        for _ in 0..<5_000 { stream += event }
        var framer = SSEFramer()
        var events: [SSEEvent] = []
        var offset = 0
        while offset < stream.count {
            let end = min(offset + 7, stream.count)
            try framer.feed(stream[offset..<end], into: &events)
            offset = end
        }
        #expect(events.count == 5_000)
        #expect(framer.byteCount == stream.count)
        let discarded = framer.finish()
        #expect(!discarded)
    }
}
