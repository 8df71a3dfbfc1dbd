// libFuzzer target `storage`: the history storage row codec (binary rows of every kind, 1 to 6, where 6
// is a context compaction record, and the compact JSON rows written before the binary form), through
// its package API `AgentHistoryItem(storageRow:)` / `storageRow()`, which CodexStorageSQLite stores.
//
// Oracle: arbitrary bytes decode to an item or fail with an `AgentRuntimeError` coded `storage_failure`
// (no trap, no overflow, no out-of-bounds read); a decoded item re-encodes to a binary row that decodes
// to an equal item and re-encodes to the same bytes (decode(encode(x)) == x, encode is a fixed point);
// decoding with the thread hint gives the same item.
//
// With FUZZ_EXPORT_SEEDS=<dir> in the environment, the harness also writes the binary row of every item
// it decodes, plus rows of a few built-in items (one of each kind), to <dir> (how Fuzz/corpus/storage
// got its binary seeds from the compact JSON rows of the SQLite test fixture).
import CodexCore
import CodexSchema
import Foundation

@_cdecl("LLVMFuzzerInitialize")
public func storageInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>) -> CInt {
    guard ProcessInfo.processInfo.environment["FUZZ_EXPORT_SEEDS"] != nil else { return 0 }
    let compaction = AgentContextCompaction(
        id: "compaction-1", createdAt: Date(timeIntervalSinceReferenceDate: 800_000_000.25), strategy: .remote,
        replacedItemCount: 3, coversItemsBefore: 4, summary: "the user asked about é",
        providerItems: [["type": "compaction", "encrypted_content": "abc=="], ["type": "message", "role": "user", "content": []]],
        estimatedTokensBefore: 12000, estimatedTokensAfter: 900
    )
    let local = AgentContextCompaction(
        id: "compaction-2", createdAt: Date(timeIntervalSinceReferenceDate: -1.5), strategy: .local,
        replacedItemCount: 0, coversItemsBefore: 0, estimatedTokensBefore: 1, estimatedTokensAfter: 0
    )
    for item in [AgentHistoryItem.contextCompaction(compaction), .contextCompaction(local)] { export(item.storageRow()) }
    return 0
}

private func export(_ row: [UInt8]) {
    guard let directory = ProcessInfo.processInfo.environment["FUZZ_EXPORT_SEEDS"] else { return }
    let name = "binary-" + String(SHA256.hexDigest(of: row).prefix(12))
    _ = FileManager.default.createFile(atPath: directory + "/" + name, contents: Data(row))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStorage(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let item: AgentHistoryItem
    do throws(AgentRuntimeError) {
        item = try AgentHistoryItem(storageRow: bytes)
    } catch {
        check(error.code == .storageFailure, "unexpected error code \(error.code)")
        return 0
    }
    let row = item.storageRow()
    export(row)
    do throws(AgentRuntimeError) {
        let again = try AgentHistoryItem(storageRow: row)
        check(again == item, "decode(encode(x)) != x")
        check(again.storageRow() == row, "encode is not stable")
        let hinted = try row.withUnsafeBufferPointer { buffer throws(AgentRuntimeError) in
            try AgentHistoryItem(storageRow: buffer, thread: AgentThreadID(rawValue: "thread-fixture"))
        }
        check(hinted == item, "decoding with the thread hint gives another item")
    } catch {
        check(false, "a re-encoded row does not decode: \(error.code) \(error.message)")
    }
    return 0
}

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        FileHandle.standardError.write(Data("storage oracle failed: \(message())\n".utf8))
        abort()
    }
}
