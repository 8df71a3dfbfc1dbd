import CodexCore
import CodexKitTesting
import CodexSchema
import CodexTransport
import Foundation
import Testing

@Suite struct ResponsesEventDecoderTests {
    static func decode(_ name: String) throws -> [ResponsesStreamEvent] {
        var framer = SSEFramer()
        var sse: [SSEEvent] = []
        try framer.feed(try StreamFixtures.bytes(name), into: &sse)
        var decoder = ResponsesEventDecoder(wallClock: ManualWallClock(Date(timeIntervalSince1970: 1_000)))
        return try sse.compactMap { try decoder.decode($0) }
    }

    @Test(arguments: StreamFixtures.names)
    func everyRecordedStreamDecodesToTheExpectedSequence(name: String) throws {
        let events = try Self.decode(name)
        let expected = try StreamFixtures.expected(name)
        #expect(events.map(\.typeName) == expected.compactMap(\.type), "\(name)")
        #expect(events.map(\.sequenceNumber) == expected.map(\.sequence_number), "\(name)")
        #expect(!events.contains { if case .unknown = $0.kind { true } else { false } }, "\(name) has unmodelled events")
    }

    @Test func messagesCarryTheirPhase() throws {
        let phases = try Self.decode("vercel-phase").compactMap { event -> AgentMessagePhase? in
            guard case .outputItemDone(_, .message(let message)) = event.kind else { return nil }
            return message.phase
        }
        #expect(phases == [.commentary, .finalAnswer])
    }

    @Test func reasoningFunctionCallsAndEncryptedContentAreDecoded() throws {
        let events = try Self.decode("vercel-reasoning-encrypted-content-1")
        let reasoning = events.compactMap { event -> ResponsesOutputItem.Reasoning? in
            guard case .outputItemDone(_, .reasoning(let item)) = event.kind else { return nil }
            return item
        }
        #expect(reasoning.count == 1)
        #expect(reasoning.first?.encryptedContent?.hasPrefix("gAAAA") == true)
        #expect(reasoning.first?.summary.isEmpty == false)
        let summaryDeltas = events.filter { if case .reasoningSummaryTextDelta = $0.kind { true } else { false } }
        #expect(summaryDeltas.count > 10)
        let calls = events.compactMap { event -> ResponsesOutputItem.FunctionCall? in
            guard case .outputItemDone(_, .functionCall(let call)) = event.kind else { return nil }
            return call
        }
        #expect(calls.count == 1)
        #expect(calls.first?.callID.hasPrefix("call_") == true)
        #expect((try? JSONValue(parsing: calls.first?.arguments ?? "")) != nil)
    }

    @Test func functionCallArgumentsStreamAndComplete() throws {
        let events = try Self.decode("dotnet-FunctionCallStreamingWorks")
        let deltas = events.compactMap { event -> String? in
            guard case .functionCallArgumentsDelta(_, _, let delta) = event.kind else { return nil }
            return delta
        }
        let done = events.compactMap { event -> String? in
            guard case .functionCallArgumentsDone(_, _, let arguments) = event.kind else { return nil }
            return arguments
        }
        #expect(deltas.count == 8)
        #expect(done == [deltas.joined()])
    }

    @Test func imageGenerationAndWebSearchAreDecoded() throws {
        let images = try Self.decode("vercel-image-generation-tool").compactMap { event -> ResponsesOutputItem.ImageGeneration? in
            guard case .outputItemDone(_, .imageGenerationCall(let image)) = event.kind else { return nil }
            return image
        }
        #expect(images.count == 1)
        #expect(images.first?.resultBase64?.isEmpty == false)
        #expect(images.first?.outputFormat == "webp")
        let statuses = try Self.decode("dotnet-WebSearchCallStreaming").compactMap { event -> String? in
            guard case .webSearchCall(_, _, let status) = event.kind else { return nil }
            return status
        }
        #expect(statuses == ["in_progress", "searching", "completed"])
    }

    @Test func errorEventsKeepProviderDetails() throws {
        let events = try Self.decode("vercel-error")
        let errors = events.compactMap { event -> String? in
            guard case .error(let code, _, _, _) = event.kind else { return nil }
            return code
        }
        #expect(errors == ["insufficient_quota"])
        guard case .failed(let info) = events.last?.kind else {
            Issue.record("no failure")
            return
        }
        #expect(info.errorCode == "insufficient_quota")
        #expect(info.status == "failed")
    }

    @Test func rateLimitEventsBecomeSnapshots() throws {
        let json = #"{"type":"codex.rate_limits","plan_type":"plus","rate_limits":{"allowed":true,"limit_reached":false,"primary":{"used_percent":42,"window_minutes":60,"reset_at":1700000000},"secondary":{"used_percent":"bad","window_minutes":10080,"reset_after_seconds":120}},"credits":{"has_credits":true,"unlimited":false,"balance":"123"},"metered_limit_name":"Codex-Other","additional_rate_limits":{"bengalfox":{"primary":{"used_percent":5}}}}"#
        var decoder = ResponsesEventDecoder(wallClock: ManualWallClock(Date(timeIntervalSince1970: 1_699_990_000)))
        let event = try #require(try decoder.decode(SSEEvent(type: "codex.rate_limits", data: json)))
        guard case .rateLimits(let snapshots) = event.kind else {
            Issue.record("not rate limits")
            return
        }
        #expect(snapshots == [
            AgentRateLimitSnapshot(
                limitID: "codex_other",
                primary: .init(usedPercent: 42, windowDurationMinutes: 60, resetsAt: Date(timeIntervalSince1970: 1_700_000_000)),
                secondary: .init(usedPercent: 0, windowDurationMinutes: 10_080, resetsAt: Date(timeIntervalSince1970: 1_699_990_120)),
                credits: .init(hasCredits: true, unlimited: false, balance: "123")
            ),
            AgentRateLimitSnapshot(limitID: "bengalfox", primary: .init(usedPercent: 5)),
        ])
    }

    @Test func dataThatIsNotAJSONObjectIsATypedError() {
        var decoder = ResponsesEventDecoder()
        for data in ["[1]", "{", "\"x\""] {
            let error = #expect(throws: AgentRuntimeError.self) { try decoder.decode(SSEEvent(type: "x", data: data)) }
            #expect(error?.code == .responsesEventMalformed)
        }
    }
}
