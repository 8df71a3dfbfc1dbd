import CodexCore
import CodexStoragePostgres
import CodexTestSupport
import Foundation
import Testing

/// The PostgreSQL store against a real server: the shared store contract, unchanged; images in chunked
/// blobs; the schema's ownership; read-only inspection; passwords kept out of errors.
@Suite(.timeLimit(.minutes(5 * Sanitizer.slowdown))) struct PostgresRuntimeStateStoreTests {
    static func store(schema: String = PostgresTestCluster.uniqueSchema()) async throws -> PostgresRuntimeStateStore {
        try await PostgresRuntimeStateStore(connectionString: try await PostgresTestCluster.shared().connectionString, schema: schema)
    }

    @Test func theStoreSuitePasses() async throws {
        let problems = try await RuntimeStateStoreConformance.run { try await Self.store() }
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func imagesRoundTripThroughChunkedBlobsAndGoWithTheirLastReference() async throws {
        let store = try await Self.store()
        let thread = AgentThread(title: "pictures")
        try await store.upsertThread(thread)
        // 2.5 MiB: three chunks of at most 1 MiB.
        var bytes = [UInt8](repeating: 0, count: 5 << 19)
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 31 &+ 7) }
        let image = AgentImageAttachment(id: AgentAttachmentID(rawValue: "img-1"), data: Data(bytes), mimeType: "image/png")
        let message = AgentMessage(threadID: thread.id, role: .user, text: "look", images: [image])
        try await store.appendHistory([.message(message), .message(message)], to: thread.id)
        let items = try await store.history(of: thread.id, query: AgentHistoryQuery()).items
        #expect(items.count == 2)
        for item in items {
            guard case .message(let stored) = item else { Issue.record("not a message"); continue }
            #expect(stored.images.map(\.data) == [Data(bytes)])
            #expect(stored.images.map(\.mimeType) == ["image/png"])
        }
        // Paged one item at a time both ways, with a plain item after the pictures: each page comes back
        // whole, with or without images.
        try await store.appendHistory([.message(AgentMessage(threadID: thread.id, role: .assistant, text: "plain"))], to: thread.id)
        var forward: [Int] = []
        var cursor: String?
        repeat {
            let page = try await store.history(of: thread.id, query: AgentHistoryQuery(limit: 1, direction: .forward, cursor: cursor))
            forward += page.items.map { item in if case .message(let message) = item { message.images.count } else { -1 } }
            cursor = page.nextCursor
        } while cursor != nil
        #expect(forward == [1, 1, 0])
        var backward: [String] = []
        cursor = nil
        repeat {
            let page = try await store.history(of: thread.id, query: AgentHistoryQuery(limit: 2, direction: .backward, cursor: cursor))
            backward += page.items.map { item in if case .message(let message) = item { "\(message.text)/\(message.images.count)" } else { "?" } }
            cursor = page.nextCursor
        } while cursor != nil
        #expect(backward == ["plain/0", "look/1", "look/1"])
        let cluster = try await PostgresTestCluster.shared()
        #expect(try await cluster.psql("SELECT count(*) FROM \(store.schema).blobs").trimmingCharacters(in: .whitespacesAndNewlines) == "1", "one blob for two references")
        #expect(try await cluster.psql("SELECT count(*) FROM \(store.schema).blob_chunks").trimmingCharacters(in: .whitespacesAndNewlines) == "3")
        try await store.deleteThread(thread.id)
        #expect(try await cluster.psql("SELECT count(*) FROM \(store.schema).blobs").trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }

    /// A damaged blob row that records an impossible size is a typed error naming the blob, never an
    /// allocation of that size (which would end the process).
    @Test func aBlobRecordingAnImpossibleSizeIsUndecodableNotAnAllocation() async throws {
        let store = try await Self.store()
        let thread = AgentThread(title: "pictures")
        try await store.upsertThread(thread)
        let image = AgentImageAttachment(id: AgentAttachmentID(rawValue: "img-1"), data: Data([1, 2, 3]), mimeType: "image/png")
        try await store.appendHistory([.message(AgentMessage(threadID: thread.id, role: .user, text: "look", images: [image]))], to: thread.id)
        let cluster = try await PostgresTestCluster.shared()
        _ = try await cluster.psql("UPDATE \(store.schema).blobs SET size = 9223372036854775807")
        let refused = await #expect(throws: PostgresStoreError.self) { _ = try await store.history(of: thread.id, query: AgentHistoryQuery()) }
        #expect(refused?.code == .rowUndecodable)
        #expect(refused?.table == "blobs")
        #expect(refused?.message.contains("records 9223372036854775807 bytes") == true, "\(String(describing: refused?.message))")
    }

    @Test func aSchemaWithAnotherApplicationsTablesIsRefusedAndLeftAsItWas() async throws {
        let cluster = try await PostgresTestCluster.shared()
        let schema = PostgresTestCluster.uniqueSchema("foreign")
        try await cluster.psql("CREATE SCHEMA \(schema); CREATE TABLE \(schema).threads (id int); INSERT INTO \(schema).threads VALUES (7)")
        let refused = await #expect(throws: PostgresStoreError.self) { _ = try await Self.store(schema: schema) }
        #expect(refused?.code == .foreignSchema)
        #expect(try await cluster.psql("SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables WHERE table_schema = '\(schema)'")
            .trimmingCharacters(in: .whitespacesAndNewlines) == "threads")
        #expect(try await cluster.psql("SELECT id FROM \(schema).threads").trimmingCharacters(in: .whitespacesAndNewlines) == "7")
    }

    @Test func aReadingStoreChangesNothingAndRefusesWrites() async throws {
        let cluster = try await PostgresTestCluster.shared()
        let schema = PostgresTestCluster.uniqueSchema()
        let missing = await #expect(throws: PostgresStoreError.self) {
            _ = try await PostgresRuntimeStateStore(readingFrom: cluster.connectionString, schema: schema)
        }
        #expect(missing?.code == .schemaOutdated)
        #expect(try await cluster.psql("SELECT count(*) FROM pg_namespace WHERE nspname = '\(schema)'").trimmingCharacters(in: .whitespacesAndNewlines) == "0")

        let writer = try await Self.store(schema: schema)
        let thread = AgentThread(title: "kept")
        try await writer.upsertThread(thread)
        let reader = try await PostgresRuntimeStateStore(readingFrom: cluster.connectionString, schema: schema)
        #expect(try await reader.threads().map(\.title) == ["kept"])
        #expect(reader.isReadOnly)
        let refused = await #expect(throws: PostgresStoreError.self) { try await reader.upsertThread(AgentThread(title: "no")) }
        #expect(refused?.code == .writeRefused)
        #expect(try reader.acquireOwnerLease() == nil)
    }

    @Test func aWrongPasswordNeverAppearsInTheError() async throws {
        let cluster = try await PostgresTestCluster.shared()
        // The cluster trusts its socket, so a wrong database stands in for a refusal; the password must
        // not leak either way.
        let secret = "s3cr3t-Canary-9f2"
        let url = "postgresql://\(PostgresTestCluster.role):\(secret)@/no_such_database?host=\(cluster.directory.path)"
        let error = await #expect(throws: PostgresStoreError.self) { _ = try await PostgresRuntimeStateStore(connectionString: url) }
        #expect(error?.code == .authenticationFailed)
        #expect(!(error?.description.contains(secret) ?? true), "\(error?.description ?? "")")
        let garbage = await #expect(throws: PostgresStoreError.self) { _ = try await PostgresRuntimeStateStore(connectionString: "host=x password=\(secret) bogus") }
        #expect(garbage?.code == .invalidConnectionString)
        #expect(!(garbage?.description.contains(secret) ?? true), "\(garbage?.description ?? "")")
    }

    /// libpq quotes the token it cannot read, and a token may be part of a password: no part of one
    /// reaches the error, whatever form the bad connection string takes.
    @Test(arguments: [
        "postgresql://u:S3CRE%ZZ@127.0.0.1:1/x", "postgresql://u:S3CRETPW%@127.0.0.1:1/x", "postgresql://u:S3CRETPW%00@127.0.0.1:1/x",
        "postgresql://u@127.0.0.1:1/x?password=S3CRE%ZZ", "postgresql://u@127.0.0.1:1/x?password=S3CRE%ZZ&sslmode=bogus%",
        "host=x password='S3CRE unclosed",
    ])
    func aConnectionStringLibpqCannotReadNeverShowsItsPassword(_ connectionString: String) async throws {
        let error = await #expect(throws: PostgresStoreError.self) { _ = try await PostgresRuntimeStateStore(connectionString: connectionString) }
        #expect(error?.code == .invalidConnectionString)
        #expect(!(error?.description.contains("S3CRE") ?? true), "\(error?.description ?? "")")
        #expect(error?.description.contains("libpq cannot read the connection string") == true)
    }

    @Test func twoReplicasMigratingAtOnceMigrateOnce() async throws {
        let cluster = try await PostgresTestCluster.shared()
        let schema = PostgresTestCluster.uniqueSchema("race")
        async let first = PostgresRuntimeStateStore(connectionString: cluster.connectionString, schema: schema)
        async let second = PostgresRuntimeStateStore(connectionString: cluster.connectionString, schema: schema)
        let stores = try await [first, second]
        #expect(try await stores[0].schemaVersion() == 2)
        #expect(try await cluster.psql("SELECT count(*) FROM \(schema).codex_migrations").trimmingCharacters(in: .whitespacesAndNewlines) == "2")
    }
}
