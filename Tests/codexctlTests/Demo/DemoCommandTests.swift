import CodexSchema
import CodexTestSupport
import Foundation
import Testing

/// `codexctl demo`, run as a user runs it: the narration, the JSON form, `--keep`, and nothing left behind.
@Suite struct DemoCommandTests {
    /// Runs the demo with its own temporary directory, so what it leaves behind can be seen.
    private func demo(_ arguments: [String] = []) async throws -> (CommandResult, temporary: URL) {
        let temporary = try temporaryDirectory("demo-tmp")
        let run = try await CommandRunner.codexctl(["demo"] + arguments, environment: ["TMPDIR": temporary.path])
        return (run, temporary)
    }

    @Test func theDemoNarratesEveryCapabilityAndLeavesNothingBehind() async throws {
        let (run, temporary) = try await demo()
        defer { try? FileManager.default.removeItem(at: temporary) }
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.isEmpty)
        let left = try FileManager.default.contentsOfDirectory(atPath: temporary.path)
        #expect(left.isEmpty, "nothing is left in the temporary directory: \(left)")
        let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func after(_ first: String, _ count: Int) -> [String] { Array(lines.drop { $0 != first }.prefix(count)) }

        #expect(after("1. A streamed turn: reasoning-summary progress, a host tool, the reply as it streams", 7) == [
            "1. A streamed turn: reasoning-summary progress, a host tool, the reply as it streams",
            "   user: Where is my order A-1?",
            "   thinking: The customer asks about order A-1; look it up before answering.",
            "   tool call: lookup_order {\"order_id\":\"A-1\"}",
            "   tool result: Order A-1: shipped with DHL on Friday, arriving Tuesday.",
            "   assistant: Order A-1 shipped with DHL and arrives on Tuesday.",
            "   turn completed; 927 tokens over its two model requests",
        ])
        #expect(after("2. Structured output, validated locally before it is decoded", 7) == [
            "2. Structured output, validated locally before it is decoded",
            "   send(_:in:response:) → DemoShippingReply(subject: \"Your order A-1 is on its way\", urgency: \"medium\")",
            "   partial snapshot 1: no members yet",
            "   partial snapshot 2: subject",
            "   partial snapshot 3: subject, reply",
            "   committed payload: urgency medium, 133 bytes",
            "   visible text (framing stripped): Here is a reply you can send. / Want a shorter one?",
        ])
        #expect(lines.contains("   started: lookup_order {\"order_id\":\"B-2\"}"))
        #expect(lines.contains("   started: estimate_delivery {\"order_id\":\"B-2\",\"postcode\":\"0150\"}"))
        #expect(lines.contains("   assistant: Order B-2 is packed and should arrive Thursday."))
        // The peak is what the tools measured (the runtime's concurrency itself is proven by ToolExecutionTests).
        #expect(lines.contains { $0.hasPrefix("   finished: estimate_delivery, lookup_order; peak concurrency observed by the tools: ") })
        #expect(after("   steer accepted mid-reply: List the most recent order first.", 5) == [
            "   steer accepted mid-reply: List the most recent order first.",
            "   assistant: Both orders are on their way.",
            "   user: List the most recent order first.",
            "   assistant: Most recent first: B-2 arrives Thursday; A-1 arrived Tuesday.",
            "   the turn's next model request carried the steer: yes",
        ])
        let recovery = after("5. Structured request recovery: a frozen request, a cut stream, an authorized replacement, a saved receipt", 12)
        #expect(recovery.count == 12)
        #expect(recovery.dropFirst().first?.hasSuffix(": model and request frozen, 3 attempts allowed, 0 requests sent") == true)
        #expect(Array(recovery.dropFirst(2)) == [
            "   the host saved the handle with its job before sending",
            "   the host authorized attempt 1 (initial)",
            "   attempt 1 was cut mid-stream (connection reset before response.completed)",
            "   the host authorized attempt 2 (replacement)",
            "   validated and saved: \"Two late parcels, both now moving\" (2 incidents, low); 2 of 3 attempts used; status completionSaved",
            "",
            "6. The process stops before the host commits; a new one reopens the job",
            "   sendRecovering on the saved handle returned the saved receipt: 0 requests, 0 authorizations",
            "   the host committed it by job and revision (applied): \"Two late parcels, both now moving\"",
            "   acknowledged after the commit; status now acknowledged; host commits: 1",
        ])
        #expect(lines.contains(
            "   listModels(): 2 visible of 3, from the remote catalog: gpt-6-astra (272k context; efforts low, medium, high, xhigh); "
                + "gpt-6-luna (128k context; efforts low, medium)"
        ))
        #expect(lines.contains("   listModels() again: served from the cache, no request"))
        // The turns' runtime last heard from the service on the eighth request: 6 + 2 × 8 = 22 % used.
        #expect(lines.contains { $0.hasPrefix("   rateLimits() codex: primary 5-hour window 78% left resets in 2 h; secondary 7-day window 91% left") })
        let durable = after("8. A durable turn: its process is killed inside a tool, another resumes it, the charge happens once", 8)
        #expect(durable.count == 8)
        #expect(durable.dropFirst().first?.wholeMatch(of: #/   worker 1 started the turn; the model asked to charge the card; the payment service took charge ck_[0-9a-f]{32}; the worker was killed with SIGKILL inside the tool/#) != nil, "\(durable)")
        #expect(Array(durable.dropFirst(2).prefix(3)) == [
            "   the store: turn running, its journal turn_started, model_request, tool_calls, tool_started",
            "   worker 2 resumed the turn after model request 1 with 0 results reused; charge_card ran again with the same key (2 runs, 1 key): the payment service charged once",
            "   the model asked to email the receipt, which needs approval; with no one to ask, the turn is waiting_for_approval and worker 2 exited",
        ])
        #expect(durable.dropFirst(5).first?.wholeMatch(of: #/   another process approved it: codexctl approvals approve [0-9a-f-]{36}/#) != nil, "\(durable)")
        #expect(Array(durable.suffix(2)) == [
            "   worker 3 emailed the receipt and finished: \"Order A-2 is paid and the customer has the receipt.\"",
            "   turn completed; card charged once, receipt sent once; the model was asked 3 times, once per step: no request was sent twice",
        ])
        #expect(after("9. MCP tools: a server process started over stdio, its tool called by the model, its progress streamed", 10) == [
            "9. MCP tools: a server process started over stdio, its tool called by the model, its progress streamed",
            "   connected to parcel-tracker over stdio: protocol 2026-07-28, 1 tool",
            "   parcels__track_parcel: read-only by its server's hints, so it runs in parallel without approval and may run again after a crash",
            "   user: Where is parcel A-3?",
            "   tool call: parcels__track_parcel {\"parcel_id\":\"A-3\"}",
            "   progress: 1/2 asking the carrier",
            "   progress: 2/2 reading the scans",
            "   tool result: Parcel A-3: out for delivery in Oslo, due today by 18:00.",
            "   assistant: Parcel A-3 is out for delivery and should arrive today by 18:00.",
            "   the client shut down: the server process (started once) ended with it",
        ])
        #expect(lines.contains("After a restart: thread \"Order A-1\" has 30 history items (12 messages), latest turn completed; its turns asked the model 8 times."))
        #expect(lines.contains { $0.hasPrefix("Done in ") && $0.hasSuffix(" s; the service answered 16 requests.") })
        #expect(!run.stdout.contains("codexkit_structured_output"))
    }

    @Test func theJSONFormIsOneObjectPerLineWithTheStepsInOrder() async throws {
        let (run, temporary) = try await demo(["--json"])
        defer { try? FileManager.default.removeItem(at: temporary) }
        #expect(run.status == 0, "\(run.stderr)")
        let objects = try run.stdout.split(separator: "\n").map { try JSONValue(parsing: Array($0.utf8)) }
        let types = objects.compactMap { $0["type"]?.stringValue }
        #expect(types.count == objects.count, "every line is an object with a type")
        #expect(types.first == "intro")
        #expect(Array(types.suffix(3)) == ["restart", "done", "next"])
        #expect(objects.filter { $0["type"]?.stringValue == "step" }.compactMap { $0["step"]?.numberValue?.intValue } == [1, 2, 3, 4, 5, 6, 7, 8, 9])
        #expect(types.filter { $0 == "partial" }.count == 3)
        #expect(objects.first { $0["type"]?.stringValue == "turn_completed" }?["reasoning_summary"]?.stringValue
            == "The customer asks about order A-1; look it up before answering.")
        #expect(objects.first { $0["type"]?.stringValue == "committed" }?["payload"]?["urgency"]?.stringValue == "medium")
        #expect(objects.filter { $0["type"]?.stringValue == "authorized" }.compactMap { $0["reason"]?.stringValue } == ["initial", "replacement"])
        #expect(objects.first { $0["type"]?.stringValue == "receipt_returned" }?["requests"]?.numberValue?.intValue == 0)
        #expect(objects.first { $0["type"]?.stringValue == "acknowledged" }?["commits"]?.numberValue?.intValue == 1)
        #expect(objects.first { $0["type"]?.stringValue == "steer_sent" }?["carried"] == .bool(true))
        #expect(objects.first { $0["type"]?.stringValue == "killed" }?["signal"]?.numberValue?.intValue == 9)
        let counts = try #require(objects.first { $0["type"]?.stringValue == "durable_counts" })
        #expect([counts["charges"], counts["receipts"], counts["requests"]].map { $0?.numberValue?.intValue } == [1, 1, 3])
        #expect(objects.first { $0["type"]?.stringValue == "resumed" }?["charge_runs"]?.numberValue?.intValue == 2)
        #expect(objects.first { $0["type"]?.stringValue == "durable_done" }?["status"]?.stringValue == "completed")
        #expect(objects.first { $0["type"]?.stringValue == "done" }?["requests"]?.numberValue?.intValue == 16)
        #expect(objects.filter { $0["type"]?.stringValue == "tool_progress" }.compactMap { $0["message"]?.stringValue } == ["asking the carrier", "reading the scans"])
        #expect(objects.last?["lines"]?.arrayValue?.count == 3, "the demo ends with the next three commands to try")
    }

    @Test func keepLeavesAStoreThatPassesItsChecksAndIsNeverReused() async throws {
        let directory = try temporaryDirectory("demo-keep")
        defer { try? FileManager.default.removeItem(at: directory) }
        let kept = directory.appendingPathComponent("kept")
        let (run, temporary) = try await demo(["--keep", kept.path])
        defer { try? FileManager.default.removeItem(at: temporary) }
        #expect(run.status == 0, "\(run.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: kept.path).filter { !$0.hasPrefix("state.sqlite-") }.sorted()
        #expect(files == [".codexctl-demo.lock", "durable", "host-jobs.json", "recovery", "state.sqlite", "state.sqlite.owners"])
        // The payment service's ledger: one charge, whose key both runs of the charge tool used.
        let durable = kept.appendingPathComponent("durable")
        let payments = try String(contentsOf: durable.appendingPathComponent("payments.txt"), encoding: .utf8).split(separator: "\n")
        let runs = try String(contentsOf: durable.appendingPathComponent("tool-runs.txt"), encoding: .utf8).split(separator: "\n")
        #expect(payments.count == 1)
        let key = String(payments.first?.split(separator: " ").first ?? "")
        let chargeRuns: [String] = runs.filter { $0.hasPrefix("charge_card ") }.map { String($0.dropFirst("charge_card ".count)) }
        #expect(chargeRuns == [key, key])
        let check = try await CommandRunner.codexctl(["db", "check", "--db", kept.appendingPathComponent("state.sqlite").path])
        #expect(check.status == 0, "\(check.stderr)")
        let list = try await CommandRunner.codexctl(["recovery", "list", "--store", kept.appendingPathComponent("recovery").path, "--binding", "acct-demo", "--json"])
        #expect(list.status == 0, "\(list.stderr)")
        let inventory = try JSONValue(parsing: Array(list.stdout.utf8))
        #expect(inventory["operations"]?.arrayValue?.isEmpty == true, "the acknowledged job's record is gone: \(list.stdout)")

        // A second run into the same directory is refused before it touches anything.
        let before = try Data(contentsOf: kept.appendingPathComponent("host-jobs.json"))
        let again = try await CommandRunner.codexctl(["demo", "--keep", kept.path, "--json"])
        #expect(again.status == 1)
        let error = try JSONValue(parsing: Array(again.stdout.utf8))
        #expect(error["error"]?["code"]?.stringValue == "directory_not_empty")
        #expect(try Data(contentsOf: kept.appendingPathComponent("host-jobs.json")) == before)
    }

    /// The directory is claimed by a lock before it is checked: while another process holds it, a demo is
    /// refused and writes nothing; two demos started together never mix their files.
    @Test func aDirectoryAnotherDemoHoldsIsRefused() async throws {
        let directory = try temporaryDirectory("demo-lock")
        defer { try? FileManager.default.removeItem(at: directory) }
        let lock = open(directory.appendingPathComponent(".codexctl-demo.lock").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(lock >= 0)
        #expect(flock(lock, LOCK_EX | LOCK_NB) == 0)
        let held = try await CommandRunner.codexctl(["demo", "--keep", directory.path, "--json"])
        close(lock)
        #expect(held.status == 1)
        #expect(try JSONValue(parsing: Array(held.stdout.utf8))["error"]?["code"]?.stringValue == "directory_in_use")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [".codexctl-demo.lock"])

        let shared = directory.appendingPathComponent("shared")
        async let first = CommandRunner.codexctl(["demo", "--keep", shared.path, "--json"])
        async let second = CommandRunner.codexctl(["demo", "--keep", shared.path, "--json"])
        let runs = try await [first, second]
        #expect(runs.map(\.status).sorted() == [0, 1], "\(runs.map(\.stderr))")
        let refused = try #require(runs.first { $0.status == 1 })
        let code = try JSONValue(parsing: Array(refused.stdout.utf8))["error"]?["code"]?.stringValue
        #expect(code == "directory_in_use" || code == "directory_not_empty", "\(refused.stdout)")
        let check = try await CommandRunner.codexctl(["db", "check", "--db", shared.appendingPathComponent("state.sqlite").path])
        #expect(check.status == 0, "\(check.stderr)")
    }

    @Test func aKeepPathThatCannotBeADirectoryNamesThePathAndTheCause() async throws {
        let directory = try temporaryDirectory("demo-file")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("file")
        try Data("x".utf8).write(to: file)
        let onFile = try await CommandRunner.codexctl(["demo", "--keep", file.path])
        #expect(onFile.status == 1)
        #expect(onFile.stderr == "Error: not_a_directory: \(file.path) is not a directory; --keep needs a new or empty directory\n")
        let under = try await CommandRunner.codexctl(["demo", "--keep", file.appendingPathComponent("sub").path])
        #expect(under.status == 1)
        #expect(under.stderr == "Error: file_system_error: cannot write \(file.path)/sub: Not a directory\n")
        #expect(try Data(contentsOf: file) == Data("x".utf8))
    }

    @Test func anUnknownOptionIsAUsageError() async throws {
        let run = try await CommandRunner.codexctl(["demo", "--db", "x.sqlite"])
        #expect(run.status == 64)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.hasPrefix("Error: Unknown option '--db'\nUsage: codexctl demo [--json] [--keep <dir>] [--otlp <url>]\n"))
    }

    @Test func anOTLPCollectorMustBeAnHTTPURL() async throws {
        for bad in ["ftp://collector:4318", "localhost:4318", "http://"] {
            let run = try await CommandRunner.codexctl(["demo", "--otlp", bad])
            #expect(run.status == 64, "\(bad)")
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.hasPrefix("Error: --otlp needs an http or https URL, e.g. http://localhost:4318"), "\(run.stderr)")
        }
        // The URL is printed when the demo ends: no credentials, and no query or fragment for the signal
        // paths to land after.
        for bad in ["http://user:S3CRETPW@127.0.0.1:1/", "http://127.0.0.1:1/path?token=S3CRETQ", "http://127.0.0.1:1/#S3CRETF"] {
            let run = try await CommandRunner.codexctl(["demo", "--otlp", bad])
            #expect(run.status == 64, "\(bad)")
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.hasPrefix("Error: --otlp takes a collector's base URL without user information, a query or a fragment"), "\(run.stderr)")
            #expect(!run.stderr.contains("S3CRET"))
        }
    }

    /// A refused `--keep` directory is left as it was (no lock file added), an empty `--keep` is not the
    /// current directory, and a symbolic link is refused before anything is written through it.
    @Test func aRefusedKeepDirectoryIsLeftAsItWas() async throws {
        let directory = try temporaryDirectory("demo-refused")
        defer { try? FileManager.default.removeItem(at: directory) }
        let full = directory.appendingPathComponent("full")
        try FileManager.default.createDirectory(at: full, withIntermediateDirectories: false)
        try Data("mine".utf8).write(to: full.appendingPathComponent("notes.txt"))
        let refused = try await CommandRunner.codexctl(["demo", "--keep", full.path])
        #expect(refused.status == 1)
        #expect(refused.stderr == "Error: directory_not_empty: \(full.path) is not empty; --keep needs a new or empty directory\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: full.path) == ["notes.txt"])

        let empty = try await CommandRunner.codexctl(["demo", "--keep", ""], in: full)
        #expect(empty.status == 64)
        #expect(empty.stderr.hasPrefix("Error: --keep needs a directory path"), "\(empty.stderr)")

        let target = directory.appendingPathComponent("target")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        let link = directory.appendingPathComponent("link")
        #expect(symlink(target.path, link.path) == 0)
        let linked = try await CommandRunner.codexctl(["demo", "--keep", link.path])
        #expect(linked.status == 1)
        #expect(linked.stderr == "Error: not_a_directory: \(link.path) is a symbolic link; --keep needs a new or empty directory\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: target.path).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: full.path) == ["notes.txt"])
    }

    /// An output that fails partway (a full disk, a reader that goes away) stops the demo the way Ctrl-C
    /// does, and its temporary directory is still removed.
    @Test func aDemoStoppedByItsOutputLeavesNothingBehind() async throws {
        for redirection in ["> /dev/full", "| head -c1 > /dev/null"] {
            let temporary = try temporaryDirectory("demo-stopped")
            defer { try? FileManager.default.removeItem(at: temporary) }
            let run = try await CommandRunner.codexctl(["demo"], redirecting: redirection, environment: ["TMPDIR": temporary.path])
            if redirection.hasPrefix(">") {
                #expect(run.status == 1)
                #expect(run.stderr == "Error: output_failed: cannot write output: No space left on device\n", "\(run.stderr)")
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: temporary.path)
            #expect(left.isEmpty, "\(redirection): \(left)")
        }
    }
}
