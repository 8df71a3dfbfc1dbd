/// The one error type of `CodexSchema`: JSON parsing, schema compilation and validation-bound failures.
///
/// Every error carries a stable snake_case ``code`` that callers can switch on, a short log-safe
/// ``message`` and, where it applies, the byte offset in the JSON input or the JSON pointer of the
/// offending schema keyword. Descriptions never contain the parsed text itself: model output and
/// prompts are not copied into errors.
///
/// ```swift
/// do {
///     let value = try JSONValue(parsing: "[1, 2,]")
/// } catch let error as CodexSchemaError where error.code == .jsonTrailingComma {
///     print(error.byteOffset ?? -1) // 5
/// }
/// ```
public struct CodexSchemaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, open error code. Compare against the static members; unknown codes keep their raw value.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The stable snake_case string, e.g. `json_duplicate_key`.
        public let rawValue: String

        /// Creates a code from its raw string.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Creates a code from a string literal.
        public init(stringLiteral value: String) { self.rawValue = value }

        /// The raw string.
        public var description: String { rawValue }

        /// The input ended inside a value.
        public static let jsonUnexpectedEnd: Code = "json_unexpected_end"
        /// A byte that cannot start or continue the value at this position.
        public static let jsonUnexpectedCharacter: Code = "json_unexpected_character"
        /// A comma directly before `]` or `}`.
        public static let jsonTrailingComma: Code = "json_trailing_comma"
        /// A number with a superfluous leading zero, such as `01`.
        public static let jsonLeadingZero: Code = "json_leading_zero"
        /// A malformed number, such as `1.`, `-` or `1e`.
        public static let jsonInvalidNumber: Code = "json_invalid_number"
        /// A number whose exponent is beyond the supported range (±1,000,000,000).
        public static let jsonNumberOutOfRange: Code = "json_number_out_of_range"
        /// An unescaped control character (U+0000…U+001F) inside a string.
        public static let jsonControlCharacter: Code = "json_control_character"
        /// A backslash escape that RFC 8259 does not define, or a malformed `\u` escape.
        public static let jsonInvalidEscape: Code = "json_invalid_escape"
        /// A `\u` escape of a UTF-16 surrogate without its partner.
        public static let jsonLoneSurrogate: Code = "json_lone_surrogate"
        /// Bytes that are not well-formed UTF-8.
        public static let jsonInvalidUTF8: Code = "json_invalid_utf8"
        /// An object that names the same key twice.
        public static let jsonDuplicateKey: Code = "json_duplicate_key"
        /// Arrays and objects nested deeper than the configured limit.
        public static let jsonDepthLimitExceeded: Code = "json_depth_limit_exceeded"
        /// Input larger than the configured limit.
        public static let jsonSizeLimitExceeded: Code = "json_size_limit_exceeded"
        /// Non-whitespace bytes after the top-level value.
        public static let jsonTrailingData: Code = "json_trailing_data"
        /// A schema keyword outside the supported subset, or a `$ref` that is not a root-local pointer.
        public static let unsupportedSchemaKeyword: Code = "unsupported_schema_keyword"
        /// A supported keyword with a value of the wrong shape, or an unresolvable `$ref`.
        public static let invalidSchema: Code = "invalid_schema"
        /// Schema nesting deeper than the configured limit.
        public static let schemaDepthLimitExceeded: Code = "schema_depth_limit_exceeded"
        /// More schema nodes than the configured limit.
        public static let schemaNodeLimitExceeded: Code = "schema_node_limit_exceeded"
        /// Validation needed more work than the configured bound (pathological `anyOf`/`oneOf`/`$ref`).
        public static let schemaWorkLimitExceeded: Code = "schema_work_limit_exceeded"
    }

    /// The stable error code.
    public let code: Code
    /// A short, log-safe explanation. It names keywords and limits, never input text.
    public let message: String
    /// The byte offset in the JSON input where the problem was detected, for parse errors.
    public let byteOffset: Int?
    /// The JSON pointer (RFC 6901, no leading `#`) of the offending schema keyword, for schema errors.
    public let schemaPointer: String?
    /// For ``Code/unsupportedSchemaKeyword``: the pointer of every unsupported keyword found, in a stable order.
    public let unsupportedLocations: [String]

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The stable code.
    ///   - message: A short log-safe explanation.
    ///   - byteOffset: The byte offset in the JSON input, for parse errors.
    ///   - schemaPointer: The JSON pointer of the offending schema keyword, for schema errors.
    ///   - unsupportedLocations: Every unsupported keyword's pointer, for `unsupported_schema_keyword`.
    public init(
        code: Code,
        message: String,
        byteOffset: Int? = nil,
        schemaPointer: String? = nil,
        unsupportedLocations: [String] = []
    ) {
        self.code = code
        self.message = message
        self.byteOffset = byteOffset
        self.schemaPointer = schemaPointer
        self.unsupportedLocations = unsupportedLocations
    }

    /// `code: message`, plus the byte offset or schema pointer when present. Log-safe.
    public var description: String {
        var text = "\(code.rawValue): \(message)"
        if let byteOffset { text += " (at byte \(byteOffset))" }
        if let schemaPointer { text += " (at schema \"\(schemaPointer)\")" }
        return text
    }
}
