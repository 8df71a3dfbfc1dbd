@testable import CodexRuntime
import CodexCore
import CodexSchema
import CodexStorageSQLite
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Every Swift example of the "Memory in turns" section of Docs/Memory.md, compiled and run as written
/// against the loopback server: each sits between `// example N` and `// end` below, and a test checks
/// that the section shows exactly these texts.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct MemoryRuntimeDocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theExamplesOfTheMemoryInTurnsSectionRunAsWritten() async throws {
        let directory = try temporaryDirectory("memory-runtime-docs")
        defer { try? FileManager.default.removeItem(at: directory) }
        let capture = #"{\"memories\":[{\"key\":\"delivery-day\",\"summary\":\"Prefers Tuesday delivery.\",\"category\":\"preference\",\"importance\":6,\"tags\":[\"delivery\"],\"evidence\":\"\"}]}"#
        // Capture requests (their format is `memory_capture`) get a capture; turns get a short reply.
        let server = try LoopbackHTTPServer { request in
            String(decoding: request.body, as: UTF8.self).contains(#""name":"memory_capture""#)
                ? ResponsesScript.completedReply("c", capture) : ResponsesScript.completedReply("r", "Tuesday suits you.")
        }
        defer { server.shutdown() }
        let backend = try BackendHarness.backend(server, configuration: .init(model: .gpt6Astra))
        let stateStore = try SQLiteRuntimeStateStore(path: directory.appendingPathComponent("state.sqlite").path)

        // example 1
        let memory = AgentMemoryConfiguration(
            store: try SQLiteMemoryStore(path: directory.appendingPathComponent("memory.sqlite").path),
            namespace: "shop", scopes: [.user], automaticCapture: .afterCompletedTurns(scope: .user)
        )
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: stateStore, memory: memory))
        let thread = try await runtime.createThread(title: "Orders")
        let result = try await runtime.sendWithSummary(Request(text: "Which delivery day suits me?"), in: thread.id)
        print(result.summary.memoryApplication?.memoryIDs ?? [], result.summary.memoryApplication?.instructionsSHA256 ?? "")
        await runtime.waitForMemoryCaptures()
        // end
        #expect(result.summary.memoryApplication?.notAppliedReason == .noMatches)
        let stored = try await memory.store.list(MemoryListQuery(namespace: "shop"))
        #expect(stored.map(\.summary) == ["Prefers Tuesday delivery."])

        // example 2
        var request = Request(text: "Which depot ships my order?")
        request.memorySelection = .append(scopes: [.project])
        let reply = try await runtime.send(request, in: thread.id)
        var quiet = Request(text: "Just this once, no memory.")
        quiet.memorySelection = .disable
        _ = try await runtime.send(quiet, in: thread.id)
        // end
        #expect(reply == "Tuesday suits you.")

        // example 3
        let captured = try await runtime.captureMemories(from: thread.id, for: .user)
        print(captured.inserted, captured.replaced, captured.records.map(\.summary))
        for entry in try await runtime.fetchMemoryApplications(id: thread.id) {
            print(entry.turnID, entry.application.memoryIDs)
        }
        // end
        await runtime.waitForMemoryCaptures()
        #expect(captured.replaced == 1 && captured.records.first?.id == stored.first?.id)
        let applications = try await runtime.fetchMemoryApplications(id: thread.id)
        #expect(applications.map(\.application.notAppliedReason) == [.noMatches, .noMatches, .disabledByRequest])
    }

    @Test func theSectionShowsExactlyTheExamplesThatRun() throws {
        let page = try String(contentsOf: Self.root.appendingPathComponent("Docs/Memory.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let documented = DocumentationExamples.swiftBlocks(inPage: page, section: "## Memory in turns")
        let tested = DocumentationExamples.examples(inSource: source)
        #expect(tested.count == 3)
        #expect(documented == tested)
    }
}
