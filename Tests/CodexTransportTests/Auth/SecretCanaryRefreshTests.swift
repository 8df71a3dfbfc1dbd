import CodexCore
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// A refresh the issuer rejects while echoing the tokens back: the canary tokens reach only the
/// issuer's request and the secret store's own file, never an error text, a log line or another file.
@Suite struct SecretCanaryRefreshTests {
    @Test func aFailedRefreshThatEchoesTheTokensLeaksThemNowhere() async throws {
        let refreshCanary = "rt-CANARY-5d1e9b7c"
        let accessCanary = TestJWT.accessToken(expiresAt: 1_050, marker: "CANARY-a41f")
        let echo = #"{"error":{"code":"invalid_grant","message":"refresh token \#(refreshCanary) for \#(accessCanary) was revoked"}}"#
        let server = try LoopbackHTTPServer(replies: [.json(echo, status: 401)])
        defer { server.shutdown() }
        let directory = try temporaryDirectory("canary-refresh")
        defer { try? FileManager.default.removeItem(at: directory) }
        let secrets = directory.appendingPathComponent("secrets")
        let log = InMemoryAgentLogSink()
        let manager = ChatGPTSessionManager(
            secureStore: try FileSecureStore(directory: secrets), issuer: try AuthIssuer(baseURL: server.baseURL), httpClient: DefaultHTTPClient(),
            wallClock: ManualWallClock(Date(timeIntervalSince1970: 1_000)), logSink: log
        )
        try await manager.useSession(try ChatGPTSession(idToken: TestJWT.idToken(account: "acct-1"), accessToken: accessCanary, refreshToken: refreshCanary))

        let error = await #expect(throws: AgentRuntimeError.self) { try await manager.credentials() }
        #expect(error?.code == .refreshFailed)
        #expect(server.requests.count == 1)
        #expect(String(decoding: try #require(server.requests.first).body, as: UTF8.self).contains(refreshCanary), "the issuer did get the token")

        var texts: [String] = []
        if let error {
            texts += [error.description, error.message, String(reflecting: error), error.localizedDescription, "\(error.http as Any)"]
            var cause = error.underlying
            while let current = cause {
                texts += [String(describing: current), String(reflecting: current)]
                cause = (current as? AgentRuntimeError)?.underlying
            }
        }
        texts += log.events.map { "\($0.name) \($0.metadata)" }
        #expect(!log.events.isEmpty, "the failure is logged")
        for text in texts {
            #expect(!text.contains(refreshCanary) && !text.contains(accessCanary) && !text.contains("CANARY"), "\(text.prefix(200))")
        }
        // The secret store's session file is the one file that holds them (mode 0600); nothing else was written.
        let files = try FileManager.default.subpathsOfDirectory(atPath: directory.path).filter {
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: directory.appendingPathComponent($0).path, isDirectory: &isDirectory) && !isDirectory.boolValue
        }
        #expect(files == ["secrets/chatgpt-session.json"])
    }
}
