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
    let store: AgentStructuredRecoveryStore
    let directory: RecoveryDirectory

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
            try store.withQuotaLock { () throws(AgentRecoveryError) in
                let used = try store.usedBytes()
                let replaced = try directory.regularFileSize(name) ?? 0
                let after = used - replaced + bytes.count
                guard after <= store.maximumBytes else {
                    throw AgentRecoveryError(
                        code: .storageLimitExceeded,
                        message: "the store would hold \(after) bytes; its quota is \(store.maximumBytes)"
                    )
                }
                try directory.writeDurably(name, bytes)
            }
        } catch {
            var failure = error
            failure.operationID = record.operationID
            throw failure
        }
    }

    /// Removes the record file of type `R` for `operationID` (nothing happens when it is missing).
    func remove<R: RecoveryRecord>(_ type: R.Type, _ operationID: UUID) throws(AgentRecoveryError) {
        do {
            try directory.remove(Self.fileName(operationID, R.fileSuffix))
        } catch {
            var failure = error
            failure.operationID = operationID
            throw failure
        }
    }

    /// Takes the exclusive lease of `operationID`, or throws `operation_busy`.
    func lease(_ operationID: UUID) throws(AgentRecoveryError) -> RecoveryLease {
        try RecoveryLease(operationID: operationID, directory: directory, name: Self.fileName(operationID, ".lock"))
    }

    /// Whether some execution (in any process) holds the lease of `operationID` right now. Probes by
    /// taking and at once releasing the lease; never creates state beyond the lock file.
    func isLeaseHeld(_ operationID: UUID) throws(AgentRecoveryError) -> Bool {
        do {
            _ = try lease(operationID)
            return false
        } catch where error.code == .operationBusy {
            return true
        }
    }

    /// The operation IDs that have a file with `suffix` here (temporary files ignored).
    func operationIDs(withSuffix suffix: String) throws(AgentRecoveryError) -> [UUID] {
        var ids: [UUID] = []
        for name in try directory.entries() where !name.hasPrefix(".") && name.hasSuffix(suffix) {
            let stem = String(name.dropLast(suffix.count))
            // `<id>.json` must not also match `<id>.control.json` or `<id>.disposition.json`.
            if let id = UUID(uuidString: stem), stem == id.uuidString.lowercased() { ids.append(id) }
        }
        return ids.sorted { $0.uuidString < $1.uuidString }
    }
}
