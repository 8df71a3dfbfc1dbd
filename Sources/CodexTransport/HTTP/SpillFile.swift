import CodexCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An anonymous first-in-first-out byte store on disk: bytes are written at the tail and read from the
/// head. The file is unlinked as soon as it is created (mode 0600, close-on-exec), so its space returns
/// to the system when the descriptor closes, even after a crash.
///
/// Used only under ``BoundedByteBuffer``'s lock, hence `@unchecked Sendable`.
final class SpillFile: @unchecked Sendable {
    private let descriptor: Int32
    private var readOffset: Int64 = 0
    private var writeOffset: Int64 = 0

    /// The bytes written and not yet read.
    var pendingBytes: Int { Int(writeOffset - readOffset) }

    /// Creates the file in `directory`.
    ///
    /// - Throws: ``AgentRuntimeError`` with code `storage_failure` when it cannot be created.
    init(directory: String) throws(AgentRuntimeError) {
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

    /// Appends `bytes`.
    ///
    /// - Throws: ``AgentRuntimeError`` with code `storage_failure` (for example when the disk is full).
    func write(_ bytes: [UInt8]) throws(AgentRuntimeError) {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                pwrite(descriptor, raw.baseAddress.map { $0 + written }, raw.count - written, off_t(writeOffset) + off_t(written))
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

    /// Removes and returns up to `maximum` bytes from the head. When everything has been read, the file
    /// is truncated so its space is released.
    ///
    /// - Throws: ``AgentRuntimeError`` with code `storage_failure`.
    func read(maximum: Int) throws(AgentRuntimeError) -> [UInt8] {
        let wanted = min(maximum, pendingBytes)
        var bytes = [UInt8](repeating: 0, count: wanted)
        var filled = 0
        while filled < wanted {
            let count = bytes.withUnsafeMutableBytes { raw in
                pread(descriptor, raw.baseAddress.map { $0 + filled }, wanted - filled, off_t(readOffset) + off_t(filled))
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
        if readOffset == writeOffset {
            readOffset = 0
            writeOffset = 0
            _ = ftruncate(descriptor, 0)
        }
        return bytes
    }

    private static func failure(_ message: String, _ code: Int32) -> AgentRuntimeError {
        AgentRuntimeError(code: .storageFailure, message: "\(message) (errno \(code))")
    }
}
