@testable import CodexRuntime
import CodexCore
import CodexLoopback
import CodexStorageSQLite
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Turns record each model response's usage in the state store's ledger, and the runtime reads it back.
@Suite struct UsageLedgerRuntimeTests {
    private func runtime(_ server: LoopbackHTTPServer, store: any RuntimeStateStore) throws -> AgentRuntime {
        try AgentRuntime(configuration: .init(
            authProvider: APIKeyAuthProvider(apiKey: "sk-test"), backend: try BackendHarness.backend(server), stateStore: store,
            tools: [echoTool("lookup")]
        ))
    }

    @Test func eachResponseOfATurnIsOneLedgerRecordThatOutlivesTheProcess() async throws {
        let directory = try temporaryDirectory("usage-ledger")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state.sqlite").path
        let server = try LoopbackHTTPServer(replies: [toolCallReply("resp_1", calls: [("call_a", "lookup")]), ResponsesScript.completedReply("resp_2", "Done")])
        defer { server.shutdown() }
        let threadID: AgentThreadID
        let turnID: AgentTurnID
        do {
            let runtime = try runtime(server, store: try SQLiteRuntimeStateStore(path: path))
            let thread = try await runtime.createThread(model: .gpt6Astra)
            threadID = thread.id
            let result = await collect(try await runtime.stream(Request(text: "Look it up"), in: thread.id))
            #expect(result.error == nil)
            turnID = try #require(try await runtime.configuration.stateStore.latestTurn(of: thread.id)).id
        }
        // A new runtime over the same file reads what the first one wrote.
        let reopened = try runtime(server, store: try SQLiteRuntimeStateStore(path: path))
        let records = try await reopened.usage(matching: AgentUsageQuery(threadID: threadID))
        #expect(records.map(\.sequence) == [0, 1])
        #expect(records.allSatisfy { $0.turnID == turnID && $0.model == "gpt-6-astra" })
        let binding = try #require(try await reopened.configuration.stateStore.thread(threadID)).accountBinding
        #expect(binding != nil)
        #expect(records.allSatisfy { $0.accountBinding == binding })
        #expect(records.map(\.usage) == [ResponsesScript.usage(), ResponsesScript.usage()])

        let prices = AgentPriceTable(entries: [
            AgentModelPrice(model: "gpt-6-astra", effectiveFrom: Date(timeIntervalSince1970: 0), input: 2, cachedInput: Decimal(string: "0.5") ?? 0, output: 8),
            AgentModelPrice(model: "gpt-6-astra", effectiveFrom: Date(timeIntervalSince1970: 32_503_680_000), input: 100, output: 100),
        ])
        let summary = try await reopened.usageSummary(matching: AgentUsageQuery(threadID: threadID), by: .model, prices: prices)
        #expect(summary.groups.map(\.key) == ["gpt-6-astra"])
        #expect(summary.overall.requestCount == 2)
        #expect(summary.overall.inputTokens.known == 20)
        #expect(summary.overall.outputTokens.known == 10)
        // Per response: (10 − 2) × 2 + 2 × 0.5 + (5 − 1) × 8 + 1 × 8 = 57 per million tokens.
        #expect(summary.overall.cost?.amounts == ["USD": Decimal(string: "0.000114") ?? 0])
    }

    @Test func ephemeralTurnsRecordNothingAndAFailedTurnKeepsWhatItSpent() async throws {
        let server = try LoopbackHTTPServer(replies: [
            ResponsesScript.completedReply("resp_e", "Hi"),
            toolCallReply("resp_1", calls: [("call_a", "lookup")]),
            .json(#"{"error":{"message":"no","type":"invalid_request_error","code":"invalid_value"}}"#, status: 400),
        ])
        defer { server.shutdown() }
        let store = InMemoryRuntimeStateStore()
        let runtime = try runtime(server, store: store)
        let thread = try await runtime.createThread(model: .gpt6Astra)
        _ = await collect(try await runtime.stream(Request(text: "Once", executionMode: .ephemeral), in: thread.id))
        #expect(try await runtime.usage().isEmpty)
        let failed = await collect(try await runtime.stream(Request(text: "Look it up"), in: thread.id))
        #expect(failed.error != nil)
        let records = try await runtime.usage(matching: AgentUsageQuery(threadID: thread.id))
        #expect(records.count == 1)
        #expect(records.first?.usage == ResponsesScript.usage())
    }

    @Test func aStoreWithoutALedgerSaysSoAndTurnsStillRun() async throws {
        let server = try LoopbackHTTPServer(replies: [ResponsesScript.completedReply("resp_1", "Hi")])
        defer { server.shutdown() }
        let runtime = try runtime(server, store: NoLedgerStore(base: InMemoryRuntimeStateStore()))
        let thread = try await runtime.createThread(model: .gpt6Astra)
        #expect(try await runtime.send(Request(text: "Hi"), in: thread.id) == "Hi")
        await #expect(throws: AgentRuntimeError.self) { try await runtime.usage() }
    }

    @Test func summingTheLedgerHoldsItsGroupsNotItsRecords() async throws {
        // 60,000 records summed in a process of its own (RuntimeFixture `usage-memory`), read as a stream
        // the way `codexctl usage` reads them. Held as one list they raised the peak by about 26 MiB.
        let directory = try temporaryDirectory("usage-memory")
        defer { try? FileManager.default.removeItem(at: directory) }
        let outcome = try await ChildProcess.run(ChildProcess.product("RuntimeFixture"), [
            "usage-memory", "--db", directory.appendingPathComponent("state.sqlite").path, "--records", "60000",
        ])
        let fields = Dictionary(uniqueKeysWithValues: outcome.stdout.split(whereSeparator: \.isWhitespace).compactMap { pair -> (String, Int)? in
            let parts = pair.split(separator: "=", maxSplits: 1)
            return parts.count == 2 ? Int(parts[1]).map { (String(parts[0]), $0) } : nil
        })
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(fields["requests"] == 60_000)
        #expect(fields["groups"] == 1)
        let growth = (fields["peak"] ?? 0) - (fields["baseline"] ?? 0)
        #expect(growth < 8 * 1024, "the peak grew by \(growth) KiB")
    }
}

/// A store that keeps no usage ledger (it forwards only the base contract).
private struct NoLedgerStore: ForwardingStateStore {
    let base: any RuntimeStateStore
}
