import CodexTestSupport
import Foundation
import Testing

@Suite struct CLITests {
    @Test func versionAndHelp() async throws {
        let version = try await CommandRunner.codexctl(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout == "codexctl 0.1.0\n")
        // `help help` and `help -h` ask about help itself, whose line is on the root page.
        for arguments in [["--help"], ["-h"], ["help"], [], ["help", "help"], ["help", "-h"], ["help", "--help"]] {
            let help = try await CommandRunner.codexctl(arguments)
            #expect(help.status == 0)
            #expect(help.stdout.hasPrefix("OVERVIEW: "))
            #expect(help.stdout.contains("\nUSAGE: codexctl <subcommand> [--version]\n"))
            #expect(help.stdout.contains("\nSUBCOMMANDS:\n  demo"))
            #expect(help.stderr.isEmpty)
        }
    }

    @Test func helpForASubcommandMatchesItsHelpFlag() async throws {
        let viaHelp = try await CommandRunner.codexctl(["help", "schema", "validate"])
        let viaFlag = try await CommandRunner.codexctl(["schema", "validate", "--help"])
        #expect(viaHelp.status == 0)
        #expect(viaHelp.stdout == viaFlag.stdout)
        #expect(viaHelp.stdout.contains("USAGE: codexctl schema validate <instance> --schema <schema> [--partial] [--max-bytes <n>] [--max-work <n>] [--json]"))
        #expect(viaHelp.stdout.contains("ARGUMENTS:\n  <instance>"))
        // `login status` runs `auth status`, so help finds it under both names.
        let aliased = try await CommandRunner.codexctl(["help", "login", "status"])
        #expect(aliased.status == 0, "\(aliased.stderr)")
        #expect(aliased.stdout == (try await CommandRunner.codexctl(["auth", "status", "--help"])).stdout)
    }

    @Test func usageErrorsGoToStandardErrorWithStatus64() async throws {
        let unknown = try await CommandRunner.codexctl(["frobnicate"])
        #expect(unknown.status == 64)
        #expect(unknown.stdout.isEmpty)
        #expect(unknown.stderr.hasPrefix("Error: Unknown subcommand 'frobnicate'\nUsage: codexctl <subcommand> [--version]\n"))
        let missing = try await CommandRunner.codexctl(["schema", "validate", "x.json"])
        #expect(missing.status == 64)
        #expect(missing.stderr.hasPrefix("Error: --schema <schema> is required\n"))
        let badOption = try await CommandRunner.codexctl(["schema", "check", "--bogus", "x"])
        #expect(badOption.status == 64)
        #expect(badOption.stderr.hasPrefix("Error: Unknown option '--bogus'\n"))
        let afterDashes = try await CommandRunner.codexctl(["schema", "check", "--", "--help"])
        #expect(afterDashes.status == 2, "after --, --help is the file name")
        #expect(afterDashes.stderr.hasPrefix("Error: unreadable_input: Cannot read schema '--help'"))
        let valuedFlag = try await CommandRunner.codexctl(["schema", "check", "--json=1", "x"])
        #expect(valuedFlag.status == 64)
        #expect(valuedFlag.stderr.hasPrefix("Error: '--json' takes no value\n"))
        // With --json on the command line, a usage error is JSON on stdout too.
        let twice = try await CommandRunner.codexctl(["schema", "check", "--json", "--json", "x"])
        #expect(twice.status == 64)
        #expect(twice.stderr.isEmpty)
        #expect(twice.stdout == #"{"error":{"code":"usage","message":"'--json' given twice","usage":"codexctl schema check <schema> [--json]"}}"# + "\n")
        let badHelp = try await CommandRunner.codexctl(["help", "nope"])
        #expect(badHelp.status == 64)
        // A command without --json has no JSON to give: its --json is the mistake, said in text.
        let noJSON = try await CommandRunner.codexctl(["responses", "decode", "--json", "x"])
        #expect(noJSON.status == 64)
        #expect(noJSON.stdout.isEmpty)
        #expect(noJSON.stderr.hasPrefix("Error: Unknown option '--json'\nUsage: codexctl responses decode <file>\n"), "\(noJSON.stderr)")
        // A mistyped subcommand with --json is still JSON: the script asked for it.
        let group = try await CommandRunner.codexctl(["threads", "lst", "--json"])
        #expect(group.status == 64)
        #expect(group.stdout.hasPrefix(#"{"error":{"code":"usage","message":"Unknown subcommand 'lst'""#), "\(group.stdout)")
    }

