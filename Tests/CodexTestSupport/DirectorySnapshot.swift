import CodexCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Everything under a directory, entry by entry: relative path, type, permission bits, size and the
/// SHA-256 of a regular file's bytes. Taken before and after a command that must only look, two
/// snapshots compare equal exactly when nothing was created, removed, changed or chmod-ed.
public struct DirectorySnapshot: Sendable, Hashable, CustomStringConvertible {
    /// One entry.
    public struct Entry: Sendable, Hashable {
        /// The path relative to the snapshot's root (`""` for the root itself).
        public var path: String
        /// `file`, `directory`, `symlink`, `fifo` or `other`.
        public var kind: String
        /// The permission bits (`st_mode & 0o7777`).
        public var mode: UInt32
        /// The size in bytes.
        public var size: Int64
        /// The hex SHA-256 of a regular file's bytes; the link target of a symbolic link.
        public var content: String?
    }

    /// The entries, sorted by path.
    public let entries: [Entry]

    /// Takes a snapshot of `root` (a file or a directory; a missing path has no entries). Never follows
    /// symbolic links and never opens anything but regular files, read-only.
    public init(_ root: String) {
        var entries: [Entry] = []
        Self.walk(root, relative: "", into: &entries)
        self.entries = entries.sorted { $0.path < $1.path }
    }

    private static func walk(_ path: String, relative: String, into entries: inout [Entry]) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        let format = info.st_mode & S_IFMT
        let kind: String
        var content: String?
        switch format {
        case S_IFREG:
            kind = "file"
            content = (try? Data(contentsOf: URL(fileURLWithPath: path))).map { SHA256.hexDigest(of: $0) }
        case S_IFDIR: kind = "directory"
        case S_IFLNK:
            kind = "symlink"
            content = try? FileManager.default.destinationOfSymbolicLink(atPath: path)
        case S_IFIFO: kind = "fifo"
        default: kind = "other"
        }
        entries.append(Entry(path: relative, kind: kind, mode: UInt32(info.st_mode & 0o7777), size: Int64(info.st_size), content: content))
        guard format == S_IFDIR, let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
        for name in names {
            walk(path + "/" + name, relative: relative.isEmpty ? name : relative + "/" + name, into: &entries)
        }
    }

    /// The paths of the entries, sorted.
    public var paths: [String] { entries.map(\.path) }

    /// One line per entry: `path kind mode size content-prefix`.
    public var description: String {
        entries.map { "\($0.path.isEmpty ? "." : $0.path) \($0.kind) \(String($0.mode, radix: 8)) \($0.size) \($0.content?.prefix(12) ?? "")" }
            .joined(separator: "\n")
    }

    /// What differs from `other`, one line per entry (empty when equal).
    public func differences(from other: DirectorySnapshot) -> [String] {
        let mine = Dictionary(entries.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        let theirs = Dictionary(other.entries.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        var lines: [String] = []
        for path in Set(mine.keys).union(theirs.keys).sorted() {
            switch (theirs[path], mine[path]) {
            case (nil, let added?): lines.append("added \(added.path) (\(added.kind) \(String(added.mode, radix: 8)))")
            case (let removed?, nil): lines.append("removed \(removed.path)")
            case (let before?, let after?) where before != after:
                lines.append("changed \(path): \(before.kind) \(String(before.mode, radix: 8)) \(before.size) → \(after.kind) \(String(after.mode, radix: 8)) \(after.size)")
            default: break
            }
        }
        return lines
    }
}
