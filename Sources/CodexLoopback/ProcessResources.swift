internal import Foundation

/// What this process holds, read from `/proc/self` (Linux): for tests that prove nothing leaks and for
/// the benchmarks' memory figures.
public enum ProcessResources {
    /// The open file descriptors (in a sanitized build, after its symbolizer has started: see
    /// `Sanitizer.startSymbolizer()`).
    public static var openDescriptors: [String] {
        Sanitizer.startSymbolizer()
        let directory = "/proc/self/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + $0) }
    }

    /// How many descriptors are open.
    public static var openDescriptorCount: Int { openDescriptors.count }

    /// How many open descriptors point at files already unlinked (spill files, temporary files).
    public static var unlinkedFileCount: Int { openDescriptors.filter { $0.hasSuffix("(deleted)") }.count }

    /// How many open descriptors are sockets.
    public static var socketCount: Int { openDescriptors.filter { $0.hasPrefix("socket:") }.count }

    /// The resident set size in bytes (`VmRSS`), or nil where `/proc` is unavailable.
    public static var residentBytes: Int? { statusField("VmRSS:") }

    /// The peak resident set size in bytes (`VmHWM`), or nil where `/proc` is unavailable.
    public static var peakResidentBytes: Int? { statusField("VmHWM:") }

    /// Resident memory not backed by files (`RssAnon`), in bytes, or nil where `/proc` is unavailable.
    public static var anonymousBytes: Int? { statusField("RssAnon:") }

    /// The bytes this process has read through `read(2)` and its kin (`rchar` in `/proc/self/io`), or
    /// nil where `/proc` is unavailable.
    public static var bytesRead: Int? {
        guard let io = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return nil }
        for line in io.split(separator: "\n") where line.hasPrefix("rchar:") {
            return Int(line.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    private static func statusField(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            let kilobytes = line.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }
}
