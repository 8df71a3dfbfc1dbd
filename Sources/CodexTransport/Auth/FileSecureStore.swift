import CodexCore
public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Stores secrets as files: a 0700 directory of 0600 files, each written durably (temporary file,
/// full write, `fsync`, `rename`, `fsync` of the directory). Symbolic links are refused, for the
/// directory and for every file, and so are files readable by group or others.
///
/// ```swift
/// let store = try FileSecureStore(directory: URL(fileURLWithPath: "/home/me/.codexkit/secrets"))
/// try store.save(Array(json.utf8), for: "chatgpt-session")
/// let bytes = try store.load("chatgpt-session")
/// ```
public struct FileSecureStore: Sendable {
    /// The largest secret accepted: 1 MiB.
    public static let maximumBytes = 1024 * 1024

    /// The directory.
    public let directory: URL
    /// Whether the store was opened with ``init(readingAt:)``: it loads and refuses to save or delete.
    public let isReadOnly: Bool

    /// Opens an existing store for reading only: nothing is created and no mode is changed (a missing
    /// directory simply holds no secrets). ``save(_:for:)`` and ``delete(_:)`` throw.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `secure_store_failure` when the path is a symbolic link or
    ///   not a directory.
    public init(readingAt directory: URL) throws {
        self.directory = directory
        isReadOnly = true
        var info = stat()
        guard lstat(directory.path, &info) == 0 else {
            guard errno == ENOENT else { throw Self.failure("cannot inspect the store directory", errno) }
            return
        }
        guard (info.st_mode & S_IFMT) != S_IFLNK else { throw Self.failure("the store directory is a symbolic link", nil) }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw Self.failure("the store path is not a directory", nil) }
        guard info.st_uid == geteuid() else { throw Self.failure("the store directory belongs to another user", nil) }
    }

    /// Opens (creating if needed) the store directory with mode 0700.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `secure_store_failure` when the path is a symbolic link,
    ///   not a directory, or cannot be created.
    public init(directory: URL) throws {
        self.directory = directory
        isReadOnly = false
        let path = directory.path
        var info = stat()
        if lstat(path, &info) != 0 {
            guard errno == ENOENT else { throw Self.failure("cannot inspect the store directory", errno) }
            // Missing parents are made 0700 too, whatever the umask: a parent others can write lets them
            // swap the store for one of their own.
            try Self.makeMissingParents(of: path)
            guard mkdir(path, 0o700) == 0 || errno == EEXIST else { throw Self.failure("cannot create the store directory", errno) }
            guard lstat(path, &info) == 0 else { throw Self.failure("cannot inspect the store directory", errno) }
        }
        guard (info.st_mode & S_IFMT) != S_IFLNK else { throw Self.failure("the store directory is a symbolic link", nil) }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw Self.failure("the store path is not a directory", nil) }
        guard info.st_uid == geteuid() else { throw Self.failure("the store directory belongs to another user", nil) }
        if info.st_mode & 0o077 != 0, chmod(path, 0o700) != 0 { throw Self.failure("cannot restrict the store directory to 0700", errno) }
    }

    /// Whether `name` is a temporary file ``save(_:for:)`` made for `key`: `.<key>.<digits>.tmp` (only
    /// digits between, so another key that starts with this one and a dot keeps its files).
    package static func isLeftover(_ name: String, of key: String) -> Bool {
        let prefix = ".\(key).", suffix = ".tmp"
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count > prefix.count + suffix.count else { return false }
        return name.dropFirst(prefix.count).dropLast(suffix.count).allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// Creates each missing directory above `path` with mode 0700.
    private static func makeMissingParents(of path: String) throws {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).dropLast()
        var current = path.hasPrefix("/") ? "" : "."
        for part in parts {
            current += "/" + part
            if mkdir(current, 0o700) != 0, errno != EEXIST { throw failure("cannot create the directory above the store", errno) }
        }
    }

    /// Writes `bytes` for `key` durably, replacing any previous value.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `secure_store_failure`.
    public func save(_ bytes: [UInt8], for key: String) throws {
        try Self.check(key)
        guard !isReadOnly else { throw Self.failure("the store was opened read-only", nil) }
        guard bytes.count <= Self.maximumBytes else { throw Self.failure("the secret is larger than \(Self.maximumBytes) bytes", nil) }
        let directoryFD = try openDirectory()
        defer { close(directoryFD) }
        let temporary = ".\(key).\(UInt64.random(in: 0...UInt64.max)).tmp"
        let fd = openat(directoryFD, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.failure("cannot create a temporary file", errno) }
        var written = 0
        let writeFailure: Int32? = bytes.withUnsafeBytes { buffer -> Int32? in
            while written < buffer.count {
                let result = write(fd, buffer.baseAddress.map { $0 + written }, buffer.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                written += result
            }
            return nil
        }
        if let writeFailure {
            close(fd)
            unlinkat(directoryFD, temporary, 0)
            throw Self.failure("cannot write the secret", writeFailure)
        }
        if fsync(fd) != 0 {
            let code = errno
            close(fd)
            unlinkat(directoryFD, temporary, 0)
            throw Self.failure("cannot sync the secret", code)
        }
        close(fd)
        guard renameat(directoryFD, temporary, directoryFD, key) == 0 else {
            let code = errno
            unlinkat(directoryFD, temporary, 0)
            throw Self.failure("cannot move the secret into place", code)
        }
        guard fsync(directoryFD) == 0 else { throw Self.failure("cannot sync the store directory", errno) }
    }

    /// The bytes stored for `key`, or `nil` when there are none.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `secure_store_failure` for a symbolic link, a file readable
    ///   by others, an oversized file or a read error.
    public func load(_ key: String) throws -> [UInt8]? {
        try Self.check(key)
        if isReadOnly, !FileManager.default.fileExists(atPath: directory.path) { return nil }
        let directoryFD = try openDirectory()
        defer { close(directoryFD) }
        // Non-blocking, so a FIFO planted as the secret is refused below instead of waiting for a writer.
        let fd = openat(directoryFD, key, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw Self.failure("the secret file is a symbolic link", nil) }
            throw Self.failure("cannot open the secret", errno)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Self.failure("cannot inspect the secret", errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw Self.failure("the secret is not a regular file", nil) }
        guard info.st_uid == geteuid() else { throw Self.failure("the secret file belongs to another user", nil) }
        guard info.st_mode & 0o077 == 0 else { throw Self.failure("the secret file is readable by group or others", nil) }
        guard info.st_size <= Self.maximumBytes else { throw Self.failure("the secret file is too large", nil) }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var total = 0
        while total < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in read(fd, buffer.baseAddress.map { $0 + total }, buffer.count - total) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.failure("cannot read the secret", errno)
            }
            if count == 0 { break }
            total += count
        }
        return Array(bytes[0..<total])
    }

    /// Removes the value for `key` (nothing happens when there is none).
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `secure_store_failure`.
    public func delete(_ key: String) throws {
        try Self.check(key)
        guard !isReadOnly else { throw Self.failure("the store was opened read-only", nil) }
        let directoryFD = try openDirectory()
        defer { close(directoryFD) }
        if unlinkat(directoryFD, key, 0) != 0, errno != ENOENT { throw Self.failure("cannot delete the secret", errno) }
        // A save killed between writing its temporary file and renaming it leaves the secret there:
        // deleting the key deletes those too.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where Self.isLeftover(name, of: key) {
            if unlinkat(directoryFD, name, 0) != 0, errno != ENOENT { throw Self.failure("cannot delete a leftover temporary file", errno) }
        }
        guard fsync(directoryFD) == 0 else { throw Self.failure("cannot sync the store directory", errno) }
    }

    private func openDirectory() throws -> Int32 {
        let fd = open(directory.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw Self.failure(errno == ELOOP ? "the store directory is a symbolic link" : "cannot open the store directory", errno) }
        // Checked on the open directory: one swapped in since the store was opened is refused too.
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_uid == geteuid() else {
            close(fd)
            throw Self.failure("the store directory belongs to another user", nil)
        }
        return fd
    }

    private static func check(_ key: String) throws {
        let valid = !key.isEmpty && key.utf8.count <= 128 && !key.hasPrefix(".") && key.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: ".")
        }
        guard valid else { throw failure("secret keys use letters, digits, '-', '_' and '.'", nil) }
    }

    private static func failure(_ message: String, _ code: Int32?) -> AgentRuntimeError {
        AgentRuntimeError(.secureStore(message, errno: code))
    }
}
