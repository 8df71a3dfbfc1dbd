import Foundation

/// A fresh temporary directory.
func temporaryDirectory(_ name: String = "codexkit") throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
