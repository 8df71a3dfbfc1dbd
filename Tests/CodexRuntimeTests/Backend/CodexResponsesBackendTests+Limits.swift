@testable import CodexRuntime
import CodexCore
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization
import Testing

private typealias H = BackendHarness

/// Budgets, cancellation and back-pressure of the Responses backend.
extension CodexResponsesBackendTests {
    @Test func aModelThatAlwaysCallsToolsStopsAtTheModelPassBudget() async throws {
        let server = try LoopbackHTTPServer { request in
            var script = ResponsesScript()
            script.created("resp_\(request.connectionID)")
            script.functionCallDone("fc_1", callID: "call_\(UUID().uuidString)", name: "lookup", arguments: "{}", index: 0)
            script.completed("resp_\(request.connectionID)")
            return .sse(script.events)
        }
        defer { server.shutdown() }
        let backend = try H.backend(server, configuration: .init(maximumModelPasses: 2))
        let stream = try await backend.startTurn(H.turn(tools: [H.tool("lookup")]))
        var kinds: [String] = []
        var failure: AgentRuntimeError?
        do {
            for try await event in stream.events {
                kinds.append(String(H.describe(event).prefix(while: { $0 != "(" })))
                if case .toolCallRequested(let call) = event { try await stream.submitToolResult(.success(call, text: "again")) }
            }
        } catch let error as AgentRuntimeError {
            failure = error
        }
        #expect(kinds == ["turnStarted", "usage", "toolCall", "usage"])
        #expect(failure?.code == .executionLimitExceeded)
        #expect(failure?.executionLimit == .modelPasses)
        #expect(server.requests.count == 2)
    }

    @Test func outputItemsPastTheBudgetFailTheTurn() async throws {
        var script = ResponsesScript()
        script.created("resp_1")
        script.reasoningDone("rs_1", summary: "S", encrypted: "e", index: 0)
        script.messageDone("msg_1", "One", index: 1)
        script.messageDone("msg_2", "Two", index: 2)
        script.completed("resp_1")
        let server = try LoopbackHTTPServer(replies: [.sse(script.events)])
        defer { server.shutdown() }
        let stream = try await H.backend(server, configuration: .init(maximumResponseItems: 2)).startTurn(H.turn())
        let (events, error) = await H.drain(stream)
        #expect(events.map(H.describe) == [
            "turnStarted(turn-1)", "reasoning(rs_1,[\"S\"],e)", "message(assistant,nil,One,images:0)", "progress(messageCompleted msg_1 nil)",
        ])
        let failure = try #require(error as? AgentRuntimeError)
        #expect(failure.code == .executionLimitExceeded)
        #expect(failure.executionLimit == .responseItems)
    }

    @Test func responseBytesPastTheBudgetFailTheTurn() async throws {
        var script = ResponsesScript()
        script.created("resp_1")
        for index in 0..<40 { script.delta("msg_1", "chunk \(index)") }
        script.messageDone("msg_1", "all", index: 0)
        script.completed("resp_1")
        let server = try LoopbackHTTPServer(replies: [.sse(script.events)])
        defer { server.shutdown() }
        let limit = 1_000
        #expect(script.text.utf8.count > 4 * limit)
        let stream = try await H.backend(server, configuration: .init(maximumResponseBytes: limit)).startTurn(H.turn())
        let (events, error) = await H.drain(stream)
        let failure = try #require(error as? AgentRuntimeError)
        #expect(failure.code == .executionLimitExceeded)
        #expect(failure.executionLimit == .responseBytes)
        #expect(!events.contains { if case .turnCompleted = $0 { true } else { false } })
        // Every event published came from within the budget.
        let published = events.count(where: { if case .assistantMessageDelta = $0 { true } else { false } })
        #expect(published < 10)
        #expect(server.requests.count == 1)
    }

    /// A server that sends `response.created` and one delta, then holds the response open.
    private func holdingServer() throws -> LoopbackHTTPServer {
        var script = ResponsesScript()
        script.created("resp_1")
        script.delta("msg_1", "first")
        return try LoopbackHTTPServer(replies: [H.holdingReply(script.text)])
    }

    /// Event descriptions recorded by a consuming task.
    private final class Seen: Sendable {
        private let storage = Mutex<[String]>([])
        var all: [String] { storage.withLock { $0 } }
        func append(_ description: String) { storage.withLock { $0.append(description) } }
    }

    /// Starts a task that reads `stream` and records each event's description in `seen`.
    private func consume(_ stream: AgentTurnStream, into seen: Seen) -> Task<Void, any Error> {
        Task {
            for try await event in stream.events { seen.append(H.describe(event)) }
        }
    }

    private func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .hangGuard
        while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
    }

    @Test func cancellingTheConsumerClosesTheConnection() async throws {
        let server = try holdingServer()
        defer { server.shutdown() }
        let stream = try await H.backend(server).startTurn(H.turn())
        let seen = Seen()
        let task = consume(stream, into: seen)
        try await waitUntil { seen.all.count == 2 }
        #expect(seen.all == ["turnStarted(turn-1)", "delta(first)"])
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // The stream idle timeout is 300 s: a close within the wait was made by the cancellation.
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard))
        #expect(server.requests.count == 1)
    }

    @Test func interruptEndsTheStreamWithCancellationAndClosesTheConnection() async throws {
        let server = try holdingServer()
        defer { server.shutdown() }
        let stream = try await H.backend(server).startTurn(H.turn())
        #expect(stream.steer != nil)  // the built-in backend takes steering input
        let seen = Seen()
        let task = consume(stream, into: seen)
        try await waitUntil { seen.all.count == 2 }
        await stream.interrupt?()
        await #expect(throws: CancellationError.self) { try await task.value }
        // As above: closed by the interruption, long before any timeout.
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard))
        let late = await #expect(throws: AgentRuntimeError.self) {
            try await stream.submitToolResult(ToolResultEnvelope(invocationID: "call_x", toolName: "t", status: .success, content: []))
        }
        #expect(late?.code == .invalidToolResult)
    }

    /// One reader at a time: a second task's read while the first waits on the network is refused, and
    /// an interruption from a third ends the first reader's wait at once.
    @Test func aSecondConcurrentReaderIsRefusedAndAnInterruptionEndsTheFirstsRead() async throws {
        let server = try holdingServer()
        defer { server.shutdown() }
        var configuration = CodexResponsesBackendConfiguration()
        configuration.endpoint = try ResponsesEndpoint(baseURL: server.baseURL, profile: .publicAPI)
        let client = ResponsesClient(
            configuration: configuration.clientConfiguration, httpClient: DefaultHTTPClient(), authProvider: APIKeyAuthProvider(apiKey: "k")
        )
        let runner = ResponsesTurnRunner(client: client, turn: H.turn(), configuration: configuration, logSink: NoOpAgentLogSink())
        let seen = Seen()
        let reader = Task {
            while let event = try await runner.next() { seen.append(H.describe(event)) }
        }
        // Two events arrive, then the server holds the stream: the reader waits inside its third read.
        try await waitUntil { seen.all.count == 2 && runner.isBeingRead }
        #expect(seen.all == ["turnStarted(turn-1)", "delta(first)"])
        let refused = await #expect(throws: AgentRuntimeError.self) { try await runner.next() }
        #expect(refused?.code == .invalidRequest)
        runner.interrupt()
        await #expect(throws: CancellationError.self) { try await reader.value }
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard))
        #expect(try await runner.next() == nil, "the turn is over")
    }

    @Test func releasingTheTurnStreamClosesTheConnection() async throws {
        let server = try holdingServer()
        defer { server.shutdown() }
        let backend = try H.backend(server)
        try await {
            let stream = try await backend.startTurn(H.turn())
            var iterator = stream.events.makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first.map(H.describe) == "turnStarted(turn-1)")
        }()
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard))
    }

    @Test func aQueueOfOneDeliversEveryEventInOrder() async throws {
        var script = ResponsesScript()
        script.created("resp_1")
        for index in 0..<300 { script.delta("msg_1", "d\(index)") }
        script.messageDone("msg_1", "done", index: 0)
        script.completed("resp_1")
        let server = try LoopbackHTTPServer(replies: [.sse([script.text])])
        defer { server.shutdown() }
        let stream = try await H.backend(server, configuration: .init(maximumBufferedEvents: 1)).startTurn(H.turn())
        try await stream.waitUntilReady()
        try await Task.sleep(for: .milliseconds(100))  // the reader is paused; the producer must wait, not drop
        let (events, error) = await H.drain(stream)
        #expect(error == nil)
        let deltas = events.compactMap { if case .assistantMessageDelta(let text) = $0 { text } else { nil } }
        #expect(deltas == (0..<300).map { "d\($0)" })
        #expect(events.count == 300 + 5)
    }
}

