import CodexSchema
import CodexTestSupport
import Foundation
import Testing

@Suite struct ResponsesDecodeCommandTests {
    let streams = CommandRunner.repositoryRoot.appendingPathComponent("Tests/CodexTransportTests/Fixtures/streams")

    @Test func printsOneJSONLinePerEventAndASummary() async throws {
        let result = try await CommandRunner.codexctl(["responses", "decode", streams.appendingPathComponent("codex-cli-minimal.sse").path])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines[0] == #"{"type":"response.created","sequence_number":null,"response_id":"resp1"}"#)
        #expect(lines[1].hasPrefix(#"{"type":"response.output_item.done","sequence_number":null,"output_index":0,"item":{"type":"message""#))
        #expect(lines[3] == #"{"type":"summary","events":3,"dropped_duplicates":0,"terminal":"response.completed","response_id":"resp1","output_text_characters":0,"bytes":367}"#)
    }

    @Test func unknownEventsAndStdinWork() async throws {
        let input = "event: x\ndata: {\"type\":\"response.brand_new\",\"sequence_number\":4}\n\n" +
            "data: {\"type\":\"response.completed\",\"sequence_number\":5,\"response\":{\"id\":\"r\"}}\n\n"
        let result = try await CommandRunner.codexctl(["responses", "decode", "-"], stdin: input)
        #expect(result.status == 0)
        #expect(result.stdout.split(separator: "\n").first == #"{"type":"unknown","raw_type":"response.brand_new","sequence_number":4}"#)
    }

    @Test func aStreamWithoutCompletionExitsTwo() async throws {
        let result = try await CommandRunner.codexctl(["responses", "decode", "-"], stdin: "data: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\n")
        #expect(result.status == 2)
        #expect(result.stdout.hasSuffix(#""terminal":null,"response_id":"r","output_text_characters":0,"bytes":57}"# + "\n"))
        #expect(result.stderr == "Error: turn_summary_missing: the stream ended without response.completed\n")
        let failed = try await CommandRunner.codexctl(
            ["responses", "decode", "-"], stdin: "data: {\"type\":\"response.failed\",\"response\":{\"id\":\"r\",\"error\":{\"code\":\"server_error\",\"message\":\"x\"}}}\n\n"
        )
        #expect(failed.status == 2)
        #expect(failed.stderr == "Error: response_not_completed: the stream ended with response.failed, not response.completed\n", "\(failed.stderr)")
    }

