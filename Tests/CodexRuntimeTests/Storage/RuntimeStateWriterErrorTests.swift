import CodexCore
@testable import CodexRuntime
import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// A store's failure reaches the runtime with the code its meaning names, the same for both stores, and
/// the store's own error kept underneath.
@Suite struct RuntimeStateWriterErrorTests {
    private struct Opaque: Error, Sendable {}

    private static func stores() throws -> [(String, any RuntimeStateStore)] {
        [("memory", InMemoryRuntimeStateStore()), ("sqlite", try SQLiteRuntimeStateStore(path: ":memory:"))]
    }

    @Test func aWriteToAMissingThreadIsThreadNotFoundFromEitherStore() async throws {
        for (name, store) in try Self.stores() {
            let writer = RuntimeStateWriter(store: store)
            let missing = AgentThreadID()
            let result = await writer.enqueue { store in
                try await store.appendHistory(RuntimeStateStoreConformance.sampleHistory(thread: missing, turn: AgentTurnID()), to: missing)
            }.value
            guard case .failure(let error) = result else {
                Issue.record("\(name): the write succeeded")
                continue
            }
            #expect(error.code == .threadNotFound, "\(name)")
            #expect(error.message == "no such thread", "\(name)")
            if name == "sqlite" {
                #expect((error.underlying as? SQLiteStoreError)?.code == .threadNotFound)
            }
        }
    }

    @Test func anUnknownStoreErrorIsAStorageFailureThatKeepsIt() async {
        let mapped = AgentRuntimeError.stateStore(Opaque())
        #expect(mapped.code == .storageFailure)
        #expect(mapped.underlying is Opaque)
        let constraint = AgentRuntimeError.stateStore(SQLiteStoreError(code: .constraint, resultCode: 787, message: "FOREIGN KEY constraint failed"))
        #expect(constraint.code == .storageConflict)
        #expect((constraint.underlying as? SQLiteStoreError)?.resultCode == 787)
        let own = AgentRuntimeError(code: .threadBusy, message: "busy")
        #expect(AgentRuntimeError.stateStore(own) == own)
    }
}
