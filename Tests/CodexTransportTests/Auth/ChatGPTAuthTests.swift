import CodexCore
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization
import Testing

@Suite struct ChatGPTSessionTests {
    @Test func claimsComeFromTheTokens() throws {
        let session = try ChatGPTSession(
            idToken: TestJWT.idToken(account: "acct-9", plan: "pro"), accessToken: TestJWT.accessToken(expiresAt: 2_000, marker: "a"),
            refreshToken: "rt.1.secret"
        )
        #expect(session.accountID == "acct-9")
        #expect(session.planType == "pro")
        #expect(session.email == "ada@example.com")
        #expect(session.userID == "user-1")
        #expect(session.expiresAt == Date(timeIntervalSince1970: 2_000))
        #expect(session.needsRefresh(now: Date(timeIntervalSince1970: 1_881)))
        #expect(!session.needsRefresh(now: Date(timeIntervalSince1970: 1_879)))
        #expect(session.description == "ChatGPTSession(account: acct-9, plan: pro, tokens: <redacted>)")
        #expect(!session.credentials.description.contains("rt.1"))
        #expect(session.credentials.accountID == "acct-9")
        #expect(throws: AgentRuntimeError.self) { try ChatGPTSession(idToken: "not-a-jwt", accessToken: "x", refreshToken: "y") }
    }
}

@Suite struct ChatGPTSessionAuthProviderTests {
    private let now = ManualWallClock(Date(timeIntervalSince1970: 1_000))

    private func session(expiresAt: TimeInterval, account: String = "acct-1") throws -> ChatGPTSession {
        try ChatGPTSession(idToken: TestJWT.idToken(account: account), accessToken: TestJWT.accessToken(expiresAt: expiresAt, marker: "old"),
                           refreshToken: "rt-old")
    }

