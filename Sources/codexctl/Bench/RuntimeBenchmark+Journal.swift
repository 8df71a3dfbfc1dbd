import CodexCore
import CodexKitTesting
import CodexRuntime
import CodexSchema
import CodexStorageSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension RuntimeBenchmark {
    /// Turns per journal run (each commits to a SQLite file with a synced write-ahead log).
    static let journalTurns = 40

    /// What a durable turn's journal costs: `journalTurns` persistent turns of a `toolBatchSize`-call
    /// batch on a SQLite store, durable (`turnRecovery: .resume`) minus the same turns not durable, per
    /// tool call; next to the same number of bare synced writes (`write` + `fsync` of a journal entry's
    /// size to a plain file), per call: the floor any journal that survives power loss pays.
    func measureJournal(into report: inout BenchReport) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("codexctl-bench-journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let noOp = AgentTool(definition: ToolDefinition(
            name: "noop", description: "Does nothing.", inputSchema: ["type": "object"], supportsParallelExecution: true
        )) { _, context in context.success("ok") }
        let calls = (0..<Self.toolBatchSize).map { ToolInvocation(id: ToolInvocationID(rawValue: "c\($0)"), toolName: "noop", arguments: "{}") }
        let turn = FixtureAgentBackend.Turn([.event(.toolCallsRequested(calls)), .awaitToolResults, .complete()])
        var durableTimes: [Double] = []
        var plainTimes: [Double] = []
        var bareTimes: [Double] = []
        var entriesPerTurn = 0
        var entryBytes = 0
        for run in 0..<runs {
            let durable = try await timeStoredTurns(turn, tool: noOp, path: scratch.appendingPathComponent("durable-\(run).sqlite").path, durable: true)
            durableTimes.append(durable.seconds)
            entriesPerTurn = durable.entriesPerTurn
            entryBytes = durable.entryBytes
            let plain = try await timeStoredTurns(turn, tool: noOp, path: scratch.appendingPathComponent("plain-\(run).sqlite").path, durable: false)
            plainTimes.append(plain.seconds)
            bareTimes.append(try Self.timeSyncedWrites(
                count: entriesPerTurn * Self.journalTurns, bytes: entryBytes, path: scratch.appendingPathComponent("bare-\(run).log").path
            ))
        }
        let totalCalls = Double(Self.journalTurns * Self.toolBatchSize)
        let perCall = max(0, Self.median(durableTimes) - Self.median(plainTimes)) / totalCalls
        report.results.append(BenchResult(
            name: "turn journal",
            mode: "\(Self.journalTurns) persistent turns of a \(Self.toolBatchSize)-call batch on SQLite, durable minus not durable, per call "
                + "(\(entriesPerTurn) entries a turn, \(entryBytes) bytes on average)",
            metric: "latency", value: perCall * 1_000_000, unit: "µs",
            baseline: ("the same number of bare write+fsync of that size to a plain file, per call", Self.median(bareTimes) / totalCalls * 1_000_000)
        ))
        report.results.append(BenchResult(
            name: "turn journal", mode: "the same turns not durable, whole turn (SQLite, synced commits)", metric: "latency",
            value: Self.median(plainTimes) / Double(Self.journalTurns) * 1_000_000, unit: "µs"
        ))
        report.results.append(BenchResult(
            name: "turn journal", mode: "the same turns durable, whole turn", metric: "latency",
            value: Self.median(durableTimes) / Double(Self.journalTurns) * 1_000_000, unit: "µs"
        ))
    }

    /// Runs `journalTurns` persistent turns on a new SQLite store at `path`; returns the seconds they
    /// took and, for durable turns, the journal's entries per turn and their average encoded size.
    private func timeStoredTurns(
        _ turn: FixtureAgentBackend.Turn, tool: AgentTool, path: String, durable: Bool
    ) async throws -> (seconds: Double, entriesPerTurn: Int, entryBytes: Int) {
        let store = try SQLiteRuntimeStateStore(path: path)
        let runtime = try AgentRuntime(configuration: .init(
            backend: FixtureAgentBackend(turns: [turn]), stateStore: store, turnLimits: .unlimited, tools: [tool],
            turnRecovery: durable ? .resume { _ in true } : .interrupt
        ))
        let thread = try await runtime.createThread()
        let clock = ContinuousClock()
        let started = clock.now
        for _ in 0..<Self.journalTurns {
            for try await _ in try await runtime.stream(Request(text: "bench"), in: thread.id) {}
        }
        let seconds = (clock.now - started).inSeconds
        guard durable else { return (seconds, 0, 0) }
        guard let last = try await store.latestTurn(of: thread.id) else {
            throw AgentRuntimeError(code: .invalidRequest, message: "the bench's turns were not stored")
        }
        let entries = try await store.journal(of: last.id)
        guard entries.last == .committed else { throw AgentRuntimeError(code: .invalidRequest, message: "the bench's durable turn was not journaled") }
        let encoder = JSONEncoder()
        let bytes = try entries.reduce(0) { total, entry in total + (try encoder.encode(entry)).count }
        return (seconds, entries.count, bytes / max(1, entries.count))
    }

    /// `count` appends of `bytes` bytes to a new plain file, each followed by `fsync`; returns seconds.
    static func timeSyncedWrites(count: Int, bytes: Int, path: String) throws -> Double {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw AgentRuntimeError(code: .invalidRequest, message: "cannot create the bench's log file") }
        defer { close(descriptor) }
        let entry = [UInt8](repeating: UInt8(ascii: "j"), count: max(1, bytes))
        let clock = ContinuousClock()
        let started = clock.now
        for _ in 0..<count {
            let written = entry.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written == entry.count, fsync(descriptor) == 0 else {
                throw AgentRuntimeError(code: .storageFailure, message: "the bench's synced write failed")
            }
        }
        return (clock.now - started).inSeconds
    }
}
