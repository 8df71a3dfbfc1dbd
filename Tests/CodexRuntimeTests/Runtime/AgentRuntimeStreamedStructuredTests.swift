import CodexCore
import CodexRuntime
import CodexSchema
import CodexTestSupport
import Foundation
import Testing

/// A draft whose fields may still be missing: partial snapshots decode into it.
struct DraftProgress: AgentStructuredOutput {
    let subject: String?
    let reply: String?
    let urgency: String?

    static let responseFormat = AgentStructuredOutputFormat(
        name: "shipping_reply_draft",
        schema: .object(
            properties: ["subject": .string(), "reply": .string(), "urgency": .string(enum: ["low", "medium", "high"])],
            required: ["subject", "reply", "urgency"],
            additionalProperties: false
        )
    )
}

@Suite struct AgentRuntimeStreamedStructuredTests {
    static let payload = #"{"subject":"Delayed package","reply":"We are sorry: your parcel is on its way and arrives Tuesday.","urgency":"high"}"#
    static let text = "Here is the draft.\n<codexkit_structured_output>\n\(payload)\n</codexkit_structured_output>\nAnything else?"

    private func framedTurn(_ text: String = Self.text, deltaLength: Int = 7) -> FixtureAgentBackend.Turn {
        var steps: [FixtureAgentBackend.Step] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            steps.append(.event(.assistantMessageDelta(String(rest.prefix(deltaLength)))))
            rest = rest.dropFirst(deltaLength)
        }
        steps.append(.event(.assistantMessageCompleted(AgentMessage(threadID: AgentThreadID(rawValue: ""), role: .assistant, text: text, phase: .finalAnswer))))
        steps.append(.complete())
        return FixtureAgentBackend.Turn(steps)
    }

    @Test(arguments: [1, 7, 64, 4096])
    func framingIsStrippedSnapshotsAreValidAndTheCommitIsPersistedWithTheMessage(deltaLength: Int) async throws {
        let backend = FixtureAgentBackend(turns: [framedTurn(deltaLength: deltaLength)])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "Draft a response for the delayed package."), in: thread.id, response: DraftProgress.self, options: .init(required: true))
        let (events, error) = await collect(stream)
        #expect(error == nil)
        var visible = ""
        var partials: [JSONValue] = []
        var commits: [JSONValue] = []
        var committedMessages: [AgentMessage] = []
        for event in events {
            switch event {
            case .assistantMessageDelta(_, _, let delta): visible += delta
            case .structuredOutputPartial(let snapshot): partials.append(snapshot.value)
            case .structuredOutputCommitted(let snapshot): commits.append(snapshot.value)
            case .messageCommitted(let message): committedMessages.append(message)
            default: break
            }
        }
        #expect(visible == "Here is the draft.\nAnything else?")
        let expected = try JSONValue(parsing: Self.payload)
        #expect(commits == [expected])
        let validator = try DraftProgress.responseFormat.validator()
        for partial in partials { #expect(try validator.isValid(partial, mode: .partial)) }
        if deltaLength < 64 { #expect(!partials.isEmpty, "small deltas produce partial snapshots") }
        #expect(committedMessages.map(\.text) == ["Here is the draft.\nAnything else?"])
        #expect(committedMessages.first?.structuredOutput == AgentStructuredOutputMetadata(formatName: "shipping_reply_draft", payload: expected))
        let request = try #require(backend.requests.first)
        #expect(request.responseFormat == nil, "streamed replies are framed, not text.format")
        #expect(request.responseContract?.hasPrefix("Response contract") == true)
        #expect(request.responseContract?.contains("<codexkit_structured_output>") == true)
        let saved = try await history(store, thread.id).compactMap { item -> AgentMessage? in
            if case .message(let message) = item, message.role == .assistant { return message }
            return nil
        }
        #expect(saved.map(\.text) == ["Here is the draft.\nAnything else?"])
        #expect(saved.first?.structuredOutput?.payload == expected)
    }

    @Test func aRequiredPayloadThatNeverArrivesFailsTheTurnAndAnOptionalOneDoesNot() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("Only prose today.")])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        let (_, required) = await collect(try await runtime.stream(Request(text: "x"), in: thread.id, response: DraftProgress.self))
        #expect((required as? AgentRuntimeError)?.code == .structuredOutputMissing)
        #expect(try await store.latestTurn(of: thread.id)?.status == .failed)
        let (events, optional) = await collect(try await runtime.stream(Request(text: "x"), in: thread.id, response: DraftProgress.self, options: .init(required: false)))
        #expect(optional == nil)
        #expect(events.contains { if case .structuredOutputCommitted = $0 { return true } else { return false } } == false)
        #expect(try await store.latestTurn(of: thread.id)?.status == .completed)
    }

    @Test func anInvalidFramedPayloadFailsTheTurnWithoutCommittingTheMessage() async throws {
        let bad = "Draft:\n<codexkit_structured_output>\n{\"subject\":\"s\",\"reply\":\"r\",\"urgency\":\"whenever\"}\n</codexkit_structured_output>"
        let backend = FixtureAgentBackend(turns: [framedTurn(bad)])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "x"), in: thread.id, response: DraftProgress.self))
        #expect((error as? AgentRuntimeError)?.code == .structuredOutputInvalid)
        #expect(!events.contains { if case .structuredOutputCommitted = $0 { return true } else { return false } })
        #expect(describe(try await history(store, thread.id)).filter { $0.hasPrefix("assistant") }.isEmpty)
    }

    @Test func aCommitThatDoesNotDecodeIntoTheTypeIsNotEmitted() async throws {
        let picky = "<codexkit_structured_output>{\"subject\":\"far too long\"}</codexkit_structured_output>"
        let backend = FixtureAgentBackend(turns: [framedTurn(picky)])
        let runtime = try makeRuntime(backend)
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "x"), in: thread.id, response: PickyDraft.self))
        #expect((error as? AgentRuntimeError)?.code == .structuredOutputDecodingFailed)
        #expect(!events.contains { if case .structuredOutputCommitted = $0 { return true } else { return false } })
    }
}

@Suite struct AgentRuntimePartialDecodingTests {
    @Test func partialsThatDoNotDecodeIntoTheTypeAreHeldBack() async throws {
        let text = "Draft:\n<codexkit_structured_output>\n" + AgentRuntimeStreamedStructuredTests.payload + "\n</codexkit_structured_output>"
        var steps: [FixtureAgentBackend.Step] = text.map { .event(.assistantMessageDelta(String($0))) }
        steps.append(.complete())
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn(steps)])
        let runtime = try makeRuntime(backend)
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "x"), in: thread.id, response: ShippingReplyDraft.self))
        #expect(error == nil)
        let partials = events.compactMap { event -> JSONValue? in
            if case .structuredOutputPartial(let snapshot) = event { return snapshot.value }
            return nil
        }
        // Every emitted partial decodes into the (all-required) type, so it has all three members.
        for partial in partials { #expect(partial.objectValue?.keys.sorted() == ["reply", "subject", "urgency"]) }
        #expect(events.filter { if case .structuredOutputCommitted = $0 { return true } else { return false } }.count == 1)
        // The same stream into the all-optional type emits the earlier, smaller snapshots too.
        let (optionalEvents, _) = await collect(try await runtime.stream(Request(text: "y"), in: thread.id, response: DraftProgress.self))
        let optionalPartials = optionalEvents.filter { if case .structuredOutputPartial = $0 { return true } else { return false } }
        #expect(optionalPartials.count > partials.count)
    }
}
