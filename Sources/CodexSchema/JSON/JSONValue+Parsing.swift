extension JSONValue {
    /// Parses one JSON text (RFC 8259) from UTF-8 bytes, strictly.
    ///
    /// Rejected with a typed ``CodexSchemaError`` carrying the byte offset: trailing commas, leading
    /// zeros, control characters in strings, invalid UTF-8, lone surrogate escapes, duplicate object
    /// keys, a byte-order mark, anything after the value, nesting deeper than
    /// ``JSONParsingOptions/maximumDepth`` and input larger than ``JSONParsingOptions/maximumBytes``.
    ///
    /// ```swift
    /// let value = try JSONValue(parsing: Array(#"{"a":[1,2.50,"x"]}"#.utf8))
    /// ```
    ///
    /// - Parameters:
    ///   - bytes: The UTF-8 text.
    ///   - options: Depth and size limits.
    /// - Throws: ``CodexSchemaError`` with a `json_*` code.
    public init(parsing bytes: some Collection<UInt8>, options: JSONParsingOptions = .init()) throws(CodexSchemaError) {
        let result: Result<JSONValue, CodexSchemaError>? = bytes.withContiguousStorageIfAvailable { buffer in
            JSONValue.parse(buffer, options: options)
        }
        if let result {
            self = try result.get()
        } else {
            let copy = Array(bytes)
            self = try copy.withUnsafeBufferPointer { JSONValue.parse($0, options: options) }.get()
        }
    }

    /// Parses one JSON text (RFC 8259) from a string, strictly. See the byte-collection overload.
    ///
    /// - Throws: ``CodexSchemaError`` with a `json_*` code.
    public init(parsing text: String, options: JSONParsingOptions = .init()) throws(CodexSchemaError) {
        var text = text
        self = try text.withUTF8 { JSONValue.parse($0, options: options) }.get()
    }

    static func parse(_ buffer: UnsafeBufferPointer<UInt8>, options: JSONParsingOptions) -> Result<JSONValue, CodexSchemaError> {
        JSONTape.parse(buffer, options: options).map { tape in
            tape.withView(source: buffer) { $0.value(at: 0) }
        }
    }
}
