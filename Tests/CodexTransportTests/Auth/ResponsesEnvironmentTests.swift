import CodexCore
import CodexTestSupport
@testable import CodexTransport
import Foundation
import Testing

/// The environment becomes a credential and an endpoint in one order, the one `codexctl` uses.
@Suite struct ResponsesEnvironmentTests {
    static func sessionFile(in home: URL) throws {
        let json = #"{"tokens":{"id_token":"\#(TestJWT.idToken(account: "acct-env"))","access_token":"\#(TestJWT.accessToken(expiresAt: 5_000, marker: "env"))","refresh_token":"rt","account_id":"acct-env"}}"#
        try Data(json.utf8).write(to: home.appendingPathComponent("auth.json"))
    }

    @Test func anAPIKeyVariableWinsWithItsOrganizationProjectAndBaseURL() async throws {
        let home = try temporaryDirectory("env-home")
        defer { try? FileManager.default.removeItem(at: home) }
        try Self.sessionFile(in: home)
        let resolved = try ResponsesEnvironment.resolve(
            ["OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1/", "OPENAI_ORG_ID": "org-1", "OPENAI_PROJECT_ID": "proj-1"],
            codexHome: home
        )
        #expect(resolved.source == .apiKeyVariable)
        #expect(resolved.endpoint.profile == .publicAPI)
        #expect(resolved.endpoint.baseURL.absoluteString == "http://127.0.0.1:8080/v1")
        let credentials = try await resolved.authProvider.credentials()
        #expect(credentials.bearerToken == "sk-env")
        #expect(credentials.organization == "org-1")
        #expect(credentials.project == "proj-1")
    }

    @Test func theCodexCLIFileComesNextAndASessionGoesToTheChatGPTBackend() async throws {
        let home = try temporaryDirectory("env-home")
        defer { try? FileManager.default.removeItem(at: home) }
        try Self.sessionFile(in: home)
        let session = try ResponsesEnvironment.resolve(["OPENAI_API_KEY": "", "OPENAI_BASE_URL": "https://ignored.example/v1"], codexHome: home)
        #expect(session.source == .codexCLI)
        #expect(session.endpoint == .chatGPT, "OPENAI_BASE_URL does not apply to the ChatGPT backend")
        #expect(try await session.authProvider.credentials().binding == "acct-env")

        try Data(#"{"OPENAI_API_KEY":"sk-file"}"#.utf8).write(to: home.appendingPathComponent("auth.json"))
        let key = try ResponsesEnvironment.resolve(["OPENAI_BASE_URL": "https://proxy.example/v1"], codexHome: home)
        #expect(key.source == .codexCLI)
        #expect(key.endpoint.profile == .publicAPI)
        #expect(key.endpoint.baseURL.absoluteString == "https://proxy.example/v1")
        #expect(try await key.authProvider.credentials().bearerToken == "sk-file")
    }

    @Test func aSavedKeyIsUsedOnlyWhenAskedForAndAnOrderCanPickOneSource() async throws {
        let home = try temporaryDirectory("env-home")
        let saved = home.appendingPathComponent("secrets")
        defer { try? FileManager.default.removeItem(at: home) }
        try FileSecureStore(directory: saved).save(Array("sk-saved".utf8), for: ResponsesEnvironment.savedAPIKeyEntry)
        #expect(try ResponsesEnvironment.resolveIfPresent([:], codexHome: home) == nil)
        let found = try #require(try ResponsesEnvironment.resolveIfPresent(["OPENAI_ORG_ID": "org-2"], codexHome: home, savedCredentials: saved))
        #expect(found.source == .savedCredentials)
        #expect(try await found.authProvider.credentials().bearerToken == "sk-saved")
        #expect(try await found.authProvider.credentials().organization == "org-2")
        // An order that names one source looks nowhere else.
        #expect(try ResponsesEnvironment.resolveIfPresent(["OPENAI_API_KEY": "sk-env"], codexHome: home, savedCredentials: saved, order: [.savedCredentials])?.source
            == .savedCredentials)
        #expect(try ResponsesEnvironment.resolveIfPresent(["OPENAI_API_KEY": "sk-env"], codexHome: home, savedCredentials: saved, order: [.codexCLI]) == nil)
    }

    /// A session signed in at another issuer is renewed there (it once went to OpenAI's issuer with the
    /// other issuer's refresh token); one saved without an issuer is OpenAI's.
    @Test func aSavedSessionIsRenewedByTheIssuerThatSignedItIn() async throws {
        let home = try temporaryDirectory("env-issuer")
        let saved = home.appendingPathComponent("secrets")
        defer { try? FileManager.default.removeItem(at: home) }
        let renewed = #"{"id_token":"\#(TestJWT.idToken(account: "acct-iss"))","access_token":"\#(TestJWT.accessToken(expiresAt: 4_000_000_000, marker: "new"))","refresh_token":"rt-2"}"#
        let issuer = try LoopbackHTTPServer(replies: [.json(renewed)])
        defer { issuer.shutdown() }
        var session = try ChatGPTSession(
            idToken: TestJWT.idToken(account: "acct-iss"), accessToken: TestJWT.accessToken(expiresAt: 1, marker: "old"), refreshToken: "rt-1"
        )
        session.issuer = try AuthIssuer(baseURL: issuer.baseURL).baseURL
        try ChatGPTSessionStore(store: try FileSecureStore(directory: saved)).save(session)
        let found = try #require(try ResponsesEnvironment.resolveIfPresent([:], codexHome: home, savedCredentials: saved))
        _ = try await found.authProvider.credentials()
        #expect(issuer.requests.map(\.path) == ["/oauth/token"])
        let stored = try #require(try ChatGPTSessionStore(store: try FileSecureStore(directory: saved)).load())
        #expect(stored.refreshToken == "rt-2")
        #expect(stored.issuer == session.issuer)
    }

    @Test func nothingFoundAndABadBaseURLAreTypedErrorsThatSayWhy() throws {
        let home = try temporaryDirectory("env-home")
        defer { try? FileManager.default.removeItem(at: home) }
        let none = #expect(throws: AgentRuntimeError.self) { try ResponsesEnvironment.resolve([:], codexHome: home) }
        #expect(none?.code == .notSignedIn)
        #expect(none?.message == "no credentials found (looked at OPENAI_API_KEY, the Codex CLI's auth.json)")
        for value in ["http://example.com/v1", "not a url", "https://user:pass@example.com/v1"] {
            let bad = #expect(throws: AgentRuntimeError.self) { try ResponsesEnvironment.resolve(["OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": value], codexHome: home) }
            #expect(bad?.code == .invalidEndpoint, "\(value)")
            #expect(bad?.message.hasPrefix("OPENAI_BASE_URL") == true, "\(value): \(bad?.message ?? "")")
            #expect(bad?.message.contains("pass") == false)
        }
    }

    @Test func anOriginNamesSchemeHostAndPortOnly() throws {
        let cases: [(String, String?)] = [
            ("https://user:secret@api.example.com/v1/responses?key=1#x", "https://api.example.com:443"),
            ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080"),
            ("http://[::1]:9/v1", "http://[::1]:9"),
            ("HTTP://LOCALHOST/v1", "http://LOCALHOST:80"),
        ]
        for (text, origin) in cases {
            #expect(HTTPRequest.origin(of: try #require(URL(string: text))) == origin, "\(text)")
        }
    }
}
