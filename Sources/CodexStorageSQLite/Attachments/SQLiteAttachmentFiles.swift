import CodexCore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Content-addressed image blobs next to the database: `<directory>/<first two hex digits>/<SHA-256 hex>`,
/// written durably (temporary file, fsync, rename, fsync of the directory) before any row refers to
/// them. Files are 0600 in 0700 directories.
struct SQLiteAttachmentFiles: Sendable {
    let directory: URL

    /// The storage key of `data`: its lower-case hex SHA-256.
    static func key(of data: Data) -> String { SHA256.hexDigest(of: data) }

    func url(for key: String) -> URL {
        directory.appendingPathComponent(String(key.prefix(2))).appendingPathComponent(key)
    }

    /// Writes `data` under its key unless a file with that key exists already.
    func store(_ data: Data, key: String) throws(SQLiteStoreError) {
        let target = url(for: key)
        if FileManager.default.fileExists(atPath: target.path) { return }
        let folder = target.deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: folder.path) {
            // Create the attachment root and the key's folder, and make each new entry durable in its parent.
            for directory in [self.directory, folder] where !FileManager.default.fileExists(atPath: directory.path) {
                guard mkdir(directory.path, 0o700) == 0 || errno == EEXIST else { throw Self.failure(errno, "cannot create the attachment directory") }
                try Self.syncDirectory(directory.deletingLastPathComponent())
            }
        }
        let temporary = folder.appendingPathComponent(".\(key).\(UInt64.random(in: 0...UInt64.max)).tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.failure(errno, "cannot create an attachment file") }
        var written = 0
        let writeError: Int32? = data.withUnsafeBytes { buffer -> Int32? in
            while written < buffer.count {
                let count = write(fd, buffer.baseAddress.map { $0 + written }, buffer.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                written += count
            }
            return nil
        }
        if let writeError {
            close(fd)
            unlink(temporary.path)
            throw Self.failure(writeError, "cannot write an attachment")
        }
        if fsync(fd) != 0 {
            let code = errno
            close(fd)
            unlink(temporary.path)
            throw Self.failure(code, "cannot sync an attachment")
        }
        close(fd)
        guard rename(temporary.path, target.path) == 0 else {
            let code = errno
            unlink(temporary.path)
            throw Self.failure(code, "cannot move an attachment into place")
        }
        try Self.syncDirectory(folder)
    }

    private static func syncDirectory(_ url: URL) throws(SQLiteStoreError) {
        let directoryFD = open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw failure(errno, "cannot open the attachment directory") }
        defer { close(directoryFD) }
        guard fsync(directoryFD) == 0 else { throw failure(errno, "cannot sync the attachment directory") }
    }

    /// The bytes stored under `key`.
    func load(_ key: String) throws(SQLiteStoreError) -> Data {
        do {
            return try Data(contentsOf: url(for: key))
        } catch {
            throw SQLiteStoreError(code: .ioFailure, message: "an attachment blob is missing or unreadable")
        }
    }

    /// Removes the blob `key` (nothing happens when it is missing).
    func remove(_ key: String) {
        unlink(url(for: key).path)
    }

    /// Every stored key (temporary files ignored).
    func keys() -> [String] {
        guard let folders = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        return folders.flatMap { folder -> [String] in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(folder).path)) ?? []
            return names.filter { !$0.hasPrefix(".") && $0.count == 64 }
        }.sorted()
    }

    static func failure(_ code: Int32, _ message: String) -> SQLiteStoreError {
        SQLiteStoreError(code: code == ENOSPC || code == EDQUOT ? .diskFull : .ioFailure, message: message + " (errno \(code))")
    }
}
