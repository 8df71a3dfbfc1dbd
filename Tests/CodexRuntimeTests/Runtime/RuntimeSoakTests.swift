import CodexSchema
import CodexTestSupport
import Foundation
import Testing

/// The fault-injecting soak (`RuntimeFixture soak`, `Scripts/soak.sh` for the long run) at a size the
/// suite can afford, once per HTTP client: every turn consistent, exactly the model requests the faults
/// call for, the database intact, no temporary file left, descriptors flat.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct RuntimeSoakTests {
    /// How many model requests each fault's turn makes.
    private static let requestsPerFault: [String: Int] = [
        "none": 1, "tool": 2, "toolThrows": 2, "toolBadArguments": 2, "rateLimited": 2, "serverErrors": 3, "dropBeforeOutput": 2,
        "dropMidStream": 1, "slowConsumer": 1, "interrupted": 1, "consumerCancelled": 1, "steered": 2,
    ]

    /// Runs `RuntimeFixture soak` with `options` in a child process at the lowest priority, with a
    /// database and a `TMPDIR` of its own, and returns its report (expecting a clean exit).
    private static func soak(_ options: [String]) async throws -> JSONValue {
        let directory = try temporaryDirectory("runtime-soak")
        defer { try? FileManager.default.removeItem(at: directory) }
        let temporary = directory.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let arguments = ["-n", "19", ChildProcess.product("RuntimeFixture").path, "soak", "--db", directory.appendingPathComponent("soak.sqlite").path] + options
        let outcome = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/nice"), arguments, environment: ["TMPDIR": temporary.path])
        #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
        return try JSONValue(parsing: Array(outcome.stdout.utf8))
    }

    @Test(arguments: ["curl", "urlsession"])
    func fourHundredTurnsWithSeededFaultsStayConsistent(client: String) async throws {
        let report = try await Self.soak(["--turns", "400", "--seed", "3", "--sample-every", "50", "--client", client])
        #expect(report["violation_count"] == 0, "\(report["violations"] ?? [])")
        #expect(report["integrity"] == "ok")
        #expect(report["temporary_files"] == 0)

        let faults = Dictionary(uniqueKeysWithValues: (report["faults"]?.objectValue?.members ?? []).map { ($0.key, $0.value.numberValue?.intValue ?? 0) })
        #expect(Set(faults.keys) == Set(Self.requestsPerFault.keys), "every fault drawn at least once")
        #expect(faults.values.reduce(0, +) == 400)
        let requests = faults.reduce(0) { $0 + $1.value * (Self.requestsPerFault[$1.key] ?? 0) }
        #expect(report["requests"]?.numberValue?.intValue == requests, "exactly the requests the faults call for: retries never multiply")
        let interrupted = (faults["interrupted"] ?? 0) + (faults["consumerCancelled"] ?? 0)
        #expect(report["outcomes"] == [
            "completed": .number(JSONNumber(400 - interrupted - (faults["dropMidStream"] ?? 0))),
            "failed": .number(JSONNumber(faults["dropMidStream"] ?? 0)), "interrupted": .number(JSONNumber(interrupted)),
        ])

        // Descriptors: after the first 50 turns (warm-up), never more than that sample's count plus the
        // two ends of two connections in flight.
        let descriptors = (report["samples"]?.arrayValue ?? []).compactMap { $0["fds"]?.numberValue?.intValue }
        #expect(descriptors.count == 9)
        let warm = descriptors.dropFirst().first ?? 0
        #expect(descriptors.dropFirst(2).allSatisfy { $0 <= warm + 4 }, "descriptors \(descriptors)")
    }
}

