@testable import CodexRecovery
import CodexSchema
import Foundation
import Testing

/// Inputs the `recovery` fuzz target (Fuzz/Recovery) found, kept as regression tests.
@Suite struct RecoveryRecordFuzzRegressionTests {
    /// The retry policy's sets were encoded in `Set` iteration order, which differs between equal sets,
    /// so re-encoding a decoded operation record could give other bytes (and another checksum) than the
    /// file it came from. They are now written in ascending order.
    @Test func reencodingADecodedRecordReproducesItsBytes() throws {
        var statuses = Set<Int>(minimumCapacity: 512)
        for status in [599, 504, 503, 502, 500, 429, 408] { statuses.insert(status) }
        var codes = Set<String>(minimumCapacity: 256)
        for code in ["server_error", "rate_limit_exceeded", "overloaded", "b", "a"] { codes.insert(code) }
        var record = RecoveryTestRecords.operation(UUID(uuidString: "3F2504E0-4F89-11D3-9A0C-0305E82C3301") ?? UUID())
        record.retryPolicy = AgentRecoveryRetryPolicy(retryableStatuses: statuses, retryableProviderCodes: codes)

        let encoded = try RecoveryRecordCodec.encode(record)
        let decoded = try RecoveryRecordCodec.decode(RecoveryOperationRecord.self, from: encoded, expecting: record.operationID)
        #expect(decoded == record)
        #expect(try RecoveryRecordCodec.encode(decoded) == encoded)

        let policy = try JSONValue(parsing: encoded)["retryPolicy"]
        #expect(policy?["retryableStatuses"] == [408, 429, 500, 502, 503, 504, 599])
        #expect(policy?["retryableProviderCodes"] == ["a", "b", "overloaded", "rate_limit_exceeded", "server_error"])
    }

    /// The fuzzer's seed operation record (default policy), byte for byte: decode, re-encode, compare.
    @Test func theFuzzSeedRecordRoundTripsByteForByte() throws {
        let id = try #require(UUID(uuidString: "3F2504E0-4F89-11D3-9A0C-0305E82C3301"))
        var record = RecoveryTestRecords.operation(id)
        record.retryPolicy = AgentRecoveryRetryPolicy()
        for _ in 0..<20 {
            let bytes = try RecoveryRecordCodec.encode(record)
            let decoded = try RecoveryRecordCodec.decode(RecoveryOperationRecord.self, from: bytes, expecting: id)
            #expect(try RecoveryRecordCodec.encode(decoded) == bytes)
            record = decoded
        }
    }
}
