@testable import CodexRuntime
import CodexCore
import CodexSchema
import CodexStorageSQLite
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// The README quick start's type.
struct QuickStartDraft: AgentStructuredOutput {
    let subject: String
    let urgency: String
    static let responseFormat = AgentStructuredOutputFormat(
        name: "draft", schema: .object(properties: ["subject": .string(), "urgency": .string(enum: ["low", "high"])])
    )
}

/// The README examples and the spec's examples, as written (the endpoint points at the loopback server).
@Suite struct DocumentationExampleTests {
    @Test func theReadmeQuickStartRunsAsWritten() async throws {
        var first = ResponsesScript()
        first.created("resp_1")
        first.delta("msg_1", "Shipped.")
        first.messageDone("msg_1", "Shipped.", index: 0)
        first.completed("resp_1")
        var second = ResponsesScript()
        second.created("resp_2")
        second.messageDone("msg_2", #"{\"subject\":\"A-1\",\"urgency\":\"high\"}"#, index: 0)
        second.completed("resp_2")
        let server = try LoopbackHTTPServer(replies: [.sse(first.events), .sse(second.events)])
        defer { server.shutdown() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let endpoint = try ResponsesEndpoint(baseURL: server.baseURL, profile: .publicAPI)

        // From README.md, with `endpoint` instead of `.publicAPI` and the database in a scratch directory.
        let auth = APIKeyAuthProvider(apiKey: "sk-test")
        let runtime = try AgentRuntime(configuration: .init(
            backend: CodexResponsesBackend(configuration: .init(model: .gpt6Astra, endpoint: endpoint), authProvider: auth),
            stateStore: try SQLiteRuntimeStateStore(path: directory.appendingPathComponent("state.sqlite").path)
        ))
        let thread = try await runtime.createThread(title: "Support")
        var printed = ""
        for try await event in try await runtime.stream(Request(text: "Where is order A-1?"), in: thread.id) {
            if case let .assistantMessageDelta(_, _, text) = event { printed += text }
        }
        let draft = try await runtime.send(Request(text: "Draft a reply."), in: thread.id, response: QuickStartDraft.self)

        #expect(printed == "Shipped.")
        #expect(draft.subject == "A-1")
        #expect(draft.urgency == "high")
        #expect(try BackendHarness.body(server, 0)["model"]?.stringValue == "gpt-6-astra")
    }

    @Test func theReadmeSchemaTransportAndStorageExamplesRunAsWritten() async throws {
        // From README.md: CodexSchema on its own.
        let schema: JSONSchema = .object(properties: ["subject": .string(), "urgency": .string(enum: ["low", "high"])])
        let validator = try JSONSchemaValidator(schema: schema)
        let result = try validator.validate(jsonBytes: Array(#"{"subject":"A-1","urgency":"soon"}"#.utf8))
        var printed: [String] = []
        for error in result.errors { printed.append("\(error.instancePointer) \(error.keyword)") }
        #expect(printed == ["/urgency enum"])

        // From README.md: one request through CodexTransport (the endpoint points at the loopback server).
        var script = ResponsesScript()
        script.created("resp_1")
        script.delta("msg_1", "Hi.")
        script.messageDone("msg_1", "Hi.", index: 0)
        script.completed("resp_1")
        let server = try LoopbackHTTPServer(replies: [.sse(script.events)])
        defer { server.shutdown() }
        let client = ResponsesClient(
            configuration: .init(endpoint: try ResponsesEndpoint(baseURL: server.baseURL, profile: .publicAPI)), httpClient: DefaultHTTPClient(),
            authProvider: APIKeyAuthProvider(apiKey: "sk-test")
        )
        let request = ResponsesRequest(model: "gpt-6-astra", instructions: "Be brief.", input: [.user("Hello")])
        var streamed = ""
        for try await event in client.stream(request) {
            if case .outputTextDelta(_, _, _, let delta) = event.kind { streamed += delta }
        }
        #expect(streamed == "Hi.")
        #expect(try BackendHarness.body(server, 0)["instructions"]?.stringValue == "Be brief.")

        // From README.md: reading a thread back read-only (a store written first, as by an earlier run).
        let directory = try temporaryDirectory("readme-store")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state.sqlite").path
        do {
            let writer = try SQLiteRuntimeStateStore(path: path)
            let thread = AgentThread(title: "Support")
            try await writer.upsertThread(thread)
            try await writer.appendHistory(RuntimeStateStoreConformance.sampleHistory(thread: thread.id, turn: AgentTurnID()), to: thread.id)
        }
        let store = try SQLiteRuntimeStateStore(readingAt: path)   // read-only: creates and migrates nothing
        var lines: [String] = []
        for thread in try await store.threads() {
            let page = try await store.history(of: thread.id, query: AgentHistoryQuery(limit: 50))
            lines.append("\(thread.title ?? "untitled") \(page.items.count)")
        }
        #expect(lines == ["Support 6"])
    }

    @Test func theCompactionPageExampleRunsAsWritten() async throws {
        let compacted = ScriptedReply.json(#"{"output":[{"type":"compaction","encrypted_content":"enc"}]}"#)
        let server = try LoopbackHTTPServer { request in
            request.path.hasSuffix("/compact") ? compacted : ResponsesScript.completedReply("r1", "Shipped.")
        }
        defer { server.shutdown() }
        let auth = APIKeyAuthProvider(apiKey: "sk-test")
        let store = InMemoryRuntimeStateStore()
        var backendConfiguration = CodexResponsesBackendConfiguration(model: .gpt6Astra)
        backendConfiguration.endpoint = try ResponsesEndpoint(baseURL: server.baseURL, profile: .publicAPI)
        let setup = try AgentRuntime(configuration: .init(backend: CodexResponsesBackend(configuration: backendConfiguration, authProvider: auth), stateStore: store))
        let thread = try await setup.createThread(title: "Long")
        for try await _ in try await setup.stream(Request(text: "Where is order A-1?"), in: thread.id) {}

        // From Docs/Compaction.md (the backend's endpoint is the loopback server's).
        let runtime = try AgentRuntime(configuration: .init(
            backend: CodexResponsesBackend(configuration: backendConfiguration, authProvider: auth),
            stateStore: store,
            contextCompaction: AgentContextCompactionConfiguration(isEnabled: true)   // automatic, hidden, remote then local
        ))
        let usage = try await runtime.fetchThreadContextUsage(id: thread.id)
        print(usage.estimatedTokens, usage.contextWindow ?? 0, usage.compactionThreshold ?? 0)
        let record = try await runtime.compactThreadContext(id: thread.id)           // now, whatever the mode
        print(record.strategy, record.replacedItemCount, record.estimatedTokensBefore, record.estimatedTokensAfter)

        #expect(usage.compactionThreshold == 16_000 && usage.contextWindow == 272_000)
        #expect(record.strategy == .remote && record.providerItems == [["type": "compaction", "encrypted_content": "enc"]])
    }

    @Test func theSpecsConfigurationAndImageExamplesCompileAndRun() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("A photo of a fox.")])
        let stateStore = InMemoryRuntimeStateStore()
        let authProvider = APIKeyAuthProvider(apiKey: "sk-test")
        let secureStore: FileSecureStore? = nil
        let approvalPresenter: (any AgentApprovalPresenting)? = nil
        // Spec 001, "Event buffering and execution limits".
        let runtime = try AgentRuntime(configuration: .init(
            authProvider: authProvider,
            secureStore: secureStore,
            backend: backend,
            approvalPresenter: approvalPresenter,
            stateStore: stateStore,
            maximumBufferedEvents: 64,
            turnLimits: .init(maximumToolCalls: 128, maximumDuration: 300)
        ))
        let thread = try await runtime.createThread()
        let imageData = Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 4])
        // Spec 001, "Image Attachments".
        let stream = try await runtime.stream(
            Request(
                text: "Describe this image",
                images: [.jpeg(imageData)]
            ),
            in: thread.id
        )
        var committed: [AgentMessage] = []
        for try await event in stream {
            if case let .messageCommitted(message) = event { committed.append(message) }
        }
        #expect(committed.map(\.text) == ["A photo of a fox."])
        #expect(backend.requests.first?.request.images.map(\.data) == [imageData])
        // Spec 001, hosted image generation configuration (an auth provider is required on Linux).
        let imageBackend = CodexResponsesBackend(
            configuration: CodexResponsesBackendConfiguration(
                enableImageGeneration: true
            ),
            authProvider: authProvider
        )
        #expect(imageBackend.configuration.enableImageGeneration)
    }