    @Test func framingAndJSONErrorsExitOneWithTheByteOffset() async throws {
        // The live client's limit: 70 MiB (an image arrives as one base64 event). An event of 17 MiB
        // decodes; one past the limit fails while it is read.
        let large = #"data: {"type":"response.image.large","data":""# + String(repeating: "x", count: 17 * 1024 * 1024) + "\"}\n\n"
        let accepted = try await CommandRunner.codexctl(["responses", "decode", try CommandRunner.temporaryFile(large, name: "large.sse")])
        #expect(accepted.status == 2, "\(accepted.stderr)")
        #expect(accepted.stdout.hasPrefix(#"{"type":"unknown","raw_type":"response.image.large","sequence_number":null}"# + "\n"), "\(accepted.stdout.prefix(200))")
        let huge = "data: " + String(repeating: "x", count: 70 * 1024 * 1024 + 1) + "\n\n"
        let framing = try await CommandRunner.codexctl(["responses", "decode", try CommandRunner.temporaryFile(huge, name: "huge.sse")])
        #expect(framing.status == 1)
        #expect(framing.stderr.hasPrefix("Error: sse_event_too_large: a server-sent event exceeds the limit of 73400320 bytes (at byte "), "\(framing.stderr)")
        let malformed = try await CommandRunner.codexctl(["responses", "decode", "-"], stdin: "data: {oops\n\n")
        #expect(malformed.status == 1)
        #expect(malformed.stderr.hasPrefix("Error: responses_event_malformed"))
        // The offset of the event that failed (its first line).
        #expect(malformed.stderr.contains("(at byte 0)"))
        // The events before a bad one, in the same read, are printed, then the summary, then the error.
        let created = #"data: {"type":"response.created","sequence_number":0,"response":{"id":"r"}}"# + "\n\n"
        let afterOne = try await CommandRunner.codexctl(["responses", "decode", "-"], stdin: created + "data: {oops\n\n")
        #expect(afterOne.status == 1)
        #expect(afterOne.stdout == """
            {"type":"response.created","sequence_number":0,"response_id":"r"}
            {"type":"summary","events":1,"dropped_duplicates":0,"terminal":null,"response_id":"r","output_text_characters":0,"bytes":90}

            """)
        #expect(afterOne.stderr == "Error: responses_event_malformed: a stream event's data is not valid JSON (at byte 77)\n")
        let tooLarge = try await CommandRunner.codexctl(
            ["responses", "decode", try CommandRunner.temporaryFile(created + huge, name: "late-huge.sse")]
        )
        #expect(tooLarge.status == 1)
        #expect(tooLarge.stdout.hasPrefix(#"{"type":"response.created","sequence_number":0,"response_id":"r"}"# + "\n{\"type\":\"summary\",\"events\":1,"), "\(tooLarge.stdout)")
    }
}

@Suite struct AuthAndModelsCommandTests {
    private func deviceFlowServer() throws -> LoopbackHTTPServer {
        let tokens = #"{"id_token":"\#(TestJWT.idToken(account: "acct-dev", plan: "pro"))","access_token":"\#(TestJWT.accessToken(expiresAt: 4_000_000_000, marker: "cli"))","refresh_token":"rt-dev"}"#
        return try LoopbackHTTPServer(replies: [
            .json(#"{"device_auth_id":"dev-1","user_code":"WXYZ-0000","interval":"1"}"#),
            .json(#"{"authorization_code":"code-1","code_challenge":"c","code_verifier":"v"}"#),
            .json(tokens),
        ])
    }

    @Test func deviceLoginSavesASessionThatStatusAndModelsUse() async throws {
        let issuer = try deviceFlowServer()
        defer { issuer.shutdown() }
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("codexctl-store-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: store) }
        let login = try await CommandRunner.codexctl(["auth", "login", "--device-code", "--issuer", issuer.baseURL.absoluteString, "--secrets", store])
        #expect(login.status == 0)
        #expect(login.stdout == "Open \(issuer.baseURL.absoluteString)/codex/device and enter the code WXYZ-0000\nSigned in: account acct-dev, plan pro\n")
        #expect(!login.stdout.contains("rt-dev"))

        let status = try await CommandRunner.codexctl(["auth", "status", "--json", "--secrets", store, "--codex-home", "/nonexistent"])
        #expect(status.status == 0)
        #expect(status.stdout == #"{"signed_in":true,"source":"codexkit","mode":"chatgpt","account_id":"acct-dev","plan":"pro","email":"ada@example.com","expires_at":"2096-10-02T07:06:40Z","expired":false,"binding":"acct-dev"}"# + "\n")

        let catalog = String(decoding: try Data(contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("Tests/CodexTransportTests/Fixtures/responses/codex-models.json")), as: UTF8.self)
        let backend = try LoopbackHTTPServer(replies: [.json(catalog)])
        defer { backend.shutdown() }
        let models = try await CommandRunner.codexctl(["models", "list", "--refresh", "--json", "--base-url", backend.baseURL.appendingPathComponent("api/codex").absoluteString, "--secrets", store])
        #expect(models.status == 0)
        let object = try JSONValue(parsing: models.stdout)
        #expect(object["source"] == "remote")
        #expect(object["models"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["gpt-5.4", "gpt-5.4-mini", "gpt-5.3-codex", "gpt-5.2", "codex-auto-review"])
        #expect(backend.requests.first?.header("chatgpt-account-id") == "acct-dev")
        #expect(backend.requests.first?.query == "client_version=0.153.0")
    }

    @Test func withAnAPIKeyTheModelsComeFromThePublicAPIShape() async throws {
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("codexctl-empty-\(UUID().uuidString)").path
        let listed = #"{"object":"list","data":[{"id":"gpt-6-astra","object":"model"},{"id":"gpt-custom-1","object":"model"}]}"#
        let server = try LoopbackHTTPServer(replies: [.json(listed)])
        defer { server.shutdown() }
        let models = try await CommandRunner.codexctl(
            ["models", "list", "--refresh", "--json", "--base-url", server.baseURL.appendingPathComponent("v1").absoluteString, "--secrets", store,
             "--codex-home", "/nonexistent"],
            environment: ["OPENAI_API_KEY": "sk-list"]
        )
        #expect(models.status == 0, "\(models.stderr)")
        let object = try JSONValue(parsing: models.stdout)
        #expect(object["models"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["gpt-6-astra", "gpt-custom-1"])
        #expect(object["models"]?.arrayValue?.first?["default_effort"]?.stringValue == "low", "a bundled model keeps what the bundle knows")
        #expect(server.requests.first?.path == "/v1/models")
        #expect(server.requests.first?.header("authorization") == "Bearer sk-list")
        #expect(server.requests.first?.header("chatgpt-account-id") == nil)
    }

    @Test func notSignedInIsReportedAndCachedOnlyUsesTheBundledCatalog() async throws {
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("codexctl-empty-\(UUID().uuidString)").path
        let status = try await CommandRunner.codexctl(["auth", "status", "--secrets", store, "--codex-home", "/nonexistent"], environment: ["OPENAI_API_KEY": ""])
        #expect(status.status == 1)
        #expect(status.stdout.hasPrefix("not signed in"))
        let models = try await CommandRunner.codexctl(["models", "list", "--cached-only", "--secrets", store, "--codex-home", "/nonexistent"], environment: ["OPENAI_API_KEY": ""])
        #expect(models.status == 0)
        #expect(models.stdout.hasPrefix("source: bundled\ngpt-6-astra  GPT-6 Astra  effort low [low,medium,high,xhigh,max,ultra]  272000 tokens\n"))
        let bad = try await CommandRunner.codexctl(["models", "list", "--refresh", "--cached-only"])
        #expect(bad.status == 64)
    }
}
