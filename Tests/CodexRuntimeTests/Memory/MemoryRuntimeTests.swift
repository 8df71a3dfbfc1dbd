@testable import CodexRuntime
import CodexCore
import CodexSchema
import CodexStorageSQLite
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization
import Testing

/// Memory retrieval, injection, attribution and capture through the real backend, the loopback
/// server and real SQLite files (the memory store and the state store).
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct MemoryRuntimeTests {
    /// A directory with a SQLite memory store and a SQLite state store.
    struct Stores {
        let directory: URL
        let memory: SQLiteMemoryStore
        var statePath: String { directory.appendingPathComponent("state.sqlite").path }

        init() throws {
            directory = try temporaryDirectory("memory-runtime")
            memory = try SQLiteMemoryStore(path: directory.appendingPathComponent("memory.sqlite").path)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    private let now = Date(timeIntervalSinceReferenceDate: 800_000_000)

    private func runtime(
        _ service: CompactionService, stores: Stores, memory: AgentMemoryConfiguration?, skills: [AgentSkill] = [],
        logSink: any AgentLogSink = NoOpAgentLogSink()
    ) throws -> AgentRuntime {
        try AgentRuntime(configuration: .init(
            backend: try BackendHarness.backend(service.server, configuration: .init(model: .gpt6Astra)),
            stateStore: try SQLiteRuntimeStateStore(path: stores.statePath), logSink: logSink,
            persona: AgentPersonaStack(layers: [.init(name: "support", instructions: "Be brief.")]), skills: skills, memory: memory
        ))
    }

    private func seed(_ store: SQLiteMemoryStore) async throws -> (delivery: MemoryRecord, allergy: MemoryRecord, project: MemoryRecord) {
        let delivery = try await store.upsert(MemoryRecord(
            namespace: "shop", scope: .user, category: .preference, summary: "Prefers Tuesday delivery.", importance: 7,
            tags: ["delivery"], dedupeKey: "delivery-day", createdAt: now
        )).stored
        let allergy = try await store.upsert(MemoryRecord(
            namespace: "shop", scope: .user, category: .fact, summary: "Allergic to peanuts; check every delivery.", importance: 9,
            tags: ["health"], createdAt: now
        )).stored
        let project = try await store.upsert(MemoryRecord(
            namespace: "shop", scope: .project, category: .decision, summary: "Orders ship from the Leeds depot.", importance: 5,
            tags: ["depot"], createdAt: now
        )).stored
        return (delivery, allergy, project)
    }

    private func instructions(_ body: JSONValue) -> String? { body["instructions"]?.stringValue }

    private func digest(_ text: String?) -> String { SHA256.hexDigest(of: Array((text ?? "").utf8)) }

    /// A final-answer reply whose text is `json`, escaped for the SSE script.
    private func jsonReply(_ id: String, _ json: String) -> ScriptedReply {
        ResponsesScript.completedReply(id, json.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))
    }

    private static let memoryHeading = """
        Memory
        Known from earlier conversations, most relevant first. Use it where it helps; the user's current message takes precedence.
        """

    @Test func aTurnCarriesTheMatchingMemoriesAndRecordsWhichWithTheDigestOfWhatWasSent() async throws {
        let stores = try Stores()
        defer { stores.remove() }
        let seeded = try await seed(stores.memory)
        let service = try CompactionService(turns: [ResponsesScript.completedReply("r1", "Tuesday it is.")])
        let runtime = try runtime(service, stores: stores, memory: AgentMemoryConfiguration(store: stores.memory, namespace: "shop"))
        let thread = try await runtime.createThread(title: "Orders")

        let result = try await runtime.sendWithSummary(Request(text: "Which delivery day suits me?"), in: thread.id)
        let body = try #require(try service.turnBodies().first)
        // Both records mention "delivery"; importance ranks the allergy first; the project record does not match.
        let expected = "Be brief.\n\n" + Self.memoryHeading + "\n- (fact) Allergic to peanuts; check every delivery.\n- (preference) Prefers Tuesday delivery."
        #expect(instructions(body) == expected)
        let application = try #require(result.summary.memoryApplication)
        #expect(application.memoryIDs == [seeded.allergy.id, seeded.delivery.id])
        #expect(application.namespace == "shop" && application.placement == .afterSkills && application.notAppliedReason == nil)
        #expect(application.instructionsSHA256 == digest(expected))
        #expect(application.isApplied)

        // Stored with the turn's completion event, and still there after a reopen.
        let reopened = try SQLiteRuntimeStateStore(path: stores.statePath)
        let completion = try await history(reopened, thread.id).compactMap { item -> AgentSystemEvent? in
            if case .systemEvent(let event) = item, event.type == .turnCompleted { return event }
            return nil
        }
        #expect(completion.count == 1 && completion.first?.memoryApplication == application)
        let later = try self.runtime(service, stores: stores, memory: nil)
        #expect(try await later.fetchMemoryApplications(id: thread.id) == [AgentTurnMemoryApplication(turnID: result.summary.turnID, application: application)])
        await #expect(throws: AgentRuntimeError.self) { _ = try await later.fetchMemoryApplications(id: "nope") }
        // Without a memory configuration a turn records none.
        #expect(try await later.sendWithSummary(Request(text: "Which delivery day suits me?"), in: thread.id).summary.memoryApplication == nil)
        #expect(try await later.fetchMemoryApplications(id: thread.id).count == 1)
        // Nothing about memory is written into the visible history.
        #expect(describe(try await history(reopened, thread.id)).count == 8)
    }

    @Test func thePlacementPutsTheMemorySectionBeforeThePersonaBeforeTheSkillsOrAfterThem() async throws {
        let stores = try Stores()
        defer { stores.remove() }
        _ = try await seed(stores.memory)
        let service = try CompactionService(turns: [ResponsesScript.completedReply("r1", "Noted.")])
        let skill = AgentSkill(id: "returns", instructions: "Explain the returns policy.")
        let section = Self.memoryHeading + "\n- (decision) Orders ship from the Leeds depot."
        var seen: [String?] = []
        for placement in MemoryInstructionPlacement.allCases {
            let runtime = try runtime(
                service, stores: stores, memory: AgentMemoryConfiguration(store: stores.memory, namespace: "shop", instructionPlacement: placement),
                skills: [skill]
            )
            let thread = try await runtime.createThread(title: "Orders", skillIDs: ["returns"])
            let result = try await runtime.sendWithSummary(Request(text: "Which depot?"), in: thread.id)
            let sent = instructions(try #require(try service.turnBodies().last))
            seen.append(sent)
            #expect(result.summary.memoryApplication?.placement == placement)
            #expect(result.summary.memoryApplication?.instructionsSHA256 == digest(sent))
        }
        #expect(seen == [
            section + "\n\nBe brief.\n\nExplain the returns policy.",
            "Be brief.\n\n" + section + "\n\nExplain the returns policy.",
            "Be brief.\n\nExplain the returns policy.\n\n" + section,
        ])
        // A request's placement wins over the configured one.
        let runtime = try runtime(service, stores: stores, memory: AgentMemoryConfiguration(store: stores.memory, namespace: "shop"), skills: [skill])
        let thread = try await runtime.createThread(title: "Orders", skillIDs: ["returns"])
        var request = Request(text: "Which depot?")
        request.memorySelection = MemorySelection(instructionPlacement: .beforePersonas)
        _ = try await runtime.send(request, in: thread.id)
        #expect(instructions(try #require(try service.turnBodies().last)) == seen[0])
    }

    @Test func aRequestInheritsAppendsReplacesOrDisablesTheConfiguredSearch() async throws {
        let stores = try Stores()
        defer { stores.remove() }
        let seeded = try await seed(stores.memory)
        let service = try CompactionService(turns: [ResponsesScript.completedReply("r1", "Fine.")])
        // The configuration searches the user scope only.
        let runtime = try runtime(service, stores: stores, memory: AgentMemoryConfiguration(store: stores.memory, namespace: "shop", scopes: [.user]))
        let thread = try await runtime.createThread(title: "Orders")
        func applied(_ request: Request) async throws -> AgentMemoryApplication {
            try #require(try await runtime.sendWithSummary(request, in: thread.id).summary.memoryApplication)
        }

        // "depot" is only in the project record, outside the configured scope.
        let inherited = try await applied(Request(text: "Which depot ships my delivery?"))
        #expect(inherited.memoryIDs == [seeded.allergy.id, seeded.delivery.id])
        var append = Request(text: "Which depot ships my delivery?")
        append.memorySelection = .append(scopes: [.project])
        #expect(try await applied(append).memoryIDs == [seeded.allergy.id, seeded.delivery.id, seeded.project.id])
        var replace = Request(text: "Which depot ships my delivery?")
        replace.memorySelection = .replace(scopes: [.project])
        #expect(try await applied(replace).memoryIDs == [seeded.project.id])
        var tagged = Request(text: "Which depot ships my delivery?")
        tagged.memorySelection = .replace(tags: ["delivery"])
        #expect(try await applied(tagged).memoryIDs == [seeded.delivery.id])
        // The query text defaults to the request's text; a selection's text replaces it.
        var text = Request(text: "Hello")
        text.memorySelection = MemorySelection(text: "peanuts")
        #expect(try await applied(text).memoryIDs == [seeded.allergy.id])

        let none = try await applied(Request(text: "What is the weather?"))
        #expect(none.memoryIDs.isEmpty && none.notAppliedReason == .noMatches && none.placement == nil)
        #expect(instructions(try #require(try service.turnBodies().last)) == "Be brief.")
        #expect(none.instructionsSHA256 == digest("Be brief."))

        var disabled = Request(text: "Which delivery day suits me?")
        disabled.memorySelection = .disable
        let off = try await applied(disabled)
        #expect(off.memoryIDs.isEmpty && off.notAppliedReason == .disabledByRequest)
        #expect(instructions(try #require(try service.turnBodies().last)) == "Be brief.")
    }

    @Test func anEphemeralTurnRetrievesAndInjectsButNeverCaptures() async throws {
        let stores = try Stores()
        defer { stores.remove() }
        let seeded = try await seed(stores.memory)
        let service = try CompactionService(turns: [ResponsesScript.completedReply("r1", "Tuesday.")])
        let memory = AgentMemoryConfiguration(store: stores.memory, namespace: "shop", automaticCapture: .afterCompletedTurns())
        let runtime = try runtime(service, stores: stores, memory: memory)
        let thread = try await runtime.createThread(title: "Orders")
        let result = try await runtime.sendWithSummary(Request(text: "Which delivery day?", executionMode: .ephemeral), in: thread.id)
        await runtime.waitForMemoryCaptures()
        #expect(result.summary.memoryApplication?.memoryIDs == [seeded.allergy.id, seeded.delivery.id])
        #expect(instructions(try #require(try service.turnBodies().first))?.contains("- (preference) Prefers Tuesday delivery.") == true)
        #expect(service.server.requests.count == 1, "no capture request")
        #expect(try await stores.memory.list(MemoryListQuery(namespace: "shop")).count == 3)
        #expect(try await history(SQLiteRuntimeStateStore(path: stores.statePath), thread.id).isEmpty)
    }

    @Test func aCompletedTurnIsCapturedOnceWithTheFixedContractAndAKeyReplacesItsEarlierRecord() async throws {
        let stores = try Stores()
        defer { stores.remove() }
        let first = #"{"memories":[{"key":"Delivery Day","summary":"Prefers Tuesday delivery.","category":"preference","importance":6,"tags":["delivery"],"evidence":"Tuesdays suit me."},{"key":"city","summary":"Lives in Leeds.","category":"fact","importance":4,"tags":[],"evidence":""}]}"#
        let second = #"{"memories":[{"key":"delivery day","summary":"Prefers Friday delivery now.","category":"preference","importance":7,"tags":["delivery"],"evidence":"Fridays now."}]}"#
        let service = try CompactionService(turns: [
            ResponsesScript.completedReply("r1", "Noted: Tuesdays."), jsonReply("c1", first),
            ResponsesScript.completedReply("r2", "Noted: Fridays."), jsonReply("c2", second),
        ])
        let logs = InMemoryAgentLogSink()
        let memory = AgentMemoryConfiguration(store: stores.memory, namespace: "shop", automaticCapture: .afterCompletedTurns(scope: .user, maximumMemories: 3))
        let runtime = try runtime(service, stores: stores, memory: memory, logSink: logs)
        let thread = try await runtime.createThread(title: "Orders")

        let turn = try await runtime.sendWithSummary(Request(text: "Tuesdays suit me, I live in Leeds."), in: thread.id)
        await runtime.waitForMemoryCaptures()
        let bodies = try service.turnBodies()
        #expect(bodies.count == 2)
        let capture = try #require(bodies.last)
        #expect(capture["text"]?["format"]?["name"] == "memory_capture" && capture["text"]?["format"]?["strict"] == true)
        #expect(capture["text"]?["format"]?["schema"]?["properties"]?["memories"]?["maxItems"] == 3)
        #expect(instructions(capture) == MemoryCaptureContract.instruction)
        #expect(capture["tools"]?.arrayValue?.isEmpty ?? true)
        let inputs = capture["input"]?.arrayValue ?? []
        #expect(inputs.first?["content"]?.arrayValue?.first?["text"]?.stringValue
            == "Conversation:\n\nUser: Tuesdays suit me, I live in Leeds.\n\nAssistant: Noted: Tuesdays.")

        var stored = try await stores.memory.list(MemoryListQuery(namespace: "shop"))
        #expect(stored.count == 2)
        let delivery = try #require(stored.first { $0.dedupeKey == "delivery-day" })
        #expect(delivery.summary == "Prefers Tuesday delivery." && delivery.scope == .user && delivery.category == .preference)
        #expect(delivery.importance == 6 && delivery.tags == ["delivery"] && delivery.evidence == ["Tuesdays suit me."])
        #expect(delivery.attributes == ["source": "automatic_capture", "thread_id": thread.id.rawValue, "turn_id": turn.summary.turnID.rawValue])
        #expect(stored.first { $0.dedupeKey == "city" }?.evidence == [])
        #expect(logs.events(named: "runtime.memory.captured").first?.metadata["inserted"] == "2")

        // The same key again replaces the record: same ID, new summary.
        _ = try await runtime.send(Request(text: "Actually Fridays now for delivery."), in: thread.id)
        await runtime.waitForMemoryCaptures()
        stored = try await stores.memory.list(MemoryListQuery(namespace: "shop"))
        #expect(stored.count == 2)
        let replaced = try #require(stored.first { $0.dedupeKey == "delivery-day" })
        #expect(replaced.id == delivery.id && replaced.summary == "Prefers Friday delivery now." && replaced.importance == 7)
        #expect(logs.events(named: "runtime.memory.captured").last?.metadata["replaced"] == "1")
        #expect(try service.turnBodies().count == 4)
        // The second turn already carried the first capture's memory.
        #expect(instructions(try service.turnBodies()[2])?.contains("- (preference) Prefers Tuesday delivery.") == true)
    }

    @Test func aCaptureReplyOutsideTheContractStoresNothingAndTheTurnStaysCompleted() async throws {
        let stores = try Stores()
        defer { stores.remove() }
        let invalid = #"{"memories":[{"key":"x","summary":"Likes tea.","category":"gossip","importance":6,"tags":[],"evidence":""}]}"#
        let service = try CompactionService(turns: [ResponsesScript.completedReply("r1", "Tea it is."), jsonReply("c1", invalid)])
        let logs = InMemoryAgentLogSink()
        let memory = AgentMemoryConfiguration(store: stores.memory, namespace: "shop", automaticCapture: .afterCompletedTurns())
        let runtime = try runtime(service, stores: stores, memory: memory, logSink: logs)
        let thread = try await runtime.createThread(title: "Orders")
        #expect(try await runtime.send(Request(text: "I like tea."), in: thread.id) == "Tea it is.")
        await runtime.waitForMemoryCaptures()
        #expect(try await stores.memory.list(MemoryListQuery(namespace: "shop")).isEmpty)
        #expect(logs.events(named: "runtime.memory.capture_failed").map { $0.metadata["error_code"] } == ["structured_output_invalid"])
        #expect(try await SQLiteRuntimeStateStore(path: stores.statePath).latestTurn(of: thread.id)?.status == .completed)
    }

    @Test func aFailedOrInterruptedTurnCapturesNothing() async throws {
        let stores = try Stores()
        defer { stores.remove() }
        let failing = ScriptedReply.json(#"{"error":{"message":"bad","type":"invalid_request_error"}}"#, status: 400)
        let service = try CompactionService(turns: [failing])
        let memory = AgentMemoryConfiguration(store: stores.memory, namespace: "shop", automaticCapture: .afterCompletedTurns())
        let runtime = try runtime(service, stores: stores, memory: memory)
        let thread = try await runtime.createThread(title: "Orders")
        await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.send(Request(text: "I like tea."), in: thread.id) }
        await runtime.waitForMemoryCaptures()
        #expect(service.server.requests.count == 1)

        // Interrupted: the consumer goes away after the first delta, before completion.
        var script = ResponsesScript()
        script.created("r2")
        script.messageAdded("m2", index: 0)
        script.delta("m2", "Tea")
        let held = try CompactionService(turns: [BackendHarness.holdingReply(script.text)])
        let interrupted = try self.runtime(held, stores: stores, memory: memory)
        let other = try await interrupted.createThread(title: "Tea")
        let consumer = await consumerAfterFirstDelta(try await interrupted.stream(Request(text: "I like tea."), in: other.id))
        try await interrupted.interrupt(in: other.id)
        _ = await consumer.result
        await interrupted.flushPendingWrites()
        #expect(try await SQLiteRuntimeStateStore(path: stores.statePath).latestTurn(of: other.id)?.status == .interrupted)
        await interrupted.waitForMemoryCaptures()
        #expect(held.server.requests.count == 1)
        #expect(try await stores.memory.list(MemoryListQuery(namespace: "shop")).isEmpty)
        held.server.releaseHeld()
    }

    @Test func anExplicitCaptureReadsTheThreadAndWritesTheScopeAsked() async throws {
        let stores = try Stores()
        defer { stores.remove() }
        let reply = #"{"memories":[{"key":"depot","summary":"Uses the Leeds depot.","category":"decision","importance":5,"tags":["depot"],"evidence":""}]}"#
        let service = try CompactionService(turns: [
            ResponsesScript.completedReply("r1", "Leeds, then."), ResponsesScript.completedReply("r2", "Done."), jsonReply("c1", reply),
        ])
        let runtime = try runtime(service, stores: stores, memory: AgentMemoryConfiguration(store: stores.memory, namespace: "shop"))
        let thread = try await runtime.createThread(title: "Orders")
        _ = try await runtime.send(Request(text: "Ship from Leeds."), in: thread.id)
        _ = try await runtime.send(Request(text: "Thanks."), in: thread.id)
        await runtime.waitForMemoryCaptures()
        #expect(service.server.requests.count == 2, "automatic capture is off")

        let captured = try await runtime.captureMemories(from: thread.id, for: .project)
        #expect(captured.inserted == 1 && captured.replaced == 0 && captured.rejected == 0)
        #expect(captured.records.map(\.summary) == ["Uses the Leeds depot."] && captured.records.first?.scope == .project)
        #expect(captured.records.first?.attributes["source"] == "explicit_capture" && captured.records.first?.attributes["turn_id"] == nil)
        let body = try #require(try service.turnBodies().last)
        #expect(body["input"]?.arrayValue?.first?["content"]?.arrayValue?.first?["text"]?.stringValue
            == "Conversation:\n\nUser: Ship from Leeds.\n\nAssistant: Leeds, then.\n\nUser: Thanks.\n\nAssistant: Done.")
        #expect(try await runtime.history(of: thread.id, query: AgentHistoryQuery(limit: 100)).items.count == 8, "the thread is not written")

        let plain = try AgentRuntime(configuration: .init(
            backend: try BackendHarness.backend(service.server), stateStore: InMemoryRuntimeStateStore()
        ))
        await #expect { _ = try await plain.captureMemories(from: thread.id) } throws: { error in
            (error as? AgentRuntimeError)?.code == .invalidConfiguration
        }
        let empty = try await runtime.createThread(title: "Empty")
        await #expect { _ = try await runtime.captureMemories(from: empty.id) } throws: { error in
            (error as? AgentRuntimeError)?.code == .memoryCaptureFailed
        }
    }

    @Test func aStoreThatFailsLeavesTheTurnWithoutMemoryAndSaysWhy() async throws {
        let stores = try Stores()
        defer { stores.remove() }
        let service = try CompactionService(turns: [ResponsesScript.completedReply("r1", "Hello.")])
        let logs = InMemoryAgentLogSink()
        let runtime = try runtime(service, stores: stores, memory: AgentMemoryConfiguration(store: FailingMemoryStore(), namespace: "shop"), logSink: logs)
        let thread = try await runtime.createThread(title: "Orders")
        let result = try await runtime.sendWithSummary(Request(text: "Hi"), in: thread.id)
        #expect(result.summary.memoryApplication?.notAppliedReason == .retrievalFailed)
        #expect(instructions(try #require(try service.turnBodies().first)) == "Be brief.")
        #expect(logs.events(named: "runtime.memory.retrieval_failed").map { $0.metadata["error_code"] } == ["memory_store_corrupt"])
    }

    @Test func aLongPromptSearchesWithItsFirstTokensInsteadOfBeingRefused() async throws {
        let words = (0..<400).map { "word\($0)" }.joined(separator: " ")
        let query = AgentRuntime.memoryQueryText(words + " peanuts")
        #expect(MemoryText.tokens(query).count == MemoryLimits.queryTokens)
        #expect(MemoryText.tokens(query).last == "word255")
        #expect(AgentRuntime.memoryQueryText("Don't \"NEAR\" * peanuts") == "don t near peanuts")
    }
}

/// A memory store whose every operation fails, as a corrupt file would.
private struct FailingMemoryStore: MemoryStoring {
    private var failure: MemoryStoreError { MemoryStoreError(code: .corrupt, message: "the memory store is damaged") }
    func upsert(_ record: MemoryRecord) async throws(MemoryStoreError) -> MemoryUpsertOutcome { throw failure }
    func record(_ id: MemoryRecordID) async throws(MemoryStoreError) -> MemoryRecord? { throw failure }
    func delete(_ id: MemoryRecordID) async throws(MemoryStoreError) -> Bool { throw failure }
    func archive(_ id: MemoryRecordID, at date: Date) async throws(MemoryStoreError) -> Bool { throw failure }
    func list(_ query: MemoryListQuery) async throws(MemoryStoreError) -> [MemoryRecord] { throw failure }
    func search(_ query: MemoryQuery) async throws(MemoryStoreError) -> MemorySearchResult { throw failure }
}
