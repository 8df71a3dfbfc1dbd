import CodexCore
import CodexLoopback
import CodexRecovery
import CodexSchema
import CodexTransport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `codexctl bench recovery`: full recovery lifecycles per second, fsyncs per lifecycle, and inventory
/// and status time at 10,000 operations.
enum RecoveryBenchCommand: CLICommand {
    static let name = "recovery"
    static let summary = "Structured-recovery lifecycles, fsyncs per lifecycle, inventory at 10,000 operations."
    static let help = CommandHelp(
        command: "bench recovery",
        overview: """
        Time full structured-recovery lifecycles (prepare, authorize, POST to a loopback server, save the receipt, \
        acknowledge) and count their fsyncs through the file-system seam, next to the same number of bare fsync'd \
        writes in the same directory and to the lifecycle's floor: its own file-system calls, recorded through the \
        seam, replayed without the SDK, plus the same HTTP exchange alone, and to the same lifecycles in a store on \
        tmpfs (/dev/shm), where the disk costs nothing; then time inventory and status over 10,000 operations, and \
        finding one operation among as many scopes as operations (at most 1,000).
        """,
        options: [
            .flag("--json", "Print one JSON object (the shared benchmark shape)."),
            .value("--lifecycles", "n", "Timed lifecycles (default 200)."),
            .value("--operations", "n", "Operations for the inventory figures (default 10000)."),
            .value("--directory", "dir", "Where the stores go (default the temporary directory); the file system matters."),
        ]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        guard !printsHelp(arguments) else { return Console.Status.success }
        guard let parsed = parse(arguments) else { return Console.Status.usage }
        guard let lifecycles = Int(parsed.options["--lifecycles"] ?? "200"), lifecycles > 0,
              let operations = Int(parsed.options["--operations"] ?? "10000"), operations > 0
        else { return Console.usageFailure("--lifecycles and --operations must be positive integers", help: help) }
        let base = parsed.options["--directory"].map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory
        let directory = base.appendingPathComponent("codexkit-bench-recovery-\(UUID().uuidString.lowercased())")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let report = try await RecoveryBenchmark(directory: directory, lifecycles: lifecycles, operations: operations).run()
            report.print(json: parsed.has("--json"))
            return Console.Status.success
        } catch {
            CLIFailure(error).report(json: parsed.has("--json"))
            return Console.Status.failure
        }
    }
}

/// The recovery measurements.
struct RecoveryBenchmark {
    let directory: URL
    let lifecycles: Int
    let operations: Int

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let format = AgentStructuredOutputFormat(
        name: "verdict",
        rawSchema: ["type": "object", "properties": ["ok": ["type": "boolean"], "reason": ["type": "string"]], "required": ["ok", "reason"]]
    )

    /// A complete streamed response whose message is a valid verdict.
    static var completedStream: [UInt8] {
        let item: JSONValue = [
            "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [["type": "output_text", "text": #"{"ok":true,"reason":"bench"}"#, "annotations": []]],
        ]
        let events = [
            #"event: response.created\#ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_b","status":"in_progress"}}\#n\#n"#,
            "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"sequence_number\":1,\"output_index\":0,\"item\":\(item.canonicalString())}\n\n",
            #"event: response.completed\#ndata: {"type":"response.completed","sequence_number":2,"response":{"id":"resp_b","status":"completed"}}\#n\#n"#,
        ]
        return Array(events.joined().utf8)
    }

    func run() async throws -> BenchReport {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var report = BenchReport(suite: "recovery")
        try await measureLifecycles(into: &report)
        try await measureInventory(into: &report)
        return report
    }

    private func service(_ server: LoopbackHTTPServer) throws -> AgentStructuredRecovery {
        AgentStructuredRecovery(
            configuration: .init(endpoint: try ResponsesEndpoint(baseURL: server.baseURL, profile: .publicAPI)),
            httpClient: DefaultHTTPClient(), authProvider: APIKeyAuthProvider(apiKey: "sk-bench")
        )
    }

    private func lifecycle(_ recovery: AgentStructuredRecovery, _ store: AgentStructuredRecoveryStore, _ index: Int) async throws {
        let handle = try await recovery.prepare(
            Request(text: "Bench job \(index)", executionMode: .ephemeral), format: Self.format, model: .init(model: "gpt-6-astra"), store: store
        )
        _ = try await recovery.sendRecovering(handle, response: JSONValue.self, format: Self.format, store: store) { _ in true }
        try await recovery.acknowledge(handle, store: store)
    }