    /// Extra words after a complete command, an empty account binding, standard input named twice, a
    /// count over its limit and an issuer that is not https are usage errors, found before any store is
    /// opened or anything is sent.
    @Test func leftoverAndImpossibleArgumentsAreUsageErrors() async throws {
        let cases: [([String], String)] = [
            (["--version", "--bogus"], "Error: Unexpected argument '--bogus' after --version\n"),
            (["help", "errors", "extra"], "Error: Unexpected argument 'extra' after 'help errors'\n"),
            (["help", "--markdown", "--markdown"], "Error: Unexpected argument '--markdown' after 'help --markdown'\n"),
            (["recovery", "list", "--store", "/nonexistent/store", "--binding", ""], "Error: --binding needs an account binding (it is empty)\n"),
            (["schema", "validate", "-", "--schema", "-"], "Error: the schema and the instance cannot both be read from standard input ('-')\n"),
            (["memory", "list", "--db", "/nonexistent/memory.sqlite", "--limit", "100000"], "Error: --limit must be a whole number from 1 to 10000\n"),
            (["memory", "search", "x", "--db", "/nonexistent/memory.sqlite", "--limit", "257"], "Error: --limit must be a whole number from 1 to 256\n"),
            (["auth", "login", "--device-code", "--issuer", "http://example.com", "--secrets", "/nonexistent/secrets"], "Error: --issuer: the endpoint must use https"),
        ]
        for (arguments, first) in cases {
            let run = try await CommandRunner.codexctl(arguments)
            #expect(run.status == 64, "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.hasPrefix(first), "\(arguments): \(run.stderr)")
        }
    }
}

@Suite struct SchemaCommandTests {
    static let schema = #"{"type":"object","properties":{"a":{"type":"string","minLength":3},"b":{"enum":[1,2]}},"required":["a"],"additionalProperties":false}"#

