import CodexCore
import CodexKitTesting
import CodexRuntime
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
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("Docs/Testing.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let documented = Self.swiftBlocks(page).dropFirst().map { block in
            block.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("import ") }.joined(separator: "\n")
        }
        #expect(Array(documented) == Self.examples(source))
    }

    /// The page's Swift blocks (the `Package.swift` fragment first).
    static func swiftBlocks(_ page: String) -> [String] {
        var blocks: [String] = []
        var block: [String]?
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "```swift" { block = [] } else if line == "```", let current = block {
                blocks.append(current.joined(separator: "\n"))
                block = nil
            } else {
                block?.append(String(line))
            }
        }
        return blocks
    }

    /// The text between `// example N` and `// end` in this file, without the test's indentation.
    static func examples(_ source: String) -> [String] {
        var examples: [String] = []
        var example: [String]?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("// example ") { example = [] } else if trimmed == "// end", let current = example {
                examples.append(current.map { $0.hasPrefix("        ") ? String($0.dropFirst(8)) : String($0) }.joined(separator: "\n"))
                example = nil
            } else {
                example?.append(String(line))
            }
        }
        return examples
    }
}
