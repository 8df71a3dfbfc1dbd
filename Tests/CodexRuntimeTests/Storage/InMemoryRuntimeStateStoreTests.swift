import CodexCore
import CodexRuntime
import CodexTestSupport
import Testing

/// The in-memory store passes the same behaviour suite as the SQLite store.
@Suite struct InMemoryRuntimeStateStoreTests {
    @Test func theStoreSuitePasses() async throws {
        let problems = try await RuntimeStateStoreConformance.run { InMemoryRuntimeStateStore() }
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func turnsForAMissingThreadAreRefused() async throws {
        let store = InMemoryRuntimeStateStore()
        let error = await #expect(throws: AgentRuntimeError.self) { try await store.upsertTurn(AgentTurn(threadID: AgentThreadID())) }
        #expect(error?.code == .threadNotFound)
    }
}
