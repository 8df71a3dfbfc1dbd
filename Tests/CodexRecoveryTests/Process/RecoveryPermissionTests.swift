import CodexTestSupport
import Foundation
import Glibc
import Testing

/// Permissions as a user without root's bypass: when the tests run as root, the fixture host is started
/// as `nobody` through `setpriv`; otherwise it already runs unprivileged.
@Suite(.serialized, .timeLimit(.minutes(3 * Sanitizer.slowdown))) struct RecoveryPermissionTests {
    static let nobody: uid_t = 65534

    /// The fixture's arguments, wrapped in `setpriv` when running as root.
    private func unprivileged(_ arguments: [String]) -> (URL, [String]) {
        guard geteuid() == 0 else { return (FixtureProcess.executable, arguments) }
        return (
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            ["--reuid=\(Self.nobody)", "--regid=\(Self.nobody)", "--clear-groups", "--inh-caps=-all", FixtureProcess.executable.path] + arguments
        )
    }

    /// A directory the unprivileged user owns (when the tests run as root).
    private func ownedDirectory(_ url: URL, mode: mode_t = 0o755) throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        if geteuid() == 0 { #expect(chown(url.path, Self.nobody, Self.nobody) == 0) }
        #expect(chmod(url.path, mode) == 0)
    }

    @Test func aStoreTheUserCannotEnterIsATypedRefusal() async throws {
        guard geteuid() == 0 else { return }  // Needs a directory owned by someone else: only root can make one.
        let world = try FixtureWorld()
        try ownedDirectory(world.scratch.url)
        // The store belongs to root, mode 0700: nobody may not enter it.
        let store = world.scratch.storeURL
        #expect(mkdir(store.path, 0o700) == 0)
        let (executable, arguments) = unprivileged(["--store", store.path, "--host", world.hostURL.path, "--base-url", world.server.baseURL.absoluteString])
        let outcome = try await FixtureProcess.run(executable: executable, arguments)
        #expect(outcome.status == 2)
        #expect(outcome.stderr.contains("storage_failure") || outcome.stderr.contains("insecure_store"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("errno 13") || outcome.stderr.contains("another user"), "\(outcome.stderr)")
        #expect(world.posts.isEmpty)
    }

    @Test func aReadOnlyPartitionRefusesWritesWithEACCESAndLosesNothing() async throws {
        let world = try FixtureWorld()
        try ownedDirectory(world.scratch.url)
        let base = ["--store", world.scratch.storeURL.path, "--host", world.hostURL.path, "--base-url", world.server.baseURL.absoluteString]
        // First run as the user: prepare and stop once the handle is stored.
        let (executable, seedArguments) = unprivileged(base + ["--exit-after", "handle"])
        let seed = try await FixtureProcess.run(executable: executable, seedArguments)
        #expect(seed.status == 75, "\(seed.stderr)")
        // Make the operation's directory read-only (0500): every record write must now fail.
        let partitions = try FileManager.default.subpathsOfDirectory(atPath: world.scratch.storeURL.path)
            .filter { $0.split(separator: "/").count == 2 && !$0.hasSuffix(".lock") }
        let partition = try #require(partitions.first.map { world.scratch.storeURL.appendingPathComponent($0) })
        let before = try FileManager.default.contentsOfDirectory(atPath: partition.path).sorted()
        let recordName = try #require(before.first { $0.hasSuffix(".json") && !$0.contains(".control") })
        let recordBytes = try Data(contentsOf: partition.appendingPathComponent(recordName))
        #expect(chmod(partition.path, 0o500) == 0)
        let (_, runArguments) = unprivileged(base)
        let refused = try await FixtureProcess.run(executable: executable, runArguments)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("errno 13"), "\(refused.stderr)")
        #expect(world.posts.isEmpty)
        #expect(try Data(contentsOf: partition.appendingPathComponent(recordName)) == recordBytes)
        // With write access back, the same handle finishes: one POST, one commit.
        #expect(chmod(partition.path, 0o700) == 0)
        let finish = try await FixtureProcess.run(executable: executable, runArguments)
        #expect(finish.status == 0, "\(finish.stderr)")
        #expect(world.posts.count == 1)
        #expect(try world.host()["commitCount"] as? Int == 1)
    }
}
