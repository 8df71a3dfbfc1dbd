@testable import CodexRecovery
import CodexCore
import CodexSchema
import Foundation
import Glibc
import CodexTestSupport
import Testing

/// Corrupt, truncated, foreign, unknown-version and special files fail closed with a typed error and
/// are left byte-for-byte as they were.
@Suite struct RecoveryRecordCorruptionTests {
    /// A store with one saved, completed record; keep it alive for the whole test (the scratch
    /// directory is removed when it is released).
    private struct Fixture {
        let scratch: ScratchDirectory
        let store: AgentStructuredRecoveryStore
        let partition: RecoveryPartition
        let record: RecoveryOperationRecord
        var url: URL { store.recordURL(record.operationID) }
    }

    private func savedRecord() throws -> Fixture {
        let scratch = try ScratchDirectory()
        let store = try AgentStructuredRecoveryStore(directory: scratch.storeURL)
        let partition = try store.testPartition()
        let record = RecoveryTestRecords.operation(state: .completed, completedPayload: #"{"ok":true}"#)
        try partition.save(record)
        return Fixture(scratch: scratch, store: store, partition: partition, record: record)
    }

    private func loadFailure(_ partition: RecoveryPartition, _ id: UUID) -> AgentRecoveryError? {
        do {
            _ = try partition.load(RecoveryOperationRecord.self, id)
            return nil
        } catch {
            return error
        }
    }

    @Test func truncationAtEveryByteOffsetFailsClosedAndLeavesTheFile() throws {
        let fixture = try savedRecord()
        defer { withExtendedLifetime(fixture) {} }
        let (_, _, partition, record, url) = (fixture.scratch, fixture.store, fixture.partition, fixture.record, fixture.url)
        let original = try RecoveryTestRecords.bytes(url)
        var codes: [AgentRecoveryError.Code: Int] = [:]
        for length in 0..<original.count {
            let truncated = Array(original[0..<length])
            try Data(truncated).write(to: url)
            let error = loadFailure(partition, record.operationID)
            codes[error?.code ?? "loaded", default: 0] += 1
            #expect(try RecoveryTestRecords.bytes(url) == truncated)
        }
        #expect(codes == [.recordCorrupt: original.count])
    }

    @Test func everySingleBitFlipFailsClosed() async throws {
        let fixture = try savedRecord()
        defer { withExtendedLifetime(fixture) {} }
        let (partition, id, url) = (fixture.partition, fixture.record.operationID, fixture.url)
        let original = try RecoveryTestRecords.bytes(url)
        // About 12,000 decodes: run on a thread of its own, then assert on the tally.
        let tally = try await runOffCooperativePool { () -> [String: Int] in
            var tally: [String: Int] = [:]
            for offset in original.indices {
                for bit in 0..<8 {
                    var flipped = original
                    flipped[offset] ^= UInt8(1 << bit)
                    try Data(flipped).write(to: url)
                    do throws(AgentRecoveryError) {
                        _ = try partition.load(RecoveryOperationRecord.self, id)
                        tally["loaded", default: 0] += 1
                    } catch {
                        tally[error.code.rawValue, default: 0] += 1
                    }
                }
            }
            return tally
        }
        #expect(tally["loaded"] == nil)
        #expect(tally.values.reduce(0, +) == original.count * 8)
        // Only flips inside the version digit can name another version; everything else is corrupt.
        #expect(tally["unsupported_record_version", default: 0] <= 8)
        #expect(tally["record_corrupt", default: 0] + tally["unsupported_record_version", default: 0] == original.count * 8)
    }

    @Test func anUnknownVersionIsReportedAsSuchAndNotTouched() throws {
        let fixture = try savedRecord()
        defer { withExtendedLifetime(fixture) {} }
        let (_, _, partition, record, url) = (fixture.scratch, fixture.store, fixture.partition, fixture.record, fixture.url)
        let text = String(decoding: try RecoveryTestRecords.bytes(url), as: UTF8.self).replacingOccurrences(of: #""version":2"#, with: #""version":999"#)
        try Data(text.utf8).write(to: url)
        let error = loadFailure(partition, record.operationID)
        #expect(error?.code == .unsupportedRecordVersion)
        #expect(error?.message.contains("999") == true)
        #expect(error?.operationID == record.operationID)
        #expect(String(decoding: try RecoveryTestRecords.bytes(url), as: UTF8.self) == text)
    }

    @Test func malformedDocumentsAreCorrupt() throws {
        let fixture = try savedRecord()
        defer { withExtendedLifetime(fixture) {} }
        let (_, _, partition, record, url) = (fixture.scratch, fixture.store, fixture.partition, fixture.record, fixture.url)
        let documents: [String] = [
            "", "null", "[]", #"{"version":2}"#, #"{"version":"2"}"#, #"{"version":2.5}"#, #"{"version":2,"version":2}"#,
            #"{"version":1e309}"#, String(repeating: "[", count: 10_000), "{\"version\":2,\"x\":\"\u{FFFD}\"}",
        ]
        for document in documents {
            try Data(document.utf8).write(to: url)
            #expect(loadFailure(partition, record.operationID)?.code == .recordCorrupt, "\(document.prefix(20))")
        }
        try Data([0x7B, 0x22, 0xFF, 0x22, 0x7D]).write(to: url)
        let invalid = loadFailure(partition, record.operationID)
        #expect(invalid?.code == .recordCorrupt)
        // The parser's own error stays underneath.
        #expect((invalid?.underlying as? CodexSchemaError)?.byteOffset == 2)
    }

    @Test func aRecordOfAnotherOperationOrWithABodyDigestMismatchIsCorrupt() throws {
        let fixture = try savedRecord()
        defer { withExtendedLifetime(fixture) {} }
        let (_, store, partition, record, url) = (fixture.scratch, fixture.store, fixture.partition, fixture.record, fixture.url)
        // Another operation's intact record copied under this operation's name.
        let other = RecoveryTestRecords.operation()
        try partition.save(other)
        try Data(try RecoveryTestRecords.bytes(store.recordURL(other.operationID))).write(to: url)
        let foreign = loadFailure(partition, record.operationID)
        #expect(foreign?.code == .recordCorrupt)
        #expect(foreign?.message.contains("another operation") == true)

        // A well-formed record whose body no longer matches its saved digest.
        var tampered = record
        tampered.request.body = RecoveryTestRecords.body(prompt: "Something else")
        try Data(try RecoveryRecordCodec.encode(tampered)).write(to: url)
        let mismatch = loadFailure(partition, record.operationID)
        #expect(mismatch?.code == .recordCorrupt)
        #expect(mismatch?.message.contains("digest") == true)

        // A body with tools is refused even with a matching digest.
        var withTools = record
        let body: JSONValue = ["model": "m", "input": [], "tools": [["type": "function", "name": "x"]], "tool_choice": "auto", "store": false, "stream": true]
        withTools.request.body = body.canonicalString()
        withTools.request.digest = SHA256.hexDigest(of: Array(withTools.request.body.utf8))
        try Data(try RecoveryRecordCodec.encode(withTools)).write(to: url)
        #expect(loadFailure(partition, record.operationID)?.message.contains("tool-free") == true)

        // Completed without a payload contradicts itself.
        var contradictory = record
        contradictory.completedPayload = nil
        try Data(try RecoveryRecordCodec.encode(contradictory)).write(to: url)
        #expect(loadFailure(partition, record.operationID)?.message.contains("payload") == true)
    }

    @Test func symlinksHardLinksFIFOsAndDirectoriesAreRefusedWithoutHanging() throws {
        let fixture = try savedRecord()
        defer { withExtendedLifetime(fixture) {} }
        let (scratch, _, partition, record, url) = (fixture.scratch, fixture.store, fixture.partition, fixture.record, fixture.url)
        let secret = scratch.url.appendingPathComponent("secret")
        try Data("top secret".utf8).write(to: secret)

        try FileManager.default.removeItem(at: url)
        #expect(symlink(secret.path, url.path) == 0)
        #expect(loadFailure(partition, record.operationID)?.code == .insecureStore)

        try FileManager.default.removeItem(at: url)
        #expect(link(secret.path, url.path) == 0)
        let hardLink = loadFailure(partition, record.operationID)
        #expect(hardLink?.code == .insecureStore)
        #expect(hardLink?.message.contains("more than one link") == true)

        try FileManager.default.removeItem(at: url)
        #expect(mkfifo(url.path, 0o600) == 0)
        #expect(loadFailure(partition, record.operationID)?.code == .insecureStore)

        try FileManager.default.removeItem(at: url)
        #expect(mkdir(url.path, 0o700) == 0)
        #expect(loadFailure(partition, record.operationID)?.code == .insecureStore)
        #expect(try Data(contentsOf: secret) == Data("top secret".utf8))
    }

    @Test func aRecordOverThePerRecordLimitIsCorruptNotRead() throws {
        let scratch = try ScratchDirectory()
        let store = try AgentStructuredRecoveryStore(directory: scratch.storeURL, maximumRecordBytes: 4096)
        let partition = try store.testPartition()
        let record = RecoveryTestRecords.operation()
        try partition.save(record)
        try Data(repeating: 0x20, count: 5000).write(to: store.recordURL(record.operationID))
        #expect(loadFailure(partition, record.operationID)?.code == .recordCorrupt)
    }
}
