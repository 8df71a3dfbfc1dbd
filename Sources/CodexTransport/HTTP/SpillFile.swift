import CodexCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An anonymous first-in-first-out byte store on disk: bytes are written at the tail and read from the
/// head, in a ring of `capacity` bytes, so the file never grows past the capacity however long a reader
/// stays slightly behind (the caller never holds more than `capacity` bytes pending). The file is
/// unlinked as soon as it is created (mode 0600, close-on-exec), so its space returns to the system
/// when the descriptor closes, even after a crash.
///
/// Used only under ``BoundedByteBuffer``'s lock, hence `@unchecked Sendable`.
final class SpillFile: @unchecked Sendable {
    private let descriptor: Int32
    /// The ring's size in bytes: the most ever pending, and the largest the file gets.
    let capacity: Int64
    /// Bytes read and written since creation; positions in the file are these modulo `capacity`.
    private var readOffset: Int64 = 0
    private var writeOffset: Int64 = 0

    /// The bytes written and not yet read.
    var pendingBytes: Int { Int(writeOffset - readOffset) }

    /// Creates the file in `directory`.
    ///
    /// - Throws: ``AgentRuntimeError`` with code `storage_failure` when it cannot be created.
    init(directory: String, capacity: Int) throws(AgentRuntimeError) {
        self.capacity = Int64(max(1, capacity))
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        // A random name, created exclusively (never through a symlink), then unlinked at once.
        for _ in 0..<16 {
            let path = prefix + "codexkit-stream-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
            let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if descriptor >= 0 {
                unlink(path)
                self.descriptor = descriptor
                return
            }
            guard errno == EEXIST || errno == EINTR else { break }
        }
        throw Self.failure("cannot create a spill file for a stream body", errno)
    }

    deinit {
        close(descriptor)
    }

    /// Appends `bytes` (at most `capacity - pendingBytes` of them).
    ///
    /// - Throws: ``AgentRuntimeError`` with code `storage_failure` (for example when the disk is full).
    func write(_ bytes: [UInt8]) throws(AgentRuntimeError) {
        guard Int64(pendingBytes + bytes.count) <= capacity else {
            throw Self.failure("a stream body's spill file is full", ENOSPC)
        }
        var written = 0
        while written < bytes.count {
            let position = (writeOffset + Int64(written)) % capacity
            let run = min(bytes.count - written, Int(capacity - position))
            let count = bytes.withUnsafeBytes { raw in
                pwrite(descriptor, raw.baseAddress.map { $0 + written }, run, off_t(position))
            }
            if count > 0 {
                written += count
            } else if count < 0, errno == EINTR {
                continue
            } else {
                throw Self.failure("cannot write a stream body's spill file", count < 0 ? errno : ENOSPC)
            }
        }
        writeOffset += Int64(written)
    }

    /// Removes and returns up to `maximum` bytes from the head.
    ///
    /// - Throws: ``AgentRuntimeError`` with code `storage_failure`.
    func read(maximum: Int) throws(AgentRuntimeError) -> [UInt8] {
        let wanted = min(maximum, pendingBytes)
        var bytes = [UInt8](repeating: 0, count: wanted)
        var filled = 0
        while filled < wanted {
            let position = (readOffset + Int64(filled)) % capacity
            let run = min(wanted - filled, Int(capacity - position))
            let count = bytes.withUnsafeMutableBytes { raw in
                pread(descriptor, raw.baseAddress.map { $0 + filled }, run, off_t(position))
            }
            if count > 0 {
                filled += count
            } else if count < 0, errno == EINTR {
                continue
            } else {
                throw Self.failure("cannot read a stream body's spill file", count < 0 ? errno : EIO)
            }
        }
        readOffset += Int64(filled)
        return bytes
    }

    /// The file's size on disk (at most `capacity`).
    var fileSize: Int {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? Int(info.st_size) : 0
    }

    private static func failure(_ message: String, _ code: Int32) -> AgentRuntimeError {
        AgentRuntimeError(.spillFile(message, errno: code))
    }
}