    private func tokenReply(account: String = "acct-1", expiresAt: TimeInterval = 10_000) -> ScriptedReply {
        .json(#"{"id_token":"\#(TestJWT.idToken(account: account))","access_token":"\#(TestJWT.accessToken(expiresAt: expiresAt, marker: "new"))","refresh_token":"rt-new"}"#)
    }

    @Test func refreshesWithinTheSkewAndSavesTheSession() async throws {
        let server = try LoopbackHTTPServer(replies: [tokenReply()])
        defer { server.shutdown() }
        let store = ChatGPTSessionStore(store: try FileSecureStore(directory: try temporaryDirectory().appendingPathComponent("s")))
        let log = InMemoryAgentLogSink()
        let provider = ChatGPTSessionAuthProvider(
            session: try session(expiresAt: 1_100), issuer: try AuthIssuer(baseURL: server.baseURL), httpClient: DefaultHTTPClient(),
            store: store, wallClock: now, logSink: log
        )
        let credentials = try await provider.credentials()
        #expect(credentials.bearerToken == TestJWT.accessToken(expiresAt: 10_000, marker: "new"))
        #expect(credentials.accountID == "acct-1")
        let request = try #require(server.requests.first)
        #expect(request.path == "/oauth/token")
        #expect(request.header("content-type") == "application/json")
        #expect(String(decoding: request.body, as: UTF8.self)
            == #"{"client_id":"app_EMoamEEZ73f0CkXaXp7hrann","grant_type":"refresh_token","refresh_token":"rt-old"}"#)
        #expect(try store.load()?.refreshToken == "rt-new")
        #expect(try store.load()?.lastRefresh == Date(timeIntervalSince1970: 1_000))
        #expect(log.events.map(\.name) == ["auth.session.refreshed"])
        #expect(!log.events.contains { "\($0)".contains("rt-") || "\($0)".contains(credentials.bearerToken) })
        _ = try await provider.credentials()
        #expect(server.requests.count == 1)
    }

    @Test func concurrentRefreshesShareOneRequest() async throws {
        let server = try LoopbackHTTPServer(replies: [
            ScriptedReply(headers: [.init(name: "Content-Type", value: "application/json")],
                          parts: [.delay(.milliseconds(200)), .bytes(Array(#"{"access_token":"\#(TestJWT.accessToken(expiresAt: 10_000, marker: "n"))"}"#.utf8))]),
        ])
        defer { server.shutdown() }
        let provider = ChatGPTSessionAuthProvider(
            session: try session(expiresAt: 900), issuer: try AuthIssuer(baseURL: server.baseURL), httpClient: DefaultHTTPClient(), wallClock: now
        )
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<10 { group.addTask { try await provider.credentials().bearerToken } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens.count == 1)
        #expect(server.requests.count == 1)
        #expect(await provider.refreshes == 1)
        #expect(await provider.currentSession.refreshToken == "rt-old") // not in the reply: kept
    }

    @Test func aRefreshedSessionForAnotherAccountIsRefused() async throws {
        let server = try LoopbackHTTPServer(replies: [tokenReply(account: "acct-other")])
        defer { server.shutdown() }
        let original = try session(expiresAt: 900)
        let provider = ChatGPTSessionAuthProvider(
            session: original, issuer: try AuthIssuer(baseURL: server.baseURL), httpClient: DefaultHTTPClient(), wallClock: now
        )
        let error = await #expect(throws: AgentRuntimeError.self) { try await provider.credentials() }
        #expect(error?.code == .accountMismatch)
        #expect(await provider.currentSession == original)
    }

    @Test func aRejectedRefreshTokenFailsPermanentlyWithoutLeakingIt() async throws {
        let server = try LoopbackHTTPServer(replies: [.json(#"{"error":{"code":"refresh_token_reused"}}"#, status: 401)])
        defer { server.shutdown() }
        let provider = ChatGPTSessionAuthProvider(
            session: try session(expiresAt: 900), issuer: try AuthIssuer(baseURL: server.baseURL), httpClient: DefaultHTTPClient(), wallClock: now
        )
        let error = await #expect(throws: AgentRuntimeError.self) { try await provider.credentials() }
        #expect(error?.code == .refreshFailed)
        #expect(error?.http?.providerCode == "refresh_token_reused")
        #expect(error?.description.contains("rt-old") == false)
    }

    @Test func recoveryAfterA401RefreshesOnlyWhenTheTokenIsStillTheRejectedOne() async throws {
        let server = try LoopbackHTTPServer(replies: [tokenReply()])
        defer { server.shutdown() }
        let provider = ChatGPTSessionAuthProvider(
            session: try session(expiresAt: 9_000), issuer: try AuthIssuer(baseURL: server.baseURL), httpClient: DefaultHTTPClient(), wallClock: now
        )
        let rejected = try await provider.credentials()
        #expect(server.requests.isEmpty)
        let renewed = try #require(try await provider.recoverAfterUnauthorized(rejected))
        #expect(renewed.bearerToken != rejected.bearerToken)
        #expect(try await provider.recoverAfterUnauthorized(rejected) == renewed)
        #expect(server.requests.count == 1)
    }
}

@Suite struct CodexCLIAuthFileTests {
    @Test func readsTokensOrAnAPIKeyFromCodexHome() async throws {
        let home = try temporaryDirectory("codex-home")
        let file = CodexCLIAuthFile(environment: ["CODEX_HOME": home.path])
        #expect(file.url == home.appendingPathComponent("auth.json"))
        #expect(try file.read() == nil)
        let json = #"{"auth_mode":"chatgpt","OPENAI_API_KEY":null,"tokens":{"id_token":"\#(TestJWT.idToken(account: "acct-cli"))","access_token":"\#(TestJWT.accessToken(expiresAt: 5_000, marker: "cli"))","refresh_token":"rt-cli","account_id":"acct-cli"},"last_refresh":"2026-11-01T10:00:00.123Z"}"#
        try Data(json.utf8).write(to: file.url)
        guard case .chatGPT(let session)? = try file.read() else {
            Issue.record("no session")
            return
        }
        #expect(session.accountID == "acct-cli")
        #expect(session.lastRefresh != nil)
        let provider = CodexCLIAuthProvider(file: file)
        let credentials = try await provider.credentials()
        #expect(credentials.binding == "acct-cli")
        #expect(try await provider.recoverAfterUnauthorized(credentials) == nil)

        try Data(#"{"OPENAI_API_KEY":"sk-test"}"#.utf8).write(to: file.url)
        #expect(try file.read() == .apiKey("sk-test"))
        try Data("{not json".utf8).write(to: file.url)
        #expect((#expect(throws: AgentRuntimeError.self) { try file.read() })?.code == .secureStoreFailure)
        #expect(CodexCLIAuthFile(environment: ["HOME": "/home/x"]).url.path == "/home/x/.codex/auth.json")
    }

    /// In a process of its own (this one's memory and reads also carry the suites beside it): a 600 MB
    /// auth file is refused from its size, before a byte of it is read.
    @Test func anOversizedAuthFileIsRefusedBeforeItIsRead() async throws {
        let home = try temporaryDirectory("codex-home-huge")
        let path = home.appendingPathComponent("auth.json").path
        let descriptor = open(path, O_WRONLY | O_CREAT, 0o600)
        #expect(descriptor >= 0)
        #expect(ftruncate(descriptor, 600_000_000) == 0, "a sparse file: no disk is used")
        close(descriptor)
        let failure = #expect(throws: AgentRuntimeError.self) { try CodexCLIAuthFile(url: URL(fileURLWithPath: path)).read() }
        #expect(failure?.code == .secureStoreFailure)
        #expect(failure?.message == "the Codex CLI auth file is unusable: \(path) is larger than 1048576 bytes")
        let outcome = try await ChildProcess.run(ChildProcess.product("TransportFixture"), ["read-auth", "--path", path])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let figures = try JSONDecoder().decode([String: Int].self, from: Data(outcome.stdout.utf8))
        #expect(figures["secureStoreFailure"] == 1)
        #expect((figures["read"] ?? .max) < 64 * 1024, "the refusal read \(figures["read"] ?? -1) bytes")
        #expect((figures["peak"] ?? .max) - (figures["baseline"] ?? 0) < 16 * 1024 * 1024 * Sanitizer.slowdown, "\(figures)")
    }

    @Test func anUnreadableAuthFileNamesThePathAndTheSystemCause() async throws {
        let home = try temporaryDirectory("codex-home-dir")
        let url = home.appendingPathComponent("auth.json")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        let failure = #expect(throws: AgentRuntimeError.self) { try CodexCLIAuthFile(url: url).read() }
        #expect(failure?.code == .secureStoreFailure)
        #expect(failure?.message == "the Codex CLI auth file is unusable: \(url.path) is not a regular file")
        #expect(try CodexCLIAuthFile(url: home.appendingPathComponent("missing/auth.json")).read() == nil)
    }

    @Test func apiKeysComeFromTheEnvironmentAndBindToADigest() async throws {
        #expect(APIKeyAuthProvider(environment: [:]) == nil)
        let provider = try #require(APIKeyAuthProvider(environment: ["OPENAI_API_KEY": "sk-abc"]))
        let credentials = try await provider.credentials()
        #expect(credentials.bearerToken == "sk-abc")
        #expect(credentials.binding == "api-key:" + String(SHA256.hexDigest(of: Array("sk-abc".utf8)).prefix(16)))
        #expect(!credentials.description.contains("sk-abc"))
    }

    /// A key or setting no header can carry is a typed configuration error naming the setting, not its
    /// value (it failed later as a request with "an invalid name or a line break").
    @Test func aKeyOrSettingNoHeaderCanCarryIsAConfigurationError() async throws {
        for environment in [
            ["OPENAI_API_KEY": "sk-a\r\nX-Injected: 1"], ["OPENAI_API_KEY": "sk-a b"], ["OPENAI_API_KEY": "sk-\u{FF}"],
            ["OPENAI_API_KEY": "sk-ok", "OPENAI_ORG_ID": "org\n1"], ["OPENAI_API_KEY": "sk-ok", "OPENAI_PROJECT": "proj-é"],
        ] {
            let provider = try #require(APIKeyAuthProvider(environment: environment))
            let error = await #expect(throws: AgentRuntimeError.self, "\(environment)") { _ = try await provider.credentials() }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.message.contains("sk-a") == false && error?.message.contains("org") != (environment["OPENAI_ORG_ID"] == nil))
        }
        // A space inside an organization name is a valid header value.
        let spaced = try #require(APIKeyAuthProvider(environment: ["OPENAI_API_KEY": "sk-ok", "OPENAI_ORGANIZATION": "Acme Corp"]))
        #expect(try await spaced.credentials().organization == "Acme Corp")
    }
}

@Suite struct DeviceCodeSignInTests {
    /// An issuer's interval is held between one second and the code's 15 minutes (1e300 once crashed
    /// the conversion to milliseconds).
    @Test(arguments: [("1e300", 900), ("9223372036854775", 900), ("0", 1), ("-5", 1), ("\"nan\"", 5), ("7", 7)])
    func theIntervalIsHeldToWhatTheCodeCanUse(interval: String, seconds: Int) async throws {
        let server = try LoopbackHTTPServer(replies: [.json(#"{"device_auth_id":"d","user_code":"U","interval":\#(interval)}"#)])
        defer { server.shutdown() }
        let code = try await DeviceCodeSignIn(issuer: try AuthIssuer(baseURL: server.baseURL), httpClient: DefaultHTTPClient()).requestCode()
        #expect(code.interval == .seconds(seconds))
    }

    @Test func pollsUntilApprovedThenExchanges() async throws {
        let exchanged = #"{"id_token":"\#(TestJWT.idToken(account: "acct-dev"))","access_token":"\#(TestJWT.accessToken(expiresAt: 9_999, marker: "d"))","refresh_token":"rt-dev"}"#
        let server = try LoopbackHTTPServer(replies: [
            .json(#"{"device_auth_id":"dev-1","user_code":"ABCD-1234","interval":"2"}"#),
            .json("{}", status: 403), .json("{}", status: 404),
            .json(#"{"authorization_code":"code-1","code_challenge":"ch","code_verifier":"ver-1"}"#),
            .json(exchanged),
        ])
        defer { server.shutdown() }
        let clock = ImmediateClock()
        let signIn = DeviceCodeSignIn(issuer: try AuthIssuer(baseURL: server.baseURL), httpClient: DefaultHTTPClient(), clock: clock,
                                      wallClock: ManualWallClock(Date(timeIntervalSince1970: 42)))
        let code = try await signIn.requestCode()
        #expect(code.userCode == "ABCD-1234")
        #expect(code.interval == .seconds(2))
        #expect(code.verificationURL == server.baseURL.appendingPathComponent("codex/device"))
        let session = try await signIn.waitForApproval(code)
        #expect(session.accountID == "acct-dev")
        #expect(session.issuer == (try AuthIssuer(baseURL: server.baseURL)).baseURL)
        #expect(session.lastRefresh == Date(timeIntervalSince1970: 42))
        #expect(clock.sleeps == [.seconds(2), .seconds(2)])
        #expect(server.requests.map(\.path) == [
            "/api/accounts/deviceauth/usercode", "/api/accounts/deviceauth/token", "/api/accounts/deviceauth/token",
            "/api/accounts/deviceauth/token", "/oauth/token",
        ])
        #expect(String(decoding: server.requests[1].body, as: UTF8.self) == #"{"device_auth_id":"dev-1","user_code":"ABCD-1234"}"#)
        let form = String(decoding: server.requests[4].body, as: UTF8.self)
        #expect(server.requests[4].header("content-type") == "application/x-www-form-urlencoded")
        #expect(form == "grant_type=authorization_code&code=code-1&redirect_uri=\(server.baseURL.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")%2Fdeviceauth%2Fcallback&client_id=app_EMoamEEZ73f0CkXaXp7hrann&code_verifier=ver-1"
            .replacingOccurrences(of: "%2E", with: "."))
    }

    @Test func unavailableAndExpiredAreTypedErrors() async throws {
        let missing = try LoopbackHTTPServer(replies: [.json("{}", status: 404)])
        defer { missing.shutdown() }
        let unavailable = await #expect(throws: AgentRuntimeError.self) {
            _ = try await DeviceCodeSignIn(issuer: try AuthIssuer(baseURL: missing.baseURL), httpClient: DefaultHTTPClient()).requestCode()
        }
        #expect(unavailable?.code == .deviceCodeUnavailable)

        let pending = try LoopbackHTTPServer { request in
            request.path.hasSuffix("usercode") ? .json(#"{"device_auth_id":"d","usercode":"U","interval":"300"}"#) : .json("{}", status: 403)
        }
        defer { pending.shutdown() }
        let clock = ImmediateClock()
        let signIn = DeviceCodeSignIn(issuer: try AuthIssuer(baseURL: pending.baseURL), httpClient: DefaultHTTPClient(), clock: clock)
        let code = try await signIn.requestCode()
        let expired = await #expect(throws: AgentRuntimeError.self) { _ = try await signIn.waitForApproval(code) }
        #expect(expired?.code == .deviceCodeExpired)
        // Polls at 0, 300, 600 and 900 s, then gives up: 3 waits, 1 code request + 4 polls.
        #expect(clock.sleeps == [.seconds(300), .seconds(300), .seconds(300)])
        #expect(pending.requests.count == 5)
    }
}
