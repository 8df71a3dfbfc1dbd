/// A statement parameter. Numbers, text and booleans travel as text (the server parses them into the
/// column's type); bytes travel in binary, unchanged.
enum PostgresValue: Sendable {
    case null
    case text(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case bytes([UInt8])

    /// The text form of a non-binary value (`nil` for null and bytes).
    var text: String? {
        switch self {
        case .null, .bytes: nil
        case .text(let text): text
        case .integer(let value): String(value)
        // Swift's shortest round-trip form, which PostgreSQL reads back to the same double.
        case .double(let value): value.description
        case .bool(let value): value ? "t" : "f"
        }
    }
}