    @Test func validateReportsValidAndInvalid() async throws {
        let schemaPath = try CommandRunner.temporaryFile(Self.schema)
        let valid = try await CommandRunner.codexctl(["schema", "validate", "--schema", schemaPath, try CommandRunner.temporaryFile(#"{"a":"abc","b":2.0}"#)])
        #expect(valid.status == 0)
        #expect(valid.stdout == "valid\n")
        let invalid = try await CommandRunner.codexctl(["schema", "validate", "--schema", schemaPath, "-"], stdin: #"{"a":"x","b":3,"c":true}"#)
        #expect(invalid.status == 1)
        #expect(invalid.stdout == """
        invalid: 3 errors
          /a: string is shorter than 3 characters (minLength at /properties/a/minLength)
          /b: value is not one of the 2 allowed values (enum at /properties/b/enum)
          /c: property is not allowed (additionalProperties at /additionalProperties)

        """)
    }

    @Test func validateJSONAndPartialModes() async throws {
        let schemaPath = try CommandRunner.temporaryFile(Self.schema)
        let json = try await CommandRunner.codexctl(["schema", "validate", "--json", "--schema=\(schemaPath)", "-"], stdin: #"{"b":1}"#)
        #expect(json.status == 1)
        #expect(json.stdout == #"{"errors":[{"instance_pointer":"","keyword":"required","message":"missing required property \"a\"","schema_pointer":"/required"}],"valid":false}"# + "\n")
        let partial = try await CommandRunner.codexctl(["schema", "validate", "--partial", "--json", "--schema", schemaPath, "-"], stdin: #"{"a":"x"}"#)
        #expect(partial.status == 0)
        #expect(partial.stdout == #"{"errors":[],"valid":true}"# + "\n")
    }

    @Test func validateExitsTwoOnUnreadableInput() async throws {
        let schemaPath = try CommandRunner.temporaryFile(Self.schema)
        let missing = try await CommandRunner.codexctl(["schema", "validate", "--schema", schemaPath, "/nonexistent/instance.json"])
        #expect(missing.status == 2)
        #expect(missing.stderr == "Error: unreadable_input: Cannot read instance '/nonexistent/instance.json': No such file or directory\n")
        let malformed = try await CommandRunner.codexctl(["schema", "validate", "--schema", schemaPath, "-"], stdin: "[1,]")
        #expect(malformed.status == 2)
        #expect(malformed.stderr == "Error: json_trailing_comma: Instance '-' is not valid JSON: trailing comma (at byte 2)\n")
        let badSchemaPath = try CommandRunner.temporaryFile(#"{"pattern":"x"}"#)
        let badSchema = try await CommandRunner.codexctl(["schema", "validate", "--schema", badSchemaPath, "-"], stdin: "1")
        #expect(badSchema.status == 2)
        #expect(badSchema.stderr.contains("does not compile: unsupported_schema_keyword"))
        // With --json: one error object on stdout, as every other error; the instance was never judged.
        let badSchemaJSON = try await CommandRunner.codexctl(["schema", "validate", "--schema", badSchemaPath, "-", "--json"], stdin: "1")
        #expect(badSchemaJSON.status == 2)
        #expect(badSchemaJSON.stderr == "")
        #expect(badSchemaJSON.stdout == #"{"error":{"code":"unsupported_schema_keyword","locations":["/pattern"],"message":"schema keyword \"pattern\" is outside the supported subset","schema_pointer":"/pattern"}}"# + "\n")
    }

    @Test func anInstanceOverTheLimitIsRefusedAtTheLimitFromAFileOrAPipe() async throws {
        let schemaPath = try CommandRunner.temporaryFile("true")
        let big = "[" + String(repeating: "1,", count: 2_000) + "1]"
        let expected = "Error: json_size_limit_exceeded: Instance '-' is not valid JSON: input is larger than the limit of 1024 bytes\n"
        let piped = try await CommandRunner.codexctl(["schema", "validate", "--schema", schemaPath, "--max-bytes", "1024", "-"], stdin: big)
        #expect(piped.status == 2)
        #expect(piped.stderr == expected)
        let file = try CommandRunner.temporaryFile(big)
        let fromFile = try await CommandRunner.codexctl(["schema", "validate", "--schema", schemaPath, "--max-bytes", "1024", file])
        #expect(fromFile.status == 2)
        #expect(fromFile.stderr == expected.replacingOccurrences(of: "'-'", with: "'\(file)'"))
        let within = try await CommandRunner.codexctl(["schema", "validate", "--schema", schemaPath, "--max-bytes", "\(big.utf8.count)", file])
        #expect(within.stdout == "valid\n")
        #expect(try await CommandRunner.codexctl(["schema", "validate", "--schema", schemaPath, "--max-bytes", "0", file]).status == 64)
    }

    /// A schema is read up to 16 MiB (it becomes a tree several times its size); the instance's
    /// `--max-bytes` does not raise it.
    @Test func aSchemaOverSixteenMebibytesIsRefusedAtTheLimit() async throws {
        let padding = String(repeating: " ", count: 16 * 1024 * 1024)
        let schema = try CommandRunner.temporaryFile("{}" + padding)
        let expected = "Error: json_size_limit_exceeded: Schema '\(schema)' is not valid JSON: input is larger than the limit of 16777216 bytes\n"
        let check = try await CommandRunner.codexctl(["schema", "check", schema])
        #expect(check.status == 2)
        #expect(check.stderr == expected)
        let validate = try await CommandRunner.codexctl(["schema", "validate", "--schema", schema, "--max-bytes", "\(1 << 30)", "-"], stdin: "1")
        #expect(validate.status == 2)
        #expect(validate.stderr == expected)
        let within = try CommandRunner.temporaryFile("{}" + padding.dropLast(2))
        #expect(try await CommandRunner.codexctl(["schema", "check", within]).stdout == "ok: schema compiles (1 subschema)\n")
    }

    /// Any limit reads what is there: one past the limit is never computed by overflowing (`Int.max`
    /// crashed), and a pipe's limit is never reserved up front (100 TB aborted the process).
    @Test(arguments: ["\(Int.max)", "100000000000000"]) func aHugeLimitReadsWhatIsThereFromAFileOrAPipe(_ limit: String) async throws {
        let schemaPath = try CommandRunner.temporaryFile("true")
        let file = try CommandRunner.temporaryFile("[1,2]")
        let fromFile = try await CommandRunner.codexctl(["schema", "validate", "--schema", schemaPath, "--max-bytes", limit, file])
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        #expect(fromFile.stdout == "valid\n")
        let piped = try await CommandRunner.codexctl(["schema", "validate", "--schema", schemaPath, "--max-bytes", limit, "-"], stdin: "[1,2]")
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stdout == "valid\n")
    }

    @Test func checkListsEveryUnsupportedKeyword() async throws {
        let ok = try await CommandRunner.codexctl(["schema", "check", try CommandRunner.temporaryFile(Self.schema)])
        #expect(ok.status == 0)
        #expect(ok.stdout == "ok: schema compiles (4 subschemas)\n")
        let unsupported = try await CommandRunner.codexctl(["schema", "check", "-"], stdin: #"{"properties":{"a":{"format":"email"}},"if":{}}"#)
        #expect(unsupported.status == 1)
        #expect(unsupported.stdout == """
        error: unsupported_schema_keyword: schema keyword "format" is outside the supported subset (and 1 more)
          at /properties/a/format
          at /if

        """)
        let json = try await CommandRunner.codexctl(["schema", "check", "--json", "-"], stdin: #"{"pattern":"x"}"#)
        #expect(json.stdout == #"{"code":"unsupported_schema_keyword","locations":["/pattern"],"message":"schema keyword \"pattern\" is outside the supported subset","ok":false,"schema_pointer":"/pattern"}"# + "\n")
    }

    @Test func conformanceRunsTheCorpusAndEndsWithTheCounts() async throws {
        let result = try await CommandRunner.codexctl(["schema", "conformance", "Tests/CodexSchemaTests/Fixtures/jsonschema"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.last == "641 passed, 0 failed")
        #expect(lines.first == "rejected.json: 297 passed, 0 failed")
        #expect(lines.contains("supported/type.json: 56 passed, 0 failed"))
    }

    @Test func conformanceFailuresExitOne() async throws {
        let path = try CommandRunner.temporaryFile(
            #"[{"description":"g","schema":{"minimum":2},"tests":[{"description":"ok","data":3,"valid":true},{"description":"wrong","data":3,"valid":false}]}]"#,
            name: "suite.json"
        )
        let result = try await CommandRunner.codexctl(["schema", "conformance", URL(fileURLWithPath: path).deletingLastPathComponent().path])
        #expect(result.status == 1)
        #expect(result.stdout == "suite.json: 1 passed, 1 failed\n  FAIL g / wrong: expected invalid, got valid\n1 passed, 1 failed\n")
    }

    @Test func aSuiteFileThatCannotBeReadFailsWithTheSystemsReason() async throws {
        let directory = try temporaryDirectory("conformance-dangling")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(symlink(directory.appendingPathComponent("gone").path, directory.appendingPathComponent("dangling.json").path) == 0)
        let result = try await CommandRunner.codexctl(["schema", "conformance", directory.path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("unreadable_input: Cannot read 'dangling.json': No such file or directory"), "\(result.stdout)")
        #expect(!result.stdout.contains("NSCocoaErrorDomain"))
    }
}

@Suite struct BenchCommandTests {
    @Test func schemaBenchPrintsOneJSONObjectInTheSharedShape() async throws {
        let result = try await CommandRunner.codexctl(["bench", "schema", "--json", "--only", "diet_plan", "--run-seconds", "0.01", "--runs", "1"])
        #expect(result.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(object?["suite"] as? String == "schema")
        #expect(["debug", "release"].contains(object?["build"] as? String ?? ""))
        let results = object?["results"] as? [[String: Any]] ?? []
        #expect(results.map { $0["mode"] as? String ?? "" } == ["parsed", "parsed-value", "parse+validate"])
        #expect(results.allSatisfy { $0["name"] as? String == "diet_plan" && $0["bytes"] as? Int == 280 })
        let combined = results[2]
        #expect((combined["baseline"] as? [String: Any])?["name"] as? String == "JSONSerialization parse")
        #expect(combined["ratio"] is Double || combined["ratio"] is Int)
    }

    @Test func transportBenchMeasuresTheClientNextToABareSocket() async throws {
        let result = try await CommandRunner.codexctl([
            "bench", "transport", "--json", "--only", "curl", "--runs", "1", "--requests", "20", "--stream-mib", "4",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(object?["suite"] as? String == "transport")
        let results = object?["results"] as? [[String: Any]] ?? []
        #expect(results.map { "\($0["name"] ?? "")/\($0["mode"] ?? "")" } == [
            "stream-4MiB/CurlHTTPClient", "small-requests/CurlHTTPClient", "small-requests-p99/CurlHTTPClient",
            "stream-4MiB/CurlHTTPClient against bare libcurl", "stream-4MiB/bare libcurl (the floor under CurlHTTPClient)",
            "small-requests/CurlHTTPClient against bare libcurl", "small-requests/bare libcurl (the floor under CurlHTTPClient)",
            "small-requests-shared-client/CurlHTTPClient", "streamed-turns/CurlHTTPClient", "streamed-turns-first-byte-p50/CurlHTTPClient",
            "paused-consumer-rss-growth/CurlHTTPClient", "paused-consumer-sent-until-stalled/CurlHTTPClient",
            "small-requests-tls-shared-client/CurlHTTPClient", "small-requests/bare socket, a new connection each",
        ])
        try #require(results.count == 14)
        // Over TLS (python3 and openssl, which `.ci/run` installs): both sides measured.
        #expect((results[12]["baseline"] as? [String: Any])?["name"] as? String == "a new client per request (a TLS handshake each)")
        #expect((results[12]["value"] as? Double ?? 0) > 0)
        #expect(((results[12]["baseline"] as? [String: Any])?["value"] as? Double ?? 0) > 0)
        // The bare libcurl loops ran (each stream checked for status 200 and its exact byte count, each
        // small reply for status 200 and its exact length).
        #expect((results[3]["baseline"] as? [String: Any])?["name"] as? String == "one libcurl easy handle on the calling thread, bytes counted and dropped")
        #expect(((results[3]["baseline"] as? [String: Any])?["value"] as? Double ?? 0) > 0)
        #expect((results[4]["baseline"] as? [String: Any])?["name"] as? String == "bare socket")
        #expect((results[5]["baseline"] as? [String: Any])?["name"] as? String == "one libcurl easy handle on the calling thread")
        #expect(((results[5]["baseline"] as? [String: Any])?["value"] as? Double ?? 0) > 0)
        #expect((results[6]["baseline"] as? [String: Any])?["name"] as? String == "bare socket, one kept-alive connection")
        #expect((results[7]["baseline"] as? [String: Any])?["name"] as? String == "a new client per request")
        #expect((results[8]["baseline"] as? [String: Any])?["name"] as? String == "a new client per turn")
        #expect(results.first?["bytes"] as? Int == 4 * 1_048_576)
        #expect((results.first?["baseline"] as? [String: Any])?["name"] as? String == "bare socket")
        // The paused consumer holds the sender back: far less than the 512 MiB cap is sent.
        #expect((results[11]["value"] as? Double ?? 512) < 64)
        #expect(object?["missing"] == nil)
    }

    @Test func aClientWhoseRunFailsIsReportedMissingAndTheBenchGoesOn() async throws {
        let arguments = ["bench", "transport", "--only", "urlsession", "--runs", "1", "--requests", "20", "--stream-mib", "4"]
        let environment = ["CODEXCTL_BENCH_FAIL_CLIENT": "urlsession"]
        let result = try await CommandRunner.codexctl(arguments + ["--json"], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        // None of the client's figures, the bare socket's own figure, and the gap with its reason.
        let results = object?["results"] as? [[String: Any]] ?? []
        #expect(results.map { "\($0["name"] ?? "")/\($0["mode"] ?? "")" } == ["small-requests/bare socket, a new connection each"])
        let reason = "'codexctl bench transport-client' failed (status 1): Error: the urlsession client's run was made to fail (CODEXCTL_BENCH_FAIL_CLIENT)"
        #expect(object?["missing"] as? [String] == ["URLSessionHTTPClient: every figure (\(reason))"])
        #expect(result.stderr.contains("the urlsession client's run was made to fail"))
        let text = try await CommandRunner.codexctl(arguments, environment: environment)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("  missing: URLSessionHTTPClient: every figure (\(reason))\n"))
    }

    @Test func theLibcurlClientFailingFailsTheBench() async throws {
        let result = try await CommandRunner.codexctl(
            ["bench", "transport", "--only", "curl", "--runs", "1", "--requests", "20", "--stream-mib", "4"],
            environment: ["CODEXCTL_BENCH_FAIL_CLIENT": "curl"]
        )
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("the curl client's run was made to fail"))
    }

    @Test func aTLSRunWithoutItsProgramsIsReportedMissing() async throws {
        // No PATH to find openssl or python3 in; the children are this executable, started by its path.
        let result = try await CommandRunner.codexctl(
            ["bench", "transport", "--json", "--only", "curl", "--runs", "1", "--requests", "20", "--stream-mib", "4"],
            environment: ["PATH": "/nonexistent"]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let missing = object?["missing"] as? [String] ?? []
        try #require(missing.count == 1)
        #expect(missing[0].hasPrefix("CurlHTTPClient over TLS ('codexctl bench transport-client' failed (status 1): Error: bench_failed: the TLS run needs openssl"), "\(missing)")
        let results = object?["results"] as? [[String: Any]] ?? []
        #expect(results.count == 13)
        #expect(!results.contains { $0["name"] as? String == "small-requests-tls-shared-client" })
    }
}

extension BenchCommandTests {
    /// The journal part measures durable turns on a real SQLite file against bare synced writes, and the
    /// journal it counts is the one a durable turn with a four-call batch writes.
    @Test func runtimeBenchMeasuresTheTurnJournalNextToBareSyncedWrites() async throws {
        let result = try await CommandRunner.codexctl(["bench", "runtime", "--json", "--only", "journal", "--runs", "1"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(object?["suite"] as? String == "runtime")
        let results = object?["results"] as? [[String: Any]] ?? []
        try #require(results.count == 4)
        #expect(results.map { $0["name"] as? String ?? "" } == ["turn journal", "turn journal", "turn journal", "process"])
        // turn_started, model_request, tool_calls, four tool_started, four tool_finished, model_request, committed.
        #expect((results[0]["mode"] as? String ?? "").contains("(13 entries a turn, "), "\(results[0])")
        #expect((results[0]["baseline"] as? [String: Any])?["name"] as? String == "the same number of bare write+fsync of that size to a plain file, per call")
        #expect(results[0]["ratio"] is Double || results[0]["ratio"] is Int)
    }

    @Test func runtimeBenchMeasuresHowCostGrowsWithConcurrentTurns() async throws {
        let result = try await CommandRunner.codexctl(["bench", "runtime", "--json", "--only", "concurrent", "--concurrent", "1,20"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let results = object?["results"] as? [[String: Any]] ?? []
        // Five figures a round (CPU, memory, events per second, time to the first event, descriptors left),
        // the growth of CPU per turn, and the process's peak.
        try #require(results.count == 12)
        #expect(results.prefix(11).allSatisfy { $0["name"] as? String == "concurrent turns" })
        #expect(results.map { $0["mode"] as? String ?? "" }.contains("N = 20, resident memory per open turn beyond a bare exchange"))
        #expect(results[10]["mode"] as? String == "CPU per turn at N = 20 next to N = 1")
        let left = results.first { $0["mode"] as? String == "N = 20, descriptors left after the round (the client keeps up to 16 connections)" }
        #expect((left?["value"] as? Double ?? (left?["value"] as? Int).map(Double.init) ?? 99) <= 16)
        let refused = try await CommandRunner.codexctl(["bench", "runtime", "--only", "concurrent", "--concurrent", "0,5"])
        #expect(refused.status == 64 && refused.stderr.hasPrefix("Error: --concurrent takes counts from 1 to 2000, separated by commas"))
    }
}

@Suite struct ImportCheckTests {
    @Test func theImportCheckPassesOnTheRepositoryAndCatchesAForbiddenEdge() async throws {
        let script = CommandRunner.repositoryRoot.appendingPathComponent("Scripts/check-imports.sh")
        let clean = try await CommandRunner.run(script, [])
        #expect(clean.status == 0)
        #expect(clean.stdout == "check-imports: ok\n")

        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("imports-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.copyItem(at: CommandRunner.repositoryRoot.appendingPathComponent("Sources"), to: scratch.appendingPathComponent("Sources"))
        let manifest = scratch.appendingPathComponent("Package.swift")
        try FileManager.default.copyItem(at: CommandRunner.repositoryRoot.appendingPathComponent("Package.swift"), to: manifest)
        let copied = try await CommandRunner.run(script, [scratch.path])
        #expect(copied.status == 0, "\(copied.stderr)")
        // A dependency declared and never imported.
        let declared = #".target(name: "CodexStorageSQLite", dependencies: ["CodexCore", "CSQLite"]"#
        let text = try String(contentsOf: manifest, encoding: .utf8)
        #expect(text.contains(declared))
        try text.replacingOccurrences(of: declared, with: #".target(name: "CodexStorageSQLite", dependencies: ["CodexCore", "CSQLite", "CodexSchema"]"#)
            .write(to: manifest, atomically: true, encoding: .utf8)
        let victim = scratch.appendingPathComponent("Sources/CodexSchema/JSON/JSONValue.swift")
        try (try String(contentsOf: victim, encoding: .utf8) + "\n@preconcurrency internal import CodexCore\n").write(to: victim, atomically: true, encoding: .utf8)
        // A write that traps when standard output fails.
        let writer = scratch.appendingPathComponent("Sources/CodexCore/CodexKitVersion.swift")
        try (try String(contentsOf: writer, encoding: .utf8) + "\nfunc shout() { FileHandle.standardOutput.write(Data()) }\n").write(to: writer, atomically: true, encoding: .utf8)
        let dirty = try await CommandRunner.run(script, [scratch.path])
        #expect(dirty.status == 1)
        #expect(dirty.stderr.contains("Sources/CodexCore/CodexKitVersion.swift:"), "\(dirty.stderr)")
        #expect(dirty.stderr.contains(": FileHandle is not used in Sources/ (its non-throwing I/O traps on an error)"))
        #expect(dirty.stderr.contains("Sources/CodexSchema/JSON/JSONValue.swift:"))
        #expect(dirty.stderr.contains(": CodexSchema may not import CodexCore"))
        #expect(dirty.stderr.contains("check-imports: Package.swift: CodexStorageSQLite declares CodexSchema, which none of its files imports"))
    }
}
