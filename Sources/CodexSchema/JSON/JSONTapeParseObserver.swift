/// What ``JSONTapeParser/parseDocument(observing:)`` tells as it goes. Every method is called only
/// when ``isActive`` is true, so the plain parse (``NoParseObserver``) compiles to no calls at all.
protocol JSONTapeParseObserver {
    /// Whether the parser should call the observer.
    static var isActive: Bool { get }
    /// A value (scalar or container) starts; `mark` is where the tape ends before its first entry.
    mutating func valueWillStart(_ mark: JSONTape.Mark)
    /// A container's entry was appended at `entry`; `depth` containers enclose it.
    mutating func containerDidOpen(isObject: Bool, entry: Int, depth: Int) throws(CodexSchemaError)
    /// An object key was parsed onto the tape at `entry` (its opening quote at `offset`).
    /// - Returns: A mark to cut the tape back to (the key is no longer needed), or `nil`.
    mutating func keyDidParse(entry: Int, offset: Int, tape: inout JSONTape) throws(CodexSchemaError) -> JSONTape.Mark?
    /// The container at `entry` closes with `count` elements or members.
    /// - Returns: Whether the observer checked duplicate keys itself (then the parser does not).
    mutating func containerWillClose(entry: Int, count: UInt32, tape: inout JSONTape) throws(CodexSchemaError) -> Bool
    /// The value at `entry` is complete; `depth` containers enclose it (0 for the document's root).
    /// - Returns: A mark to cut the tape back to, or `nil`.
    mutating func valueDidComplete(entry: Int, depth: Int, tape: inout JSONTape) throws(CodexSchemaError) -> JSONTape.Mark?
}

/// The observer of a plain parse: never called.
struct NoParseObserver: JSONTapeParseObserver {
    static var isActive: Bool { false }
    func valueWillStart(_ mark: JSONTape.Mark) {}
    func containerDidOpen(isObject: Bool, entry: Int, depth: Int) throws(CodexSchemaError) {}
    func keyDidParse(entry: Int, offset: Int, tape: inout JSONTape) throws(CodexSchemaError) -> JSONTape.Mark? { nil }
    func containerWillClose(entry: Int, count: UInt32, tape: inout JSONTape) throws(CodexSchemaError) -> Bool { false }
    func valueDidComplete(entry: Int, depth: Int, tape: inout JSONTape) throws(CodexSchemaError) -> JSONTape.Mark? { nil }
}
