// libFuzzer target `recovery`: the recovery record codec (RecoveryRecordCodec and the three record
// types it stores: operation, control and disposition records). The harness is compiled together with
// the CodexRecovery sources, so the internal codec is called directly.
//
// Input: a selector byte, then the record bytes. Selector bits 0-1 pick the record type (operation,
// control, disposition); bit 2 set means "re-seal": the bytes are parsed as JSON and, when they are an
// object, its `operationID` is set to the expected one and its `checksum` recomputed before decoding, so
// the fuzzer gets past the checksum and exercises field decoding and the invariants.
//
// Oracle: decoding yields a record or an `AgentRecoveryError` coded `record_corrupt` or
// `unsupported_record_version` (no trap); a decoded record re-encodes, the encoding decodes to an equal
// record, and encoding that gives the same bytes again (decode(encode(x)) == x, encode is a fixed point).
//
// With FUZZ_EXPORT_SEEDS=<dir>, the harness writes a few encoded records built in code to <dir> (how
// Fuzz/corpus/recovery got its seeds).
import CodexCore
import CodexSchema
import Foundation

private let fuzzOperationID = UUID(uuid: (0x3F, 0x25, 0x04, 0xE0, 0x4F, 0x89, 0x11, 0xD3, 0x9A, 0x0C, 0x03, 0x05, 0xE8, 0x2C, 0x33, 0x01))

@_cdecl("LLVMFuzzerInitialize")
public func recoveryInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>) -> CInt {
    guard let directory = ProcessInfo.processInfo.environment["FUZZ_EXPORT_SEEDS"] else { return 0 }
    let created = Date(timeIntervalSince1970: 1_800_000_000.125)
    let bodyValue: JSONValue = [
        "model": "gpt-6-astra", "input": [["role": "user", "content": [["type": "input_text", "text": "Is it fine?"]]]],
        "tools": [], "tool_choice": "none", "store": false, "stream": true,
    ]
    let body = bodyValue.canonicalString()
    let format = AgentStructuredOutputFormat(
        name: "verdict", rawSchema: ["type": "object", "properties": ["ok": ["type": "boolean"]], "required": ["ok"], "additionalProperties": false]
    )
    var operation = RecoveryOperationRecord(
        operationID: fuzzOperationID, binding: "chatgpt:account-one", scope: "scope", hostJobID: "job-1", inputRevision: "r1", contractVersion: nil,
        request: .init(
            endpoint: "https://chatgpt.com/backend-api/codex", model: "gpt-6-astra", reasoningEffort: "low", instructions: "Answer.",
            format: format, body: body, digest: SHA256.hexDigest(of: Array(body.utf8))
        ),
        retryPolicy: AgentRecoveryRetryPolicy(), maximumAttempts: 3, expiresAt: nil, state: .prepared, attemptsUsed: 0,
        pendingAttemptID: nil, attempts: [], nextAttemptAt: nil, responseID: nil, lastSequenceNumber: nil, lastFailure: nil,
        blocker: nil, completedPayload: nil, createdAt: created, updatedAt: created, completedAt: nil,
        previousOperationID: nil, rootOperationID: nil, retryActionID: nil, successor: nil
    )
    var seeds: [(UInt8, [UInt8])] = []
    func add<R: RecoveryRecord>(_ selector: UInt8, _ record: R) {
        do throws(AgentRecoveryError) { seeds.append((selector, try RecoveryRecordCodec.encode(record))) } catch {}
    }
    add(0, operation)
    operation.state = .completed
    operation.completedPayload = #"{"ok":true}"#
    operation.responseID = "resp_1"
    operation.lastSequenceNumber = 42
    operation.completedAt = created.addingTimeInterval(2.5)
    add(0, operation)
    add(1, RecoveryControlRecord(operationID: fuzzOperationID, runID: fuzzOperationID, command: .suspended, updatedAt: created))
    add(2, RecoveryDispositionRecord(
        operationID: fuzzOperationID, binding: "chatgpt:account-one", scope: nil, state: .acknowledged, disposedAt: created,
        previousOperationID: nil, successorID: fuzzOperationID
    ))
    for (selector, bytes) in seeds {
        for flag: UInt8 in [0, 4] {
            let seed = [selector | flag] + bytes
            _ = FileManager.default.createFile(atPath: directory + "/record-" + SHA256.hexDigest(of: seed).prefix(12), contents: Data(seed))
        }
    }
    return 0
}

private func reseal(_ bytes: [UInt8]) -> [UInt8] {
    guard case .object(var object)? = try? JSONValue(parsing: bytes, options: JSONParsingOptions(maximumDepth: 64, maximumBytes: .max)) else { return bytes }
    object["operationID"] = .string(fuzzOperationID.uuidString)
    object["checksum"] = nil
    object["checksum"] = .string(SHA256.hexDigest(of: JSONValue.object(object).canonicalBytes()))
    return JSONValue.object(object).canonicalBytes()
}

private func exercise<R: RecoveryRecord & Equatable>(_ type: R.Type, _ bytes: [UInt8]) {
    let record: R
    do throws(AgentRecoveryError) {
        record = try RecoveryRecordCodec.decode(R.self, from: bytes, expecting: fuzzOperationID)
    } catch {
        check(error.code == .recordCorrupt || error.code == .unsupportedRecordVersion, "unexpected error code \(error.code)")
        return
    }
    do throws(AgentRecoveryError) {
        let encoded = try RecoveryRecordCodec.encode(record)
        let again = try RecoveryRecordCodec.decode(R.self, from: encoded, expecting: fuzzOperationID)
        check(again == record, "decode(encode(x)) != x for \(R.self)")
        let reencoded = try RecoveryRecordCodec.encode(again)
        check(reencoded == encoded, "encode is not stable for \(R.self):\n\(String(decoding: encoded, as: UTF8.self))\n\(String(decoding: reencoded, as: UTF8.self))")
    } catch {
        check(false, "a decoded \(R.self) does not survive encode and decode: \(error.code) \(error.message)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecovery(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let selector = data[0]
    var bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if selector & 4 != 0 { bytes = reseal(bytes) }
    switch selector & 3 {
    case 0: exercise(RecoveryOperationRecord.self, bytes)
    case 1: exercise(RecoveryControlRecord.self, bytes)
    default: exercise(RecoveryDispositionRecord.self, bytes)
    }
    return 0
}

private func check(_ condition: @autoclosure () throws -> Bool, _ message: @autoclosure () -> String) {
    if (try? condition()) != true {
        FileHandle.standardError.write(Data("recovery oracle failed: \(message())\n".utf8))
        abort()
    }
}
