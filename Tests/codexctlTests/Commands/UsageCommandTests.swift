import CodexCore
import CodexSchema
import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Testing

/// `codexctl usage` against a real SQLite store file seeded through the store API: the table and the
/// JSON, every filter and grouping, prices, the read-only guarantee, and its errors.
@Suite struct UsageCommandTests {
    /// Four responses in two threads: two of `gpt-6-astra` with every count, one of
    /// `gpt-6-astra-mini` without cached, reasoning and total counts, and one without any count.
    static let records = [
        AgentUsageRecord(
            threadID: "thread-a", turnID: "turn-1", sequence: 0, accountBinding: "acct-1", model: "gpt-6-astra", recordedAt: Date(timeIntervalSince1970: 1_796_119_200),
            usage: AgentUsage(inputTokens: 1_200, cachedInputTokens: 1_024, cacheWriteInputTokens: 0, outputTokens: 300, reasoningOutputTokens: 128, totalTokens: 1_500)
        ),
        AgentUsageRecord(
            threadID: "thread-a", turnID: "turn-1", sequence: 1, accountBinding: "acct-1", model: "gpt-6-astra", recordedAt: Date(timeIntervalSince1970: 1_796_119_205),
            usage: AgentUsage(inputTokens: 2_000, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: 100, reasoningOutputTokens: 0, totalTokens: 2_100)
        ),
        AgentUsageRecord(
            threadID: "thread-b", turnID: "turn-2", sequence: 0, accountBinding: nil, model: "gpt-6-astra-mini", recordedAt: Date(timeIntervalSince1970: 1_796_198_400),
            usage: AgentUsage(inputTokens: 500, outputTokens: 50)
        ),
        AgentUsageRecord(
            threadID: "thread-b", turnID: "turn-2", sequence: 1, accountBinding: nil, model: "gpt-6-astra-mini", recordedAt: Date(timeIntervalSince1970: 1_796_202_000),
            usage: AgentUsage()
        ),
    ]

    /// `gpt-6-astra` priced from 2026-01-01; `gpt-6-astra-mini` not priced.
    static let prices = #"{"version": 1, "prices": [{"model": "gpt-6-astra", "effective_from": "2026-01-01", "input": 1.25, "cached_input": "0.125", "output": 10}]}"#

    /// A store file in a fresh directory with the two threads and the four records, closed cleanly.
    static func seededStore() async throws -> (directory: URL, path: String) {
        let directory = try temporaryDirectory("codexctl-usage")
        let path = directory.appendingPathComponent("state.sqlite").path
        do {
            let store = try SQLiteRuntimeStateStore(path: path)
            try await store.upsertThread(AgentThread(id: "thread-a", title: "Orders", accountBinding: "acct-1"))
            try await store.upsertThread(AgentThread(id: "thread-b", title: "Ops"))
            try await store.recordUsage(records)
        }
        try Data(prices.utf8).write(to: directory.appendingPathComponent("prices.json"))
        return (directory, path)
    }

    static let note = "?: not every request reported the count or could be priced; N+? sums those that did\n"