    /// `Docs/Runtime.md`, "Sign-in, sessions and sign-out", as written.
    private func signInExample(secrets: URL, store: any RuntimeStateStore) async throws -> AgentRuntime {
        let http = DefaultHTTPClient()
        let auth = ChatGPTSessionManager(secureStore: try FileSecureStore(directory: secrets), httpClient: http)
        let backend = CodexResponsesBackend(configuration: .init(model: .gpt6Astra), authProvider: auth)
        let runtime = try AgentRuntime(configuration: .init(authProvider: auth, secureStore: auth.sessionStore?.store,
                                                            backend: backend, stateStore: store))
        if case .signedOut = try await runtime.authenticationState() {
            let signIn = DeviceCodeSignIn(httpClient: http)
            _ = try await runtime.signIn {
                let code = try await signIn.requestCode()
                print("Open \(code.verificationURL) and enter \(code.userCode)")
                return try await signIn.waitForApproval(code)
            }
        }
        return runtime
    }

    @Test func theSignInExampleKeepsTheSessionInTheSecureStore() async throws {
        let secrets = try temporaryDirectory("codexkit-doc-secrets")
        let session = try ChatGPTSession(
            idToken: TestJWT.idToken(account: "acct-doc"), accessToken: TestJWT.accessToken(expiresAt: 4_000_000_000, marker: "doc"), refreshToken: "rt-doc"
        )
        // Signed in before (the example's device-code branch needs a person): the example restores it.
        try await ChatGPTSessionManager(secureStore: try FileSecureStore(directory: secrets), httpClient: DefaultHTTPClient()).useSession(session)
        let runtime = try await signInExample(secrets: secrets, store: InMemoryRuntimeStateStore())
        #expect(try await runtime.authenticationState() == .signedIn(.init(session)))
        #expect(try await runtime.createThread().accountBinding == "acct-doc")
    }

