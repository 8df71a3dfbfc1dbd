import CodexCore
import Foundation
import Testing

/// Inputs the `storage` fuzz target (Fuzz/Storage) found, kept as regression tests.
@Suite struct StorageRowFuzzRegressionTests {
    /// A binary system-event row (kind 5) whose date bits are a NaN decoded to an item that is not equal
    /// to itself, so decode(encode(x)) != x. Non-finite date bits are now a `storage_failure`.
    @Test func aRowWithANaNDateIsRejected() {
        let crasher: [UInt8] = [
            0x01, 0x05, 0x0B, 0x74, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00, 0x2D, 0x65, 0x64, 0x00, 0x00,
            0x06, 0xFF, 0xFF, 0x0F, 0xFF, 0xFF, 0xFF, 0xFF, 0x00,
        ]
        #expect(throws: AgentRuntimeError.self) { try AgentHistoryItem(storageRow: crasher) }
        do {
            _ = try AgentHistoryItem(storageRow: crasher)
        } catch {
            #expect(error.code == .storageFailure)
        }
        // Infinity is rejected the same way; a finite date in the same row decodes and round-trips.
        var infinite = crasher
        infinite.replaceSubrange(15..<23, with: withUnsafeBytes(of: Double.infinity.bitPattern.littleEndian, Array.init))
        #expect(throws: AgentRuntimeError.self) { try AgentHistoryItem(storageRow: infinite) }
        var finite = crasher
        finite.replaceSubrange(15..<23, with: withUnsafeBytes(of: (12.5 as Double).bitPattern.littleEndian, Array.init))
        let item = try? AgentHistoryItem(storageRow: finite)
        #expect(item != nil)
        if let item { #expect((try? AgentHistoryItem(storageRow: item.storageRow())) == item) }
    }

    /// A compact JSON row whose date is beyond Double's range decoded to an infinite date, whose binary
    /// re-encoding the binary reader (rightly) rejects. The JSON reader now rejects it too.
    @Test func aJSONRowWithAnInfiniteDateIsRejected() {
        let row = Array(#"{"at":800000001.123E567,"id":"m2","k":"message","role":"user","text":"","thread":"t"}"#.utf8)
        #expect(throws: AgentRuntimeError.self) { try AgentHistoryItem(storageRow: row) }
    }
}
