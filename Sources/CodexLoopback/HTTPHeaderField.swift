/// One HTTP header line: a name and a value, exactly as sent or received (no case folding, no trimming
/// beyond the optional whitespace around the value).
public struct HTTPHeaderField: Sendable, Hashable {
    /// The header name as written on the wire, for example `Content-Type`.
    public let name: String
    /// The header value with surrounding spaces and tabs removed.
    public let value: String

    /// Creates a header line.
    /// - Parameters:
    ///   - name: The header name, written as given.
    ///   - value: The header value, written as given.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Whether this header's name equals `other`, ignoring ASCII case.
    func hasName(_ other: String) -> Bool {
        // Byte by byte with ASCII letters folded: no lowercased copies.
        name.utf8.count == other.utf8.count && zip(name.utf8, other.utf8).allSatisfy { ASCII.lowercased($0) == ASCII.lowercased($1) }
    }
}

extension [HTTPHeaderField] {
    /// The value of the first header named `name` (ASCII case-insensitive), or nil.
    func firstValue(named name: String) -> String? {
        first { $0.hasName(name) }?.value
    }

    /// Whether some `name` header lists `token` among its comma-separated values (case-insensitive),
    /// as in `Connection: keep-alive, close`.
    func containsToken(_ token: String, inHeader name: String) -> Bool {
        let wanted = token.lowercased()
        return contains { field in
            field.hasName(name)
                && field.value.split(separator: ",").contains {
                    $0.trimmingASCIISpaces().lowercased() == wanted
                }
        }
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and horizontal tabs (HTTP "optional whitespace").
    func trimmingASCIISpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[start...end])
    }
}