    @Test func theTableSumsByModelAndMarksWhatWasNotReported() async throws {
        let (directory, path) = try await Self.seededStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = try await CommandRunner.codexctl(["usage", "--db", path])
        #expect(plain.status == 0 && plain.stderr.isEmpty, "\(plain.stderr)")
        #expect(plain.stdout == """
            MODEL             REQUESTS   INPUT  CACHED  OUTPUT  REASONING   TOTAL
            gpt-6-astra              2    3200    1024     400        128    3600
            gpt-6-astra-mini         2   500+?       ?    50+?          ?   550+?
            total                    4  3700+?  1024+?   450+?      128+?  4150+?

            """ + Self.note)
        // gpt-6-astra: (176 × 1.25 + 1,024 × 0.125 + 300 × 10 + 2,000 × 1.25 + 100 × 10) per million; the mini has no price.
        let priced = try await CommandRunner.codexctl(["usage", "--db", path, "--prices", directory.appendingPathComponent("prices.json").path])
        #expect(priced.status == 0 && priced.stderr.isEmpty, "\(priced.stderr)")
        #expect(priced.stdout == """
            MODEL             REQUESTS   INPUT  CACHED  OUTPUT  REASONING   TOTAL            COST
            gpt-6-astra              2    3200    1024     400        128    3600    0.006848 USD
            gpt-6-astra-mini         2   500+?       ?    50+?          ?   550+?               ?
            total                    4  3700+?  1024+?   450+?      128+?  4150+?  0.006848 USD+?

            """ + Self.note)
    }

    @Test(arguments: [
        (["--by", "day"], """
            DAY         REQUESTS   INPUT  CACHED  OUTPUT  REASONING   TOTAL
            2026-12-01         2    3200    1024     400        128    3600
            2026-12-02         2   500+?       ?    50+?          ?   550+?
            total              4  3700+?  1024+?   450+?      128+?  4150+?

            """ + note),
        (["--by", "account"], """
            ACCOUNT  REQUESTS   INPUT  CACHED  OUTPUT  REASONING   TOTAL
            acct-1          2    3200    1024     400        128    3600
            (none)          2   500+?       ?    50+?          ?   550+?
            total           4  3700+?  1024+?   450+?      128+?  4150+?

            """ + note),
        (["--thread", "thread-a", "--by", "turn"], """
            TURN    REQUESTS  INPUT  CACHED  OUTPUT  REASONING  TOTAL
            turn-1         2   3200    1024     400        128   3600
            total          2   3200    1024     400        128   3600

            """),
        (["--by", "thread", "--since", "2026-12-02"], """
            THREAD    REQUESTS  INPUT  CACHED  OUTPUT  REASONING  TOTAL
            thread-b         2  500+?       ?    50+?          ?  550+?
            total            2  500+?       ?    50+?          ?  550+?

            """ + note),
        // The end is exclusive: the record at 2026-12-02T00:00:00Z is left out, the one a second before is in.
        (["--by", "day", "--until", "2026-12-02T00:00:00Z", "--since", "2026-12-01T10:00:05Z"], """
            DAY         REQUESTS  INPUT  CACHED  OUTPUT  REASONING  TOTAL
            2026-12-01         1   2000       0     100          0   2100
            total              1   2000       0     100          0   2100

            """),
        (["--turn", "turn-2", "--model", "gpt-6-astra-mini", "--until", "2026-12-02T09:00:00Z"], """
            MODEL             REQUESTS  INPUT  CACHED  OUTPUT  REASONING  TOTAL
            gpt-6-astra-mini         1    500       ?      50          ?    550
            total                    1    500       ?      50          ?    550

            """ + note),
        (["--account", "acct-2"], """
            MODEL  REQUESTS  INPUT  CACHED  OUTPUT  REASONING  TOTAL
            total         0      0       0       0          0      0

            """),
    ])
    func everyFilterAndGroupingSelectsItsRecords(arguments: [String], expected: String) async throws {
        let (directory, path) = try await Self.seededStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await CommandRunner.codexctl(["usage", "--db", path] + arguments)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        #expect(result.stdout == expected)
    }

    @Test func theJSONHasEveryCountWithItsUnreportedRequestsAndExactCosts() async throws {
        let (directory, path) = try await Self.seededStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await CommandRunner.codexctl(["usage", "--db", path, "--json", "--prices", directory.appendingPathComponent("prices.json").path, "--by", "thread"])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        func tally(_ sum: Int, _ unreported: Int) -> JSONValue { ["sum": .number(JSONNumber(sum)), "unreported": .number(JSONNumber(unreported))] }
        let astra: JSONValue = [
            "requests": 2,
            "tokens": ["input": tally(3200, 0), "cached_input": tally(1024, 0), "cache_write_input": tally(0, 0), "output": tally(400, 0), "reasoning_output": tally(128, 0), "total": tally(3600, 0)],
            "cost": ["amounts": ["USD": "0.006848"], "uncosted_requests": 0],
        ]
        let mini: JSONValue = [
            "requests": 2,
            "tokens": ["input": tally(500, 1), "cached_input": tally(0, 2), "cache_write_input": tally(0, 2), "output": tally(50, 1), "reasoning_output": tally(0, 2), "total": tally(550, 1)],
            "cost": ["amounts": [:], "uncosted_requests": 2],
        ]
        let total: JSONValue = [
            "requests": 4,
            "tokens": ["input": tally(3700, 1), "cached_input": tally(1024, 2), "cache_write_input": tally(0, 2), "output": tally(450, 1), "reasoning_output": tally(128, 2), "total": tally(4150, 1)],
            "cost": ["amounts": ["USD": "0.006848"], "uncosted_requests": 2],
        ]
        guard case .object(var first) = astra, case .object(var second) = mini else { return }
        first = JSONObject([("key", "thread-a")] + first.members.map { ($0.key, $0.value) })
        second = JSONObject([("key", "thread-b")] + second.members.map { ($0.key, $0.value) })
        let expected: JSONValue = ["by": "thread", "groups": [.object(first), .object(second)], "total": total]
        #expect(result.stdout == expected.compactString() + "\n")
        // Without prices every cost is null.
        let plain = try await CommandRunner.codexctl(["usage", "--db", path, "--json", "--thread", "thread-b"])
        let json = try JSONValue(parsing: Array(plain.stdout.utf8))
        #expect(json["groups"]?[0]?["cost"] == .null && json["total"]?["cost"] == .null)
        #expect(json["groups"]?[0]?["key"] == "gpt-6-astra-mini")
    }

    @Test func lookingNeverWrites() async throws {
        let (directory, path) = try await Self.seededStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let before = DirectorySnapshot(directory.path)
        let modified = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        for arguments in [["--json"], ["--by", "day", "--prices", directory.appendingPathComponent("prices.json").path], ["--since", "bad"], ["--prices", "/nonexistent"]] {
            _ = try await CommandRunner.codexctl(["usage", "--db", path] + arguments)
        }
        #expect(DirectorySnapshot(directory.path).differences(from: before) == [])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date == modified)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal") && !FileManager.default.fileExists(atPath: path + "-shm"))
        // A missing store is an error naming it, and is not created; nor is a missing default store.
        let missing = directory.appendingPathComponent("none.sqlite").path
        let result = try await CommandRunner.codexctl(["usage", "--db", missing])
        #expect(result.status == 1 && result.stdout.isEmpty)
        #expect(result.stderr == "Error: sqlite_not_found: cannot open \(missing): no such file\n")
        #expect(!FileManager.default.fileExists(atPath: missing))
        let state = directory.appendingPathComponent("xdg")
        let fallback = try await CommandRunner.codexctl(["usage", "--json"], environment: ["XDG_STATE_HOME": state.path])
        #expect(fallback.status == 1)
        #expect(fallback.stdout == #"{"error":{"code":"sqlite_not_found","message":"cannot open \#(state.path)/codexkit/state.sqlite: no such directory"}}"# + "\n")
        #expect(!FileManager.default.fileExists(atPath: state.path))
    }

    @Test(arguments: [
        (["--since", "yesterday"], "Error: --since needs an ISO 8601 date such as 2026-12-01 or 2026-12-01T10:00:00Z\n"),
        (["--until", "2026-02-30"], "Error: --until needs an ISO 8601 date such as 2026-12-01 or 2026-12-01T10:00:00Z\n"),
        (["--since", "2026-12-02", "--until", "2026-12-02T00:00:00Z"], "Error: --since must be before --until\n"),
        (["--by", "week"], "Error: --by must be thread, turn, account, model or day\n"),
        (["extra"], "Error: unexpected argument\n"),
    ])
    func aBadOptionIsAUsageErrorBeforeAnythingIsOpened(arguments: [String], message: String) async throws {
        let directory = try temporaryDirectory("codexctl-usage-errors")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("none.sqlite").path
        let result = try await CommandRunner.codexctl(["usage", "--db", path] + arguments)
        #expect(result.status == 64 && result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix(message + "Usage: codexctl usage "), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func aBadPriceFileIsATypedErrorNamingTheEntryNotItsContent() async throws {
        let (directory, path) = try await Self.seededStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("bad-prices.json")
        try Data(#"{"version": 1, "prices": [{"model": "gpt-6-astra", "effective_from": "2026-01-01", "input": 1, "output": 1}, {"model": "sk-canary", "effective_from": "2026-01-01", "input": "cheap", "output": 1}]}"#.utf8).write(to: file)
        let text = try await CommandRunner.codexctl(["usage", "--db", path, "--prices", file.path])
        #expect(text.status == 1 && text.stdout.isEmpty)
        #expect(text.stderr == #"Error: price_table_entry_invalid: price entry 1 field input is not a non-negative decimal number (a JSON number or a string such as "1.25")"# + "\n")
        try Data(#"{"version": 2, "prices": []}"#.utf8).write(to: file)
        let json = try await CommandRunner.codexctl(["usage", "--db", path, "--prices", file.path, "--json"])
        #expect(json.status == 1 && json.stderr.isEmpty)
        #expect(json.stdout == #"{"error":{"code":"price_table_unsupported_version","message":"the price file's version is not 1, the one this build reads"}}"# + "\n")
        let missing = directory.appendingPathComponent("none.json").path
        let absent = try await CommandRunner.codexctl(["usage", "--db", path, "--prices", missing])
        #expect(absent.status == 1)
        #expect(absent.stderr == "Error: file_system_error: cannot open \(missing): No such file or directory\n")
    }
}