    private func measureLifecycles(into report: inout BenchReport) async throws {
        let reply = ScriptedReply.body(Self.completedStream, contentType: "text/event-stream", writeSize: 16 * 1024)
        let server = try LoopbackHTTPServer(keepsRequests: false) { _ in reply }
        defer { server.shutdown() }
        let recovery = try service(server)
        let fileSystem = CountingRecoveryFileSystem(records: true)
        let store = try AgentStructuredRecoveryStore(directory: directory.appendingPathComponent("lifecycles"), fileSystem: fileSystem)
        for index in 0..<5 { try await lifecycle(recovery, store, -1 - index) }
        let before = fileSystem.syncCount
        let timedFrom = fileSystem.recordedCalls.count
        let clock = ContinuousClock()
        let started = clock.now
        for index in 0..<lifecycles { try await lifecycle(recovery, store, index) }
        let elapsed = (clock.now - started).inSeconds
        let syncs = fileSystem.syncCount - before
        let bare = try bareSyncedWrites(syncs)
        let perLifecycle = elapsed / Double(lifecycles) * 1000
        let barePerLifecycle = bare / Double(lifecycles) * 1000
        report.results.append(BenchResult(
            name: "lifecycle", mode: "prepare+authorize+POST+receipt+ack", metric: "throughput", value: Double(lifecycles) / elapsed, unit: "1/s"
        ))
        report.results.append(BenchResult(
            name: "lifecycle", mode: "time per lifecycle", metric: "latency", value: perLifecycle, unit: "ms",
            baseline: ("the same number of bare fsync'd 1 KiB writes", barePerLifecycle)
        ))
        report.results.append(BenchResult(
            name: "lifecycle", mode: "fsyncs per lifecycle", metric: "count", value: Double(syncs) / Double(lifecycles), unit: "fsyncs"
        ))
        try await measureFloor(
            perLifecycle: perLifecycle, calls: fileSystem.recordedCalls, timedFrom: timedFrom, server: server, into: &report
        )
        if let memory = try await memoryFileSystemLifecycle(recovery) {
            report.results.append(BenchResult(
                name: "lifecycle", mode: "time per lifecycle in a store on tmpfs (/dev/shm: fsync, creation and rename cost next to nothing)",
                metric: "latency", value: memory, unit: "ms", baseline: ("the same number of bare fsync'd 1 KiB writes on the store's disk", barePerLifecycle)
            ))
        } else {
            report.notes.append("no tmpfs at /dev/shm: the lifecycle without disk costs was not measured")
        }
    }

