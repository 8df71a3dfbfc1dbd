import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the kernel's table of held file locks (`/proc/locks`, Linux) to tell whether a `flock` is held
/// on a file without taking it.
enum RecoveryLockTable {
    /// `true`/`false` when `/proc/locks` answered; `nil` when it is unavailable (then the caller probes).
    ///
    /// The kernel builds the table while it is read, so entries can shift between reads of a busy table
    /// (many processes or tests taking locks): the table is read with large reads, and a lock not found
    /// is looked for once more in a fresh read before the answer is "not held".
    static func isFlockHeld(directory: RecoveryDirectory, name: String) -> Bool? {
        guard let info = try? directory.fileSystem.status(in: directory.descriptor, name: name) else { return false }
        for _ in 0..<2 {
            guard let table = readTable() else { return nil }
            if count(in: table, of: info, waiting: false) > 0 { return true }
        }
        return false
    }

    /// How many `flock` requests the kernel lists as blocked on the file `info` describes (requests
    /// waiting for another holder), or `nil` when `/proc/locks` is unavailable.
    static func blockedFlocks(on info: stat) -> Int? {
        readTable().map { count(in: $0, of: info, waiting: true) }
    }

    /// The `FLOCK` lines of `table` for the file `info` describes: the held locks, or the blocked
    /// requests with `waiting`.
    private static func count(in table: String, of info: stat, waiting: Bool) -> Int {
        let device = UInt64(info.st_dev)
        let major = ((device >> 8) & 0xFFF) | ((device >> 32) & ~UInt64(0xFFF))
        let minor = (device & 0xFF) | ((device >> 12) & ~UInt64(0xFF))
        let inode = UInt64(info.st_ino)
        var found = 0
        for line in table.split(separator: "\n") {
            // "1: FLOCK  ADVISORY  WRITE 1234 08:01:56789 0 EOF"; a blocked request has "->" after the
            // number: "1: -> FLOCK  ADVISORY  WRITE 1235 08:01:56789 0 EOF".
            var fields = line.split(separator: " ", omittingEmptySubsequences: true)
            let blocked = fields.count > 1 && fields[1] == "->"
            if blocked { fields.remove(at: 1) }
            guard blocked == waiting, fields.count >= 6, fields[1] == "FLOCK" else { continue }
            let identity = fields[5].split(separator: ":")
            guard identity.count == 3,
                  let lineMajor = UInt64(identity[0], radix: 16), let lineMinor = UInt64(identity[1], radix: 16),
                  let lineInode = UInt64(identity[2])
            else { continue }
            if lineInode == inode, lineMajor == major, lineMinor == minor { found += 1 }
        }
        return found
    }

    /// The whole of `/proc/locks`, read with 1 MiB reads, or `nil` when it cannot be opened.
    private static func readTable() -> String? {
        let fd = open("/proc/locks", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: buffer[0..<count])
            guard bytes.count < 64 << 20 else { break }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
