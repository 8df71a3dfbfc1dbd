/// An incremental structural scanner over a JSON text that is still arriving: it tracks the last *safe
/// cut*, a byte position after which the text can be closed into a complete JSON value by appending
/// closing brackets.
///
/// The scanner keeps only string/escape state, whether an unquoted token (number, `true`, `false`,
/// `null`) is open, whether the next string in the innermost object is a key, and the container stack.
/// Each byte is examined once, so scanning an N-byte text costs O(N) however it is chunked.
///
/// A safe cut is recorded
/// - right after an opening `{` or `[`,
/// - right after a complete value in value position: a closed string that is not an object key, a
///   closed container, or an unquoted token once the delimiter that ends it arrives (a number is only
///   complete when something follows it: `12` may still become `123`).
///
/// Cuts therefore never include a dangling key, a `:` or a trailing `,`. Every push and pop of the
/// container stack is itself a safe cut, so the stack at the last cut is always the current stack and
/// ``closers`` describes it. For well-formed input, `text[..<safeCut] + closers` is a complete JSON
/// text; malformed input only produces snapshots that fail to parse.
///
/// ```swift
/// var scanner = PartialJSONScanner()
/// scanner.scan(Array(#"{"a": [1, {"b": tr"#.utf8)[...])
/// // safeCut is after the inner "{", closers == Array("}]}".utf8): {"a": [1, {}]}
/// ```
struct PartialJSONScanner: Sendable {
    /// The byte position (from the start of the text) of the last safe cut; 0 until the first one.
    private(set) var safeCut = 0
    /// The number of bytes scanned so far.
    private(set) var scannedCount = 0
    /// The closing bytes (`}` or `]`) of the open containers, innermost last.
    private var stack: [UInt8] = []
    /// Whether the scanner is inside a string.
    private var inString = false
    /// Whether the previous byte inside a string was an unescaped backslash.
    private var escaped = false
    /// Whether the open string is an object key.
    private var stringIsKey = false
    /// Whether an unquoted token (number or literal) is open.
    private var inToken = false
    /// Whether the innermost object expects a key next (after `{` or `,`).
    private var expectsKey = false

    /// Creates a scanner at the start of a text.
    init() {}

    /// The nesting depth at the last safe cut (the number of open containers).
    var depth: Int { stack.count }

    /// The bytes that close every container open at the last safe cut, innermost first.
    var closers: [UInt8] { stack.reversed() }

    /// Scans the next bytes of the text.
    ///
    /// - Parameter bytes: The bytes following everything scanned so far.
    mutating func scan(_ bytes: ArraySlice<UInt8>) {
        for byte in bytes {
            consume(byte, at: scannedCount)
            scannedCount += 1
        }
    }

    /// Advances the state over one byte at `position`, moving ``safeCut`` when a value completes.
    private mutating func consume(_ byte: UInt8, at position: Int) {
        if inString {
            if escaped {
                escaped = false
            } else if byte == Self.backslash {
                escaped = true
            } else if byte == Self.quote {
                inString = false
                if !stringIsKey { safeCut = position + 1 }
            }
            return
        }
        if inToken {
            guard Self.endsToken(byte) else { return }
            inToken = false
            safeCut = position
        }
        switch byte {
        case Self.quote:
            inString = true
            stringIsKey = stack.last == Self.closeBrace && expectsKey
        case Self.openBrace:
            stack.append(Self.closeBrace)
            expectsKey = true
            safeCut = position + 1
        case Self.openBracket:
            stack.append(Self.closeBracket)
            safeCut = position + 1
        case Self.closeBrace, Self.closeBracket:
            _ = stack.popLast()
            expectsKey = false
            safeCut = position + 1
        case Self.colon:
            expectsKey = false
        case Self.comma:
            expectsKey = stack.last == Self.closeBrace
        case _ where Self.isWhitespace(byte):
            break
        default:
            inToken = true
        }
    }

    /// Whether `byte` ends an unquoted token: JSON whitespace or a structural character.
    private static func endsToken(_ byte: UInt8) -> Bool {
        isWhitespace(byte) || byte == comma || byte == colon || byte == closeBrace || byte == closeBracket
            || byte == openBrace || byte == openBracket || byte == quote
    }

    /// Whether `byte` is JSON whitespace (space, tab, line feed, carriage return).
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// The byte `"`.
    private static let quote = UInt8(ascii: "\"")
    /// The byte `\` (backslash).
    private static let backslash = UInt8(ascii: "\\")
    /// The byte `{`.
    private static let openBrace = UInt8(ascii: "{")
    /// The byte `}`.
    private static let closeBrace = UInt8(ascii: "}")
    /// The byte `[`.
    private static let openBracket = UInt8(ascii: "[")
    /// The byte `]`.
    private static let closeBracket = UInt8(ascii: "]")
    /// The byte `:`.
    private static let colon = UInt8(ascii: ":")
    /// The byte `,`.
    private static let comma = UInt8(ascii: ",")
}
