import CodexCore
import CodexSchema
import Foundation

/// A record kept in the store: it names its format version and its operation, and can check its own
/// invariants after decoding.
protocol RecoveryRecord: Codable, Sendable {
    /// The format versions this build reads.
    static var supportedVersions: ClosedRange<Int> { get }
    /// The file-name suffix after the operation ID (`.json`, `.control.json`, …).
    static var fileSuffix: String { get }
    /// The record's format version.
    var version: Int { get }
    /// The operation the record belongs to.
    var operationID: UUID { get }
    /// Throws a description of the first broken invariant.
    func checkInvariants() throws(RecoveryRecordInvariantError)
}

/// A record that decoded but contradicts itself.
struct RecoveryRecordInvariantError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Encodes records as canonical JSON with a `checksum` member (SHA-256 of the canonical record without
/// it), and decodes them fail-closed: the bytes are parsed strictly (duplicate keys, invalid UTF-8, huge
/// numbers, deep nesting are errors), the format `version` is read before anything else, the checksum
/// must match (so a flipped bit anywhere is caught), the operation ID must be the one the file is named
/// for, and the record's own invariants must hold. Every failure is a typed error; the file is never
/// modified.
enum RecoveryRecordCodec {
    static func encode<R: RecoveryRecord>(_ record: R) throws(AgentRecoveryError) -> [UInt8] {
        do {
            // Straight to a JSON value (no text round trip); dates encode as their own `Encodable` (seconds
            // since 2001), which is what `JSONDecoder`'s default strategy reads back.
            let value = try JSONValueEncoder().encode(record)
            guard case .object(var object) = value else { throw AgentRecoveryError(code: .stateInvalid, message: "a record is not an object") }
            object["checksum"] = .string(SHA256.hexDigest(of: JSONValue.object(object).canonicalBytes()))
            return JSONValue.object(object).canonicalBytes()
        } catch {
            throw AgentRecoveryError(code: .stateInvalid, message: "a record could not be encoded", operationID: record.operationID, underlying: error)
        }
    }

    static func decode<R: RecoveryRecord>(_ type: R.Type, from bytes: [UInt8], expecting operationID: UUID) throws(AgentRecoveryError) -> R {
        func corrupt(_ message: String, _ cause: (any Error)? = nil) -> AgentRecoveryError {
            AgentRecoveryError(code: .recordCorrupt, message: message, operationID: operationID, underlying: cause)
        }
        // The envelope's parse is decoded in place: no second parse, no text round trip. The decoder
        // follows `JSONDecoder`'s default strategies, which the encoder's output is written for.
        let value = try verifiedValue(R.self, bytes, expecting: operationID)
        let record: R
        do {
            record = try JSONValueDecoder().decode(R.self, from: value)
        } catch {
            throw corrupt("a record does not have the expected fields", error)
        }
        do {
            try record.checkInvariants()
        } catch {
            throw corrupt("a record is inconsistent: \(error.message)", error)
        }
        return record
    }

    /// The envelope checks without decoding the fields: strict parse, a supported version, a matching
    /// checksum and the right operation. A record passing them is byte for byte what this build wrote,
    /// which is what inventory needs to tell readable from unreadable records quickly.
    static func verify<R: RecoveryRecord>(_ type: R.Type, _ bytes: [UInt8], expecting operationID: UUID) throws(AgentRecoveryError) {
        _ = try verifiedValue(R.self, bytes, expecting: operationID)
    }

    /// ``verify(_:_:expecting:)``, returning the parsed record (its `checksum` member included).
    private static func verifiedValue<R: RecoveryRecord>(
        _ type: R.Type, _ bytes: [UInt8], expecting operationID: UUID
    ) throws(AgentRecoveryError) -> JSONValue {
        func corrupt(_ message: String, _ cause: (any Error)? = nil) -> AgentRecoveryError {
            AgentRecoveryError(code: .recordCorrupt, message: message, operationID: operationID, underlying: cause)
        }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes, options: JSONParsingOptions(maximumDepth: 64, maximumBytes: .max))
        } catch {
            throw corrupt("a record is not valid JSON (\(error.code.rawValue) at byte \(error.byteOffset ?? 0))", error)
        }
        guard case .object(let object) = value else { throw corrupt("a record is not a JSON object") }
        guard case .number(let number)? = object["version"], let version = number.intValue else {
            throw corrupt("a record has no integer format version")
        }
        guard R.supportedVersions.contains(version) else {
            throw AgentRecoveryError(
                code: .unsupportedRecordVersion,
                message: "a record has format version \(version), which this build does not read; it is left untouched",
                operationID: operationID
            )
        }
        guard case .string(let checksum)? = object["checksum"] else { throw corrupt("a record has no checksum") }
        var unsummed = object
        unsummed["checksum"] = nil
        guard SHA256.hexDigest(of: JSONValue.object(unsummed).canonicalBytes()) == checksum else {
            throw corrupt("a record does not match its checksum")
        }
        guard case .string(let recordOperation)? = object["operationID"], UUID(uuidString: recordOperation) == operationID else {
            throw corrupt("a record belongs to another operation")
        }
        return value
    }
}
