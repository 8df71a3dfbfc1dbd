import CodexCore
import CodexRuntime
import CodexSchema
import CodexTestSupport
import Foundation
import Testing

/// A catalog large enough that a one-shot reply has its digest hashed beside its decoding; its decoder
/// refuses an item named "refuse", which the schema allows.
struct LargeCatalog: AgentStructuredOutput, Equatable {
    struct Item: Codable, Equatable, Sendable {
        let id: Int
        let name: String
    }

    let items: [Item]

    static let responseFormat = AgentStructuredOutputFormat(
        name: "large_catalog", schema: .object(properties: ["items": .array(items: .object(properties: ["id": .integer, "name": .string()]))])
    )

    init(items: [Item]) { self.items = items }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        items = try container.decode([Item].self, forKey: .items)
        guard !items.contains(where: { $0.name == "refuse" }) else {
            throw DecodingError.dataCorruptedError(forKey: .items, in: container, debugDescription: "refused")
        }
    }

    enum CodingKeys: String, CodingKey { case items }

    /// The reply text for `count` items, the last one named `lastName`; a `lastID` that is not an
    /// integer breaks the schema.
    static func reply(count: Int, lastName: String = "last", lastID: String? = nil) -> String {
        var text = #"{"items":["#
        for index in 0..<count - 1 { text += #"{"id":\#(index),"name":"item \#(index) é"},"# }
        text += #"{"id":\#(lastID ?? String(count - 1)),"name":"\#(lastName)"}]}"#
        return text
    }
}

/// One-shot replies of 64 KiB and more: the digest is hashed in a child task while the reply decodes;
/// what is stored, returned and refused is the same as for a small reply.
@Suite struct AgentRuntimeLargeStructuredTests {
    private func run(_ text: String) async throws -> (result: Result<LargeCatalog, AgentRuntimeError>, saved: [AgentHistoryItem]) {
        let backend = FixtureAgentBackend(turns: [.reply(text, deltaLength: text.utf8.count)])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        let result: Result<LargeCatalog, AgentRuntimeError>
        do {
            result = .success(try await runtime.send(Request(text: "Catalog."), in: thread.id, response: LargeCatalog.self))
        } catch let error as AgentRuntimeError {
            result = .failure(error)
        }
        return (result, try await history(store, thread.id))
    }

    @Test(arguments: [10, 4_000])
    func theStoredDigestIsTheDigestOfTheCanonicalPayload(count: Int) async throws {
        let text = LargeCatalog.reply(count: count)
        #expect((text.utf8.count >= 64 * 1024) == (count == 4_000), "one small and one large reply")
        let (result, saved) = try await run(text)
        let catalog = try result.get()
        #expect(catalog.items.count == count)
        #expect(catalog.items[count - 2] == .init(id: count - 2, name: "item \(count - 2) é"))
        let messages = saved.compactMap { item -> AgentMessage? in
            if case .message(let message) = item, message.role == .assistant { return message }
            return nil
        }
        let value = try JSONValue(parsing: text)
        #expect(messages.count == 1)
        // Compared as Booleans: a failure would otherwise print the whole payload.
        let storesTheValue = messages.first?.structuredOutput?.payload == value
        #expect(storesTheValue)
        #expect(messages.first?.structuredOutput?.formatName == "large_catalog")
        #expect(messages.first?.structuredOutput?.payloadDigest == AgentStructuredOutputMetadata(formatName: "large_catalog", payload: value).payloadDigest)
        #expect(messages.first?.structuredOutput?.payloadDigest == SHA256.hexDigest(of: value.canonicalBytes()))
    }

    @Test func aLargeReplyTheSchemaRefusesIsInvalidAndCommitsNothing() async throws {
        let (result, saved) = try await run(LargeCatalog.reply(count: 4_000, lastID: #""x""#))
        guard case .failure(let error) = result else { Issue.record("the reply was accepted"); return }
        #expect(error.code == .structuredOutputInvalid)
        #expect(describe(saved) == ["event turn_started", "user: Catalog.", "event turn_failed structured_output_invalid"])
    }

    @Test func aLargeReplyTheTypeRefusesIsADecodingFailureAndCommitsNothing() async throws {
        let (result, saved) = try await run(LargeCatalog.reply(count: 4_000, lastName: "refuse"))
        guard case .failure(let error) = result else { Issue.record("the reply was accepted"); return }
        #expect(error.code == .structuredOutputDecodingFailed)
        #expect(describe(saved) == ["event turn_started", "user: Catalog.", "event turn_failed structured_output_decoding_failed"])
    }

    /// A framed reply streamed in `deltaLength` pieces (0: no deltas, the completed message only).
    private func stream(_ payload: String, deltaLength: Int) async throws -> (events: [AgentEvent], error: (any Error)?, saved: [AgentHistoryItem]) {
        let text = "Here it is.\n\(StructuredStreamParserMarkers.open)\n\(payload)\n\(StructuredStreamParserMarkers.close)\nDone."
        var steps: [FixtureAgentBackend.Step] = []
        var rest = Substring(text)
        while deltaLength > 0, !rest.isEmpty {
            steps.append(.event(.assistantMessageDelta(String(rest.prefix(deltaLength)))))
            rest = rest.dropFirst(deltaLength)
        }
        steps.append(.event(.assistantMessageCompleted(AgentMessage(threadID: AgentThreadID(rawValue: ""), role: .assistant, text: text, phase: .finalAnswer))))
        steps.append(.complete())
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(FixtureAgentBackend(turns: [FixtureAgentBackend.Turn(steps)]), store: store)
        let thread = try await runtime.createThread()
        let (events, error) = await collect(try await runtime.stream(Request(text: "Catalog."), in: thread.id, response: LargeCatalog.self, options: .init(required: true)))
        return (events, error, try await history(store, thread.id))
    }

    @Test(arguments: [0, 1024, 1 << 20])
    func aLargeStreamedCommitStoresTheDigestOfItsCanonicalPayload(deltaLength: Int) async throws {
        let payload = LargeCatalog.reply(count: 4_000)
        let (events, error, saved) = try await stream(payload, deltaLength: deltaLength)
        #expect(error == nil)
        let commits = events.filter { if case .structuredOutputCommitted = $0 { return true } else { return false } }
        #expect(commits.count == 1)
        let messages = saved.compactMap { item -> AgentMessage? in
            if case .message(let message) = item, message.role == .assistant { return message }
            return nil
        }
        let value = try JSONValue(parsing: payload)
        #expect(messages.map(\.text) == ["Here it is.\nDone."])
        let storesTheValue = messages.first?.structuredOutput?.payload == value
        #expect(storesTheValue)
        #expect(messages.first?.structuredOutput?.payloadDigest == SHA256.hexDigest(of: value.canonicalBytes()))
    }

    @Test func aLargeStreamedCommitTheTypeRefusesFailsTheTurn() async throws {
        let (events, error, saved) = try await stream(LargeCatalog.reply(count: 4_000, lastName: "refuse"), deltaLength: 1024)
        #expect((error as? AgentRuntimeError)?.code == .structuredOutputDecodingFailed)
        #expect(!events.contains { if case .structuredOutputCommitted = $0 { return true } else { return false } })
        #expect(describe(saved) == ["event turn_started", "user: Catalog.", "event turn_failed structured_output_decoding_failed"])
    }
}

/// The stream markers, as the runtime writes them into the response contract.
private enum StructuredStreamParserMarkers {
    static let open = "<codexkit_structured_output>"
    static let close = "</codexkit_structured_output>"
}
