import CodexCore
import CodexStoragePostgres
import CodexTestSupport
import Foundation
import Testing

/// The PostgreSQL store's usage ledger beyond the shared contract: migration 2 on a store made before
/// it, the read-only store that queries it and refuses to write it, and the deep check of its rows.
@Suite(.timeLimit(.minutes(5 * Sanitizer.slowdown))) struct PostgresUsageLedgerTests {
    static func record(_ thread: AgentThreadID, sequence: Int = 0) -> AgentUsageRecord {
        AgentUsageRecord(
            threadID: thread, turnID: "turn-1", sequence: sequence, accountBinding: "acct-1", model: "gpt-6-astra",
            recordedAt: Date(timeIntervalSince1970: 1_800_000_000.25 + Double(sequence)), usage: AgentUsage(inputTokens: 100, outputTokens: 20, totalTokens: 120)
        )
    }

    @Test func aStoreAtMigrationOneGetsTheLedgerWhenOpenedForWriting() async throws {
        let cluster = try await PostgresTestCluster.shared()
        let schema = PostgresTestCluster.uniqueSchema("usage")
        let thread = AgentThread(title: "older")
        do {
            let store = try await PostgresRuntimeStateStore(connectionString: cluster.connectionString, schema: schema)
            try await store.upsertThread(thread)
        }
        _ = try await cluster.psql("DROP TABLE \(schema).usage_records; DELETE FROM \(schema).codex_migrations WHERE position = 2")
        let reading = await #expect(throws: PostgresStoreError.self) {
            _ = try await PostgresRuntimeStateStore(readingFrom: cluster.connectionString, schema: schema)
        }
        #expect(reading?.code == .schemaOutdated)
        #expect(try await cluster.psql("SELECT count(*) FROM \(schema).codex_migrations").trimmingCharacters(in: .whitespacesAndNewlines) == "1")

        let store = try await PostgresRuntimeStateStore(connectionString: cluster.connectionString, schema: schema)
        #expect(try await store.schemaVersion() == 2)
        #expect(try await cluster.psql("SELECT name FROM \(schema).codex_migrations WHERE position = 2").trimmingCharacters(in: .whitespacesAndNewlines) == "create_usage_records")
        #expect(try await store.thread(thread.id)?.title == "older")
        try await store.recordUsage([Self.record(thread.id)])
        #expect(try await store.usageRecords(matching: AgentUsageQuery()) == [Self.record(thread.id)])
        #expect(try await store.check().isHealthy)
    }

    @Test func aReadingStoreQueriesTheLedgerRefusesWritesAndTheCheckNamesABadRow() async throws {
        let cluster = try await PostgresTestCluster.shared()
        let schema = PostgresTestCluster.uniqueSchema("usage")
        let writer = try await PostgresRuntimeStateStore(connectionString: cluster.connectionString, schema: schema)
        let thread = AgentThread(title: "ledger")
        try await writer.upsertThread(thread)
        try await writer.recordUsage([Self.record(thread.id), Self.record(thread.id, sequence: 1)])

        let reader = try await PostgresRuntimeStateStore(readingFrom: cluster.connectionString, schema: schema)
        #expect(try await reader.usageRecords(matching: AgentUsageQuery(accountBinding: "acct-1")) == [Self.record(thread.id), Self.record(thread.id, sequence: 1)])
        let refused = await #expect(throws: PostgresStoreError.self) { try await reader.recordUsage([Self.record(thread.id, sequence: 2)]) }
        #expect(refused?.code == .writeRefused)
        #expect(try await writer.usageRecords(matching: AgentUsageQuery()).count == 2)

        var report = try await reader.check()
        #expect(report.isHealthy)
        #expect(report.rowsChecked == 3)
        _ = try await cluster.psql("UPDATE \(schema).usage_records SET account_binding = 'other' WHERE sequence = 0")
        report = try await reader.check()
        #expect(report.problems == [.init(table: "usage_records", rowKey: "turn-1/0", message: "a usage row's account, model or date column disagrees with its body")])
        _ = try await cluster.psql("UPDATE \(schema).usage_records SET body = 'not json'::bytea WHERE sequence = 1")
        let reading = await #expect(throws: PostgresStoreError.self) { _ = try await reader.usageRecords(matching: AgentUsageQuery()) }
        #expect(reading?.code == .rowUndecodable)
        #expect(reading?.rowKey == "turn-1/1")
    }
}
