import CodexCore
public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The durable home of structured recovery operations: an application-private directory (0700) of
/// 0600 files, one subdirectory per account binding and scope (named by digests, so no account or
/// scope string appears in a path).
///
/// Per operation `<id>`: the record `<id>.json`, the lock file `<id>.lock` (never deleted), the lifecycle
/// command record `<id>.control.json`, and after acknowledgement or abandonment the disposition marker
/// `<id>.disposition.json`. Every write is durable (temporary file, `fsync`, `renameat`, `fsync` of the
/// directory) and checked against the quota first; nothing is ever evicted. A corrupt, truncated,
/// unknown-version or foreign record fails closed with a typed error and is never deleted or rewritten.
///
/// ```swift
/// let store = try AgentStructuredRecoveryStore(directory: appSupport.appendingPathComponent("recovery"))
/// let inventory = try store.inventory(binding: credentials.binding)
/// for id in inventory.unreadableOperationIDs { reconcile(id) }   // never silently dropped
/// ```
public final class AgentStructuredRecoveryStore: Sendable {
    /// The default quota for all `*.json` files of the store: 512 MiB.
    public static let defaultMaximumBytes = 512 * 1024 * 1024
    /// The default limit for one record: 128 MiB.
    public static let defaultMaximumRecordBytes = 128 * 1024 * 1024

    /// The store directory.
    public let directory: URL
    /// The quota for all record files together.
    public let maximumBytes: Int
    /// The limit for one record file.
    public let maximumRecordBytes: Int
    let fileSystem: any RecoveryFileSystem
    let root: RecoveryDirectory
    /// The store's serial queue: the engine's file work (`flock` waits, `fsync`'d writes, reads) runs
    /// here, never on a thread of Swift's cooperative pool.
    let queue = DispatchQueue(label: "codexkit.recovery.store")
    /// Where operations were last found or created, so that a step finds its operation's partition
    /// without listing every partition of the store (partitions are never moved or removed). A location
    /// is only a hint: it is opened and checked like any other lookup, and the full search runs when
    /// it fails. Bounded by ``maximumRememberedLocations``.
    private let locations = Mutex<[UUID: RecoveryPartition.Location]>([:])
    /// The most locations kept; when full, they are all forgotten at once.
    static let maximumRememberedLocations = 4_096
    /// The file in the store's directory that holds the quota's running total (and its lock); every
    /// store has it from its first open for writing.
    package static let quotaFileName = "quota.lock"

    /// Whether the store was opened with ``init(readingAt:maximumRecordBytes:)``: it reads
    /// and refuses every change with `store_read_only`.
    public let isReadOnly: Bool

    /// Bytes of the quota that operation records may not use, kept for lifecycle records (control
    /// commands and disposition markers): 64 KiB, or an eighth of a smaller quota.
    var lifecycleReserveBytes: Int { min(64 * 1024, maximumBytes / 8) }

    /// Opens the store, creating its directory (0700) when missing. A directory accessible to group or
    /// others is tightened to 0700; a symbolic link or a directory owned by another user is refused.
    /// - Parameters:
    ///   - directory: An application-private directory on a local file system.
    ///   - maximumBytes: Quota for all records together (at least 1 KiB). Default 512 MiB.
    ///   - maximumRecordBytes: Limit for one record (at least 1 KiB, at most `maximumBytes`). Default 128 MiB.
    /// - Throws: ``AgentRecoveryError`` `insecure_store`, `storage_failure` or `disk_full`.
    public convenience init(
        directory: URL,
        maximumBytes: Int = AgentStructuredRecoveryStore.defaultMaximumBytes,
        maximumRecordBytes: Int = AgentStructuredRecoveryStore.defaultMaximumRecordBytes
    ) throws(AgentRecoveryError) {
        try self.init(directory: directory, maximumBytes: maximumBytes, maximumRecordBytes: maximumRecordBytes, fileSystem: PosixRecoveryFileSystem())
    }

    /// Opens the store over `fileSystem`, the file-system seam (tests pass one that injects failures or
    /// counts calls); otherwise as ``init(directory:maximumBytes:maximumRecordBytes:)``.
    package init(
        directory: URL,
        maximumBytes: Int = AgentStructuredRecoveryStore.defaultMaximumBytes,
        maximumRecordBytes: Int = AgentStructuredRecoveryStore.defaultMaximumRecordBytes,
        fileSystem: any RecoveryFileSystem
    ) throws(AgentRecoveryError) {
        self.directory = directory
        self.maximumBytes = max(1024, maximumBytes)
        self.maximumRecordBytes = min(max(1024, maximumRecordBytes), self.maximumBytes)
        self.fileSystem = fileSystem
        isReadOnly = false
        root = try Self.openRoot(directory.standardizedFileURL.path, fileSystem: fileSystem)
        try recountUsage()
    }

