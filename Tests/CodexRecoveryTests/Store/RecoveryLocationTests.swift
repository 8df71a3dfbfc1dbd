import CodexCore
@testable import CodexRecovery
import CodexTestSupport
import Foundation
import Testing

/// Finding an operation's partition: a store remembers where it created or last found each operation,
/// so a step does not list every partition of the store, and a remembered place is checked like any
/// other lookup.
@Suite struct RecoveryLocationTests {
    static let scopes = 30

    /// Prepares one operation in each of `scopes` scopes; returns their handles.
    static func prepareAcrossScopes(_ harness: RecoveryHarness) async throws -> [AgentStructuredRecoveryHandle] {
        var handles: [AgentStructuredRecoveryHandle] = []
        for index in 0..<scopes {
            handles.append(try await harness.recovery.prepare(
                Request(text: RecoveryHarness.prompt, executionMode: .ephemeral), format: Verdict.responseFormat,
                model: .init(model: "gpt-6-astra"), store: harness.store, options: .init(scope: "scope-\(index)")
            ))
        }
        return handles
    }

    @Test func aStoreFindsWhatItPreparedWithoutListingAnyDirectory() async throws {
        let fileSystem = FaultInjectingFileSystem()
        let harness = try RecoveryHarness(replies: [Streams.complete()], fileSystem: fileSystem)
        let handles = try await Self.prepareAcrossScopes(harness)
        let listed = fileSystem.calls(.listDirectory)
        for handle in handles {
            #expect(try await harness.status(handle).state == .prepared)
        }
        #expect(fileSystem.calls(.listDirectory) == listed)
        // A whole lifecycle of the last one: still no listing.
        _ = try await harness.send(try #require(handles.last))
        try await harness.recovery.acknowledge(try #require(handles.last), store: harness.store)
        #expect(fileSystem.calls(.listDirectory) == listed)
    }

    @Test func anotherStoreInstanceSearchesOnceThenRemembers() async throws {
        let harness = try RecoveryHarness(replies: [])
        let handles = try await Self.prepareAcrossScopes(harness)
        let fileSystem = FaultInjectingFileSystem()
        let other = try AgentStructuredRecoveryStore(directory: harness.store.directory, fileSystem: fileSystem)
        let handle = try #require(handles.last)
        let listedBefore = fileSystem.calls(.listDirectory)
        #expect(try await harness.recovery.status(handle, store: other).state == .prepared)
        // The store's directory and the account's: the search lists two directories.
        #expect(fileSystem.calls(.listDirectory) == listedBefore + 2)
        #expect(try await harness.recovery.status(handle, store: other).state == .prepared)
        #expect(fileSystem.calls(.listDirectory) == listedBefore + 2)
        // An operation no store has heard of is searched for every time, and is still not there.
        let unknown = AgentStructuredRecoveryHandle(operationID: UUID())
        for expectedListings in [listedBefore + 4, listedBefore + 6] {
            let error = await #expect(throws: AgentRecoveryError.self) { try await harness.recovery.status(unknown, store: other) }
            #expect(error?.code == .stateUnavailable)
            #expect(fileSystem.calls(.listDirectory) == expectedListings)
        }
    }

    /// A FIFO or a link among an account's scope directories once stopped every per-operation step of
    /// the account with an error that named no path; it is passed over (never followed), and named when
    /// an operation is not found, since the operation may have been where it stands.
    @Test func aStrayEntryIsPassedOverAndNamedOnlyWhenAnOperationIsMissing() async throws {
        let harness = try RecoveryHarness(replies: [])
        let handle = try await harness.prepare()
        let account = harness.store.recordURL(handle.operationID, scope: "campaign-secret-scope").deletingLastPathComponent().deletingLastPathComponent()
        #expect(mkfifo(account.appendingPathComponent("sfifo").path, 0o600) == 0)
        try FileManager.default.createSymbolicLink(at: account.appendingPathComponent("slink"), withDestinationURL: URL(fileURLWithPath: "/tmp"))
        // A new store instance remembers nothing: it searches, and finds the operation past the strays.
        let fresh = try AgentStructuredRecoveryStore(directory: harness.store.directory)
        #expect(try await harness.recovery.status(handle, store: fresh).state == .prepared)
        try await harness.recovery.suspend(handle, store: try AgentStructuredRecoveryStore(directory: harness.store.directory))
        #expect(try await harness.recovery.status(handle, store: fresh).state == .suspended)
        let missing = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.status(AgentStructuredRecoveryHandle(operationID: UUID()), store: fresh)
        }
        #expect(missing?.code == .insecureStore)
        #expect(missing?.message == "the operation was not found, and \(account.lastPathComponent)/sfifo in the store is not a directory (a symbolic link or another file is in the way)")
    }

    @Test func aRememberedPartitionReplacedByASymbolicLinkFailsClosed() async throws {
        let fileSystem = FaultInjectingFileSystem()
        let harness = try RecoveryHarness(replies: [], fileSystem: fileSystem)
        let handle = try await harness.prepare()
        #expect(try await harness.status(handle).state == .prepared)
        let listed = fileSystem.calls(.listDirectory)
        // Move the operation's scope directory away and put a link to it in its place: the remembered
        // location is opened like any other, so the link is refused, not followed.
        let scopeDirectory = harness.store.recordURL(handle.operationID, scope: "campaign-secret-scope").deletingLastPathComponent()
        let moved = scopeDirectory.deletingLastPathComponent().appendingPathComponent("moved")
        try FileManager.default.moveItem(at: scopeDirectory, to: moved)
        try FileManager.default.createSymbolicLink(at: scopeDirectory, withDestinationURL: moved)
        let error = await #expect(throws: AgentRecoveryError.self) { try await harness.status(handle) }
        #expect(error?.code == .insecureStore)
        #expect(fileSystem.calls(.listDirectory) == listed, "refused at the remembered place, not by a search")
    }
}
