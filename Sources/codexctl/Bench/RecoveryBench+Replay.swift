import CodexCore
import CodexRecovery
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One system call the recovery store made through its file-system seam, with what it was given and
/// whether it succeeded: enough to make the same call again without the store (`RecoveryCallReplay`).
/// Descriptors are the values the original calls returned; the replay maps them to its own.
enum RecordedRecoveryCall: Sendable {
    case openDirectoryAtPath(String, descriptor: Int32?)
    case openDirectory(in: Int32, name: String, descriptor: Int32?)
    case makeDirectory(in: Int32, name: String, mode: mode_t, succeeded: Bool)
    case openFile(in: Int32, name: String, flags: Int32, mode: mode_t, descriptor: Int32?)
    case read(Int32, capacity: Int, succeeded: Bool)
    case write(Int32, count: Int, succeeded: Bool)
    case sync(Int32, directory: Bool, succeeded: Bool)
    case rename(in: Int32, from: String, to: String, succeeded: Bool)
    case unlink(in: Int32, name: String, directory: Bool, succeeded: Bool)
    case status(Int32, succeeded: Bool)
    case statusAt(in: Int32, name: String, succeeded: Bool)
    case lock(Int32, wait: Bool, succeeded: Bool)
    case unlock(Int32)
    case changeMode(Int32, mode: mode_t, succeeded: Bool)
    case entries(of: Int32, succeeded: Bool)
    case close(Int32)
}

extension RecordedRecoveryCall {
    /// The system call's name, for a breakdown of a lifecycle's calls.
    var kind: String {
        switch self {
        case .openDirectoryAtPath, .openDirectory: "open (directory)"
        case .makeDirectory: "mkdirat"
        case .openFile(_, _, let flags, _, _): flags & O_CREAT != 0 ? "openat (create)" : "openat"
        case .read: "read"
        case .write: "write"
        case .sync(_, let directory, _): directory ? "fsync (directory)" : "fsync"
        case .rename: "renameat"
        case .unlink: "unlinkat"
        case .status, .statusAt: "fstat"
        case .lock: "flock"
        case .unlock: "flock (unlock)"
        case .changeMode: "fchmod"
        case .entries: "readdir"
        case .close: "close"
        }
    }
}

/// Makes a recorded sequence of the store's system calls again, in order, with nothing of the SDK around
/// them: the same opens, creations, writes of the same sizes, fsyncs, renames, unlinks, locks and
/// listings, the store's root path mapped to a fresh directory. The time it takes is the floor under a
/// recovery lifecycle's file work: what the kernel and the disk cost when no SDK code runs between the
/// calls.
struct RecoveryCallReplay {
    /// The store's parent directory in the recording, and the fresh one the replay uses instead.
    let recordedParent: String
    let replayParent: String

    /// What one replay measured.
    struct Outcome {
        /// Seconds taken by the calls from `timedFrom` on.
        var seconds: Double
        /// Calls whose success differed from the recording (0 when the replay is faithful).
        var mismatches: Int
        /// The first call that differed, for the report.
        var firstMismatch: String?
        /// Seconds spent in the timed calls, by system call (`RecordedRecoveryCall.kind`).
        var secondsByKind: [String: Double] = [:]
    }

    /// Replays `calls`; the clock runs from the call at index `timedFrom` to the end (the calls before it
    /// set up the same starting state the recording had: the store's creation and its warm-up).
    func run(_ calls: [RecordedRecoveryCall], timedFrom: Int) -> Outcome {
        var descriptors: [Int32: Int32] = [:]
        var outcome = Outcome(seconds: 0, mismatches: 0, firstMismatch: nil)
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { scratch.deallocate() }
        scratch.initializeMemory(as: UInt8.self, repeating: 0x7B)
        let clock = ContinuousClock()
        var started = clock.now
        for (index, call) in calls.enumerated() {
            if index == timedFrom { started = clock.now }
            let before = clock.now
            let (recorded, replayed) = perform(call, &descriptors, scratch)
            if index >= timedFrom { outcome.secondsByKind[call.kind, default: 0] += (clock.now - before).inSeconds }
            if recorded != replayed {
                outcome.mismatches += 1
                if outcome.firstMismatch == nil { outcome.firstMismatch = "call \(index): \(call)" }
            }
        }
        outcome.seconds = (clock.now - started).inSeconds
        for descriptor in descriptors.values { PosixRecoveryFileSystem().close(descriptor) }
        return outcome
    }

