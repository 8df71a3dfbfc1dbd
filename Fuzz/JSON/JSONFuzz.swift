// libFuzzer target `json`: the strict JSON parser of CodexSchema against Foundation's JSONSerialization.
//
// Oracle, for every input:
//  1. `JSONValue(parsing:)` and `JSONDocument(parsing:)` agree (both accept with equal values, or both
//     reject with the same error code and byte offset).
//  2. An accepted value survives its own serializers: parsing `canonicalBytes()` and `compactBytes()`
//     gives the same value back, and the document's canonical bytes (written from the parse tape) are
//     the value's canonical bytes.
//  3. Accept/reject agrees with `JSONSerialization` (with `.fragmentsAllowed`: RFC 8259 allows scalars
//     at the top level, and so does CodexSchema), and accepted values agree, except for the legitimate
//     differences listed in `allowedDisagreement` below (each one is a rule CodexSchema adopts on
//     purpose; Docs/Reliability.md lists them under "Coverage-guided fuzzing").
import CodexSchema
import Foundation

/// The depth limit the harness gives CodexSchema: below Foundation's fixed nesting limit (512), so a
/// deep input Foundation rejects is always rejected here too.
private let depthLimit = 400

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let options = JSONParsingOptions(maximumDepth: depthLimit, maximumBytes: 1 << 20)

    let ours: Result<JSONValue, CodexSchemaError>
    do throws(CodexSchemaError) { ours = .success(try JSONValue(parsing: bytes, options: options)) } catch { ours = .failure(error) }

    // 1. The value parser and the document (tape) parser are the same parser.
    let document: Result<JSONValue, CodexSchemaError>
    do throws(CodexSchemaError) { document = .success(try JSONDocument(parsing: bytes, options: options).value) } catch { document = .failure(error) }
    switch (ours, document) {
    case (.success(let left), .success(let right)):
        check(left == right, "JSONValue and JSONDocument parse to different values")
    case (.failure(let left), .failure(let right)):
        check(left.code == right.code && left.byteOffset == right.byteOffset, "JSONValue (\(left.code)) and JSONDocument (\(right.code)) fail differently")
    default:
        check(false, "JSONValue and JSONDocument disagree on accept/reject")
    }

    // 2. Serializer round trips.
    if case .success(let value) = ours {
        if let parsed = try? JSONDocument(parsing: bytes, options: options) {
            check(parsed.canonicalBytes() == value.canonicalBytes(), "the document's canonical bytes differ from the value's")
        }
        for (name, text) in [("canonical", value.canonicalBytes()), ("compact", value.compactBytes())] {
            do throws(CodexSchemaError) {
                let again = try JSONValue(parsing: text, options: JSONParsingOptions(maximumDepth: depthLimit + 1, maximumBytes: .max))
                check(again == value, "the \(name) serialization parses to a different value")
                check(again.canonicalBytes() == value.canonicalBytes(), "the \(name) serialization is not stable")
            } catch {
                check(false, "the \(name) serialization does not parse: \(error.code)")
            }
        }
    }

    // 3. Differential against Foundation.
    let theirs: Any?
    do {
        theirs = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
    } catch {
        theirs = nil
    }
    switch (ours, theirs) {
    case (.success(let value), .some(let object)):
        if let difference = compare(value, object, path: "") {
            check(false, "CodexSchema and Foundation parse to different values at \(difference)")
        }
    case (.success(let value), .none):
        check(foundationRejectsValidly(value), "CodexSchema accepts what Foundation rejects")
    case (.failure(let error), .some):
        check(allowedDisagreement(error, bytes), "CodexSchema rejects (\(error.code) at \(error.byteOffset ?? -1)) what Foundation accepts")
    case (.failure, .none):
        break
    }
    return 0
}

