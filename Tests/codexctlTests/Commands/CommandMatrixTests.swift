import CodexCore
import CodexLoopback
import CodexRecovery
import CodexSchema
import CodexStorageSQLite
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Every `codexctl` command, run as a user runs it: its help, a usage error, a success and a failure,
/// with the exit status, stdout and stderr of each.
@Suite(.timeLimit(.minutes(5 * Sanitizer.slowdown))) struct CommandMatrixTests {
    /// Every leaf command's words, found by walking `codexctl help` from the top; walked once per test
    /// process, for every test that asks (about sixty children each time otherwise).
    static func leafCommands() async throws -> [[String]] {
        try await walkedLeaves.value
    }

    private static let walkedLeaves = Task { try await ChildProcess.onOwnThread { try walkLeafCommands() } }

    /// The walk behind ``leafCommands()``, blocking the calling thread (one child after another).
    private static func walkLeafCommands() throws -> [[String]] {
        var leaves: [[String]] = []
        var pending: [[String]] = [[]]
        while let path = pending.popLast() {
            let help = try CommandRunner.codexctlBlocking(["help"] + path)
            let names = CLIHelpPage(help.stdout).subcommands.filter { $0 != "help" }
            if names.isEmpty { leaves.append(path) } else { pending += names.map { path + [$0] } }
        }
        return leaves.sorted { $0.joined(separator: " ") < $1.joined(separator: " ") }
    }

    @Test func everyCommandHasHelpAndRefusesAnUnknownOptionBeforeDoingAnything() async throws {
        let leaves = try await Self.leafCommands()
        #expect(leaves.count == 50, "\(leaves.map { $0.joined(separator: " ") })")
        // About 150 short children: one after another on a thread of their own, awaited once.
        let runs = try await ChildProcess.onOwnThread {
            try leaves.map { path in
                (try CommandRunner.codexctlBlocking(["help"] + path), try CommandRunner.codexctlBlocking(path + ["--help"]),
                 try CommandRunner.codexctlBlocking(path + ["--bogus"]))
            }
        }
        #expect(runs.count == leaves.count)
        for (path, (help, flag, unknown)) in zip(leaves, runs) {
            #expect(help.status == 0 && flag.status == 0 && help.stderr.isEmpty)
            #expect(help.stdout == flag.stdout, "\(path)")
            let page = CLIHelpPage(help.stdout)
            #expect(page.usage.hasPrefix("codexctl \(path.joined(separator: " "))"), "\(path): \(page.usage)")
            #expect(Set(page.options).count == page.options.count, "\(path) lists an option twice: \(page.options)")
            for option in page.options where option != "-h, --help" {
                #expect(page.usage.contains(option.split(separator: " ")[0]), "\(path): \(option) is missing from the usage line")
            }
            #expect(unknown.status == 64, "\(path)")
            #expect(unknown.stdout.isEmpty)
            #expect(unknown.stderr == "Error: Unknown option '--bogus'\nUsage: \(page.usage)\n  See 'codexctl help' for more information.\n", "\(path)")
        }
    }

    /// One run of the matrix: arguments, what it must print, and its exit status.
    struct Case: Sendable {
        let arguments: [String]
        var stdin: String?
        /// Variables over the matrix's environment.
        var environment: [String: String] = [:]
        let status: Int32
        /// Text stdout must contain (empty: stdout must be empty).
        let stdout: String
        /// Text stderr must contain (empty: stderr must be empty).
        let stderr: String
    }

    @Test func everyCommandSucceedsAndFailsAsDocumented() async throws {
        let scratch = try temporaryDirectory("matrix")
        defer { try? FileManager.default.removeItem(at: scratch) }
        func path(_ name: String) -> String { scratch.appendingPathComponent(name).path }
        let environment = SendCommandTests.environment(scratch)

        // The fixtures: the demo's kept files, prepared recovery operations, schema files, a live server.
        let demo = try await CommandRunner.codexctl(["demo", "--json", "--keep", path("demo")], environment: environment)
        #expect(demo.status == 0, "\(demo.stderr)")
        let database = path("demo/state.sqlite")
        // An MCP server: the demo's own (this executable run again), over stdio.
        let parcels = "parcels=\(CommandRunner.productsDirectory.appendingPathComponent("codexctl").path) demo mcp-server"
        let threads = try JSONValue(parsing: Array(try await CommandRunner.codexctl(["threads", "list", "--db", database, "--json"]).stdout.utf8))
        let threadID = try #require(threads.arrayValue?.first { $0["title"] == "Order A-1" }?["id"]?.stringValue)
        let otherThread = try #require(threads.arrayValue?.first { $0["title"] == "Ops jobs" }?["id"]?.stringValue)
        // Two approvals a durable turn asked for, to answer.
        do {
            let demoStore = try SQLiteRuntimeStateStore(path: database)
            for id in ["approval-matrix", "approval-deny"] {
                let call = ToolInvocation(id: ToolInvocationID(rawValue: "call_\(id)"), toolName: "refund_order", arguments: #"{"cents":300}"#)
                try await demoStore.saveApproval(StoredApproval(
                    request: AgentApprovalRequest(id: AgentApprovalID(rawValue: id), threadID: AgentThreadID(rawValue: threadID), turnID: AgentTurnID(), toolInvocation: call, title: "refund_order"),
                    digest: "digest-\(id)", requestedAt: Date(timeIntervalSince1970: 1_800_000_000)
                ))
            }
        }
        let recoveryStore = scratch.appendingPathComponent("recovery")
        let (binding, handles) = try await RecoveryCommandTests.prepared(5, in: recoveryStore)
        let ids = handles.map { $0.operationID.uuidString.lowercased() }
        let store = ["--store", recoveryStore.path, "--binding", binding]
        let missing = "00000000-0000-4000-8000-000000000000"
        try Data(SchemaCommandTests.schema.utf8).write(to: scratch.appendingPathComponent("schema.json"))
        try Data(#"{"a":"abcd","b":1}"#.utf8).write(to: scratch.appendingPathComponent("valid.json"))
        try Data(#"{"a":"x"}"#.utf8).write(to: scratch.appendingPathComponent("invalid.json"))
        try Data(#"{"type":"string","format":"hostname","patternProperties":{"a":{}},"unevaluatedItems":false}"#.utf8)
            .write(to: scratch.appendingPathComponent("unsupported.json"))
        try Data(#"{"a":"#.utf8).write(to: scratch.appendingPathComponent("broken.json"))
        try Data("1".utf8).write(to: scratch.appendingPathComponent("one.json"))
        let levels = (1...40).map { ##""d\##($0)":{"anyOf":[{"$ref":"#/$defs/d\##($0 - 1)"},{"$ref":"#/$defs/d\##($0 - 1)"}]}"## }
        try Data(##"{"$defs":{"d0":{"type":"string"},\##(levels.joined(separator: ","))},"$ref":"#/$defs/d40"}"##.utf8)
            .write(to: scratch.appendingPathComponent("exponential.json"))
        try Data(repeating: 0x41, count: 16).write(to: scratch.appendingPathComponent("not-a-directory"))
        let server = try LoopbackHTTPServer { request in
            let body = String(decoding: request.body, as: UTF8.self)
            if body.contains("verdict") { return .sse(SendCommandTests.reply([#"{\"ok\":true}"#])) }
            return .sse(SendCommandTests.reply(body.contains("Ping") ? ["Hi ", "there."] : ["Chat reply."]))
        }
        defer { server.shutdown() }
        let endpoint = server.baseURL.appendingPathComponent("v1").absoluteString
        let completed = try await Self.completedOperation(in: recoveryStore, endpoint: server.baseURL.appendingPathComponent("v1"))
        let memory = path("memory.sqlite")
        do {
            let store = try SQLiteMemoryStore(path: memory)
            try await store.upsert(MemoryRecord(id: "m-1", namespace: "matrix", summary: "Ship on Tuesday.", createdAt: Date(timeIntervalSince1970: 1_800_000_000)))
            try await store.upsert(MemoryRecord(id: "m-2", namespace: "matrix", summary: "The carrier is DHL.", createdAt: Date(timeIntervalSince1970: 1_800_000_001)))
        }
        let sse = CommandRunner.repositoryRoot.appendingPathComponent("Tests/CodexTransportTests/Fixtures/streams/codex-cli-minimal.sse").path

        let cases: KeyValuePairs<String, [Case]> = [
            "demo": [
                Case(arguments: ["demo", "--keep", path("demo")], status: 1, stdout: "", stderr: "Error: directory_not_empty: "),
            ],
            "send": [
                Case(arguments: ["send", "Ping", "--endpoint", endpoint, "--db", path("send.sqlite")], status: 0, stdout: "Hi there.\n", stderr: "thread "),
                Case(arguments: ["send", "Hello", "--thread", "nope", "--db", path("none/x.sqlite"), "--json"], status: 1,
                     stdout: #"{"error":{"code":"thread_not_found""#, stderr: ""),
            ],
            "exec": [
                Case(arguments: ["exec", "Ping", "--endpoint", endpoint, "--ephemeral"], status: 0, stdout: "Hi there.\n", stderr: ""),
                Case(arguments: ["exec", "--ephemeral"], stdin: "", status: 64, stdout: "", stderr: "Error: the prompt is empty\nUsage: codexctl send"),
            ],
            "chat": [
                Case(arguments: ["chat", "--endpoint", endpoint, "--db", path("chat.sqlite")], stdin: "hello\n", status: 0, stdout: "Chat reply.\n", stderr: "thread "),
                Case(arguments: ["chat", "--thread", "nope", "--db", path("none/x.sqlite")], status: 1, stdout: "", stderr: "Error: thread_not_found: no database at"),
            ],
            "schema check": [
                Case(arguments: ["schema", "check", path("schema.json")], status: 0, stdout: "ok: schema compiles", stderr: ""),
                Case(arguments: ["schema", "check", "--json", path("unsupported.json")], status: 1, stdout: #""ok":false"#, stderr: ""),
            ],
            "schema validate": [
                Case(arguments: ["schema", "validate", path("valid.json"), "--schema", path("schema.json")], status: 0, stdout: "valid\n", stderr: ""),
                Case(arguments: ["schema", "validate", path("invalid.json"), "--schema", path("schema.json")], status: 1, stdout: "invalid: 1 error", stderr: ""),
                // Each level refers twice to the one below: the work doubles per level, and the validator gives up.
                Case(arguments: ["schema", "validate", path("one.json"), "--schema", path("exponential.json"), "--max-work", "1000", "--json"], status: 3,
                     stdout: #"{"error":{"code":"schema_work_limit_exceeded","message":"validation needed more than 1000 subschema evaluations; "#, stderr: ""),
                Case(arguments: ["schema", "validate", path("broken.json"), "--schema", path("schema.json"), "--json"], status: 2,
                     stdout: #"{"error":{"code":"json_unexpected_end""#, stderr: ""),
            ],
            "schema conformance": [
                Case(arguments: ["schema", "conformance", "Tests/CodexSchemaTests/Fixtures/jsonschema"], status: 0, stdout: "passed", stderr: ""),
                Case(arguments: ["schema", "conformance", path("no-such-suite")], status: 2, stdout: "", stderr: "Error: unreadable_input: Cannot read directory"),
                Case(arguments: ["schema", "conformance", "Tests/CodexSchemaTests/Fixtures/jsonschema", "--json"], status: 0, stdout: #""failed":0,"files":["#, stderr: ""),
            ],
            "responses decode": [
                Case(arguments: ["responses", "decode", sse], status: 0, stdout: #""type":"response.created""#, stderr: ""),
                Case(arguments: ["responses", "decode", "-"], stdin: "data: {oops\n\n", status: 1, stdout: #"{"type":"summary","events":0,"#, stderr: "Error: responses_event_malformed: "),
            ],
            "models list": [
                Case(arguments: ["models", "list", "--cached-only", "--json"], status: 0, stdout: #"{"source":"bundled""#, stderr: ""),
                Case(arguments: ["models", "list", "--refresh", "--json"], environment: ["OPENAI_API_KEY": ""], status: 1,
                     stdout: #"{"error":{"code":"not_signed_in""#, stderr: ""),
            ],
            "auth status": [
                Case(arguments: ["auth", "status", "--json"], status: 0, stdout: #""source":"environment""#, stderr: ""),
                Case(arguments: ["auth", "status"], environment: ["OPENAI_API_KEY": ""], status: 1, stdout: "not signed in", stderr: ""),
            ],
            "auth login": [
                Case(arguments: ["auth", "login", "--with-api-key", "--secrets", path("secrets")], stdin: "sk-matrix-key\n", status: 0,
                     stdout: "API key saved (not verified: it is checked on first use)\n", stderr: ""),
                Case(arguments: ["auth", "login", "--with-api-key", "--secrets", path("secrets")], stdin: "", status: 1, stdout: "", stderr: "Error: api_key_missing: "),
            ],
            "auth logout": [
                Case(arguments: ["auth", "logout", "--secrets", path("secrets")], status: 0, stdout: "signed out: the saved session and API key are removed\n", stderr: ""),
                Case(arguments: ["auth", "logout", "--secrets", path("not-a-directory")], status: 1, stdout: "", stderr: "Error: "),
            ],
            "login": [
                Case(arguments: ["login", "--with-api-key", "--secrets", path("secrets-login")], stdin: "sk-matrix-key\n", status: 0,
                     stdout: "API key saved (not verified: it is checked on first use)\n", stderr: ""),
                Case(arguments: ["login", "status"], environment: ["OPENAI_API_KEY": ""], status: 1, stdout: "not signed in", stderr: ""),
            ],
            "logout": [
                Case(arguments: ["logout", "--secrets", path("secrets-login")], status: 0, stdout: "signed out: the saved session and API key are removed\n", stderr: ""),
                Case(arguments: ["logout", "--secrets", path("not-a-directory")], status: 1, stdout: "", stderr: "Error: "),
            ],
            "completions": [
                Case(arguments: ["completions", "bash"], status: 0, stdout: "complete -F _codexctl codexctl\n", stderr: ""),
                Case(arguments: ["completions", "tcsh"], status: 64, stdout: "", stderr: "Error: expected one shell: bash, zsh or fish\n"),
            ],
            "db path": [
                Case(arguments: ["db", "path"], status: 0, stdout: path("state/codexkit/state.sqlite") + "\n", stderr: ""),
                Case(arguments: ["db", "path", "extra"], status: 64, stdout: "", stderr: "Error: unexpected argument\n"),
            ],
            "threads list": [
                Case(arguments: ["threads", "list", "--db", database], status: 0, stdout: "4 threads\n", stderr: ""),
                Case(arguments: ["threads", "list", "--db", path("none/x.sqlite"), "--json"], status: 1,
                     stdout: #"{"error":{"code":"sqlite_not_found","message":"cannot open \#(path("none/x.sqlite")): no such directory"}}"#, stderr: ""),
            ],
            "threads show": [
                Case(arguments: ["threads", "show", threadID, "--db", database], status: 0, stdout: "title    Order A-1\n", stderr: ""),
                Case(arguments: ["threads", "show", "nope", "--db", database], status: 1, stdout: "", stderr: "Error: thread_not_found: "),
            ],
            "threads export": [
                Case(arguments: ["threads", "export", threadID, "--db", database, "--format", "markdown"], status: 0, stdout: "# Order A-1\n", stderr: ""),
                Case(arguments: ["threads", "export", "nope", "--db", database, "--json"], status: 1, stdout: #"{"error":{"code":"thread_not_found""#, stderr: ""),
            ],
            "threads delete": [
                Case(arguments: ["threads", "delete", otherThread, "--db", database], status: 0, stdout: "deleted\n", stderr: ""),
                Case(arguments: ["threads", "delete", otherThread, "--db", database], status: 1, stdout: "", stderr: "Error: thread_not_found: "),
                // A mistyped path is an error and creates nothing (checked after the table).
                Case(arguments: ["threads", "delete", otherThread, "--db", path("typo.sqlite")], status: 1, stdout: "",
                     stderr: "Error: sqlite_not_found: cannot open \(path("typo.sqlite")): no such file"),
            ],
            "approvals list": [
                Case(arguments: ["approvals", "list", "--db", database, "--pending"], status: 0,
                     stdout: "approval-matrix  pending  refund_order  thread \(threadID)\n", stderr: ""),
                Case(arguments: ["approvals", "list", "--db", path("none/x.sqlite"), "--json"], status: 1, stdout: #"{"error":{"code":"sqlite_not_found""#, stderr: ""),
            ],
            "approvals show": [
                Case(arguments: ["approvals", "show", "approval-matrix", "--db", database], status: 0, stdout: "digest     digest-approval-matrix\n", stderr: ""),
                Case(arguments: ["approvals", "show", "nope", "--db", database], status: 1, stdout: "", stderr: "Error: approval_not_found: no such approval\n"),
            ],
            "approvals approve": [
                Case(arguments: ["approvals", "approve", "approval-matrix", "--db", database, "--digest", "digest-approval-matrix"], status: 0,
                     stdout: "approved approval-matrix; the turn continues when its host resumes it\n", stderr: ""),
                Case(arguments: ["approvals", "approve", "--db", database], status: 64, stdout: "", stderr: "Error: expected one <approval-id>\n"),
            ],
            "mcp tools": [
                Case(arguments: ["mcp", "tools", "--mcp", parcels], status: 0, stdout: "  parcels__track_parcel  no approval, parallel, replay-safe, arguments strict\n", stderr: ""),
                Case(arguments: ["mcp", "tools"], status: 64, stdout: "", stderr: "Error: no MCP server: give --mcp, --mcp-url or --mcp-config\n"),
            ],
            "mcp call": [
                Case(arguments: ["mcp", "call", "--server", "parcels", "--mcp", parcels, "track_parcel", #"{"parcel_id": "A-3"}"#], status: 0,
                     stdout: "Parcel A-3: out for delivery in Oslo, due today by 18:00.\n", stderr: ""),
                Case(arguments: ["mcp", "call", "--server", "parcels", "--mcp", parcels, "nope"], status: 1, stdout: "",
                     stderr: "Error: mcp_tool_not_found: the server parcels lists no tool named nope\n"),
            ],
            "approvals deny": [
                Case(arguments: ["approvals", "deny", "approval-deny", "--db", database, "--json"], status: 0, stdout: #""decision":"denied""#, stderr: ""),
                Case(arguments: ["approvals", "deny", "approval-matrix", "--db", database], status: 1, stdout: "",
                     stderr: "Error: approval_stale: the approval was already answered approved"),
            ],
            "db check": [
                Case(arguments: ["db", "check", "--db", database], status: 0, stdout: "integrity  ok\n", stderr: ""),
                Case(arguments: ["db", "check", "--db", path("not-a-directory")], status: 1, stdout: "", stderr: "Error: sqlite_"),
            ],
            "db migrate": [
                Case(arguments: ["db", "migrate", "--db", database, "--json"], status: 0, stdout: #"{"schema_version":"#, stderr: ""),
                Case(arguments: ["db", "migrate", "--db", path("none/x.sqlite")], status: 1, stdout: "", stderr: "Error: sqlite_not_found: cannot create"),
            ],
            "usage": [
                Case(arguments: ["usage", "--db", database, "--by", "day"], status: 0, stdout: "REQUESTS  INPUT  CACHED  OUTPUT  REASONING  TOTAL\n", stderr: ""),
                Case(arguments: ["usage", "--db", path("none/x.sqlite"), "--json"], status: 1,
                     stdout: #"{"error":{"code":"sqlite_not_found","message":"cannot open \#(path("none/x.sqlite")): no such directory"}}"#, stderr: ""),
            ],
            "memory list": [
                Case(arguments: ["memory", "list", "--db", memory, "--namespace", "matrix"], status: 0, stdout: "2 records\n", stderr: ""),
                Case(arguments: ["memory", "list", "--db", path("none/x.sqlite"), "--json"], status: 1,
                     stdout: #"{"error":{"code":"memory_store_not_found","message":"cannot open \#(path("none/x.sqlite")): no such directory"}}"#, stderr: ""),
            ],
            "memory search": [
                Case(arguments: ["memory", "search", "tuesday", "--db", memory, "--namespace", "matrix"], status: 0, stdout: "1. m-1  importance 5  relevance ", stderr: ""),
                Case(arguments: ["memory", "search", "tuesday", "--db", database], status: 1, stdout: "", stderr: "Error: memory_store_foreign: "),
            ],
            "memory delete": [
                Case(arguments: ["memory", "delete", "m-2", "--db", memory], status: 0, stdout: "deleted\n", stderr: ""),
                Case(arguments: ["memory", "delete", "m-2", "--db", memory, "--json"], status: 1,
                     stdout: #"{"error":{"code":"memory_record_not_found","message":"no such memory record"}}"#, stderr: ""),
            ],
            "recovery list": [
                Case(arguments: ["recovery", "list"] + store, status: 0, stdout: "\(ids[0])  operation\n", stderr: ""),
                Case(arguments: ["recovery", "list", "--store", path("none"), "--binding", binding, "--json"], status: 1,
                     stdout: #"{"error":{"code":"store_not_found""#, stderr: ""),
            ],
            "recovery status": [
                Case(arguments: ["recovery", "status", ids[0]] + store, status: 0, stdout: "ready", stderr: ""),
                // Suggested actions are named as the commands that perform them.
                Case(arguments: ["recovery", "status", completed] + store, status: 0,
                     stdout: "suggested     codexctl recovery receipt \(completed); codexctl recovery ack \(completed)", stderr: ""),
                Case(arguments: ["recovery", "status", missing] + store, status: 1, stdout: "", stderr: "Error: "),
            ],
            "recovery receipt": [
                Case(arguments: ["recovery", "receipt", completed] + store, status: 0, stdout: #"{"ok":true}"#, stderr: ""),
                Case(arguments: ["recovery", "receipt", ids[0]] + store, status: 1, stdout: "", stderr: "completion_unavailable"),
            ],
            "recovery ack": [
                Case(arguments: ["recovery", "ack", completed] + store, status: 0, stdout: "acknowledged\n", stderr: ""),
                Case(arguments: ["recovery", "ack", ids[0]] + store, status: 1, stdout: "", stderr: "Error: "),
            ],
            "recovery suspend": [
                Case(arguments: ["recovery", "suspend", ids[1], "--json"] + store, status: 0,
                     stdout: #"{"operation_id":"\#(ids[1])","result":"suspend requested"}"#, stderr: ""),
                Case(arguments: ["recovery", "suspend", missing] + store, status: 1, stdout: "", stderr: "Error: "),
            ],
            "recovery cancel": [
                Case(arguments: ["recovery", "cancel", ids[2]] + store, status: 0, stdout: "cancelled\n", stderr: ""),
                Case(arguments: ["recovery", "cancel", missing] + store, status: 1, stdout: "", stderr: "Error: "),
            ],
            "recovery abandon": [
                Case(arguments: ["recovery", "abandon", ids[3]] + store, status: 0, stdout: "abandoned\n", stderr: ""),
                Case(arguments: ["recovery", "abandon", missing] + store, status: 1, stdout: "", stderr: "Error: "),
            ],
            "recovery purge": [
                Case(arguments: ["recovery", "purge", "--scope", "cli"] + store, status: 0, stdout: "removed", stderr: ""),
                Case(arguments: ["recovery", "purge", "--store", path("none"), "--binding", binding], status: 1, stdout: "", stderr: "Error: store_not_found"),
            ],
            "recovery cleanup": [
                Case(arguments: ["recovery", "cleanup", "--before", "2099-01-01T00:00:00Z"] + store, status: 0, stdout: "removed", stderr: ""),
                Case(arguments: ["recovery", "cleanup", "--before", "yesterday", "--store", path("untouched"), "--binding", binding], status: 64, stdout: "",
                     stderr: "Error: --before needs an ISO-8601 date"),
            ],
            "bench sse-client": [
                Case(arguments: ["bench", "sse-client", "--url", "http://127.0.0.1:9/", "--runs", "1", "--passes", "1"], status: 1, stdout: "", stderr: "Error: "),
            ],
            "bench transport-client": [
                Case(arguments: ["bench", "transport-client", "--client", "nope", "--scenario", "requests"], status: 64, stdout: "", stderr: "Error: "),
            ],
        ]
        // Commands that only look: each success is run once more with a standard output that fails.
        let looking: Set<String> = [
            "schema check", "schema validate", "schema conformance", "responses decode", "models list", "auth status", "threads list",
            "threads show", "threads export", "db check", "usage", "memory list", "memory search", "recovery list", "recovery status", "recovery receipt", "mcp tools",
        ]
        for (name, runs) in cases {
            for run in runs {
                if looking.contains(name), run.status == 0 {
                    let full = try await CommandRunner.codexctl(
                        run.arguments, redirecting: "> /dev/full", stdin: run.stdin, environment: environment.merging(run.environment) { $1 }
                    )
                    #expect(full.status == 1, "\(run.arguments) > /dev/full: \(full.status) \(full.stderr)")
                    #expect(full.stderr == "Error: output_failed: cannot write output: No space left on device\n", "\(run.arguments) > /dev/full")
                }
                let result = try await CommandRunner.codexctl(
                    run.arguments, stdin: run.stdin, in: CommandRunner.repositoryRoot, environment: environment.merging(run.environment) { $1 }
                )
                let label = "\(name) \(run.arguments.dropFirst(name.split(separator: " ").count))"
                #expect(result.status == run.status, "\(label): \(result.status) \(result.stdout) \(result.stderr)")
                #expect(run.stdout.isEmpty ? result.stdout.isEmpty : result.stdout.contains(run.stdout), "\(label) stdout: \(result.stdout)")
                #expect(run.stderr.isEmpty ? result.stderr.isEmpty : result.stderr.contains(run.stderr), "\(label) stderr: \(result.stderr)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: path("typo.sqlite")) && !FileManager.default.fileExists(atPath: path("untouched")),
                "a failed or refused command created nothing")
        // Every leaf command has cases here, except the benchmarks, whose runs are in CLITests,
        // RecoveryCommandTests, BenchCommandTests and MemoryCommandTests (the two client halves run inside 'bench sse' and
        // 'bench transport').
        let covered = Set(cases.map(\.key)).union(["bench schema", "bench sse", "bench transport", "bench recovery", "bench storage", "bench memory", "bench runtime"])
        #expect(Set(try await Self.leafCommands().map { $0.joined(separator: " ") }) == covered)
    }
}

extension CommandMatrixTests {
    /// An operation in `directory` whose saved completion is `{"ok":true}`, made through the engine
    /// against `endpoint`, for the account of ``RecoveryCommandTests/prepared(_:in:)``.
    static func completedOperation(in directory: URL, endpoint: URL) async throws -> String {
        let recovery = AgentStructuredRecovery(
            configuration: .init(endpoint: try ResponsesEndpoint(baseURL: endpoint, profile: .publicAPI)), httpClient: DefaultHTTPClient(),
            authProvider: APIKeyAuthProvider(apiKey: "sk-cli-test")
        )
        let store = try AgentStructuredRecoveryStore(directory: directory)
        let format = AgentStructuredOutputFormat(name: "verdict", rawSchema: ["type": "object", "properties": ["ok": ["type": "boolean"]], "required": ["ok"]])
        let handle = try await recovery.prepare(
            Request(text: "the verdict", executionMode: .ephemeral), format: format, model: .init(model: "gpt-6-astra"), store: store, options: .init(scope: "done")
        )
        struct Verdict: Decodable { let ok: Bool }
        _ = try await recovery.sendRecovering(handle, response: Verdict.self, format: format, store: store) { _ in true }
        return handle.operationID.uuidString.lowercased()
    }
}

/// A `codexctl` help page read back: its usage line, option labels and subcommand names.
struct CLIHelpPage {
    var usage = ""
    var options: [String] = []
    var subcommands: [String] = []

    init(_ text: String) {
        var section = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("USAGE: ") { usage = String(line.dropFirst(7)) }
            if !line.hasPrefix(" ") { section = String(line) }
            guard line.hasPrefix("  "), !line.hasPrefix("   ") else { continue }
            let label = line.dropFirst(2).components(separatedBy: "  ").first ?? ""
            if section == "OPTIONS:" { options.append(label) }
            if section == "SUBCOMMANDS:", !label.isEmpty, !label.hasPrefix("See ") { subcommands.append(label) }
        }
    }
}
