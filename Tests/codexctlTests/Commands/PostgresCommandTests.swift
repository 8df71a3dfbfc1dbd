import CodexSchema
import CodexTestSupport
import Foundation
import Testing

/// `codexctl` on a PostgreSQL store: `--db postgresql://…` wherever a SQLite path is taken (send, threads,
/// approvals, db), the same deep check, and the connection string's password shown nowhere.
@Suite(.timeLimit(.minutes(5 * Sanitizer.slowdown))) struct PostgresCommandTests {
    @Test func sendThreadsAndDbWorkOnAPostgresStoreAndThePasswordIsShownNowhere() async throws {
        let cluster = try await PostgresTestCluster.shared()
        let directory = try temporaryDirectory("postgres-cli")
        defer { try? FileManager.default.removeItem(at: directory) }
        let schema = PostgresTestCluster.uniqueSchema("cli")
        var environment = SendCommandTests.environment(directory)
        environment["CODEXKIT_POSTGRES_SCHEMA"] = schema
        // The cluster trusts its socket: the password is accepted and ignored, and must appear nowhere.
        let secret = "pg-Canary-77e1"
        let url = "postgresql://\(PostgresTestCluster.role):\(secret)@/postgres?host=\(cluster.directory.path)"

        let missing = try await CommandRunner.codexctl(["threads", "list", "--db", url], environment: environment)
        #expect(missing.status == 1)
        #expect(missing.stderr.hasPrefix("Error: postgres_schema_outdated: the database has no state store in schema \(schema)"), "\(missing.stderr)")
        let migrated = try await CommandRunner.codexctl(["db", "migrate", "--db", url, "--json"], environment: environment)
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(migrated.stdout == #"{"schema_version":2}"# + "\n")

        let server = try LoopbackHTTPServer(replies: [.sse(SendCommandTests.reply(["Hello ", "from PostgreSQL."]))])
        defer { server.shutdown() }
        let endpoint = server.baseURL.appendingPathComponent("v1").absoluteString
        let sent = try await CommandRunner.codexctl(["send", "Say hello", "--endpoint", endpoint, "--db", url], environment: environment)
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.stdout == "Hello from PostgreSQL.\n")
        let threadID = String(try #require(sent.stderr.split(separator: "\n").first { $0.hasPrefix("thread ") }?.dropFirst("thread ".count)))

        let listed = try await CommandRunner.codexctl(["threads", "list", "--db", url, "--json"], environment: environment)
        #expect(listed.status == 0, "\(listed.stderr)")
        let threads = try JSONValue(parsing: Array(listed.stdout.utf8)).arrayValue ?? []
        #expect(threads.compactMap { $0["id"]?.stringValue } == [threadID])
        let shown = try await CommandRunner.codexctl(["threads", "show", threadID, "--db", url, "--json"], environment: environment)
        #expect(try JSONValue(parsing: Array(shown.stdout.utf8))["history_items"]?.numberValue?.intValue == 4, "\(shown.stdout)")
        let exported = try await CommandRunner.codexctl(["threads", "export", threadID, "--db", url], environment: environment)
        #expect(exported.stdout.split(separator: "\n").count == 4)
        let approvals = try await CommandRunner.codexctl(["approvals", "list", "--db", url, "--json"], environment: environment)
        #expect(approvals.stdout == "[]\n", "\(approvals.stderr)")
        // The usage ledger, read-only on PostgreSQL too.
        let usage = try await CommandRunner.codexctl(["usage", "--db", url, "--json", "--by", "day"], environment: environment)
        #expect(usage.status == 0, "\(usage.stderr)")
        let ledger = try JSONValue(parsing: Array(usage.stdout.utf8))
        #expect(ledger["by"] == "day" && ledger["total"]?["requests"]?.numberValue != nil, "\(usage.stdout)")

        let checked = try await CommandRunner.codexctl(["db", "check", "--db", url, "--json"], environment: environment)
        #expect(checked.status == 0, "\(checked.stderr)")
        let report = try JSONValue(parsing: Array(checked.stdout.utf8))
        #expect(report["engine"]?.stringValue == "postgres")
        #expect(report["healthy"] == .bool(true))
        #expect(report["rows_checked"]?.numberValue?.intValue == 7, "a thread, four history items, a turn, a usage record: \(checked.stdout)")

        // A row spoiled behind the store's back is found, named by its table and key.
        try await cluster.psql("UPDATE \(schema).turns SET body = '\\x7b7d'::bytea")
        let spoiled = try await CommandRunner.codexctl(["db", "check", "--db", url], environment: environment)
        #expect(spoiled.status == 1)
        #expect(spoiled.stdout.contains("problem    turns row "), "\(spoiled.stdout)")
        #expect(spoiled.stderr == "Error: postgres_row_undecodable: the store has 1 problem(s)\n", "\(spoiled.stderr)")

        let deleted = try await CommandRunner.codexctl(["threads", "delete", threadID, "--db", url], environment: environment)
        #expect(deleted.status == 0, "\(deleted.stderr)")
        for result in [missing, migrated, sent, listed, shown, exported, approvals, usage, checked, spoiled, deleted] {
            #expect(!(result.stdout + result.stderr).contains(secret))
        }

        let refused = try await CommandRunner.codexctl(
            ["threads", "list", "--db", "postgresql://\(PostgresTestCluster.role):\(secret)@/no_such_db?host=\(cluster.directory.path)"], environment: environment
        )
        #expect(refused.status == 1)
        #expect(refused.stderr.hasPrefix("Error: postgres_authentication_failed: "), "\(refused.stderr)")
        #expect(!(refused.stdout + refused.stderr).contains(secret))
    }

    @Test func theStorageBenchMeasuresThePostgresStoreNextToRawLibpqLoops() async throws {
        let cluster = try await PostgresTestCluster.shared()
        let result = try await CommandRunner.codexctl([
            "bench", "storage", "--postgres", cluster.connectionString, "--postgres-only", "--items", "20", "--restore", "20", "--json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONValue(parsing: Array(result.stdout.utf8))
        let results = object["results"]?.arrayValue ?? []
        #expect(results.compactMap { $0["name"]?.stringValue } == [
            "postgres append", "postgres append", "postgres append", "postgres append", "postgres restore", "postgres restore",
        ])
        #expect(results.compactMap { $0["baseline"]?["name"]?.stringValue } == [
            "raw libpq prepared-statement loop", "raw libpq loop, handed off", "raw libpq prepared-statement loop", "raw libpq loop, handed off",
            "raw libpq select of the same rows (no decoding)", "raw libpq select decoding each row into a kept item (the store's row decoder)",
        ])
        // Each append figure and each of its baselines is a rate that was measured.
        let rates = results.prefix(4).flatMap { [$0["value"]?.numberValue?.doubleValue, $0["baseline"]?["value"]?.numberValue?.doubleValue] }
        #expect(rates.count == 8 && rates.allSatisfy { ($0 ?? 0) > 0 && ($0 ?? 0).isFinite })
        // The scratch schema is gone afterwards.
        #expect(try await cluster.psql("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'codexkit_bench_%'").trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        let refused = try await CommandRunner.codexctl(["bench", "storage", "--postgres-only"])
        #expect(refused.status == 64)
    }
}
