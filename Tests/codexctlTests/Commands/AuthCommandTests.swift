import CodexCore
import CodexTestSupport
import Foundation
import Glibc
import Testing

/// Signing in and out against hostile leftovers: what `logout` must remove, what a usage error must not
/// echo, an auth.json that holds nothing, a key typed at a terminal, and content exported with the key in it.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct AuthCommandTests {
    @Test func logoutRemovesWhatIsThereReadableOrNotAndLeftoverTemporaryFiles() async throws {
        let directory = try temporaryDirectory("logout")
        defer { try? FileManager.default.removeItem(at: directory) }
        let secrets = directory.appendingPathComponent("secrets")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // A key left group-readable, a session cut short, and a killed save's temporary copy of a key.
        try Data("sk-loose".utf8).write(to: secrets.appendingPathComponent("openai-api-key"))
        #expect(chmod(secrets.appendingPathComponent("openai-api-key").path, 0o640) == 0)
        try Data(#"{"idToken":"#.utf8).write(to: secrets.appendingPathComponent("chatgpt-session.json"))
        #expect(chmod(secrets.appendingPathComponent("chatgpt-session.json").path, 0o600) == 0)
        try Data("sk-half-saved".utf8).write(to: secrets.appendingPathComponent(".openai-api-key.123.tmp"))
        let logout = try await CommandRunner.codexctl(["logout", "--secrets", secrets.path], environment: SendCommandTests.environment(directory, apiKey: nil))
        #expect(logout.status == 0, "\(logout.stderr)")
        #expect(logout.stdout == "signed out: the saved session and API key are removed\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: secrets.path) == [])
    }

    /// Under umask 000 the directories made above the store are 0700 too: world-writable ones let any
    /// user swap the store for one holding their key. (A child shell sets the umask: it is per process.)
    @Test func theStoreAndTheDirectoriesAboveItArePrivateUnderUmask000() async throws {
        let directory = try temporaryDirectory("login-umask")
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key")
        try Data("sk-umask-key\n".utf8).write(to: key)
        let secrets = directory.appendingPathComponent("deep/a/b/secrets")
        let run = try await ChildProcess.run(URL(fileURLWithPath: "/bin/sh"), [
            "-c", "umask 000; exec \"$0\" login --with-api-key --secrets \"$1\" < \"$2\"",
            CommandRunner.productsDirectory.appendingPathComponent("codexctl").path, secrets.path, key.path,
        ], environment: SendCommandTests.environment(directory, apiKey: nil))
        #expect(run.status == 0, "\(run.stderr)")
        for path in ["deep", "deep/a", "deep/a/b", "deep/a/b/secrets"] {
            let mode = (try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(path).path)[.posixPermissions] as? Int) ?? -1
            #expect(mode == 0o700, "\(path): \(String(mode, radix: 8))")
        }
        let file = (try FileManager.default.attributesOfItem(atPath: secrets.appendingPathComponent("openai-api-key").path)[.posixPermissions] as? Int) ?? -1
        #expect(file == 0o600)
    }

    @Test func anExpiredTokenIsShownAsExpired() async throws {
        let directory = try temporaryDirectory("expired")
        defer { try? FileManager.default.removeItem(at: directory) }
        let home = directory.appendingPathComponent("codex-home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let json = #"{"tokens":{"id_token":"\#(TestJWT.idToken(account: "acct-old"))","access_token":"\#(TestJWT.accessToken(expiresAt: 1_000, marker: "old"))","refresh_token":"rt"}}"#
        try Data(json.utf8).write(to: home.appendingPathComponent("auth.json"))
        let environment = SendCommandTests.environment(directory, apiKey: nil)
        let text = try await CommandRunner.codexctl(["auth", "status"], environment: environment)
        #expect(text.stdout.contains(", token expired 1970-01-01T00:16:40Z"), "\(text.stdout)")
        let json2 = try await CommandRunner.codexctl(["auth", "status", "--json"], environment: environment)
        #expect(json2.stdout.contains(#""expired":true"#), "\(json2.stdout)")
    }

    @Test func aStrayArgumentToLoginIsNotEchoed() async throws {
        let directory = try temporaryDirectory("login-echo")
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await CommandRunner.codexctl(["login", "--with-api-key", "sk-proj-LEAKME"], environment: SendCommandTests.environment(directory, apiKey: nil))
        #expect(run.status == 64)
        #expect(run.stderr.hasPrefix("Error: login takes no argument (the key is read from standard input; the argument is not shown)\n"), "\(run.stderr)")
        #expect(!run.stderr.contains("LEAKME") && !run.stdout.contains("LEAKME"))
    }

    @Test func anAuthFileWithoutACredentialIsPassedOverForTheSavedKey() async throws {
        let directory = try temporaryDirectory("empty-auth")
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = SendCommandTests.environment(directory, apiKey: nil)
        let home = directory.appendingPathComponent("codex-home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: home.appendingPathComponent("auth.json"))
        // Alone, the empty file is the reason there is no credential, and it names the file.
        let alone = try await CommandRunner.codexctl(["auth", "status"], environment: environment)
        #expect(alone.status == 1)
        #expect(alone.stderr.contains("the Codex CLI auth file \(home.path)/auth.json holds no session or API key"), "\(alone.stderr)")
        // With a saved key, the key is used.
        let saved = try await CommandRunner.codexctl(["login", "--with-api-key"], stdin: "sk-saved-key\n", environment: environment)
        #expect(saved.status == 0, "\(saved.stderr)")
        let status = try await CommandRunner.codexctl(["auth", "status", "--json"], environment: environment)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains(#""mode":"api-key""#), "\(status.stdout)")
    }

    @Test func aKeyIsNotReadFromATerminal() async throws {
        let directory = try temporaryDirectory("login-tty")
        defer { try? FileManager.default.removeItem(at: directory) }
        let terminal = try PseudoTerminal(
            [CommandRunner.productsDirectory.appendingPathComponent("codexctl").path, "login", "--with-api-key", "--secrets", directory.appendingPathComponent("secrets").path],
            environment: SendCommandTests.environment(directory, apiKey: nil), directory: directory
        )
        #expect(await terminal.waitFor("standard input is a terminal: pipe the key in"), "\(terminal.screen)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("secrets/openai-api-key").path))
    }

    @Test func exportedContentHasTheKeyInUseRedacted() async throws {
        let directory = try temporaryDirectory("send-otel-content")
        defer { try? FileManager.default.removeItem(at: directory) }
        let receiver = try await OTLPTestReceiver.start()
        defer { receiver.stopNow() }
        let server = try LoopbackHTTPServer(replies: [.sse(SendCommandTests.reply(["Hello"]))])
        defer { server.shutdown() }
        // A key of no well-known shape: only knowing it is the key in use redacts it.
        let key = "0123456789abcdef0123456789abcdef"
        var environment = SendCommandTests.environment(directory, apiKey: key)
        environment["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint.absoluteString
        environment["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
        let run = try await CommandRunner.codexctl(
            ["send", "--ephemeral", "my key is \(key)", "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString], environment: environment
        )
        #expect(run.status == 0, "\(run.stderr)")
        let received = try await receiver.received()
        let inputs = received.spans.compactMap { $0.attributes["gen_ai.input.messages"] }
        #expect(!inputs.isEmpty)
        #expect(inputs.allSatisfy { !"\($0)".contains(key) && "\($0)".contains("my key is") }, "\(inputs)")
    }
}