    /// A custom backend that asks for two calls as one batch and accepts results by invocation ID.
    private struct BatchBackend: AgentBackend {
        func startTurn(_ request: AgentBackendTurnRequest) async throws -> AgentTurnStream {
            let results = AsyncStream<ToolResultEnvelope>.makeStream()
            let calls = [
                ToolInvocation(id: "call_1", toolName: "lookup_product", arguments: "{}"),
                ToolInvocation(id: "call_2", toolName: "lookup_product", arguments: "{}"),
            ]
            let events = AsyncThrowingStream<AgentBackendEvent, any Error> { continuation in
                let task = Task {
                    continuation.yield(.toolCallsRequested(calls))
                    var received: [String] = []
                    for await result in results.stream {
                        received.append(result.joinedText)
                        if received.count == calls.count { break }
                    }
                    let message = AgentMessage(threadID: request.threadID, role: .assistant, text: received.joined(separator: " + "))
                    continuation.yield(.assistantMessageCompleted(message))
                    continuation.yield(.turnCompleted(AgentTurnSummary(turnID: request.turnID, threadID: request.threadID, finalMessage: message)))
                    continuation.finish()
                }
                continuation.onTermination = { _ in task.cancel() }
            }
            return AgentTurnStream(events: events, submitToolResult: { envelope in results.continuation.yield(envelope) })
        }
    }

