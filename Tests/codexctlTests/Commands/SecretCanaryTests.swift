import CodexCore
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Canary tokens through the CLI: the demo (a whole turn, tools, structured output and a recovery
/// lifecycle over HTTP with its bearer token), `auth status` over a saved session, the Codex CLI's
/// auth.json and an API key, and a rejected key echoed back by the server. The canary may appear only
/// where a secret must be kept: the secret store's and auth.json's own files.
@Suite struct SecretCanaryTests {
    /// Every byte of every regular file under `directory`, by relative path.
    private func files(under directory: URL) throws -> [String: Data] {
        var found: [String: Data] = [:]
        for path in try FileManager.default.subpathsOfDirectory(atPath: directory.path) {
            let url = directory.appendingPathComponent(path)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            found[path] = try Data(contentsOf: url)
        }
        return found
    }

    private func contains(_ data: Data, _ canary: String) -> Bool {
        data.range(of: Data(canary.utf8)) != nil
    }

    @Test func theDemoWritesItsBearerTokenToNoFileAndNoOutput() async throws {
        let canary = "demo-offline-token"
        let directory = try temporaryDirectory("canary-demo")
        defer { try? FileManager.default.removeItem(at: directory) }
        let kept = directory.appendingPathComponent("kept")
        let temporary = directory.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        for arguments in [["demo", "--keep", kept.path], ["demo", "--json"]] {
            let run = try await CommandRunner.codexctl(arguments, environment: ["TMPDIR": temporary.path])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(!run.stdout.contains(canary) && !run.stderr.contains(canary))
        }
        let written = try files(under: directory)
        #expect(written.keys.contains { $0.hasSuffix("state.sqlite") }, "the kept store is scanned: \(written.keys.sorted())")
        #expect(written.keys.contains { $0.contains("recovery") }, "the recovery store is scanned: \(written.keys.sorted())")
        for (path, data) in written { #expect(!contains(data, canary), "\(path)") }
    }

    @Test func authStatusAndARejectedKeyNeverPrintATokenOrKey() async throws {
        let directory = try temporaryDirectory("canary-auth")
        defer { try? FileManager.default.removeItem(at: directory) }
        let secrets = directory.appendingPathComponent("secrets")
        let codexHome = directory.appendingPathComponent("codex-home")
        try FileManager.default.createDirectory(at: codexHome, withIntermediateDirectories: true)
        let sessionAccess = TestJWT.accessToken(expiresAt: 4_000_000_000, marker: "CANARY-store")
        let sessionRefresh = "rt-CANARY-store-83c1"
        try ChatGPTSessionStore(store: try FileSecureStore(directory: secrets)).save(
            try ChatGPTSession(idToken: TestJWT.idToken(account: "acct-store"), accessToken: sessionAccess, refreshToken: sessionRefresh)
        )
        let fileAccess = TestJWT.accessToken(expiresAt: 4_000_000_000, marker: "CANARY-cli")
        let fileRefresh = "rt-CANARY-cli-19ab"
        let authFile = #"{"tokens":{"id_token":"\#(TestJWT.idToken(account: "acct-cli"))","access_token":"\#(fileAccess)","refresh_token":"\#(fileRefresh)","account_id":"acct-cli"}}"#
        try Data(authFile.utf8).write(to: codexHome.appendingPathComponent("auth.json"))
        let key = "sk-CANARY-key-4be2"
        let canaries = [sessionAccess, sessionRefresh, fileAccess, fileRefresh, key, "CANARY"]
        let before = try files(under: directory)
        // The search finds a canary where one is kept (the positive control for every check below).
        #expect(contains(try #require(before["secrets/chatgpt-session.json"]), sessionRefresh))

        var outputs: [String] = []
        let sources: [[String: String]] = [["OPENAI_API_KEY": key], ["OPENAI_API_KEY": ""]]
        for environment in sources {
            for json in [false, true] {
                let arguments = ["auth", "status", "--secrets", secrets.path, "--codex-home", codexHome.path] + (json ? ["--json"] : [])
                let run = try await CommandRunner.codexctl(arguments, environment: environment)
                #expect(run.status == 0, "\(run.stderr)")
                outputs += [run.stdout, run.stderr]
            }
        }
        // Without the auth file the saved session is the credential.
        try FileManager.default.removeItem(at: codexHome.appendingPathComponent("auth.json"))
        let stored = try await CommandRunner.codexctl(["auth", "status", "--json", "--secrets", secrets.path, "--codex-home", codexHome.path], environment: ["OPENAI_API_KEY": ""])
        #expect(stored.status == 0 && stored.stdout.contains("acct-store"), "\(stored.stdout)")
        outputs += [stored.stdout, stored.stderr]

        // A server that rejects the key and echoes it back.
        let server = try LoopbackHTTPServer(replies: [.json(#"{"error":{"message":"Incorrect API key provided: \#(key)","type":"invalid_request_error","code":"invalid_api_key"}}"#, status: 401)])
        defer { server.shutdown() }
        let database = directory.appendingPathComponent("state.sqlite").path
        for json in [false, true] {
            let rejected = try await CommandRunner.codexctl(
                ["send", "Hi", "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString, "--db", database, "--verbose"] + (json ? ["--json"] : []),
                environment: ["OPENAI_API_KEY": key, "CODEX_HOME": codexHome.path, "CODEXKIT_HOME": directory.appendingPathComponent("none").path]
            )
            #expect(rejected.status != 0)
            outputs += [rejected.stdout, rejected.stderr]
        }
        #expect(server.requests.first?.header("authorization") == "Bearer \(key)", "the server did get the key")
        for output in outputs {
            for canary in canaries { #expect(!output.contains(canary), "\(output.prefix(300))") }
        }
        // Files: the secret store's session file held the session before; the only new file is the
        // state database (and its journal), which holds none of them.
        let after = try files(under: directory)
        for (path, data) in after where before[path] == nil {
            for canary in canaries { #expect(!contains(data, canary), "\(path)") }
        }
        #expect(Set(after.keys).subtracting(before.keys).allSatisfy { $0.hasPrefix("state.sqlite") }, "\(after.keys.sorted())")
    }
}
