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
        let device = UInt64(info.st_dev)
        let major = ((device >> 8) & 0xFFF) | ((device >> 32) & ~UInt64(0xFFF))
        let minor = (device & 0xFF) | ((device >> 12) & ~UInt64(0xFF))
        let inode = UInt64(info.st_ino)
        for _ in 0..<2 {
            guard let table = readTable() else { return nil }
            if contains(table, major: major, minor: minor, inode: inode) { return true }
        }
        return false
    }

    private static func contains(_ table: String, major: UInt64, minor: UInt64, inode: UInt64) -> Bool {
        for line in table.split(separator: "\n") {
            // "1: FLOCK  ADVISORY  WRITE 1234 08:01:56789 0 EOF" (blocked waiters have "->" and are skipped).
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", !fields.contains("->") else { continue }
            let identity = fields[5].split(separator: ":")
            guard identity.count == 3,
                  let lineMajor = UInt64(identity[0], radix: 16), let lineMinor = UInt64(identity[1], radix: 16),
                  let lineInode = UInt64(identity[2])
            else { continue }
            if lineInode == inode, lineMajor == major, lineMinor == minor { return true }
        }
        return false
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
