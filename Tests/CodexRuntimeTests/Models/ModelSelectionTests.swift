import CodexCore
import CodexRuntime
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization
import Testing

/// Records every selection context it is asked about and answers with a fixed model.
final class RecordingSelector: CodexModelSelecting {
    private let contexts = Mutex<[CodexModelSelectionContext]>([])
    let answer: CodexModelConfiguration

    init(_ answer: CodexModelConfiguration) { self.answer = answer }

    var calls: [CodexModelSelectionContext] { contexts.withLock { $0 } }

    func selectModel(in context: CodexModelSelectionContext) async throws -> CodexModelSelection {
        contexts.withLock { $0.append(context) }
        return CodexModelSelection(configuration: answer, policyID: "recording")
    }
}

/// A wrapper backend that applies its own host policy by purpose and delegates turns.
struct PurposeBackend: AgentBackendRequestPreparing {
    let base: FixtureAgentBackend

    func startTurn(_ request: AgentBackendTurnRequest) async throws -> AgentTurnStream { try await base.startTurn(request) }

    func prepareModelSelection(in context: CodexModelSelectionContext) async throws -> CodexModelSelection? {
        guard context.purpose == "news" else { return nil }
        return CodexModelSelection(configuration: CodexModelConfiguration(model: .gpt6Luna, reasoningEffort: .low), policyID: "purpose")
    }
}