    /// The same lifecycles in a store on a memory file system (`/dev/shm`, tmpfs), where `fsync`, file
    /// creation and rename cost next to nothing: what is left is the SDK's own work, the HTTP exchange
    /// and the CPU of the system calls. The time per lifecycle in milliseconds, or `nil` when
    /// `/dev/shm` is not tmpfs.
    private func memoryFileSystemLifecycle(_ recovery: AgentStructuredRecovery) async throws -> Double? {
        // A mount table line: device, mount point, type, options, …
        let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
        let isMemory = mounts.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 2 && fields[1] == "/dev/shm" && fields[2] == "tmpfs"
        }
        guard isMemory else { return nil }
        let memoryDirectory = URL(fileURLWithPath: "/dev/shm").appendingPathComponent("codexkit-bench-recovery-\(UUID().uuidString.lowercased())")
        defer { try? FileManager.default.removeItem(at: memoryDirectory) }
        let store = try AgentStructuredRecoveryStore(directory: memoryDirectory)
        for index in 0..<5 { try await lifecycle(recovery, store, -1 - index) }
        let clock = ContinuousClock()
        let started = clock.now
        for index in 0..<lifecycles { try await lifecycle(recovery, store, index) }
        return (clock.now - started).inSeconds / Double(lifecycles) * 1000
    }

    /// The floor under a lifecycle: the store's own system calls of the timed lifecycles replayed without
    /// the SDK (same order, sizes and fsyncs, in a fresh directory) plus the same number of bare HTTP
    /// exchanges of the same reply on one client; the lifecycle's time over that floor is the SDK's own
    /// CPU work.
    private func measureFloor(
        perLifecycle: Double, calls: [RecordedRecoveryCall], timedFrom: Int, server: LoopbackHTTPServer, into report: inout BenchReport
    ) async throws {
        let replayParent = directory.appendingPathComponent("replay")
        try FileManager.default.createDirectory(at: replayParent, withIntermediateDirectories: true)
        let replay = RecoveryCallReplay(recordedParent: directory.standardizedFileURL.path, replayParent: replayParent.standardizedFileURL.path)
            .run(calls, timedFrom: timedFrom)
        if replay.mismatches > 0 {
            report.notes.append("the replay differed from the recording in \(replay.mismatches) calls (first: \(replay.firstMismatch ?? "?"))")
        }
        let counts = Dictionary(calls[timedFrom...].map { ($0.kind, 1) }, uniquingKeysWith: +)
        let breakdown = counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
            .map { "\($0.key) \(String(format: "%.1f", Double($0.value) / Double(lifecycles)))" }
        report.notes.append("file-system calls per lifecycle: " + breakdown.joined(separator: ", "))
        let costs = replay.secondsByKind.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
            .map { "\($0.key) \(String(format: "%.2f", $0.value / Double(lifecycles) * 1000)) ms" }
        report.notes.append("the replay's time per lifecycle by call: " + costs.joined(separator: ", "))
        let exchanges = try await bareExchanges(server, count: lifecycles)
        let replayPerLifecycle = replay.seconds / Double(lifecycles) * 1000
        let exchangePerLifecycle = exchanges / Double(lifecycles) * 1000
        report.results.append(BenchResult(
            name: "lifecycle", mode: "its \((calls.count - timedFrom) / lifecycles) file-system calls replayed without the SDK", metric: "latency",
            value: replayPerLifecycle, unit: "ms"
        ))
        report.results.append(BenchResult(
            name: "lifecycle", mode: "the same HTTP exchange alone (one client)", metric: "latency", value: exchangePerLifecycle, unit: "ms"
        ))
        report.results.append(BenchResult(
            name: "lifecycle", mode: "time per lifecycle vs its floor", metric: "latency", value: perLifecycle, unit: "ms",
            baseline: ("its file-system calls replayed plus the HTTP exchange alone", replayPerLifecycle + exchangePerLifecycle)
        ))
    }

    /// `count` POSTs of a 1 KiB body to `server` on one client, each reply read to its end; the seconds taken.
    private func bareExchanges(_ server: LoopbackHTTPServer, count: Int) async throws -> Double {
        let http = DefaultHTTPClient()
        let request = HTTPRequest(
            method: "POST", url: server.baseURL.appendingPathComponent("responses"), headers: ["Content-Type": "application/json"],
            body: [UInt8](repeating: 0x61, count: 1024)
        )
        for _ in 0..<5 { _ = try await http.send(request).body.collect(upTo: 1 << 20) }
        let clock = ContinuousClock()
        let started = clock.now
        for _ in 0..<count { _ = try await http.send(request).body.collect(upTo: 1 << 20) }
        return (clock.now - started).inSeconds
    }

    /// Writes 1 KiB and fsyncs, `count` times, in the same directory; returns the seconds taken.
    private func bareSyncedWrites(_ count: Int) throws -> Double {
        let path = directory.appendingPathComponent("bare-fsync").path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot create \(path)") }
        defer {
            close(fd)
            unlink(path)
        }
        let block = [UInt8](repeating: 0x61, count: 1024)
        let clock = ContinuousClock()
        let started = clock.now
        for _ in 0..<count {
            let written = block.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
            guard written == block.count, fsync(fd) == 0 else { throw Failure(description: "a bare write or fsync failed") }
        }
        return (clock.now - started).inSeconds
    }

    private func measureInventory(into report: inout BenchReport) async throws {
        let storeURL = directory.appendingPathComponent("inventory")
        let populate = try AgentStructuredRecoveryStore(directory: storeURL, fileSystem: CountingRecoveryFileSystem(skipsSync: true))
        let recovery = AgentStructuredRecovery(configuration: .init(endpoint: .publicAPI), httpClient: DefaultHTTPClient(), authProvider: APIKeyAuthProvider(apiKey: "sk-bench"))
        var last: AgentStructuredRecoveryHandle?
        for index in 0..<operations {
            last = try await recovery.prepare(
                Request(text: "Inventory job \(index)", executionMode: .ephemeral), format: Self.format, model: .init(model: "gpt-6-astra"), store: populate
            )
        }
        let binding = try await APIKeyAuthProvider(apiKey: "sk-bench").credentials().binding
        let store = try AgentStructuredRecoveryStore(directory: storeURL)
        let clock = ContinuousClock()
        var times: [Double] = []
        var listed = 0
        for _ in 0..<3 {
            let started = clock.now
            listed = try store.inventory(binding: binding).operationIDs.count
            times.append((clock.now - started).inSeconds)
        }
        guard listed == operations else { throw Failure(description: "inventory listed \(listed) of \(operations)") }
        report.results.append(BenchResult(
            name: "inventory", mode: "\(operations) operations, warm", metric: "latency", value: times.sorted()[1] * 1000, unit: "ms"
        ))
        if let last {
            report.results.append(BenchResult(
                name: "status", mode: "one operation among \(operations)", metric: "latency",
                value: try await medianStatusMilliseconds(recovery, last, store), unit: "ms"
            ))
        }
        try await measureLookups(recovery, into: &report)
        if let cold = try coldInventory(store, binding: binding) {
            report.results.append(BenchResult(
                name: "inventory", mode: "\(operations) operations, cold (page cache dropped)", metric: "latency", value: cold * 1000, unit: "ms"
            ))
        } else {
            report.notes.append("cold inventory not measured: dropping the page cache needs root (/proc/sys/vm/drop_caches)")
        }
    }

    /// Finding an operation among many partitions: one operation in each of `scopes` scopes, then in a
    /// fresh store instance the status of the last one, first found by searching every partition, then
    /// again from where it was found (the store remembers it). Median of 50 for the remembered lookup.
    private func measureLookups(_ recovery: AgentStructuredRecovery, into report: inout BenchReport) async throws {
        let scopes = min(operations, 1_000)
        let storeURL = directory.appendingPathComponent("scopes")
        let populate = try AgentStructuredRecoveryStore(directory: storeURL, fileSystem: CountingRecoveryFileSystem(skipsSync: true))
        var last: AgentStructuredRecoveryHandle?
        for index in 0..<scopes {
            last = try await recovery.prepare(
                Request(text: "Scoped job \(index)", executionMode: .ephemeral), format: Self.format, model: .init(model: "gpt-6-astra"),
                store: populate, options: .init(scope: "scope-\(index)")
            )
        }
        guard let last else { return }
        let store = try AgentStructuredRecoveryStore(directory: storeURL)
        let clock = ContinuousClock()
        let started = clock.now
        _ = try await recovery.status(last, store: store)
        let searched = (clock.now - started).inSeconds
        report.results.append(BenchResult(
            name: "status", mode: "one operation among \(scopes) scopes, found where the store remembers it", metric: "latency",
            value: try await medianStatusMilliseconds(recovery, last, store), unit: "ms",
            baseline: ("the first lookup, searching every partition", searched * 1000)
        ))
    }

    /// The median of 50 `status` calls of `handle`, in milliseconds.
    private func medianStatusMilliseconds(
        _ recovery: AgentStructuredRecovery, _ handle: AgentStructuredRecoveryHandle, _ store: AgentStructuredRecoveryStore
    ) async throws -> Double {
        let clock = ContinuousClock()
        var times: [Double] = []
        for _ in 0..<50 {
            let started = clock.now
            _ = try await recovery.status(handle, store: store)
            times.append((clock.now - started).inSeconds)
        }
        return times.sorted()[25] * 1000
    }

    /// Drops the page cache (root only) and times one inventory; `nil` when the cache cannot be dropped.
    private func coldInventory(_ store: AgentStructuredRecoveryStore, binding: String) throws -> Double? {
        sync()
        guard (try? "3\n".write(toFile: "/proc/sys/vm/drop_caches", atomically: false, encoding: .utf8)) != nil else { return nil }
        let clock = ContinuousClock()
        let started = clock.now
        _ = try store.inventory(binding: binding)
        return (clock.now - started).inSeconds
    }
}
