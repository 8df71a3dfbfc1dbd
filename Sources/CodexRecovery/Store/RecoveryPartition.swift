import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One account-and-scope directory of the store: typed record reads and quota-checked durable writes,
/// leases, and probes of whether a lease is held.
struct RecoveryPartition: Sendable {
    /// The names of a partition's two directories: the account's under the store, the scope's under it.
    struct Location: Sendable, Hashable {
        let account: String
        let scope: String
    }

    let store: AgentStructuredRecoveryStore
    let directory: RecoveryDirectory
    let location: Location

    static func fileName(_ operationID: UUID, _ suffix: String) -> String {
        operationID.uuidString.lowercased() + suffix
    }

    /// The record of type `R` for `operationID`, or `nil` when its file does not exist.
    func load<R: RecoveryRecord>(_ type: R.Type, _ operationID: UUID) throws(AgentRecoveryError) -> R? {
        do {
            guard let bytes = try directory.read(Self.fileName(operationID, R.fileSuffix), limit: store.maximumRecordBytes) else { return nil }
            return try RecoveryRecordCodec.decode(R.self, from: bytes, expecting: operationID)
        } catch {
            var failure = error
            failure.operationID = operationID
            throw failure
        }
    }

    /// Checks that the record file of type `R` for `operationID` is intact (see
    /// ``RecoveryRecordCodec/verify(_:_:expecting:)``); `false` when it does not exist.
    func verify<R: RecoveryRecord>(_ type: R.Type, _ operationID: UUID) throws(AgentRecoveryError) -> Bool {
        guard let bytes = try directory.read(Self.fileName(operationID, R.fileSuffix), limit: store.maximumRecordBytes) else { return false }
        try RecoveryRecordCodec.verify(R.self, bytes, expecting: operationID)
        return true
    }

    /// Writes `record` durably after checking the per-record limit and the store quota under the quota
    /// lock; a refused write leaves no trace.
    func save<R: RecoveryRecord>(_ record: R) throws(AgentRecoveryError) {
        let bytes = try RecoveryRecordCodec.encode(record)
        let name = Self.fileName(record.operationID, R.fileSuffix)
        guard bytes.count <= store.maximumRecordBytes else {
            throw AgentRecoveryError(
                code: .storageLimitExceeded,
                message: "the record needs \(bytes.count) bytes; the per-record limit is \(store.maximumRecordBytes)",
                operationID: record.operationID
            )
        }
        do {
            try store.withQuotaLock { (ledger: inout QuotaLedger) throws(AgentRecoveryError) in
                let used = try ledger.current()
                let replaced = try directory.regularFileSize(name) ?? 0
                let after = used - replaced + bytes.count
                // Operation records may not use the last few kilobytes, so a full store can still take
                // the small lifecycle records that acknowledge, abandon or cancel need.
                let limit = R.self == RecoveryOperationRecord.self ? store.maximumBytes - store.lifecycleReserveBytes : store.maximumBytes
                guard after <= limit else {
                    throw AgentRecoveryError(
                        code: .storageLimitExceeded,
                        message: "the store would hold \(after) bytes; its quota is \(store.maximumBytes) (\(store.maximumBytes - limit) kept for lifecycle records)"
                    )
                }
                // Growth is recorded before the write, shrinkage after: a crash in between over-counts.
                if after > used { try ledger.set(after) }
                do throws(AgentRecoveryError) {
                    try directory.writeDurably(name, bytes)
                } catch {
                    // Whatever happened, count what is on disk now.
                    let present = (try? directory.regularFileSize(name)) ?? nil
                    try? ledger.set(used - replaced + (present ?? 0))
                    throw error
                }
                if after < used { try ledger.set(after) }
            }
        } catch {
            var failure = error
            failure.operationID = record.operationID
            throw failure
        }
    }

    /// Removes the record file of type `R` for `operationID` (nothing happens when it is missing).
    func remove<R: RecoveryRecord>(_ type: R.Type, _ operationID: UUID) throws(AgentRecoveryError) {
        let name = Self.fileName(operationID, R.fileSuffix)
        do {
            try store.withQuotaLock { (ledger: inout QuotaLedger) throws(AgentRecoveryError) in
                guard let size = try directory.regularFileSize(name) else { return }
                let used = try ledger.current()
                try directory.remove(name)
                try ledger.set(used - size)
            }
        } catch {
            var failure = error
            failure.operationID = operationID
            throw failure
        }
    }

