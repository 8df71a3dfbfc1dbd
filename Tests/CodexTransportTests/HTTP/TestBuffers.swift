import CodexTransport
import Foundation

/// Holds the buffer the client reports.
final class BufferBox: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var stored: BoundedByteBuffer?
    func set(_ buffer: BoundedByteBuffer) { lock.lock(); stored = buffer; lock.unlock() }
    var buffer: BoundedByteBuffer? { lock.lock(); defer { lock.unlock() }; return stored }
}

/// This process's memory, from /proc/self/status.
enum ProcessMemory {
    /// VmRSS, in bytes.
    static func residentBytes() -> Int { field("VmRSS:") }

    /// RssAnon (resident memory not backed by files), in bytes.
    static func anonymousBytes() -> Int { field("RssAnon:") }

    private static func field(_ name: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            let digits = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0"
            return (Int(digits.trimmingCharacters(in: .whitespaces)) ?? 0) * 1024
        }
        return 0
    }
}