/// Model selection while a turn is prepared: precedence, exactly one resolution, the built-in
/// preferred-available selector against the catalog, failures before anything is stored.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct ModelSelectionTests {
    private func runtime(
        _ backend: any AgentBackend, selector: (any CodexModelSelecting)? = nil, store: any RuntimeStateStore = InMemoryRuntimeStateStore(),
        log: InMemoryAgentLogSink = InMemoryAgentLogSink()
    ) throws -> AgentRuntime {
        try AgentRuntime(configuration: .init(backend: backend, stateStore: store, logSink: log, modelSelector: selector))
    }

    @Test func precedenceIsRequestOverrideThenSelectorThenThreadThenBackendDefault() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("ok")])
        let selector = RecordingSelector(CodexModelConfiguration(model: .gpt6Sol, reasoningEffort: .high))
        let log = InMemoryAgentLogSink()
        let withSelector = try runtime(backend, selector: selector, log: log)
        let thread = try await withSelector.createThread(configuration: AgentThreadConfiguration(model: .gpt6Astra, reasoningEffort: .low))

        var overridden = Request(text: "a")
        overridden.modelOverride = CodexModelConfiguration(model: .gpt54, reasoningEffort: .minimal)
        _ = try await withSelector.send(overridden, in: thread.id)
        #expect(selector.calls.isEmpty, "an override is binding: the selector is not asked")

        var purposeful = Request(text: "b")
        purposeful.selectionPurpose = "news-summary"
        purposeful.modelRequirements = AgentModelRequirements(minimumContextWindowTokenCount: 100_000)
        _ = try await withSelector.send(purposeful, in: thread.id)
        #expect(selector.calls.count == 1, "one resolution per turn")
        let context = try #require(selector.calls.first)
        #expect(context.purpose == "news-summary")
        #expect(context.baseline == CodexModelConfiguration(model: .gpt6Astra, reasoningEffort: .low))
        #expect(context.requirements?.minimumContextWindowTokenCount == 100_000)
        #expect(context.threadID == thread.id)
        #expect(context.needsImageInput == false)

        let plain = try runtime(backend)
        let threadModel = try await plain.createThread(configuration: AgentThreadConfiguration(model: .gpt6Astra, reasoningEffort: .low))
        _ = try await plain.send(Request(text: "c"), in: threadModel.id)
        let noModel = try await plain.createThread()
        _ = try await plain.send(Request(text: "d"), in: noModel.id)

        #expect(backend.requests.map(\.model) == [.gpt54, .gpt6Sol, .gpt6Astra, .default])
        #expect(backend.requests.map(\.reasoningEffort) == [.minimal, .high, .low, nil])
        let selected = log.events.filter { $0.name == "model.selected" }
        #expect(selected.map { $0.metadata["source"] } == ["request_override", "selector"])
        #expect(selected.last?.metadata["policy_id"] == "recording")
        #expect(!log.events.contains { $0.metadata.values.contains("news-summary") }, "the purpose is never logged")
    }

    @Test func thePreferredAvailableSelectorSkipsWhatTheCatalogDoesNotSupport() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("ok")])
        let selector = PreferredAvailableCodexModelSelector(candidates: [
            CodexModelConfiguration(model: "gpt-unlisted"),
            CodexModelConfiguration(model: .gpt6Astra, reasoningEffort: .minimal),
            CodexModelConfiguration(model: .gpt6Astra, reasoningEffort: .high),
            CodexModelConfiguration(model: .gpt6Sol),
        ])
        let runtime = try runtime(backend, selector: selector)
        let thread = try await runtime.createThread()
        _ = try await runtime.send(Request(text: "x"), in: thread.id)
        #expect(backend.requests.map(\.model) == [.gpt6Astra])
        #expect(backend.requests.map(\.reasoningEffort) == [.high])
    }

    @Test func noSupportedCandidateFailsBeforeAnythingIsStoredOrSent() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("ok")])
        let store = InMemoryRuntimeStateStore()
        let selector = PreferredAvailableCodexModelSelector(candidates: [
            CodexModelConfiguration(model: "gpt-unlisted"), CodexModelConfiguration(model: .gpt6Astra, reasoningEffort: .minimal),
        ])
        let runtime = try runtime(backend, selector: selector, store: store)
        let thread = try await runtime.createThread()
        let error = await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.stream(Request(text: "x"), in: thread.id) }
        #expect(error?.code == .modelUnavailable)
        #expect(backend.requests.isEmpty)
        #expect(try await history(store, thread.id).isEmpty)
        #expect(try await store.latestTurn(of: thread.id) == nil)
        #expect(runtime.activeTurnID(in: thread.id) == nil)
    }

    @Test func imageInputAndContextWindowRequirementsRuleOutCandidates() async throws {
        let server = try LoopbackHTTPServer(replies: [.json(RuntimeModelsTests.catalog), ResponsesScript.completedReply("resp_1", "Seen.")])
        defer { server.shutdown() }
        let selector = PreferredAvailableCodexModelSelector(candidates: [
            CodexModelConfiguration(model: .gpt6Luna), CodexModelConfiguration(model: .gpt6Astra, reasoningEffort: .high),
        ])
        let runtime = try AgentRuntime(configuration: .init(
            authProvider: APIKeyAuthProvider(apiKey: "sk-test"), backend: try RuntimeModelsTests.backend(server),
            stateStore: InMemoryRuntimeStateStore(), modelSelector: selector
        ))
        let thread = try await runtime.createThread()
        var request = Request(text: "What is this?", images: [AgentImageAttachment(data: TestImages.png, mimeType: "image/png")])
        request.selectionPurpose = "secret-purpose-7"
        _ = try await runtime.send(request, in: thread.id)
        #expect(server.requests.map(\.path) == ["/api/codex/models", "/api/codex/responses"], "one catalog GET, then the turn")
        let body = try #require(server.requests.last?.body)
        let sent = try JSONValue(parsing: body)
        #expect(sent["model"]?.stringValue == "gpt-6-astra", "luna takes no image input")
        #expect(sent["reasoning"]?["effort"]?.stringValue == "high")
        #expect(!String(decoding: body, as: UTF8.self).contains("secret-purpose-7"), "the purpose is never sent")
    }

    @Test func aWrapperBackendsOwnPreparationTakesTheSelectorsPlace() async throws {
        let base = FixtureAgentBackend(turns: [.reply("ok")])
        let selector = RecordingSelector(CodexModelConfiguration(model: .gpt6Sol))
        let runtime = try runtime(PurposeBackend(base: base), selector: selector)
        let thread = try await runtime.createThread(configuration: AgentThreadConfiguration(model: .gpt6Astra))
        var news = Request(text: "headlines")
        news.selectionPurpose = "news"
        _ = try await runtime.send(news, in: thread.id)
        _ = try await runtime.send(Request(text: "chat"), in: thread.id)
        #expect(base.requests.map(\.model) == [.gpt6Luna, .gpt6Astra])
        #expect(selector.calls.isEmpty)
    }

    @Test func aFixedSelectorAnswersEveryTurn() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("ok")])
        let runtime = try runtime(backend, selector: FixedCodexModelSelector(CodexModelConfiguration(model: .gpt6Luna, reasoningEffort: .low)))
        let thread = try await runtime.createThread(configuration: AgentThreadConfiguration(model: .gpt6Astra))
        _ = try await runtime.send(Request(text: "x"), in: thread.id)
        #expect(backend.requests.map(\.model) == [.gpt6Luna])
    }
}
