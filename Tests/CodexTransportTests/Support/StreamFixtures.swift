import CodexSchema
import Foundation

/// The recorded Responses streams converted by `Scripts/make-sse-fixtures.py`.
enum StreamFixtures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    struct Expected: Decodable, Equatable {
        let event: String
        let type: String?
        let sequence_number: Int?
    }

    static let names: [String] = {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("streams/manifest.json")),
              let manifest = try? JSONDecoder().decode([[String: JSONValue]].self, from: data) else { return [] }
        return manifest.compactMap { $0["name"]?.stringValue }
    }()

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent("streams/\(name).sse")))
    }

    static func expected(_ name: String) throws -> [Expected] {
        try JSONDecoder().decode([Expected].self, from: Data(contentsOf: directory.appendingPathComponent("streams/\(name).expected.json")))
    }

    static func raw(_ relativePath: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(relativePath))
    }
}
