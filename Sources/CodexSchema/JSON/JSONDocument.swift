/// A parsed JSON text in CodexKit's compact internal form.
///
/// Parsing into a `JSONDocument` runs the same strict parser as ``JSONValue/init(parsing:options:)``
/// but builds no tree of values: the document is a flat array of entries over its own copy of the text.
/// Validate it as often as needed with ``JSONSchemaValidator/validate(_:mode:)-(JSONDocument,_)``, and
/// read it as a ``JSONValue`` only when you need one.
///
/// ```swift
/// let document = try JSONDocument(parsing: Array(modelOutput.utf8))
/// if try validator.isValid(document) {
///     let value = document.value
/// }
/// ```
public struct JSONDocument: Sendable {
    let text: [UInt8]
    let tape: JSONTape

    /// Parses UTF-8 JSON text strictly.
    ///
    /// - Parameters:
    ///   - bytes: The text.
    ///   - options: Depth and size limits.
    /// - Throws: ``CodexSchemaError`` with a `json_*` code and the byte offset.
    public init(parsing bytes: some Collection<UInt8>, options: JSONParsingOptions = .init()) throws(CodexSchemaError) {
        let text = Array(bytes)
        self.text = text
        self.tape = try text.withUnsafeBufferPointer { JSONTape.parse($0, options: options) }.get()
    }

    /// A document holding `value`.
    public init(_ value: JSONValue) {
        text = []
        tape = JSONTape(encoding: value)
    }

    /// The document as a ``JSONValue`` (built on each call).
    public var value: JSONValue {
        withView { $0.value(at: 0) }
    }

    /// The size of the parsed text in bytes (0 for a document built from a value).
    public var byteCount: Int { text.count }

    func withView<Output, Failure: Error>(_ body: (JSONTapeView) throws(Failure) -> Output) throws(Failure) -> Output {
        let outcome: Result<Output, Failure> = text.withUnsafeBufferPointer { source in
            do throws(Failure) {
                return .success(try tape.withView(source: source, body))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }
}
