import CodexCore
import CodexKitTesting
import CodexRuntime
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Docs/Testing.md's examples, as written: the page shows exactly the code below, and it runs.
@Suite struct TestingDocumentationTests {
    @Test func theTestingPageExamplesRunAsWritten() async throws {
        // example 1

        func greetingTurn() async throws -> String {
            let backend = FixtureAgentBackend(turns: [.reply("Hello there.")])
            let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore()))
            let thread = try await runtime.createThread(title: "Greeting")
            let reply = try await runtime.send(Request(text: "Hi"), in: thread.id)
            precondition(backend.requests.count == 1)
            return reply   // "Hello there."
        }
        // end
        // example 2

        /// A stand-in for code under test that fetches a status document through any `HTTPClient`.
        func fetchStatus(with http: any HTTPClient, from url: URL) async throws -> String {
            let response = try await http.send(HTTPRequest(method: "GET", url: url))
            return String(decoding: try await response.body.collect(upTo: 1 << 20), as: UTF8.self)
        }

        func statusIsFetchedOnce() async throws -> Bool {
            let http = ScriptedHTTPClient(replies: [.text(#"{"ok":true}"#, headers: ["Content-Type": "application/json"])])
            guard let url = URL(string: "https://status.example/health") else { return false }
            let body = try await fetchStatus(with: http, from: url)
            return body == #"{"ok":true}"# && http.requests.map(\.method) == ["GET"]
        }
        // end
        #expect(try await greetingTurn() == "Hello there.")
        #expect(try await statusIsFetchedOnce())
    }

    @Test func theTestingPageShowsExactlyTheTestedExamples() throws {
        let page = try DocumentationExamples.page("Docs/Testing.md")
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let documented = DocumentationExamples.withoutImports(DocumentationExamples.swiftBlocks(inPage: page).dropFirst())
        #expect(documented == DocumentationExamples.examples(inSource: source))
    }
}
