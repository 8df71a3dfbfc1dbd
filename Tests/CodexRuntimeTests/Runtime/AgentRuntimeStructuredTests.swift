import CodexCore
import CodexRuntime
import CodexSchema
import CodexTestSupport
import Foundation
import Testing

/// Accepted by the schema, refused by its own decoder: shows decoding runs after validation.
struct PickyDraft: AgentStructuredOutput {
    let subject: String

    static let responseFormat = AgentStructuredOutputFormat(name: "picky", schema: .object(properties: ["subject": .string()]))

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        subject = try container.decode(String.self, forKey: .subject)
        guard subject.count < 5 else { throw DecodingError.dataCorruptedError(forKey: .subject, in: container, debugDescription: "too long") }
    }

    enum CodingKeys: String, CodingKey { case subject }
}

/// A raw schema with a keyword outside the supported subset.
struct PatternDraft: AgentStructuredOutput {
    let code: String
    static let responseFormat = AgentStructuredOutputFormat(name: "pattern_draft", rawSchema: ["type": "object", "properties": ["code": ["type": "string", "pattern": "^[A-Z]+$"]]])
}

/// Keeps integers beyond Double's precision.
struct BigCounter: AgentStructuredOutput {
    let count: Int64
    static let responseFormat = AgentStructuredOutputFormat(name: "big_counter", schema: .object(properties: ["count": .integer]))
}

@Suite struct AgentRuntimeStructuredTests {
    private func reply(_ text: String, phase: AgentMessagePhase? = .finalAnswer) -> FixtureAgentBackend.Step {
        .event(.assistantMessageCompleted(AgentMessage(threadID: AgentThreadID(rawValue: ""), role: .assistant, text: text, phase: phase)))
    }

    private let valid = #"{"subject":"Delayed package","reply":"Sorry for the delay.","urgency":"high"}"#