extension CodexResponsesBackendTests {
    /// Pull-based: the backend holds at most one stream event's backend events ahead of its reader, so
    /// a paused reader pauses the network read with nothing piling up.
    @Test func aPausedReaderHoldsAtMostOneStreamEventsEvents() async throws {
        var script = ResponsesScript()
        script.created("resp_1")
        for index in 0..<50 { script.delta("msg_1", "d\(index)") }
        script.completed("resp_1")
        let server = try LoopbackHTTPServer(replies: [.sse([script.text])])
        defer { server.shutdown() }
        var configuration = CodexResponsesBackendConfiguration(maximumBufferedEvents: 1)
        configuration.endpoint = try ResponsesEndpoint(baseURL: server.baseURL, profile: .publicAPI)
        let client = ResponsesClient(
            configuration: configuration.clientConfiguration, httpClient: DefaultHTTPClient(), authProvider: APIKeyAuthProvider(apiKey: "k")
        )
        let runner = ResponsesTurnRunner(client: client, turn: H.turn(), configuration: configuration, logSink: NoOpAgentLogSink())
        try await runner.waitUntilReady()
        #expect(runner.heldEvents == 1, "the first stream event's turnStarted, nothing more")
        var deltas = 0
        var last: AgentBackendEvent?
        var mostHeld = runner.heldEvents
        while let event = try await runner.next() {
            if case .assistantMessageDelta = event { deltas += 1 }
            last = event
            mostHeld = max(mostHeld, runner.heldEvents)
        }
        #expect(deltas == 50)
        #expect(last.map(H.describe) == "turnCompleted(nil,10/5/15,resp_1)")
        #expect(mostHeld <= 2, "at most one stream event's events wait for the reader: \(mostHeld)")
    }
}
