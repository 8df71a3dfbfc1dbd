public import Foundation

/// A fresh, empty directory under the system's temporary directory, named `name-<UUID>`.
public func temporaryDirectory(_ name: String = "codexkit") throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