    @Test func aValidOneShotReplyIsValidatedDecodedAndCommittedWithItsMetadata() async throws {
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([reply("Checking the order…", phase: .commentary), reply(valid), .complete()])])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        let result = try await runtime.sendWithSummary(Request(text: "Draft a response for the delayed package."), in: thread.id, response: ShippingReplyDraft.self)
        #expect(result.value == ShippingReplyDraft(subject: "Delayed package", reply: "Sorry for the delay.", urgency: "high"))
        let request = try #require(backend.requests.first)
        #expect(request.responseFormat == ShippingReplyDraft.responseFormat)
        #expect(request.responseContract == "Response contract\nReturn the final result serialized as `ShippingReplyDraft`.")
        let saved = try await history(store, thread.id).compactMap { item -> AgentMessage? in
            if case .message(let message) = item, message.role == .assistant { return message }
            return nil
        }
        #expect(saved.map(\.text) == ["Checking the order…", valid])
        #expect(saved[1].structuredOutput == AgentStructuredOutputMetadata(formatName: "shipping_reply_draft", payload: try JSONValue(parsing: valid)))
        #expect(saved[0].structuredOutput == nil)
        #expect(try await store.latestTurn(of: thread.id)?.status == .completed)
    }

    @Test(arguments: [
        (#"{"subject":"s","reply":"r","urgency":"urgent"}"#, "structured_output_invalid"),
        (#"{"subject":"s","reply":"r","urgency":"low","extra":1}"#, "structured_output_invalid"),
        (#"{"subject":"s","reply":"r"}"#, "structured_output_invalid"),
        (#"{"subject":"s","#, "structured_output_invalid"),
        ("Here is your draft!", "structured_output_invalid"),
    ])
    func anInvalidReplyFailsTheTurnAndCommitsNothing(text: String, code: String) async throws {
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([reply(text), .complete()])])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        let error = await #expect(throws: AgentRuntimeError.self) {
            _ = try await runtime.send(Request(text: "Draft"), in: thread.id, response: ShippingReplyDraft.self)
        }
        #expect(error?.code.rawValue == code)
        #expect(error.map { !String(describing: $0).contains("urgent") && !String(describing: $0).contains("Here is") } == true,
                "errors never carry model output")
        #expect(describe(try await history(store, thread.id)) == ["event turn_started", "user: Draft", "event turn_failed \(code)"])
        let turn = try #require(try await store.latestTurn(of: thread.id))
        #expect(turn.status == .failed)
    }

    @Test func aReplyTheSchemaAcceptsButTheTypeRefusesFailsWithDecodingFailed() async throws {
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([reply(#"{"subject":"far too long"}"#), .complete()])])
        let runtime = try makeRuntime(backend)
        let thread = try await runtime.createThread()
        let error = await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.send(Request(text: "x"), in: thread.id, response: PickyDraft.self) }
        #expect(error?.code == .structuredOutputDecodingFailed)
    }

    @Test func onlyCommentaryIsStructuredOutputMissing() async throws {
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([reply("thinking out loud", phase: .commentary), .complete()])])
        let runtime = try makeRuntime(backend)
        let thread = try await runtime.createThread()
        let error = await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.send(Request(text: "x"), in: thread.id, response: ShippingReplyDraft.self) }
        #expect(error?.code == .structuredOutputMissing)
    }

    @Test func aPayloadOverFourMiBIsRefused() async throws {
        let big = #"{"subject":""# + String(repeating: "a", count: 4 * 1024 * 1024) + #"","reply":"r","urgency":"low"}"#
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([reply(big), .complete()])])
        let runtime = try makeRuntime(backend)
        let thread = try await runtime.createThread()
        let error = await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.send(Request(text: "x"), in: thread.id, response: ShippingReplyDraft.self) }
        #expect(error?.code == .structuredOutputTooLarge)
    }

    @Test func anUnsupportedSchemaIsRefusedBeforeTheTurnStarts() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("{}")])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        let error = await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.send(Request(text: "x"), in: thread.id, response: PatternDraft.self) }
        #expect(error?.code == .unsupportedSchemaKeyword)
        let streamError = await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.stream(Request(text: "x"), in: thread.id, response: PatternDraft.self) }
        #expect(streamError?.code == .unsupportedSchemaKeyword)
        #expect(backend.requests.isEmpty)
        #expect(try await history(store, thread.id).isEmpty)
    }

    @Test func decodingKeepsIntegerPrecision() async throws {
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([reply(#"{"count":9007199254740993}"#), .complete()])])
        let runtime = try makeRuntime(backend)
        let thread = try await runtime.createThread()
        #expect(try await runtime.send(Request(text: "x"), in: thread.id, response: BigCounter.self).count == 9_007_199_254_740_993)
    }

    @Test func backendCommittedSnapshotsAreCheckedLikeOurOwn() async throws {
        let bad = AgentStructuredOutputSnapshot(formatName: "shipping_reply_draft", value: ["subject": "s", "reply": "r", "urgency": "later"], isCommitted: true)
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.event(.structuredOutputCommitted(bad)), .complete()])])
        let runtime = try makeRuntime(backend)
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "x"), in: thread.id, response: ShippingReplyDraft.self))
        #expect((error as? AgentRuntimeError)?.code == .structuredOutputInvalid)
        #expect(events.map(name) == ["turnStarted", "turnFailed(structured_output_invalid)"])
    }
}

/// One-shot replies validated against a format known only at run time.
@Suite struct RunTimeFormatTests {
    static let format = AgentStructuredOutputFormat(name: "verdict", rawSchema: [
        "type": "object", "properties": ["ok": ["type": "boolean"]], "required": ["ok"], "additionalProperties": false,
    ])

    @Test func aValidReplyIsReturnedAsItsJSONValueAndTheFormatIsSent() async throws {
        let backend = FixtureAgentBackend(turns: [.reply(#"{"ok":true}"#)])
        let runtime = try makeRuntime(backend)
        let thread = try await runtime.createThread()
        let result = try await runtime.sendWithSummary(Request(text: "Decide."), in: thread.id, format: Self.format)
        #expect(result.value == ["ok": true])
        #expect(backend.requests.first?.responseFormat == Self.format)
    }

    @Test func anInvalidReplyFailsTheTurnAndAnUnusableSchemaFailsBeforeIt() async throws {
        let backend = FixtureAgentBackend(turns: [.reply(#"{"ok":"yes"}"#)])
        let runtime = try makeRuntime(backend)
        let thread = try await runtime.createThread()
        let invalid = await #expect(throws: AgentRuntimeError.self) {
            _ = try await runtime.sendWithSummary(Request(text: "Decide."), in: thread.id, format: Self.format)
        }
        #expect(invalid?.code == .structuredOutputInvalid)
        let unusable = AgentStructuredOutputFormat(name: "bad", rawSchema: ["type": "object", "patternProperties": ["^x": ["type": "string"]]])
        await #expect(throws: (any Error).self) { _ = try await runtime.start(Request(text: "x"), in: thread.id, format: unusable) }
        #expect(backend.requests.count == 1)
    }
}