    /// Makes one call; returns whether the recording and the replay succeeded.
    private func perform(
        _ call: RecordedRecoveryCall, _ descriptors: inout [Int32: Int32], _ scratch: UnsafeMutableRawBufferPointer
    ) -> (recorded: Bool, replayed: Bool) {
        // The store's own system-call layer, so each replayed call is exactly the call the store made.
        let system = PosixRecoveryFileSystem()
        func mapped(_ descriptor: Int32) -> Int32 { descriptors[descriptor] ?? -1 }
        func opened(_ recorded: Int32?, _ result: Int32?) -> (Bool, Bool) {
            if let recorded, let result { descriptors[recorded] = result }
            return (recorded != nil, result != nil)
        }
        switch call {
        case .openDirectoryAtPath(let path, let recorded):
            let path = path.hasPrefix(recordedParent) ? replayParent + path.dropFirst(recordedParent.count) : path
            return opened(recorded, try? system.openDirectory(path: path))
        case .openDirectory(let directory, let name, let recorded):
            return opened(recorded, try? system.openDirectory(in: mapped(directory), name: name))
        case .makeDirectory(let directory, let name, let mode, let succeeded):
            return (succeeded, (try? system.makeDirectory(in: mapped(directory), name: name, mode: mode)) != nil)
        case .openFile(let directory, let name, let flags, let mode, let recorded):
            return opened(recorded, try? system.openFile(in: mapped(directory), name: name, flags: flags, mode: mode))
        case .read(let descriptor, let capacity, let succeeded):
            let buffer = UnsafeMutableRawBufferPointer(rebasing: scratch[..<min(capacity, scratch.count)])
            return (succeeded, (try? system.read(mapped(descriptor), into: buffer)) != nil)
        case .write(let descriptor, let count, let succeeded):
            let buffer = UnsafeRawBufferPointer(rebasing: scratch[..<min(count, scratch.count)])
            return (succeeded, (try? system.write(mapped(descriptor), from: buffer)) != nil)
        case .sync(let descriptor, let directory, let succeeded):
            return (succeeded, (try? system.sync(mapped(descriptor), directory: directory)) != nil)
        case .rename(let directory, let from, let to, let succeeded):
            return (succeeded, (try? system.rename(in: mapped(directory), from: from, to: to)) != nil)
        case .unlink(let directory, let name, let isDirectory, let succeeded):
            return (succeeded, (try? system.unlink(in: mapped(directory), name: name, directory: isDirectory)) != nil)
        case .status(let descriptor, let succeeded):
            return (succeeded, (try? system.status(mapped(descriptor))) != nil)
        case .statusAt(let directory, let name, let succeeded):
            return (succeeded, (try? system.status(in: mapped(directory), name: name)) != nil)
        case .lock(let descriptor, let wait, let succeeded):
            return (succeeded, (try? system.lockExclusively(mapped(descriptor), wait: wait)) == true)
        case .unlock(let descriptor):
            system.unlock(mapped(descriptor))
            return (true, true)
        case .changeMode(let descriptor, let mode, let succeeded):
            return (succeeded, (try? system.changeMode(mapped(descriptor), to: mode)) != nil)
        case .entries(let directory, let succeeded):
            return (succeeded, (try? system.entries(of: mapped(directory))) != nil)
        case .close(let descriptor):
            let replayed = descriptors.removeValue(forKey: descriptor)
            if let replayed { system.close(replayed) }
            return (true, replayed != nil)
        }
    }
}

/// Counts the store's fsyncs; optionally skips them (to populate large stores quickly, untimed) or records
/// every call for `RecoveryCallReplay`.
final class CountingRecoveryFileSystem: RecoveryFileSystem {
    private let real = PosixRecoveryFileSystem()
    private let syncs = Atomic<Int>(0)
    private let trace: Mutex<[RecordedRecoveryCall]>?
    let skipsSync: Bool

    init(skipsSync: Bool = false, records: Bool = false) {
        self.skipsSync = skipsSync
        trace = records ? Mutex([]) : nil
    }

    var syncCount: Int { syncs.load(ordering: .relaxed) }

    /// The calls recorded so far (empty unless created with `records`).
    var recordedCalls: [RecordedRecoveryCall] { trace?.withLock { $0 } ?? [] }

    private func record(_ call: RecordedRecoveryCall) {
        trace?.withLock { $0.append(call) }
    }

    /// Runs `body`, records the call `describe` makes of its outcome, and passes the outcome on.
    private func recording<Value>(
        _ body: () throws(RecoverySystemCallError) -> Value, _ describe: (Value?) -> RecordedRecoveryCall
    ) throws(RecoverySystemCallError) -> Value {
        do {
            let value = try body()
            record(describe(value))
            return value
        } catch {
            record(describe(nil))
            throw error
        }
    }

