import CodexCore
import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// A state store whose write-ahead log was left without its shared-memory file, in a directory the
/// reader cannot write: SQLite cannot make the file it needs, and the error says so
/// (`sqlite_read_only`), instead of "No such file or directory" about a file that is there.
@Suite struct ReadOnlyDirectoryTests {
    @Test func aLeftoverWriteAheadLogInAReadOnlyDirectoryIsSaidPlainly() async throws {
        let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("codexctl-rodir-\(UUID().uuidString)")
        let source = directory.appendingPathComponent("source")
        let copy = directory.appendingPathComponent("copy")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: copy.path)
            try? FileManager.default.removeItem(at: directory)
        }
        do {
            // Copied while the writer is open, so the log is there and the shared-memory file is not.
            let store = try SQLiteRuntimeStateStore(path: source.appendingPathComponent("state.sqlite").path)
            try await store.upsertThread(AgentThread(title: "kept"))
            for name in ["state.sqlite", "state.sqlite-wal"] {
                try FileManager.default.copyItem(at: source.appendingPathComponent(name), to: copy.appendingPathComponent(name))
                try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: copy.appendingPathComponent(name).path)
            }
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: copy.path)
        let database = copy.appendingPathComponent("state.sqlite").path
        let codexctl = CommandRunner.productsDirectory.appendingPathComponent("codexctl").path
        let arguments = ["threads", "list", "--db", database]
        // Permissions do not stop root: run as an unprivileged user then.
        let result = getuid() == 0
            ? try await CommandRunner.run(
                URL(fileURLWithPath: "/usr/bin/setpriv"), ["--reuid=65534", "--regid=65534", "--clear-groups", codexctl] + arguments,
                in: URL(fileURLWithPath: "/"), environment: ["HOME": directory.path]
            )
            : try await CommandRunner.codexctl(arguments)
        #expect(result.status == 1)
        #expect(result.stderr == """
            Error: sqlite_read_only: a statement could not be prepared on \(database): it has a write-ahead log but no shared-memory \
            file, and none can be made beside it (the directory is read-only); open it once where its directory can be written

            """, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: database + "-shm"))
    }
}