/// The rejections CodexSchema makes on purpose where Foundation accepts.
private func allowedDisagreement(_ error: CodexSchemaError, _ bytes: [UInt8]) -> Bool {
    switch error.code {
    // Duplicate keys: RFC 8259 leaves their meaning open; CodexSchema rejects them (Foundation keeps one).
    case .jsonDuplicateKey: return true
    // Numbers outside the exact range CodexSchema keeps (huge exponents, overlong digit strings);
    // Foundation rounds them to a Double (possibly infinity or zero).
    case .jsonNumberOutOfRange: return true
    // Lone or mispaired UTF-16 surrogate escapes (`"\uD800"`): not a Unicode string, so CodexSchema
    // rejects them; Foundation substitutes U+FFFD.
    case .jsonLoneSurrogate: return true
    // A comma before `}` or `]`: RFC 8259's grammar has none; Foundation's parser on Linux tolerates it.
    case .jsonTrailingComma: return true
    // The depth limit given above (Foundation's own is 512).
    case .jsonDepthLimitExceeded: return true
    default: break
    }
    // Foundation detects UTF-16 and UTF-32 text (by a byte-order mark or NUL bytes among the first four)
    // and skips a UTF-8 byte-order mark; CodexSchema reads UTF-8 JSON text only, as RFC 8259 section 8.1
    // requires for text exchanged between systems.
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) || bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) { return true }
    if bytes.prefix(4).contains(0) { return true }
    return false
}

/// Foundation rejects a number beyond Double's range ("not representable in Swift"); CodexSchema keeps
/// such numbers exactly (within its own digit and exponent bounds). Any other rejection of text
/// CodexSchema accepts is reported (the harness's depth limit keeps Foundation's own out of reach).
private func foundationRejectsValidly(_ value: JSONValue) -> Bool {
    switch value {
    case .number(let number): return number.doubleValue.isInfinite
    case .array(let elements): return elements.contains(where: foundationRejectsValidly)
    case .object(let members): return members.values.contains(where: foundationRejectsValidly)
    default: return false
    }
}

/// The first path where the two parses differ, or `nil`.
private func compare(_ value: JSONValue, _ object: Any, path: String) -> String? {
    switch value {
    case .null:
        return object is NSNull ? nil : path
    case .bool(let flag):
        guard let number = object as? NSNumber, isBoolean(number) else { return path + " (bool)" }
        return number.boolValue == flag ? nil : path
    case .number(let number):
        guard let other = object as? NSNumber, !isBoolean(other) else { return path + " (number)" }
        return numbersAgree(number, other) ? nil : path + " (number \(number.canonicalText) vs \(other))"
    case .string(let text):
        guard let other = object as? String else { return path + " (string)" }
        // Scalar by scalar: String's == is canonical equivalence, which would hide a real difference.
        return Array(text.unicodeScalars) == Array(other.unicodeScalars) ? nil : path + " (string)"
    case .array(let elements):
        guard let other = object as? [Any], other.count == elements.count else { return path + " (array)" }
        for (index, element) in elements.enumerated() {
            if let difference = compare(element, other[index], path: path + "/\(index)") { return difference }
        }
        return nil
    case .object(let members):
        guard let other = object as? [String: Any] else { return path + " (object)" }
        // Foundation's keys are Swift Strings, which compare by canonical equivalence: two keys that
        // differ only in Unicode normalization (U+00E9 and U+0065 U+0301) are one key there and two here.
        let distinctKeys = Set(members.keys)
        guard other.count == distinctKeys.count else {
            return path + " (object has \(members.count) members, Foundation \(other.count))"
        }
        if distinctKeys.count != members.count { return nil }
        for member in members.members {
            guard let theirs = other[member.key] else { return path + "/" + member.key + " (missing)" }
            if let difference = compare(member.value, theirs, path: path + "/" + member.key) { return difference }
        }
        return nil
    }
}

private func isBoolean(_ number: NSNumber) -> Bool {
    // Foundation's Booleans are CFBoolean values, whose Objective-C type code is `c` (char); the parser
    // never makes a char number otherwise.
    String(cString: number.objCType) == "c"
}

/// Numbers agree when they are the same integer, or the same nearest Double.
private func numbersAgree(_ ours: JSONNumber, _ theirs: NSNumber) -> Bool {
    if theirs is NSDecimalNumber {
        // Integers beyond UInt64 come back as NSDecimalNumber, which keeps 38 significant digits: agree
        // to its precision.
        let left = ours.doubleValue
        let right = theirs.doubleValue
        return left == right || abs(left - right) <= 1e-12 * max(abs(left), abs(right))
    }
    switch String(cString: theirs.objCType) {
    case "Q":
        return ours.canonicalText == String(theirs.uint64Value)
    case "d", "f":
        // Foundation reads non-integers (and integers written with a fraction or an exponent) as the
        // nearest Double; CodexSchema keeps them exact, and its `doubleValue` is correctly rounded.
        return ours.doubleValue == theirs.doubleValue
    default:
        return ours.int64Value == theirs.int64Value
    }
}

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        FileHandle.standardError.write(Data("json oracle failed: \(message())\n".utf8))
        abort()
    }
}
