import CodexCore
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// The session manager over a real secure-store directory and the loopback issuer.
@Suite struct ChatGPTSessionManagerTests {
    private let now = ManualWallClock(Date(timeIntervalSince1970: 1_000))

    private func session(account: String = "acct-1", expiresAt: TimeInterval = 9_000, marker: String = "old") throws -> ChatGPTSession {
        try ChatGPTSession(idToken: TestJWT.idToken(account: account), accessToken: TestJWT.accessToken(expiresAt: expiresAt, marker: marker),
                           refreshToken: "rt-\(marker)")
    }

    private func manager(_ directory: URL, issuer: URL = URL(string: "http://127.0.0.1:9")!, log: InMemoryAgentLogSink = InMemoryAgentLogSink())
        throws -> ChatGPTSessionManager {
        ChatGPTSessionManager(
            secureStore: try FileSecureStore(directory: directory), issuer: try AuthIssuer(baseURL: issuer), httpClient: DefaultHTTPClient(),
            wallClock: now, logSink: log
        )
    }

    @Test func withoutASessionRequestsFailAsNotSignedIn() async throws {
        let manager = try manager(try temporaryDirectory().appendingPathComponent("secrets"))
        #expect(try await manager.authenticationState() == .signedOut)
        #expect(await manager.currentBinding() == nil)
        let error = await #expect(throws: AgentRuntimeError.self) { try await manager.credentials() }
        #expect(error?.code == .notSignedIn)
    }

    @Test func aSignInIsSavedAndAFreshManagerRestoresIt() async throws {
        let directory = try temporaryDirectory().appendingPathComponent("secrets")
        let log = InMemoryAgentLogSink()
        let first = try manager(directory, log: log)
        let signedIn = try session()
        let state = try await first.signIn { signedIn }
        #expect(state == .signedIn(.init(accountID: "acct-1", email: signedIn.email, planType: signedIn.planType, expiresAt: Date(timeIntervalSince1970: 9_000))))
        #expect(log.events.map(\.name) == ["auth.session.signed_in"])
        let restored = try manager(directory)
        #expect(try await restored.authenticationState() == state)
        #expect(await restored.currentBinding() == "acct-1")
        #expect(try await restored.credentials().bearerToken == signedIn.accessToken)
        let mode = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("chatgpt-session.json").path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func signingOutForgetsTheSessionInMemoryAndOnDisk() async throws {
        let directory = try temporaryDirectory().appendingPathComponent("secrets")
        let log = InMemoryAgentLogSink()
        let manager = try manager(directory, log: log)
        try await manager.useSession(try session())
        try await manager.signOut()
        #expect(try await manager.authenticationState() == .signedOut)
        let error = await #expect(throws: AgentRuntimeError.self) { try await manager.credentials() }
        #expect(error?.code == .notSignedIn)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("chatgpt-session.json").path))
        #expect(try await self.manager(directory).authenticationState() == .signedOut)
        #expect(log.events.map(\.name) == ["auth.session.signed_out"])
    }

    @Test func usingAnotherSessionSwitchesTheBinding() async throws {
        let manager = try manager(try temporaryDirectory().appendingPathComponent("secrets"))
        try await manager.useSession(try session(account: "acct-1"))
        try await manager.useSession(try session(account: "acct-2", marker: "two"))
        #expect(await manager.currentBinding() == "acct-2")
        #expect(try await manager.credentials().binding == "acct-2")
    }

    @Test func concurrentCallersShareOneRefreshWhichIsAppliedAndSavedOnce() async throws {
        let server = try LoopbackHTTPServer(replies: [
            ScriptedReply(headers: [.init(name: "Content-Type", value: "application/json")], parts: [.hold,
                .bytes(Array(#"{"access_token":"\#(TestJWT.accessToken(expiresAt: 10_000, marker: "new"))","refresh_token":"rt-new"}"#.utf8))]),
        ])
        defer { server.shutdown() }
        let log = InMemoryAgentLogSink()
        let directory = try temporaryDirectory().appendingPathComponent("secrets")
        let manager = try manager(directory, issuer: server.baseURL, log: log)
        try await manager.useSession(try session(expiresAt: 1_050))
        let callers = (0..<10).map { _ in Task { try await manager.credentials().bearerToken } }
        let tokens = try await withTaskCancellationHandler {
            #expect(await server.waitForRequests(count: 1, timeout: .hangGuard))
            server.releaseHeld()
            var tokens: Set<String> = []
            for caller in callers { tokens.insert(try await caller.value) }
            return tokens
        } onCancel: { callers.forEach { $0.cancel() } }
        #expect(tokens == [TestJWT.accessToken(expiresAt: 10_000, marker: "new")])
        #expect(server.requests.count == 1)
        #expect(await manager.refreshes == 1)
        #expect(log.events(named: "auth.session.refreshed").count == 1)
        #expect(try await self.manager(directory).credentials().bearerToken == TestJWT.accessToken(expiresAt: 10_000, marker: "new"))
    }

    @Test func aSignInThatFinishesAfterASignOutIsDropped() async throws {
        let directory = try temporaryDirectory().appendingPathComponent("secrets")
        let manager = try manager(directory)
        try await manager.useSession(try session())
        let started = AsyncStream<Void>.makeStream()
        let release = AsyncStream<Void>.makeStream()
        let late = try session(account: "acct-late", marker: "late")
        let signIn = Task {
            try await manager.signIn {
                started.continuation.yield()
                var gate = release.stream.makeAsyncIterator()
                _ = await gate.next()
                return late
            }
        }
        let result = try await withTaskCancellationHandler {
            var starts = started.stream.makeAsyncIterator()
            _ = await starts.next()
            try await manager.signOut()
            release.continuation.yield()
            return await signIn.result
        } onCancel: { signIn.cancel() }
        #expect((result.failure as? AgentRuntimeError)?.code == .sessionReplaced)
        #expect(try await manager.authenticationState() == .signedOut)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("chatgpt-session.json").path))
    }

    @Test func aRefreshInFlightAtSignOutNeverRevivesTheSession() async throws {
        let reply = ScriptedReply(headers: [.init(name: "Content-Type", value: "application/json")], parts: [.hold,
            .bytes(Array(#"{"access_token":"\#(TestJWT.accessToken(expiresAt: 10_000, marker: "new"))","refresh_token":"rt-new"}"#.utf8))])
        let server = try LoopbackHTTPServer(replies: [reply])
        defer { server.shutdown() }
        let directory = try temporaryDirectory().appendingPathComponent("secrets")
        let manager = try manager(directory, issuer: server.baseURL)
        try await manager.useSession(try session(expiresAt: 1_050))  // within the 120 s skew: the next use refreshes
        let use = Task { try await manager.credentials() }
        let result = try await withTaskCancellationHandler {
            #expect(await server.waitForRequests(count: 1, timeout: .hangGuard))
            try await manager.signOut()
            server.releaseHeld()
            return await use.result
        } onCancel: { use.cancel() }
        #expect((result.failure as? AgentRuntimeError)?.code == .notSignedIn)
        #expect(try await manager.authenticationState() == .signedOut)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("chatgpt-session.json").path))
        #expect(await manager.refreshes == 1)
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