    @Test func theSpecsParallelToolExampleCompilesAndRuns() async throws {
        // Spec 002, "Parallel tools".
        let lookup = ToolDefinition(
            name: "lookup_product",
            description: "Read product details.",
            inputSchema: .object([
                "type": .string("object"),
                "properties": .object([:])
            ]),
            supportsParallelExecution: true
        )
        let runtime = try AgentRuntime(configuration: .init(
            backend: BatchBackend(), stateStore: InMemoryRuntimeStateStore(),
            tools: [AgentTool(definition: lookup) { invocation in .success(invocation, text: "details of \(invocation.id.rawValue)") }],
            maximumParallelToolCalls: 4
        ))
        #expect(runtime.configuration.maximumParallelToolCalls == 4)
        let thread = try await runtime.createThread()
        #expect(try await runtime.send(Request(text: "Look up both"), in: thread.id) == "details of call_1 + details of call_2")
    }

    @Test func theToolsPageExampleCompilesAndRuns() async throws {
        struct LookupInput: Decodable, Sendable {
            let sku: String
        }
        struct RefundInput: Decodable, Sendable {
            let orderID: String
            let cents: Int
        }
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([
            .event(.toolCallsRequested([
                ToolInvocation(id: "c1", toolName: "lookup_product", arguments: #"{"sku":"A-1"}"#),
                ToolInvocation(id: "c2", toolName: "refund_order", arguments: #"{"orderID":"O-9","cents":500}"#),
            ])),
            .awaitToolResults, .complete(),
        ])])
        let store = InMemoryRuntimeStateStore()
        // Docs/Tools.md, "A complete example", as written.
        let lookup = AgentTool(
            name: "lookup_product", description: "Read product details.",
            schema: .object(properties: ["sku": .string()]),
            supportsParallelExecution: true
        ) { (input: LookupInput, context) in
            try context.checkCancellation()
            return context.success("{\"sku\": \"\(input.sku)\", \"price_cents\": 1299}")
        }

        let refund = AgentTool(
            name: "refund_order", description: "Refund part of an order.",
            schema: .object(properties: ["orderID": .string(), "cents": .integer]),
            approvalPolicy: .requiresApproval, approvalMessage: "Refund this order?"
        ) { (input: RefundInput, context) in
            context.success("Refunded \(input.cents) cents on \(input.orderID).")
        }

        let inbox = ApprovalInbox()
        let runtime = try AgentRuntime(configuration: .init(
            backend: backend, approvalPresenter: inbox, stateStore: store,
            tools: [lookup, refund], maximumParallelToolCalls: 4
        ))
        let approvals = Task {
            for await request in inbox.requests {
                inbox.resolve(request.id, request.toolInvocation.toolName == "refund_order" ? .denied : .approved)
            }
        }
        defer { approvals.cancel() }
        let thread = try await runtime.createThread()
        _ = try await runtime.send(Request(text: "Look up A-1 and refund O-9"), in: thread.id)
        #expect(backend.submittedResults.map(\.status) == [.success, .denied])
        #expect(backend.submittedResults.first?.joinedText == #"{"sku": "A-1", "price_cents": 1299}"#)
    }

