/// The error of loading an ``AgentPriceTable``: a stable code, the entry it is about, and a log-safe
/// message that names the entry's index and the field, never the file's content.
///
/// ```swift
/// do {
///     prices = try AgentPriceTable(json: bytes)
/// } catch {
///     print(error.code, error.entryIndex ?? -1, error.field ?? "")   // price_table_entry_invalid 2 output
/// }
/// ```
public struct AgentPriceTableError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable snake_case code. Unknown codes keep their raw value.
    public struct Code: OpenVocabulary, ExpressibleByStringLiteral {
        /// The code text.
        public let rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Creates a code from a literal.
        public init(stringLiteral value: String) { rawValue = value }

        /// The file is not JSON, or not an object with `version` and `prices` (an array) and nothing else.
        public static let malformed: Code = "price_table_malformed"
        /// The file's `version` is not one this build reads (it reads 1).
        public static let unsupportedVersion: Code = "price_table_unsupported_version"
        /// One entry of `prices` is wrong: not an object, a missing or invalid field, an unknown field, or
        /// the same model and date as an earlier entry (see ``AgentPriceTableError/entryIndex`` and
        /// ``AgentPriceTableError/field``).
        public static let entryInvalid: Code = "price_table_entry_invalid"
    }

    /// The stable code.
    public var code: Code
    /// The 0-based index of the entry in `prices`, for ``Code/entryInvalid``.
    public var entryIndex: Int?
    /// The field of the entry that is wrong (`model`, `effective_from`, `currency`, `input`,
    /// `cached_input`, `output`, `reasoning_output`), when one is.
    public var field: String?
    /// A short, log-safe explanation.
    public var message: String

    /// Creates an error.
    public init(code: Code, entryIndex: Int? = nil, field: String? = nil, message: String) {
        self.code = code
        self.entryIndex = entryIndex
        self.field = field
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }
}
