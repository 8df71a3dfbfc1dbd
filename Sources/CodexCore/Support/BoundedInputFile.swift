import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file, or standard input for `-`, read in chunks with `read(2)`: its size is checked before the
/// first byte is read, and a limit is enforced while reading, so memory follows the limit, not the file.
///
/// Foundation's `Data(contentsOf:)` and `FileManager.contents(atPath:)` read a whole file before any
/// size check, and `FileHandle` reads a pipe to its end on some calls; everything the SDK and the CLI
/// read from a user's path goes through this type instead.
package final class BoundedInputFile {
    /// Why a file could not be read: the path, what failed, and the system's cause.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// What failed.
        package enum Kind: Sendable, Equatable {
            /// `open(2)` failed.
            case open
            /// `read(2)` failed.
            case read
            /// The input is larger than the limit (in bytes).
            case tooLarge(limit: Int)
            /// The input had to be a regular file and is a FIFO, a device or a socket.
            case notRegularFile
        }

        /// The path as given (`-` for standard input).
        package let path: String
        /// What failed.
        package let kind: Kind
        /// The `errno` value, for open and read failures.
        package let systemError: Int32?

        /// `cannot open /x: No such file or directory`, `cannot read /x: Is a directory`, or
        /// `/x is larger than 1048576 bytes`.
        package var description: String {
            let name = path == "-" ? "standard input" : path
            switch kind {
            case .open: return "cannot open \(name): \(Self.reason(systemError))"
            case .read: return "cannot read \(name): \(Self.reason(systemError))"
            case .tooLarge(let limit): return "\(name) is larger than \(limit) bytes"
            case .notRegularFile: return "\(name) is not a regular file"
            }
        }

        /// The system's text for `code` (`strerror`).
        package static func reason(_ code: Int32?) -> String {
            guard let code else { return "unknown error" }
            return String(cString: strerror(code))
        }
    }

    private let descriptor: Int32
    private let owned: Bool
    private let path: String
    /// The size, when the input is a regular file.
    package let regularFileSize: Int?

    /// Opens `path`, or standard input for `-`.
    /// - Parameter regularFileOnly: Refuse anything but a regular file (a FIFO planted where a
    ///   credential file belongs would otherwise wait for a writer forever): the open does not wait.
    /// - Throws: ``Failure`` with kind `.open` and the system's cause, or `.notRegularFile`.
    package init(_ path: String, regularFileOnly: Bool = false) throws(Failure) {
        self.path = path
        if path == "-" {
            descriptor = 0
            owned = false
        } else {
            var opened: Int32
            let flags = O_RDONLY | O_CLOEXEC | (regularFileOnly ? O_NONBLOCK : 0)
            repeat { opened = open(path, flags) } while opened < 0 && errno == EINTR
            guard opened >= 0 else { throw Failure(path: path, kind: .open, systemError: errno) }
            descriptor = opened
            owned = true
        }
        var info = stat()
        let regular = fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        regularFileSize = regular ? Int(info.st_size) : nil
        if regularFileOnly, !regular {
            if owned { systemClose(descriptor) }
            closed = true
            throw Failure(path: path, kind: .notRegularFile, systemError: nil)
        }
    }

    deinit { close() }

    /// The next bytes, at most `maximum`; empty at the end.
    /// - Throws: ``Failure`` with kind `.read` and the system's cause.
    package func read(maximum: Int) throws(Failure) -> [UInt8] {
        guard maximum > 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = buffer.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, maximum) }
            if count >= 0 { return count == maximum ? buffer : Array(buffer[0..<count]) }
            if errno != EINTR { throw Failure(path: path, kind: .read, systemError: errno) }
        }
    }

    private var closed = false

    /// Closes the file (never standard input); later calls do nothing.
    package func close() {
        guard owned, !closed else { return }
        closed = true
        systemClose(descriptor)
    }

    /// Reads all of `path` (or standard input for `-`), refusing more than `limit` bytes: a regular file
    /// larger than the limit is refused before it is read, and a pipe is read only up to the limit.
    /// - Throws: ``Failure`` (`.tooLarge` past the limit, or the open or read failure).
    package static func readAll(_ path: String, limit: Int, regularFileOnly: Bool = false) throws(Failure) -> [UInt8] {
        let file = try BoundedInputFile(path, regularFileOnly: regularFileOnly)
        defer { file.close() }
        if let size = file.regularFileSize, size > limit { throw Failure(path: path, kind: .tooLarge(limit: limit), systemError: nil) }
        // One byte past the limit is read to tell "at the limit" from "past it" (any limit, `Int.max` too).
        let ceiling = limit < Int.max ? max(0, limit) + 1 : Int.max
        var bytes: [UInt8] = []
        // A regular file's size is known: one allocation, no copies. A pipe's is not: the array grows
        // with what was read (reserving the limit up front would ask for all of it at once, which a
        // capped address space refuses and a large limit cannot have).
        bytes.reserveCapacity(min(file.regularFileSize.map { $0 < Int.max ? $0 + 1 : $0 } ?? (1 << 16), ceiling))
        while true {
            let chunk = try file.read(maximum: min(1 << 20, ceiling - bytes.count))
            if chunk.isEmpty { return bytes }
            bytes += chunk
            if bytes.count > limit { throw Failure(path: path, kind: .tooLarge(limit: limit), systemError: nil) }
        }
    }
}

private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(descriptor, buffer, count) }
private func systemClose(_ descriptor: Int32) { _ = close(descriptor) }
