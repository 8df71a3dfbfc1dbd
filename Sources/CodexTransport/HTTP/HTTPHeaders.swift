/// HTTP header fields: ordered, repeatable, looked up case-insensitively.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One header field.
    public struct Field: Sendable, Hashable {
        /// The name as written.
        public var name: String
        /// The value.
        public var value: String

        /// Creates a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields in order.
    public private(set) var fields: [Field]

    /// Creates headers from fields.
    public init(_ fields: [Field] = []) {
        self.fields = fields
    }

    /// Creates headers from a literal.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// The first value for `name` (case-insensitive); setting replaces every field with that name.
    public subscript(name: String) -> String? {
        get { fields.first { Self.same($0.name, name) }?.value }
        set {
            fields.removeAll { Self.same($0.name, name) }
            if let newValue { fields.append(Field(name: name, value: newValue)) }
        }
    }

    /// Every value for `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.same($0.name, name) }.map(\.value)
    }

    /// Appends a field (keeping existing ones with the same name).
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Iterates the fields.
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    static func same(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && lhs.lowercased() == rhs.lowercased()
    }

    /// A copy safe to log: values of `Authorization`, cookies, account and API-key headers are replaced by `<redacted>`.
    public var redacted: HTTPHeaders {
        let secret: Set<String> = ["authorization", "cookie", "set-cookie", "chatgpt-account-id", "x-api-key", "openai-api-key", "proxy-authorization"]
        return HTTPHeaders(fields.map { secret.contains($0.name.lowercased()) ? Field(name: $0.name, value: "<redacted>") : $0 })
    }
}
