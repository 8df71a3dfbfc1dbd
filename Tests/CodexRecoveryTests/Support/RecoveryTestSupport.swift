import CodexCore
@testable import CodexRecovery
import CodexSchema
import Foundation
import Glibc

/// A fresh scratch directory under the system temporary directory, removed when released.
final class ScratchDirectory: Sendable {
    let url: URL
    var path: String { url.path }

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-recovery-\(UUID().uuidString.lowercased())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The store directory inside the scratch directory.
    var storeURL: URL { url.appendingPathComponent("store") }
}

enum RecoveryTestRecords {
    static let binding = "chatgpt:account-one"
    static let otherBinding = "chatgpt:account-two"
    static let createdAt = Date(timeIntervalSince1970: 1_800_000_000)

    static let format = AgentStructuredOutputFormat(
        name: "verdict",
        rawSchema: ["type": "object", "properties": ["ok": ["type": "boolean"]], "required": ["ok"], "additionalProperties": false]
    )

    /// A canonical, tool-free, unstored, streamed body.
    static func body(prompt: String = "Is it fine?") -> String {
        let value: JSONValue = [
            "model": "gpt-6-astra", "input": [["role": "user", "content": [["type": "input_text", "text": .string(prompt)]]]],
            "tools": [], "tool_choice": "none", "store": false, "stream": true,
        ]
        return value.canonicalString()
    }

    static func operation(
        _ id: UUID = UUID(), binding: String = Self.binding, scope: String? = nil, state: RecoveryOperationRecord.State = .prepared,
        completedPayload: String? = nil, body: String = Self.body()
    ) -> RecoveryOperationRecord {
        RecoveryOperationRecord(
            operationID: id, binding: binding, scope: scope, hostJobID: "job-1", inputRevision: "r1", contractVersion: nil,
            request: .init(
                endpoint: "https://chatgpt.com/backend-api/codex", model: "gpt-6-astra", reasoningEffort: "low", instructions: "Answer.",
                format: format, body: body, digest: SHA256.hexDigest(of: Array(body.utf8))
            ),
            retryPolicy: AgentRecoveryRetryPolicy(), maximumAttempts: 3, expiresAt: nil, state: state, attemptsUsed: 0,
            pendingAttemptID: nil, attempts: [], nextAttemptAt: nil, responseID: nil, lastSequenceNumber: nil, lastFailure: nil,
            blocker: nil, completedPayload: completedPayload, createdAt: createdAt, updatedAt: createdAt, completedAt: nil,
            previousOperationID: nil, rootOperationID: nil, retryActionID: nil, successor: nil
        )
    }

    /// The bytes of a file.
    static func bytes(_ url: URL) throws -> [UInt8] {
        Array(try Data(contentsOf: url))
    }

    /// The mode bits (permissions) of a path, not following a final symbolic link.
    static func mode(_ path: String) -> mode_t {
        var info = stat()
        guard lstat(path, &info) == 0 else { return 0 }
        return info.st_mode & 0o7777
    }

    /// Every entry under `url`, recursively, relative to it, sorted.
    static func tree(_ url: URL) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: url.path) else { return [] }
        return (enumerator.allObjects as? [String] ?? []).sorted()
    }
}

extension AgentStructuredRecoveryStore {
    /// The partition of the default test binding (created).
    func testPartition(binding: String = RecoveryTestRecords.binding, scope: String? = nil) throws -> RecoveryPartition {
        guard let partition = try partition(binding: binding, scope: scope, create: true) else {
            throw AgentRecoveryError(code: .storageFailure, message: "no partition")
        }
        return partition
    }

    /// The file URL of a record in a partition.
    func recordURL(_ id: UUID, suffix: String = ".json", binding: String = RecoveryTestRecords.binding, scope: String? = nil) -> URL {
        directory.appendingPathComponent(Self.bindingKey(binding)).appendingPathComponent(Self.scopeKey(scope))
            .appendingPathComponent(id.uuidString.lowercased() + suffix)
    }
}