    /// Opens an existing store for inspection only (inventory, status, receipts): no directory is
    /// created, no mode is changed, no lock file is created or rewritten, and the quota ledger is not
    /// recounted. Every method that would change the store throws `store_read_only` first, and the
    /// file-system seam is wrapped so that no call that writes can reach the disk. A store directory of
    /// another user can be read (an operator inspecting a service's store); symbolic links are still
    /// refused.
    ///
    /// ```swift
    /// let store = try AgentStructuredRecoveryStore(readingAt: URL(fileURLWithPath: "/var/lib/app/recovery"))
    /// let inventory = try store.inventory(binding: binding)
    /// for problem in inventory.problems { print(problem.path, problem.code) }
    /// ```
    /// - Throws: ``AgentRecoveryError`` `store_not_found` (naming the path) when nothing is there,
    ///   `insecure_store` for a symbolic link or a non-directory, `storage_failure`.
    public convenience init(
        readingAt directory: URL,
        maximumRecordBytes: Int = AgentStructuredRecoveryStore.defaultMaximumRecordBytes
    ) throws(AgentRecoveryError) {
        try self.init(readingAt: directory, maximumRecordBytes: maximumRecordBytes, fileSystem: PosixRecoveryFileSystem())
    }

    /// Opens an existing store for inspection over `fileSystem` (wrapped so nothing writes); otherwise as
    /// ``init(readingAt:maximumRecordBytes:)``.
    package init(
        readingAt directory: URL,
        maximumRecordBytes: Int = AgentStructuredRecoveryStore.defaultMaximumRecordBytes,
        fileSystem: any RecoveryFileSystem
    ) throws(AgentRecoveryError) {
        self.directory = directory
        maximumBytes = Self.defaultMaximumBytes
        self.maximumRecordBytes = max(1024, maximumRecordBytes)
        let readOnly = ReadOnlyRecoveryFileSystem(base: fileSystem)
        self.fileSystem = readOnly
        isReadOnly = true
        let path = directory.standardizedFileURL.path
        do {
            root = RecoveryDirectory(fileSystem: readOnly, descriptor: try readOnly.openDirectory(path: path))
        } catch where error.errorNumber == ENOENT {
            throw AgentRecoveryError(code: .storeNotFound, message: "no recovery store at \(path)", systemErrorNumber: ENOENT)
        } catch {
            throw RecoveryDirectory.failure(error, "cannot open the store directory \(path)")
        }
    }

    /// Throws `store_read_only` for a store opened read-only.
    func requireWritable() throws(AgentRecoveryError) {
        guard !isReadOnly else {
            throw AgentRecoveryError(code: .storeReadOnly, message: "the store was opened read-only; nothing was changed")
        }
    }

    private static func openRoot(_ path: String, fileSystem: any RecoveryFileSystem) throws(AgentRecoveryError) -> RecoveryDirectory {
        let parentPath = FilePathText.parent(of: path)
        let name = FilePathText.lastComponent(of: path)
        guard !name.isEmpty, name != "/" else {
            throw AgentRecoveryError(code: .insecureStore, message: "the store directory cannot be the file-system root")
        }
        do {
            try FileManager.default.createDirectory(atPath: parentPath, withIntermediateDirectories: true)
        } catch {
            throw AgentRecoveryError(code: .storageFailure, message: "cannot create the store's parent directory", underlying: error)
        }
        let parent: RecoveryDirectory
        do {
            parent = RecoveryDirectory(fileSystem: fileSystem, descriptor: try fileSystem.openDirectory(path: parentPath))
        } catch {
            throw RecoveryDirectory.failure(error, "cannot open the store's parent directory")
        }
        guard let root = try parent.subdirectory(name, create: true) else {
            throw AgentRecoveryError(code: .storageFailure, message: "cannot open the store directory")
        }
        do {
            try root.checkOwnedAndPrivate(repair: true)
        } catch let error as AgentRecoveryError {
            throw error
        } catch let error as RecoverySystemCallError {
            throw RecoveryDirectory.failure(error, "cannot inspect the store directory")
        } catch {
            throw AgentRecoveryError(code: .storageFailure, message: "cannot inspect the store directory", underlying: error)
        }
        return root
    }

    // MARK: - Partitions

