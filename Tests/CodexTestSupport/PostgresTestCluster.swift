public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A private PostgreSQL cluster for the tests: `initdb` into a new temporary directory (as the
/// unprivileged `nobody` when the tests run as root, since PostgreSQL refuses to run as root), the
/// server listening on a Unix socket in that directory only (no TCP port), trust authentication for the
/// cluster's own role. ``shared`` is started once per test process and removed when the process exits;
/// a test that stops or kills its server starts a cluster of its own with ``start()``.
///
/// Each test isolates itself with a schema of its own (``uniqueSchema(_:)``) rather than a database.
public final class PostgresTestCluster: Sendable {
    /// Why the cluster could not be started.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed, with the tool's output.
        public let description: String
    }

    /// The cluster's directory (data in `data/`, the socket and the log beside it).
    public let directory: URL
    /// The PostgreSQL programs' directory (`/usr/lib/postgresql/<version>/bin`).
    public let binaries: URL
    /// The user the server runs as, when the tests run as root.
    let runAs: String?

    /// The role every test connects as.
    public static let role = "codexkit"

    /// A connection string for database `postgres` over the cluster's socket.
    public var connectionString: String { "postgresql:///postgres?host=\(directory.path)&user=\(Self.role)" }

    private static let sharedCluster = Mutex<Task<PostgresTestCluster, any Error>?>(nil)

    /// The cluster shared by every test of this process, started on first use (the tests that ask
    /// meanwhile wait for the same start, without holding a thread).
    public static func shared() async throws -> PostgresTestCluster {
        let starting = sharedCluster.withLock { task -> Task<PostgresTestCluster, any Error> in
            if let task { return task }
            let started = Task<PostgresTestCluster, any Error> {
                let cluster = try await start()
                registerRemovalAtExit(cluster)
                return cluster
            }
            task = started
            return started
        }
        return try await starting.value
    }

    /// A schema name no other test uses: `<prefix>_<random hex>`.
    public static func uniqueSchema(_ prefix: String = "t") -> String {
        "\(prefix)_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased())"
    }

    /// Creates and starts a new cluster (a few seconds; the programs are awaited off the cooperative pool).
    public static func start() async throws(Failure) -> PostgresTestCluster {
        guard let binaries = findBinaries() else {
            throw Failure(description: "no PostgreSQL server programs under /usr/lib/postgresql (apt install postgresql)")
        }
        let directory = URL(fileURLWithPath: "/tmp/codexkit-pg-\(UUID().uuidString.prefix(8).lowercased())")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        } catch {
            throw Failure(description: "cannot create \(directory.path): \(error)")
        }
        let runAs: String? = geteuid() == 0 ? "nobody" : nil
        if runAs != nil, chown(directory.path, 65534, 65534) != 0 {
            throw Failure(description: "cannot hand \(directory.path) to nobody")
        }
        let cluster = PostgresTestCluster(directory: directory, binaries: binaries, runAs: runAs)
        try await cluster.tool("initdb", ["-D", cluster.dataDirectory, "-U", role, "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"])
        try await cluster.startServer()
        return cluster
    }

    private init(directory: URL, binaries: URL, runAs: String?) {
        self.directory = directory
        self.binaries = binaries
        self.runAs = runAs
    }

    var dataDirectory: String { directory.appendingPathComponent("data").path }

    /// Starts the server and waits until it accepts connections.
    public func startServer() async throws(Failure) {
        try await tool("pg_ctl", [
            "-D", dataDirectory, "-w", "-t", "120", "-l", directory.appendingPathComponent("server.log").path,
            "-o", "-c listen_addresses='' -k \(directory.path) -c max_connections=300 -c fsync=on", "start",
        ])
    }

    /// Stops the server: `fast` disconnects sessions and shuts down cleanly, `immediate` is a crash
    /// (every backend killed, recovery at the next start).
    public func stopServer(immediate: Bool = false) async throws(Failure) {
        try await tool("pg_ctl", ["-D", dataDirectory, "-w", "-t", "120", "-m", immediate ? "immediate" : "fast", "stop"])
    }

    /// Runs SQL with `psql` against database `postgres` (for setting up what a test needs: another
    /// application's tables, a look at `pg_locks`); returns its unaligned, tuples-only output.
    @discardableResult
    public func psql(_ sql: String) async throws(Failure) -> String {
        try await tool("psql", ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", directory.path, "-U", Self.role, "-d", "postgres", "-c", sql])
    }

    /// Stops the server and removes the directory (blocking: it also runs at process exit).
    public func remove() {
        _ = try? toolBlocking("pg_ctl", ["-D", dataDirectory, "-w", "-t", "120", "-m", "immediate", "stop"])
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs one of the PostgreSQL programs (as `nobody` when root) and returns its standard output; the
    /// wait for it runs on a thread of its own.
    @discardableResult
    func tool(_ name: String, _ arguments: [String]) async throws(Failure) -> String {
        let (child, output) = try launch(name, arguments)
        return try finish(name, await child.exit(), output)
    }

    /// ``tool(_:_:)`` waiting on the calling thread (for the removal at process exit).
    @discardableResult
    func toolBlocking(_ name: String, _ arguments: [String]) throws(Failure) -> String {
        let (child, output) = try launch(name, arguments)
        return try finish(name, child.waitForExit(), output)
    }

    private func launch(_ name: String, _ arguments: [String]) throws(Failure) -> (SpawnedProcess, URL) {
        let program = binaries.appendingPathComponent(name).path
        let executable = runAs == nil ? program : "/usr/sbin/runuser"
        let full = runAs.map { ["-u", $0, "--", program] + arguments } ?? arguments
        let output = directory.appendingPathComponent(".tool-\(UUID().uuidString.prefix(8)).out")
        do {
            return (try SpawnedProcess(executable, full, directory: directory.path, stdout: .file(output.path), stderr: .file(output.path + ".err")), output)
        } catch {
            throw Failure(description: "cannot start \(name): \(error)")
        }
    }

    private func finish(_ name: String, _ ended: SpawnedProcess.Termination, _ output: URL) throws(Failure) -> String {
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(atPath: output.path + ".err")
        }
        let stdout = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOf: URL(fileURLWithPath: output.path + ".err"), encoding: .utf8)) ?? ""
        guard ended.succeeded else {
            throw Failure(description: "\(name) failed (\(ended.killed ? "signal" : "status") \(ended.status)): \(stderr)\(stdout)")
        }
        return stdout
    }

    /// The newest installed version's programs.
    static func findBinaries() -> URL? {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return versions.compactMap { version in Int(version).map { ($0, version) } }.max { $0.0 < $1.0 }
            .map { root.appendingPathComponent($0.1).appendingPathComponent("bin") }
            .flatMap { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("initdb").path) ? $0 : nil }
    }

    /// Removes the shared cluster when the test process exits.
    private static func registerRemovalAtExit(_ cluster: PostgresTestCluster) {
        clusterToRemove.withLock { $0 = cluster }
        atexit {
            PostgresTestCluster.clusterToRemove.withLock { $0 }?.remove()
        }
    }

    private static let clusterToRemove = Mutex<PostgresTestCluster?>(nil)
}
