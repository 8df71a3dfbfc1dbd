public import Foundation

/// What the store holds for one account binding.
public struct AgentRecoveryInventory: Sendable, Hashable {
    /// Operations whose record reads and checks cleanly, sorted.
    public var operationIDs: [UUID]
    /// Operations whose record is corrupt, truncated, of an unknown version or unreadable; their files
    /// are left untouched for host reconciliation.
    public var unreadableOperationIDs: [UUID]
    /// Operations that were acknowledged or abandoned and keep only their disposition marker.
    public var disposedOperationIDs: [UUID]
    /// Every entry that could not be read, by its path inside the store (a symbolic link or a FIFO
    /// where a directory or record should be, a corrupt record, …), with why. The rest of the store is
    /// still listed.
    public var problems: [Problem]

    /// An entry of the store that could not be read.
    public struct Problem: Sendable, Hashable {
        /// The path relative to the store directory, e.g. `a1b2…/s3c4…/<operation-id>.json`.
        public var path: String
        /// The typed reason (`insecure_store`, `record_corrupt`, `unsupported_record_version`, …).
        public var code: AgentRecoveryError.Code
        /// A log-safe explanation.
        public var message: String

        /// Creates a problem.
        public init(path: String, code: AgentRecoveryError.Code, message: String) {
            self.path = path
            self.code = code
            self.message = message
        }
    }

    /// Creates an inventory.
    public init(operationIDs: [UUID], unreadableOperationIDs: [UUID], disposedOperationIDs: [UUID], problems: [Problem] = []) {
        self.operationIDs = operationIDs
        self.unreadableOperationIDs = unreadableOperationIDs
        self.disposedOperationIDs = disposedOperationIDs
        self.problems = problems
    }
}

/// The outcome of a retention call: what was removed and what was skipped, with why.
public struct AgentRecoveryCleanupResult: Sendable, Hashable {
    /// Why an item was skipped.
    public enum SkipReason: String, Sendable, Hashable {
        /// Another execution holds its lease.
        case busy
        /// Its record cannot be read; its files are left as they are.
        case unreadable
    }

    /// Operations whose files (other than their lock files) were removed.
    public var removed: [UUID]
    /// Operations left in place, with the reason.
    public var skipped: [UUID: SkipReason]

    /// Creates a result.
    public init(removed: [UUID] = [], skipped: [UUID: SkipReason] = [:]) {
        self.removed = removed
        self.skipped = skipped
    }
}

extension AgentStructuredRecoveryStore {
    /// Lists the operations of `binding` (all scopes when `scope` is `nil`). A record that cannot be read
    /// is listed in ``AgentRecoveryInventory/unreadableOperationIDs``, and any entry that cannot be read
    /// (a record, or a directory replaced by a symbolic link or a FIFO) in
    /// ``AgentRecoveryInventory/problems`` by its path, instead of failing the call. Nothing is written.
    /// - Throws: ``AgentRecoveryError`` when the account's own directory cannot be listed.
    public func inventory(binding: String, scope: String? = nil) throws(AgentRecoveryError) -> AgentRecoveryInventory {
        var inventory = AgentRecoveryInventory(operationIDs: [], unreadableOperationIDs: [], disposedOperationIDs: [])
        let accountName = Self.bindingKey(binding)
        let account: RecoveryDirectory
        do throws(AgentRecoveryError) {
            guard let opened = try root.subdirectory(accountName, create: false) else { return inventory }
            account = opened
        } catch {
            inventory.problems.append(.init(path: accountName, code: error.code, message: error.message))
            return inventory
        }
        let scopeNames: [String]
        if let scope {
            scopeNames = [Self.scopeKey(scope)]
        } else {
            scopeNames = try account.entries().filter { $0.hasPrefix("s") }.sorted()
        }
        for scopeName in scopeNames {
            let partition: RecoveryPartition
            do throws(AgentRecoveryError) {
                guard let scoped = try account.subdirectory(scopeName, create: false) else { continue }
                partition = RecoveryPartition(store: self, directory: scoped, location: .init(account: accountName, scope: scopeName))
            } catch {
                inventory.problems.append(.init(path: accountName + "/" + scopeName, code: error.code, message: error.message))
                continue
            }
            for id in try partition.operationIDs(withSuffix: RecoveryOperationRecord.fileSuffix) {
                do {
                    if try partition.verify(RecoveryOperationRecord.self, id) { inventory.operationIDs.append(id) }
                } catch {
                    inventory.unreadableOperationIDs.append(id)
                    let path = "\(accountName)/\(scopeName)/\(RecoveryPartition.fileName(id, RecoveryOperationRecord.fileSuffix))"
                    inventory.problems.append(.init(path: path, code: error.code, message: error.message))
                }
            }
            inventory.disposedOperationIDs += try partition.operationIDs(withSuffix: RecoveryDispositionRecord.fileSuffix)
        }
        return inventory
    }