    /// Whether the directory at `path` is a store: it has the quota file (every store has it from its
    /// first open for writing), or an account's partition (a store restored without its lock files).
    /// Reads the directory only.
    package static func looksLikeStore(at path: String) -> Bool {
        var info = stat()
        if lstat(path + "/" + quotaFileName, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG { return true }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return false }
        return names.contains { name in
            name.utf8.count == 33 && name.hasPrefix("a") && name.utf8.dropFirst().allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
                && lstat(path + "/" + name, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
        }
    }

    /// The directory name for an account binding.
    static func bindingKey(_ binding: String) -> String {
        "a" + SHA256.hexDigest(of: Array("binding:\(binding)".utf8)).prefix(32)
    }

    /// The directory name for a scope (`nil` is its own scope).
    static func scopeKey(_ scope: String?) -> String {
        "s" + SHA256.hexDigest(of: Array((scope.map { "scope:\($0)" } ?? "no-scope").utf8)).prefix(32)
    }

    /// The partition of `binding` and `scope`, created when `create` is true.
    func partition(binding: String, scope: String?, create: Bool) throws(AgentRecoveryError) -> RecoveryPartition? {
        if create { try requireWritable() }
        return try partition(at: RecoveryPartition.Location(account: Self.bindingKey(binding), scope: Self.scopeKey(scope)), create: create)
    }

    /// The partition at `location`, created when `create` is true; `nil` when it is missing.
    private func partition(at location: RecoveryPartition.Location, create: Bool) throws(AgentRecoveryError) -> RecoveryPartition? {
        guard let account = try root.subdirectory(location.account, create: create),
              let scoped = try account.subdirectory(location.scope, create: create)
        else { return nil }
        return RecoveryPartition(store: self, directory: scoped, location: location)
    }

    /// Every scope partition of `binding`.
    func partitions(binding: String) throws(AgentRecoveryError) -> [RecoveryPartition] {
        guard let account = try root.subdirectory(Self.bindingKey(binding), create: false) else { return [] }
        var result: [RecoveryPartition] = []
        let accountName = Self.bindingKey(binding)
        for name in try account.entries().sorted() where name.hasPrefix("s") {
            if let scoped = try account.subdirectory(name, create: false) {
                result.append(RecoveryPartition(store: self, directory: scoped, location: .init(account: accountName, scope: name)))
            }
        }
        return result
    }

    /// Every partition of the store.
    func allPartitions() throws(AgentRecoveryError) -> [RecoveryPartition] {
        try partitionsAndStrays().partitions
    }

    /// Every partition, and the entries passed over: one that is not a directory (a symbolic link, a
    /// FIFO, a file) holds none, so it is never followed, and its path from the store's root is returned
    /// instead; one stray entry does not stop every operation of the store.
    func partitionsAndStrays() throws(AgentRecoveryError) -> (partitions: [RecoveryPartition], strays: [String]) {
        var strays: [String] = []
        func directory(_ name: String, in parent: RecoveryDirectory, path: String) throws(AgentRecoveryError) -> RecoveryDirectory? {
            do {
                return try parent.subdirectory(name, create: false)
            } catch where error.code == .insecureStore && (error.systemErrorNumber == ENOTDIR || error.systemErrorNumber == ELOOP) {
                strays.append(path)
                return nil
            }
        }
        var result: [RecoveryPartition] = []
        for accountName in try root.entries().sorted() where accountName.hasPrefix("a") {
            guard let account = try directory(accountName, in: root, path: accountName) else { continue }
            for name in try account.entries().sorted() where name.hasPrefix("s") {
                if let scoped = try directory(name, in: account, path: accountName + "/" + name) {
                    result.append(RecoveryPartition(store: self, directory: scoped, location: .init(account: accountName, scope: name)))
                }
            }
        }
        return (result, strays)
    }

    /// The partition holding any file of `operationID`, or `nil`: where it was last found or created
    /// when a file of it is still there, else the first partition of a full search.
    func locate(_ operationID: UUID) throws(AgentRecoveryError) -> RecoveryPartition? {
        try search(operationID).partition
    }

    /// ``locate(_:)``, with the stray entries the search passed over (none when the remembered place held it).
    private func search(_ operationID: UUID) throws(AgentRecoveryError) -> (partition: RecoveryPartition?, strays: [String]) {
        let names = [RecoveryOperationRecord.fileSuffix, RecoveryDispositionRecord.fileSuffix, RecoveryControlRecord.fileSuffix, ".lock"]
            .map { RecoveryPartition.fileName(operationID, $0) }
        func holds(_ partition: RecoveryPartition) throws(AgentRecoveryError) -> Bool {
            for name in names where try partition.directory.exists(name) { return true }
            return false
        }
        if let known = locations.withLock({ $0[operationID] }), let partition = try partition(at: known, create: false), try holds(partition) {
            return (partition, [])
        }
        let (partitions, strays) = try partitionsAndStrays()
        for partition in partitions where try holds(partition) {
            remember(operationID, in: partition)
            return (partition, strays)
        }
        return (nil, strays)
    }

    /// Notes that `operationID` lives in `partition`, for the next ``locate(_:)``.
    func remember(_ operationID: UUID, in partition: RecoveryPartition) {
        locations.withLock { locations in
            if locations.count >= Self.maximumRememberedLocations, locations[operationID] == nil { locations.removeAll(keepingCapacity: true) }
            locations[operationID] = partition.location
        }
    }

    /// The partition holding `operationID`, or `state_unavailable` when the store has no trace of it.
    func existingPartition(of operationID: UUID) throws(AgentRecoveryError) -> RecoveryPartition {
        let (found, strays) = try search(operationID)
        guard let partition = found else {
            // Something that is not a directory stands where a partition could be: that may be where the
            // operation was, so it is named rather than called missing.
            if let stray = strays.first {
                throw AgentRecoveryError(
                    code: .insecureStore, message: "the operation was not found, and \(stray) in the store is not a directory (a symbolic link or another file is in the way)",
                    operationID: operationID, systemErrorNumber: ENOTDIR
                )
            }
            throw AgentRecoveryError(code: .stateUnavailable, message: "no such operation in this store", operationID: operationID)
        }
        return partition
    }

    // MARK: - Quota

    /// Bytes used by all record files (`*.json`, temporary files excluded), counted on disk.
    public func usedBytes() throws(AgentRecoveryError) -> Int {
        var total = 0
        for partition in try allPartitions() {
            for name in try partition.directory.entries() where name.hasSuffix(".json") && !name.hasPrefix(".") {
                total += try partition.directory.regularFileSize(name) ?? 0
            }
        }
        return total
    }

    /// Runs `body` holding the store-wide quota lock (`quota.lock`, never deleted), which serializes
    /// quota checks and the writes they admit across processes. `body` gets the usage ledger.
    func withQuotaLock<T>(_ body: (inout QuotaLedger) throws(AgentRecoveryError) -> T) throws(AgentRecoveryError) -> T {
        try requireWritable()
        let fd: Int32
        do {
            fd = try fileSystem.openFile(in: root.descriptor, name: Self.quotaFileName, flags: O_RDWR | O_CREAT, mode: 0o600)
        } catch {
            throw RecoveryDirectory.failure(error, "cannot open the quota lock")
        }
        defer { fileSystem.release(fd) }
        do {
            _ = try fileSystem.lockExclusively(fd, wait: true)
        } catch {
            throw RecoveryDirectory.failure(error, "cannot take the quota lock")
        }
        var ledger = QuotaLedger(store: self, descriptor: fd)
        return try body(&ledger)
    }

    /// Recounts the bytes on disk into the usage ledger (at open, so a crash or power loss that left the
    /// ledger stale is corrected before the first write).
    func recountUsage() throws(AgentRecoveryError) {
        try withQuotaLock { (ledger: inout QuotaLedger) throws(AgentRecoveryError) in
            try ledger.set(try usedBytes())
        }
    }
}

/// The store's running total of record bytes, kept in `quota.lock` itself (read and written only under
/// its lock): O(1) per write instead of a directory walk. Growth is recorded before the record is
/// written and shrinkage after it is removed, so a crash in between leaves the total too high (never
/// too low); opening a store recounts.
struct QuotaLedger {
    let store: AgentStructuredRecoveryStore
    let descriptor: Int32

    /// The recorded total, or a fresh count when the ledger is empty or unreadable.
    func current() throws(AgentRecoveryError) -> Int {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        if count > 0, let text = String(bytes: buffer[0..<count], encoding: .utf8),
           let value = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), value >= 0 {
            return value
        }
        return try store.usedBytes()
    }

    /// Records `total` (no fsync: the ledger is rebuilt whenever a store is opened).
    func set(_ total: Int) throws(AgentRecoveryError) {
        let bytes = Array("\(max(0, total))\n".utf8)
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard written == bytes.count, ftruncate(descriptor, off_t(bytes.count)) == 0 else {
            throw AgentRecoveryError(code: .storageFailure, message: "cannot update the quota ledger", systemErrorNumber: errno)
        }
    }
}

extension RecoveryDirectory {
    /// Whether an entry called `name` exists (of any type).
    func exists(_ name: String) throws(AgentRecoveryError) -> Bool {
        do {
            _ = try fileSystem.status(in: descriptor, name: name)
            return true
        } catch where error.errorNumber == ENOENT {
            return false
        } catch {
            throw Self.failure(error, "cannot inspect a record file")
        }
    }
}