    @Test func theSpecsProgressSteeringAndInterruptionExamplesCompileAndRun() async throws {
        // Spec 002, "Progress and message phases".
        let configuration = CodexResponsesBackendConfiguration(enableReasoningSummaries: true)
        #expect(configuration.enableReasoningSummaries)

        let commentary = AgentMessage(threadID: "", role: .assistant, text: "Looking.", phase: .commentary)
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn(
            [.event(.progress(.messageStarted(itemID: "m1", phase: .commentary))), .event(.assistantMessageCompleted(commentary)),
             .event(.assistantMessageDelta("Working")), .consumeSteering, .hang],
            acceptsSteering: true
        )])
        let store = InMemoryRuntimeStateStore()
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: store))
        let thread = try await runtime.createThread()
        let threadID = thread.id
        var kinds: [String] = []
        await #expect(throws: CancellationError.self) {
            for try await event in try await runtime.stream(Request(text: "Find results."), in: threadID) {
                switch event {
                case .progress: kinds.append("progress")
                case .rateLimitsUpdated: kinds.append("rateLimits")
                case .turnInterrupted: kinds.append("interrupted")
                case .messageCommitted(let message) where message.phase == .commentary || message.phase == .finalAnswer: kinds.append("phase")
                case .assistantMessageDelta:
                    let turnID = try #require(runtime.activeTurnID(in: threadID))
                    // Spec 002, "Steering and interruption".
                    try await runtime.steer(
                        "Focus on recent results.",
                        in: threadID,
                        expectedTurnID: turnID
                    )

                    try await runtime.interrupt(in: threadID, expectedTurnID: turnID)
                default: break
                }
            }
        }
        #expect(kinds == ["progress", "interrupted"])
        #expect(backend.acceptedSteers == ["Focus on recent results."])
        #expect(try await store.latestTurn(of: threadID)?.status == AgentTurnStatus.interrupted)
        let events = try await history(store, threadID).compactMap { item -> AgentSystemEventType? in
            if case .systemEvent(let event) = item { return event.type }
            return nil
        }
        #expect(events.last == AgentSystemEventType.turnInterrupted)
    }

    @Test func theSpecsModelDiscoveryLimitsAndAstraExamplesCompileAndRun() async throws {
        let catalogServer = try LoopbackHTTPServer(replies: [.json(RuntimeModelsTests.catalog), .json(RuntimeModelsTests.catalog)])
        defer { catalogServer.shutdown() }
        // Spec 002, "GPT-6 Astra": the backend as the spec writes it (credentials come from the runtime).
        let plain = CodexResponsesBackend(configuration: .init(model: .gpt6Astra))
        let threadConfiguration = AgentThreadConfiguration(model: .gpt6Astra)
        #expect(plain.defaultModel == .gpt6Astra)
        #expect(threadConfiguration.model == .gpt6Astra)

        var configuration = CodexResponsesBackendConfiguration(model: .gpt6Astra)
        configuration.endpoint = try ResponsesEndpoint(baseURL: catalogServer.baseURL.appendingPathComponent("api/codex"), profile: .chatGPT)
        let backend = CodexResponsesBackend(configuration: configuration, httpClient: DefaultHTTPClient(clock: ManualClock()))
        let runtime = try AgentRuntime(configuration: .init(
            authProvider: APIKeyAuthProvider(apiKey: "sk-test"), backend: backend, stateStore: InMemoryRuntimeStateStore()
        ))
        _ = try await runtime.createThread(title: "Astra", configuration: threadConfiguration)

        // Spec 002, "Model discovery".
        let catalog = try await runtime.listModels()
        let choices = catalog.visibleModels

        // Require a successful network refresh:
        let refreshed = try await runtime.listModels(policy: .refresh)

        // Avoid network I/O:
        let offline = try await runtime.listModels(policy: .cachedOnly)

        #expect(choices.map(\.model) == [.gpt6Astra, .gpt6Luna])
        #expect(refreshed.source == .remote)
        #expect(offline.source == .cache)
        #expect(catalogServer.requests.count == 2)

        // Spec 002, "Account limits".
        let limits = try await runtime.rateLimits()
        var printed: [String] = []
        for limit in limits {
            if let window = limit.primary {
                printed.append("\(window.remainingPercent) \(window.resetsAt as Any)")
            }
        }
        #expect(printed.isEmpty, "no response has reported limits yet")
    }
}
