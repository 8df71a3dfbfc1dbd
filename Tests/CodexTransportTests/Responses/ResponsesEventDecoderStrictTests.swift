import CodexCore
import CodexKitTesting
import CodexSchema
import CodexTransport
import Foundation
import Testing

/// A field of the wrong type or out of range in a known event is a typed error with the event's byte
/// offset, never a silent default; nothing may follow the end of a response.
@Suite struct ResponsesEventDecoderStrictTests {
    /// Each recorded hostile stream (`Fixtures/malformed/`) and what the error must say.
    static let cases: [(name: String, message: String)] = [
        ("negative-sequence-number", "response.output_text.delta: `sequence_number` must not be negative"),
        ("huge-output-index", "response.output_text.delta: `output_index` is not an integer in range"),
        ("overflowing-sequence-number", "response.output_text.delta: `sequence_number` is not an integer in range"),
        ("missing-delta", "response.output_text.delta has no `delta`"),
        ("numeric-delta", "response.output_text.delta: `delta` must be a string"),
        ("completed-without-response", "response.completed has no `response` object"),
        ("event-after-completed", "an event arrived after response.completed, which ends the response"),
        ("fractional-content-index", "response.output_text.delta: `content_index` is not an integer in range"),
        ("numeric-item-id", "response.output_text.delta: `item_id` must be a string"),
        ("negative-usage", "response.completed: `usage.input_tokens` must not be negative"),
        ("item-without-type", "response.output_item.added has no `item.type`"),
        ("function-call-without-call-id", "response.output_item.done has no `item.call_id`"),
        ("string-type", "a stream event's `type` must be a string"),
    ]

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try StreamFixtures.raw("malformed/\(name).sse"))
    }

    /// Where the event marked `"x_case":"bad"` starts.
    static func badEventOffset(_ bytes: [UInt8]) -> Int? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let marker = text.range(of: #""x_case":"bad""#) else { return nil }
        guard let lineStart = text[..<marker.lowerBound].range(of: "\ndata: ", options: .backwards) else { return 0 }
        return text.utf8.distance(from: text.startIndex, to: lineStart.lowerBound) + 1
    }

    @Test(arguments: cases.map(\.name))
    func eachHostileStreamFailsAtItsBadEventWithATypedError(name: String) throws {
        let bytes = try Self.bytes(name)
        let expected = try #require(Self.cases.first { $0.name == name }?.message)
        var framer = SSEFramer()
        var events: [SSEEvent] = []
        try framer.feed(bytes, into: &events)
        var decoder = ResponsesEventDecoder()
        var decoded: [String] = []
        let error = #expect(throws: AgentRuntimeError.self) {
            for event in events { if let typed = try decoder.decode(event) { decoded.append(typed.typeName) } }
        }
        #expect(error?.code == .responsesEventMalformed)
        #expect(error?.message == expected)
        #expect(error?.byteOffset == Self.badEventOffset(bytes), "\(name)")
        // Everything before the bad event decoded.
        #expect(decoded.first == "response.created")
    }

    @Test func eventsThatOmitIndicesAndSequenceNumbersStillDecode() throws {
        let stream = """
            data: {"type":"response.created","response":{"id":"r"}}

            data: {"type":"response.output_item.done","item":{"type":"message","id":"m","content":[{"type":"output_text","text":"hi"}]}}

            data: {"type":"response.completed","response":{"id":"r","incomplete_details":null,"error":null}}


            """
        var framer = SSEFramer()
        var events: [SSEEvent] = []
        try framer.feed(Array(stream.utf8), into: &events)
        var decoder = ResponsesEventDecoder()
        let decoded = try events.compactMap { try decoder.decode($0) }
        #expect(decoded.map(\.typeName) == ["response.created", "response.output_item.done", "response.completed"])
        #expect(decoded.map(\.sequenceNumber) == [nil, nil, nil])
        if case .outputItemDone(let index, .message(let message)) = decoded[1].kind {
            #expect(index == 0)
            #expect(message.text == "hi")
        } else {
            Issue.record("not a message")
        }
    }

    /// A terminal event whose sequence number is not above the highest seen is a duplicate like any
    /// other: dropped whole, so it ends nothing (it once ended the response while being dropped, so the
    /// stream was both "without response.completed" and "after response.completed").
    @Test func aDuplicateTerminalEventIsDroppedAndEndsNothing() throws {
        let stream = """
            data: {"type":"response.created","sequence_number":0,"response":{"id":"r"}}

            data: {"type":"response.output_text.delta","sequence_number":7,"item_id":"m","delta":"a"}

            data: {"type":"response.completed","sequence_number":3,"response":{"id":"r"}}

            data: {"type":"response.output_text.delta","sequence_number":8,"item_id":"m","delta":"b"}

            data: {"type":"response.completed","sequence_number":9,"response":{"id":"r"}}


            """
        var framer = SSEFramer()
        var events: [SSEEvent] = []
        try framer.feed(Array(stream.utf8), into: &events)
        var decoder = ResponsesEventDecoder()
        var decoded: [String] = []
        for event in events {
            if let typed = try decoder.decode(event) { decoded.append("\(typed.typeName)#\(typed.sequenceNumber ?? -1)") }
            if decoded.count == 2 { #expect(!decoder.hasEnded) }
        }
        #expect(decoded == ["response.created#0", "response.output_text.delta#7", "response.output_text.delta#8", "response.completed#9"])
        #expect(decoder.droppedDuplicates == 1)
        #expect(decoder.hasEnded)
    }

    @Test func aStreamDeliversTheEventsBeforeABadOneThenFailsWithoutARetry() async throws {
        let bytes = try Self.bytes("numeric-item-id")
        let http = ScriptedHTTPClient(replies: [.init(chunks: [bytes]), .init(chunks: [bytes])])
        var received: [String] = []
        let error = await #expect(throws: AgentRuntimeError.self) {
            for try await event in ResponsesClient.testing(http).stream(ResponsesRequest(model: "m")) { received.append(event.typeName) }
        }
        #expect(received == ["response.created"])
        #expect(error?.code == .responsesEventMalformed)
        #expect(error?.byteOffset == Self.badEventOffset(bytes))
        #expect(http.requests.count == 1, "a malformed stream is not retried")
    }

    @Test func aStreamStopsReadingAtResponseCompleted() async throws {
        // The chunk holds the end of the response and then garbage: the garbage is never decoded.
        let bytes = try Self.bytes("event-after-completed") + Array("data: {not json\n\n".utf8)
        let http = ScriptedHTTPClient(replies: [.init(chunks: [bytes])])
        var received: [String] = []
        for try await event in ResponsesClient.testing(http).stream(ResponsesRequest(model: "m")) { received.append(event.typeName) }
        #expect(received == ["response.created", "response.output_text.delta", "response.completed"])
    }
}
