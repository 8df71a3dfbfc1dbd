import CodexCore
import CodexRuntime
import Foundation

/// `codexctl demo`: the main job, offline. The real stack (HTTP, SSE framing, event decoding, the
/// runtime with two host tools, SQLite, the recovery store on disk) against a loopback server that plays
/// the model service from a script.
enum DemoCommand: CLICommand {
    static let name = "demo"
    static let summary = "Show everything the SDK does, offline, against a loopback model server (the main job)."
    static let help = CommandHelp(
        command: "demo",
        overview: """
        Show what CodexKit does, offline, in a few seconds: the real HTTP/SSE stack, runtime, SQLite store and \
        recovery store against a loopback server that plays the model service. It narrates a streamed turn with \
        reasoning-summary progress and a host tool; structured output validated locally (a typed reply, then prose \
        with partial snapshots); two tools run in parallel with their measured concurrency; a steer accepted \
        mid-reply; a structured recovery job whose first attempt is cut mid-stream, whose authorized replacement \
        completes and saves a receipt, which a reopened process gets back without a request before the host \
        commits and acknowledges; model discovery and rate limits; a durable turn whose worker process is killed \
        with SIGKILL inside a tool, resumed by a new process that runs the charge again with the same idempotency \
        key (charged once), parked at an approval that another codexctl process answers, then finished; an MCP \
        server process started over stdio whose read-only tool the model calls, its progress streamed; the thread \
        after a restart.
        """,
        options: [
            .flag("--json", "Print one JSON object per line (each has \"type\"; see Docs/CLI.md)."),
            .value("--keep", "dir", "Keep the state database, recovery store, host job file and the durable step's files in this new or empty directory."),
            .value("--otlp", "url", "Send the demo's OpenTelemetry spans and metrics to the OTLP/HTTP collector at this URL (e.g. http://localhost:4318)."),
        ]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        // The durable step's worker: this executable run again by the demo as a child process.
        if arguments.first == DemoDurableWorker.name { return await DemoDurableWorker.run(Array(arguments.dropFirst())) }
        // The MCP step's server: this executable run again by the demo's MCP client.
        if arguments.first == DemoMCPServer.name { return DemoMCPServer.run() }
        guard !printsHelp(arguments) else { return Console.Status.success }
        guard let parsed = parse(arguments, validate: { try $0.expectNoPositionals() }) else { return Console.Status.usage }
        let json = parsed.has("--json")
        if parsed.options["--keep"]?.isEmpty == true {
            return Console.usageFailure("--keep needs a directory path (an empty one would mean the current directory)", help: help)
        }
        let kept = parsed.options["--keep"].map { URL(fileURLWithPath: $0) }
        var telemetry: AgentTelemetry?
        if let collector = parsed.options["--otlp"] {
            guard let url = URL(string: collector), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false else {
                return Console.usageFailure("--otlp needs an http or https URL, e.g. http://localhost:4318", help: help)
            }
            // The URL is printed when the demo ends: credentials in it would be too, and a query or
            // fragment would come before the signal's path. A collector's key goes in a header
            // (OTEL_EXPORTER_OTLP_HEADERS with send and chat).
            guard url.user == nil, url.password == nil, url.query == nil, url.fragment == nil else {
                return Console.usageFailure("--otlp takes a collector's base URL without user information, a query or a fragment, e.g. http://localhost:4318", help: help)
            }
            telemetry = AgentTelemetry(exporter: OTLPHTTPExporter(configuration: OTLPExporterConfiguration(endpoint: url, serviceName: "codexctl-demo")))
        }
        let directory = kept ?? FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-demo-\(UUID().uuidString.lowercased())")
        // Ctrl-C, SIGTERM or an output that fails (a closed pipe, a full disk) stops the run instead of
        // ending the process where it stands, so the temporary directory is still removed (before the
        // default signal actions come back: a second Ctrl-C still ends the process at once).
        let interrupts = InterruptWatcher()
        defer { interrupts.stop() }
        defer { if kept == nil { removeTree(directory) } }
        let (outcome, cancelled) = await interrupts.run { [telemetry] in
            let claim = try kept.map(DemoDirectoryClaim.init)
            defer { claim?.release() }
            if kept == nil { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
            try await DemoRun(directory: directory, narrator: DemoNarrator(json: json), kept: kept != nil, telemetry: telemetry).run()
        }
        // A stop, even one that came after the run's last step, ends the command as stopped.
        if cancelled { return interrupts.interruptedStatus }
        if case .failure(let error) = outcome {
            CLIFailure(error).report(json: json)
            return Console.Status.failure
        }
        return Console.Status.success
    }

    /// Removes the demo's temporary directory. SQLite deletes its `-wal` and `-shm` files when the last
    /// connection closes, which can happen while the tree is being removed (the runtimes' stores are
    /// released by tasks that end just after the demo), so a file vanishing mid-removal is retried.
    private static func removeTree(_ directory: URL) {
        for _ in 0..<20 {
            do {
                try FileManager.default.removeItem(at: directory)
                return
            } catch CocoaError.fileNoSuchFile {
                guard FileManager.default.fileExists(atPath: directory.path) else { return }
            } catch {
                Console.error("warning: could not remove \(directory.path)\n")
                return
            }
        }
    }
}