    /// Takes the exclusive lease of `operationID`, or throws `operation_busy`.
    func lease(_ operationID: UUID) throws(AgentRecoveryError) -> RecoveryLease {
        try store.requireWritable()
        return try RecoveryLease(operationID: operationID, directory: directory, name: Self.fileName(operationID, ".lock"))
    }

    /// Whether some execution (in any process) holds the lease of `operationID` right now. On Linux it
    /// reads `/proc/locks` and never touches the lock, so asking cannot make a concurrent sender busy;
    /// elsewhere it probes by taking and at once releasing the lease.
    func isLeaseHeld(_ operationID: UUID) throws(AgentRecoveryError) -> Bool {
        let name = Self.fileName(operationID, ".lock")
        if let held = RecoveryLockTable.isFlockHeld(directory: directory, name: name) { return held }
        if store.isReadOnly { return try isLockFileHeld(name) }
        do {
            _ = try lease(operationID)
            return false
        } catch where error.code == .operationBusy {
            return true
        }
    }

    /// Whether the existing lock file `name` is held, by trying it on a read-only descriptor (nothing
    /// is created; a missing file is not held).
    private func isLockFileHeld(_ name: String) throws(AgentRecoveryError) -> Bool {
        let fileSystem = directory.fileSystem
        let fd: Int32
        do {
            fd = try fileSystem.openFile(in: directory.descriptor, name: name, flags: O_RDONLY | O_NONBLOCK, mode: 0)
        } catch where error.errorNumber == ENOENT {
            return false
        } catch {
            throw RecoveryDirectory.failure(error, "cannot open an operation lock file")
        }
        defer { fileSystem.release(fd) }
        do {
            return try !fileSystem.lockExclusively(fd, wait: false)
        } catch {
            throw RecoveryDirectory.failure(error, "cannot probe an operation lock")
        }
    }

    /// Runs `body` holding the operation's short control lock (`<id>.control.lock`, never deleted), which
    /// orders lifecycle commands against the start of an execution, transmission and completion.
    func withControlLock<T>(_ operationID: UUID, _ body: () throws(AgentRecoveryError) -> T) throws(AgentRecoveryError) -> T {
        try store.requireWritable()
        let fileSystem = directory.fileSystem
        let fd: Int32
        do {
            fd = try fileSystem.openFile(in: directory.descriptor, name: Self.fileName(operationID, ".control.lock"), flags: O_RDWR | O_CREAT, mode: 0o600)
        } catch {
            var failure = RecoveryDirectory.failure(error, "cannot open an operation's control lock")
            failure.operationID = operationID
            throw failure
        }
        defer { fileSystem.release(fd) }
        do {
            _ = try fileSystem.lockExclusively(fd, wait: true)
        } catch {
            var failure = RecoveryDirectory.failure(error, "cannot take an operation's control lock")
            failure.operationID = operationID
            throw failure
        }
        return try body()
    }

    /// The operation IDs that have a file with `suffix` here (temporary files ignored).
    func operationIDs(withSuffix suffix: String) throws(AgentRecoveryError) -> [UUID] {
        var found: [(stem: String, id: UUID)] = []
        for name in try directory.entries() where !name.hasPrefix(".") && name.hasSuffix(suffix) {
            let stem = String(name.dropLast(suffix.count))
            // `<id>.json` must not also match `<id>.control.json` or `<id>.disposition.json`.
            if Self.isCanonicalID(stem), let id = UUID(uuidString: stem) { found.append((stem, id)) }
        }
        // The lowercase stems sort as the IDs' uppercase `uuidString`s do (digits before letters, the
        // dashes in the same places), without formatting an ID per comparison.
        return found.sorted { $0.stem < $1.stem }.map(\.id)
    }

    /// Whether `text` is an ID as this store names files: 36 lowercase hexadecimal digits and dashes in
    /// the UUID layout (`8-4-4-4-12`).
    static func isCanonicalID(_ text: String) -> Bool {
        var count = 0
        for byte in text.utf8 {
            let dash = count == 8 || count == 13 || count == 18 || count == 23
            let valid = dash ? byte == UInt8(ascii: "-") : (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
            guard valid else { return false }
            count += 1
        }
        return count == 36
    }
}
