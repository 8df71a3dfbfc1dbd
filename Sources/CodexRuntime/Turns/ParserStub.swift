import CodexCore
import CodexSchema
struct StructuredStreamParser: Sendable {
    static let openMarker = "<codexkit_structured_output>"
    static let closeMarker = "</codexkit_structured_output>"
    init(formatName: String, validator: JSONSchemaValidator, maximumPayloadBytes: Int = 4 * 1024 * 1024) {}
    mutating func feed(_ delta: String) throws(AgentRuntimeError) -> [StructuredStreamOutput] { [] }
    mutating func finish() throws(AgentRuntimeError) -> [StructuredStreamOutput] { [] }
    var visibleText: String { "" }
    var committed: StructuredStreamCommit? { nil }
    static func frameInstructions(formatName: String, schema: JSONValue) -> String { "" }
}
enum StructuredStreamOutput: Sendable, Equatable { case text(String); case partial(JSONValue, bytes: [UInt8]); case committed(StructuredStreamCommit) }
struct StructuredStreamCommit: Sendable, Equatable { let value: JSONValue; let bytes: [UInt8] }
