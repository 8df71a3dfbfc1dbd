import Foundation

/// Locates test data in the repository (tests always run from a source checkout).
enum Fixtures {
    /// `Tests/CodexSchemaTests/Fixtures`.
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    /// The repository root.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()

    static func bytes(_ relativePath: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(relativePath)))
    }

    static func files(in relativeDirectory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(relativeDirectory).path)
            .filter { $0.hasSuffix(".json") }
            .sorted()
    }
}
