public import CodexCore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runtime owner leases next to the database: `<path>.owners/slot-<n>.lock` (directory 0700, files 0600,
/// never deleted). A runtime takes the first slot it can `flock` exclusively and writes its owner ID
/// into it; the lock ends when the runtime is released or its process dies, and the next runtime reuses
/// the slot, so the files stay as few as the runtimes that ever ran at once.
///
/// An owner is alive when some slot is locked and names it. Asking takes only a shared, non-blocking
/// lock on a slot for a moment, on a read-only descriptor: nothing is written.
struct SQLiteOwnerLeases: Sendable {
    let directory: String
    /// The most slots tried before giving up (runtimes running at once on one database).
    static let maximumSlots = 4096

    init(databasePath: String) {
        directory = databasePath + ".owners"
    }

    /// Takes a free slot and writes `ownerID` into it.
    func acquire(ownerID: String) throws(SQLiteStoreError) -> SQLiteOwnerLease {
        let folder = try openDirectory(create: true)
        defer { close(folder) }
        for slot in 0..<Self.maximumSlots {
            let descriptor = openat(folder, Self.slotName(slot), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw failure("open an owner lease file in", errno) }
            var info = stat()
            guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else {
                close(descriptor)
                throw SQLiteStoreError(code: .openFailed, message: "an owner lease file in \(directory) is not a regular file of this user")
            }
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
                let bytes = Array(ownerID.utf8)
                let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
                guard written == bytes.count, ftruncate(descriptor, off_t(bytes.count)) == 0 else {
                    // A short write sets no errno: the disk was full.
                    let code = written >= 0 && written < bytes.count ? ENOSPC : errno
                    flock(descriptor, LOCK_UN)
                    close(descriptor)
                    throw failure("write an owner lease file in", code)
                }
                return SQLiteOwnerLease(ownerID: ownerID, descriptor: descriptor)
            }
            close(descriptor)
        }
        throw SQLiteStoreError(code: .busy, message: "every owner lease slot of \(directory) is held")
    }

    /// Whether a live holder's slot names `ownerID`.
    func isHeld(_ ownerID: String) throws(SQLiteStoreError) -> Bool {
        let folder: Int32
        do throws(SQLiteStoreError) {
            folder = try openDirectory(create: false)
        } catch where error.code == .notFound {
            return false
        }
        defer { close(folder) }
        let expected = Array(ownerID.utf8)
        for name in try slotNames(folder) {
            let descriptor = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            var info = stat()
            guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            // A free slot can be locked; then it names nobody alive.
            if flock(descriptor, LOCK_SH | LOCK_NB) == 0 {
                flock(descriptor, LOCK_UN)
                continue
            }
            var content = [UInt8](repeating: 0, count: expected.count + 1)
            let count = content.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
            if count == expected.count, Array(content[0..<count]) == expected { return true }
        }
        return false
    }

    static func slotName(_ slot: Int) -> String { "slot-\(slot).lock" }

    /// The slot files present (other names are ignored).
    private func slotNames(_ folder: Int32) throws(SQLiteStoreError) -> [String] {
        let copy = dup(folder)
        guard copy >= 0 else { throw failure("list", errno) }
        guard let stream = fdopendir(copy) else {
            let code = errno
            close(copy)
            throw failure("list", code)
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            guard let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name) else { continue }
            let name = String(cString: (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self))
            if name.hasPrefix("slot-"), name.hasSuffix(".lock") { names.append(name) }
        }
        return names.sorted()
    }

    /// Opens the lease directory (never through a symbolic link), creating it 0700 when `create`.
    private func openDirectory(create: Bool) throws(SQLiteStoreError) -> Int32 {
        var descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if descriptor < 0, errno == ENOENT, create {
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else { throw failure("create", errno) }
            descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        }
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { throw SQLiteStoreError(code: .notFound, message: "\(directory) does not exist") }
            throw failure("open", code)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_uid == geteuid() else {
            close(descriptor)
            throw SQLiteStoreError(code: .openFailed, message: "\(directory) is owned by another user")
        }
        return descriptor
    }

    private func failure(_ action: String, _ code: Int32) -> SQLiteStoreError {
        SQLiteDatabaseFile(path: directory).failure(action, code)
    }
}

/// One held slot of ``SQLiteOwnerLeases``; release unlocks and closes the descriptor, which ends the
/// lease at once even while a child process forked by another thread still shares the descriptor (until
/// it execs). The unlock frees the lock for every process sharing the descriptor: a child forked without
/// exec must not release, or let go of, a lease its parent still holds.
final class SQLiteOwnerLease: RuntimeOwnerLease {
    let ownerID: String
    private let descriptor: Int32

    init(ownerID: String, descriptor: Int32) {
        self.ownerID = ownerID
        self.descriptor = descriptor
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

extension SQLiteRuntimeStateStore: RuntimeOwnerLeasing {
    /// Takes a runtime owner lease in `<path>.owners/` (see ``CodexCore/RuntimeOwnerLeasing``).
    /// - Returns: `nil` for a read-only or in-memory store.
    /// - Throws: ``SQLiteStoreError`` when the lease directory cannot be created or used.
    public func acquireOwnerLease() throws -> (any RuntimeOwnerLease)? {
        guard !database.isReadOnly, database.path != ":memory:" else { return nil }
        return try SQLiteOwnerLeases(databasePath: database.path).acquire(ownerID: UUID().uuidString.lowercased())
    }

    /// Whether a live runtime (in any process) holds the lease of `ownerID`. Read-only: it works on a
    /// store opened with ``init(readingAt:)`` and writes nothing.
    public func isOwnerLeaseHeld(_ ownerID: String) throws -> Bool {
        guard database.path != ":memory:" else { return false }
        return try SQLiteOwnerLeases(databasePath: database.path).isHeld(ownerID)
    }
}
