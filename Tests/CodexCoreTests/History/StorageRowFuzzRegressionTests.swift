import CodexCore
import CodexSchema
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

    /// Found by the storage target after 2.5 million executions: a compact JSON row of a message with
    /// structured output whose payload holds an integer beyond Int64 (within UInt64). The binary row
    /// stores the metadata with Foundation's coders, and `JSONValue` encoded such a number as a Double:
    /// 16285016252571724528 came back as 16285016252571724000. It now encodes as `UInt64`.
    @Test func aJSONRowWithALargeUnsignedPayloadRoundTrips() throws {
        let row = Array(#"{"at":800000001.1234567,"id":"m2","k":"message","phase":"final_answer","role":"assistan*******","structured":{"formatName":"draft","payload":{"count":16285016252571724528,"subject":"Late"},"payloadDigest":"978881d84F3fa2f412"},"text":"","thread":"thread-fixture"}"#.utf8)
        let item = try AgentHistoryItem(storageRow: row)
        let again = try AgentHistoryItem(storageRow: item.storageRow())
        #expect(again == item)
        #expect(again.storageRow() == item.storageRow())
        guard case .message(let message) = again else { Issue.record("not a message"); return }
        #expect(message.structuredOutput?.payload["count"] == .number(JSONNumber(16_285_016_252_571_724_528 as UInt64)))
    }
}