    /// Removes every idle operation of `binding` (all scopes when `scope` is `nil`): records, lifecycle
    /// commands and disposition markers; lock files stay. Operations whose lease is held are skipped as
    /// busy, unreadable records as unreadable. An explicit maintenance decision: it works after sign-out
    /// with the host's retained binding.
    public func purgeAccount(_ binding: String, scope: String? = nil) throws(AgentRecoveryError) -> AgentRecoveryCleanupResult {
        var result = AgentRecoveryCleanupResult()
        for partition in try partitions(binding: binding, scope: scope) {
            let ids = Set(try partition.operationIDs(withSuffix: RecoveryOperationRecord.fileSuffix))
                .union(try partition.operationIDs(withSuffix: RecoveryDispositionRecord.fileSuffix))
                .union(try partition.operationIDs(withSuffix: RecoveryControlRecord.fileSuffix))
            for id in ids.map({ (key: $0.uuidString, id: $0) }).sorted(by: { $0.key < $1.key }).map(\.id) {
                let lease: RecoveryLease
                do {
                    lease = try partition.lease(id)
                } catch where error.code == .operationBusy {
                    result.skipped[id] = .busy
                    continue
                }
                do {
                    _ = try partition.load(RecoveryOperationRecord.self, id)
                } catch {
                    result.skipped[id] = .unreadable
                    continue
                }
                try lease.verify()
                try partition.remove(RecoveryOperationRecord.self, id)
                try partition.remove(RecoveryControlRecord.self, id)
                try partition.remove(RecoveryDispositionRecord.self, id)
                result.removed.append(id)
            }
        }
        return result
    }

    /// Removes disposition markers (and lifecycle commands) of `binding` written before `date`, for
    /// operations whose content is already gone. Never removes unacknowledged completions or unfinished
    /// requests; skips busy and unreadable items.
    public func cleanupDisposed(before date: Date, for binding: String) throws(AgentRecoveryError) -> AgentRecoveryCleanupResult {
        var result = AgentRecoveryCleanupResult()
        for partition in try partitions(binding: binding) {
            for id in try partition.operationIDs(withSuffix: RecoveryDispositionRecord.fileSuffix) {
                let lease: RecoveryLease
                do {
                    lease = try partition.lease(id)
                } catch where error.code == .operationBusy {
                    result.skipped[id] = .busy
                    continue
                }
                let disposition: RecoveryDispositionRecord?
                do {
                    disposition = try partition.load(RecoveryDispositionRecord.self, id)
                    // A record still present means removal is unfinished: leave it to acknowledgement.
                    guard try !partition.directory.exists(RecoveryPartition.fileName(id, RecoveryOperationRecord.fileSuffix)) else { continue }
                } catch {
                    result.skipped[id] = .unreadable
                    continue
                }
                guard let disposition, disposition.disposedAt < date else { continue }
                try lease.verify()
                try partition.remove(RecoveryDispositionRecord.self, id)
                try partition.remove(RecoveryControlRecord.self, id)
                result.removed.append(id)
            }
        }
        return result
    }

    private func partitions(binding: String, scope: String?) throws(AgentRecoveryError) -> [RecoveryPartition] {
        guard let scope else { return try partitions(binding: binding) }
        return try partition(binding: binding, scope: scope, create: false).map { [$0] } ?? []
    }
}