    func sync(_ descriptor: Int32, directory: Bool) throws(RecoverySystemCallError) {
        syncs.add(1, ordering: .relaxed)
        guard !skipsSync else { return }
        try recording({ () throws(RecoverySystemCallError) in try real.sync(descriptor, directory: directory) }) {
            .sync(descriptor, directory: directory, succeeded: $0 != nil)
        }
    }

    func openDirectory(path: String) throws(RecoverySystemCallError) -> Int32 {
        try recording({ () throws(RecoverySystemCallError) in try real.openDirectory(path: path) }) { .openDirectoryAtPath(path, descriptor: $0) }
    }

    func openDirectory(in directory: Int32, name: String) throws(RecoverySystemCallError) -> Int32 {
        try recording({ () throws(RecoverySystemCallError) in try real.openDirectory(in: directory, name: name) }) {
            .openDirectory(in: directory, name: name, descriptor: $0)
        }
    }

    func makeDirectory(in directory: Int32, name: String, mode: mode_t) throws(RecoverySystemCallError) {
        try recording({ () throws(RecoverySystemCallError) in try real.makeDirectory(in: directory, name: name, mode: mode) }) {
            .makeDirectory(in: directory, name: name, mode: mode, succeeded: $0 != nil)
        }
    }

    func openFile(in directory: Int32, name: String, flags: Int32, mode: mode_t) throws(RecoverySystemCallError) -> Int32 {
        try recording({ () throws(RecoverySystemCallError) in try real.openFile(in: directory, name: name, flags: flags, mode: mode) }) {
            .openFile(in: directory, name: name, flags: flags, mode: mode, descriptor: $0)
        }
    }

    func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(RecoverySystemCallError) -> Int {
        try recording({ () throws(RecoverySystemCallError) in try real.read(descriptor, into: buffer) }) {
            .read(descriptor, capacity: buffer.count, succeeded: $0 != nil)
        }
    }

    func write(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer) throws(RecoverySystemCallError) -> Int {
        try recording({ () throws(RecoverySystemCallError) in try real.write(descriptor, from: buffer) }) {
            .write(descriptor, count: $0 ?? buffer.count, succeeded: $0 != nil)
        }
    }

    func rename(in directory: Int32, from: String, to: String) throws(RecoverySystemCallError) {
        try recording({ () throws(RecoverySystemCallError) in try real.rename(in: directory, from: from, to: to) }) {
            .rename(in: directory, from: from, to: to, succeeded: $0 != nil)
        }
    }

    func unlink(in directory: Int32, name: String, directory isDirectory: Bool) throws(RecoverySystemCallError) {
        try recording({ () throws(RecoverySystemCallError) in try real.unlink(in: directory, name: name, directory: isDirectory) }) {
            .unlink(in: directory, name: name, directory: isDirectory, succeeded: $0 != nil)
        }
    }

    func status(_ descriptor: Int32) throws(RecoverySystemCallError) -> stat {
        try recording({ () throws(RecoverySystemCallError) in try real.status(descriptor) }) { .status(descriptor, succeeded: $0 != nil) }
    }

    func status(in directory: Int32, name: String) throws(RecoverySystemCallError) -> stat {
        try recording({ () throws(RecoverySystemCallError) in try real.status(in: directory, name: name) }) {
            .statusAt(in: directory, name: name, succeeded: $0 != nil)
        }
    }

    func lockExclusively(_ descriptor: Int32, wait: Bool) throws(RecoverySystemCallError) -> Bool {
        try recording({ () throws(RecoverySystemCallError) in try real.lockExclusively(descriptor, wait: wait) }) {
            .lock(descriptor, wait: wait, succeeded: $0 == true)
        }
    }

    func unlock(_ descriptor: Int32) {
        real.unlock(descriptor)
        record(.unlock(descriptor))
    }

    func changeMode(_ descriptor: Int32, to mode: mode_t) throws(RecoverySystemCallError) {
        try recording({ () throws(RecoverySystemCallError) in try real.changeMode(descriptor, to: mode) }) {
            .changeMode(descriptor, mode: mode, succeeded: $0 != nil)
        }
    }

    func entries(of directory: Int32) throws(RecoverySystemCallError) -> [String] {
        try recording({ () throws(RecoverySystemCallError) in try real.entries(of: directory) }) { .entries(of: directory, succeeded: $0 != nil) }
    }

    func close(_ descriptor: Int32) {
        real.close(descriptor)
        record(.close(descriptor))
    }
}
