import CodexCore
import CodexRuntime
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Where the runtime keeps the signed-in session: its secure store, through a session manager.
@Suite struct AgentRuntimeSessionTests {
    private func session(account: String) throws -> ChatGPTSession {
        try ChatGPTSession(idToken: TestJWT.idToken(account: account), accessToken: TestJWT.accessToken(expiresAt: 4_000_000_000, marker: account),
                           refreshToken: "rt-\(account)")
    }

    private func runtime(secureStore: FileSecureStore?, authProvider: (any AuthProvider)? = nil) throws -> AgentRuntime {
        try AgentRuntime(configuration: .init(
            authProvider: authProvider, secureStore: secureStore, backend: FixtureAgentBackend(turns: []), stateStore: InMemoryRuntimeStateStore()
        ))
    }

    private func managed(_ directory: URL) throws -> AgentRuntime {
        let store = try FileSecureStore(directory: directory)
        return try runtime(secureStore: store, authProvider: ChatGPTSessionManager(secureStore: store, httpClient: DefaultHTTPClient()))
    }

    @Test func signingOutInterruptsTheActiveTurnBeforeForgettingTheSession() async throws {
        let directory = try temporaryDirectory().appendingPathComponent("secrets")
        let secrets = try FileSecureStore(directory: directory)
        let store = InMemoryRuntimeStateStore()
        let runtime = try AgentRuntime(configuration: .init(
            authProvider: ChatGPTSessionManager(secureStore: secrets, httpClient: DefaultHTTPClient()), secureStore: secrets,
            backend: FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.hang])]), stateStore: store
        ))
        _ = try await runtime.signIn { try self.session(account: "acct-9") }
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "x"), in: thread.id)
        let consumer = Task { await collect(stream) }
        let result = await withTaskCancellationHandler {
            await eventually("the turn runs") { runtime.activeTurnID(in: thread.id) != nil }
            try? await runtime.signOut()
            return await consumer.value
        } onCancel: { consumer.cancel() }
        #expect(result.error is CancellationError)
        #expect(result.events.map(name).last == "turnInterrupted(interrupted_by_host)")
        #expect(try await store.latestTurn(of: thread.id)?.status == .interrupted)
        #expect(try await runtime.authenticationState() == .signedOut)
    }

    @Test func theSessionManagersStoreKeepsTheSessionAcrossARestart() async throws {
        let directory = try temporaryDirectory().appendingPathComponent("secrets")
        let first = try managed(directory)
        #expect(first.configuration.authProvider is ChatGPTSessionManager)
        #expect(try await first.authenticationState() == .signedOut)
        #expect(try await first.createThread().accountBinding == nil)

        let state = try await first.signIn { try self.session(account: "acct-7") }
        guard case .signedIn(let account) = state else { Issue.record("not signed in"); return }
        #expect(account.accountID == "acct-7")
        #expect(try await first.createThread().accountBinding == "acct-7")

        let restarted = try managed(directory)
        #expect(try await restarted.authenticationState() == state)
        #expect(try await restarted.createThread().accountBinding == "acct-7")
        try await restarted.useSession(try session(account: "acct-8"))
        #expect(try await restarted.createThread().accountBinding == "acct-8")
        try await restarted.signOut()
        #expect(try await restarted.authenticationState() == .signedOut)
        #expect(try await restarted.createThread().accountBinding == nil)
        #expect(try await managed(directory).authenticationState() == .signedOut)
    }

    @Test func aProviderThatKeepsNoSessionCannotSignInOrOut() async throws {
        let runtime = try runtime(secureStore: nil, authProvider: APIKeyAuthProvider(apiKey: "sk-test-000000"))
        for call in [
            { _ = try await runtime.authenticationState() },
            { try await runtime.signOut() },
            { try await runtime.useSession(try self.session(account: "acct-1")) },
        ] as [@Sendable () async throws -> Void] {
            let error = await #expect(throws: AgentRuntimeError.self) { try await call() }
            #expect(error?.code == .sessionManagementUnsupported)
        }
    }

    @Test func aSecureStoreThatNoProviderWouldReadIsRefused() async throws {
        let store = try FileSecureStore(directory: try temporaryDirectory().appendingPathComponent("secrets"))
        let alone = #expect(throws: AgentRuntimeError.self) { try runtime(secureStore: store) }
        #expect(alone?.code == .invalidConfiguration)
        let withAPIKey = #expect(throws: AgentRuntimeError.self) {
            try runtime(secureStore: store, authProvider: APIKeyAuthProvider(apiKey: "sk-test-000000"))
        }
        #expect(withAPIKey?.code == .invalidConfiguration)
        let other = ChatGPTSessionManager(
            secureStore: try FileSecureStore(directory: try temporaryDirectory().appendingPathComponent("other")), httpClient: DefaultHTTPClient()
        )
        let elsewhere = #expect(throws: AgentRuntimeError.self) { try runtime(secureStore: store, authProvider: other) }
        #expect(elsewhere?.code == .invalidConfiguration)
        let same = ChatGPTSessionManager(secureStore: store, httpClient: DefaultHTTPClient())
        #expect(try runtime(secureStore: store, authProvider: same).configuration.authProvider as? ChatGPTSessionManager === same)
    }
}
