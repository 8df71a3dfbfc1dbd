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
    static func isFlockHeld(directory: RecoveryDirectory, name: String) -> Bool? {
        guard let info = try? directory.fileSystem.status(in: directory.descriptor, name: name) else { return false }
        guard let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return nil }
        let device = UInt64(info.st_dev)
        let major = ((device >> 8) & 0xFFF) | ((device >> 32) & ~UInt64(0xFFF))
        let minor = (device & 0xFF) | ((device >> 12) & ~UInt64(0xFF))
        let inode = UInt64(info.st_ino)
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
}
