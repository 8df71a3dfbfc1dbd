@testable import CodexRuntime
import CodexCore
import CodexSchema
import Testing

/// The argument check every call passes before its executor runs, against hostile input.
@Suite struct ToolRegistryTests {
    private let registry: ToolRegistry
    private let entry: ToolRegistry.Entry

    init() throws {
        let tool = AgentTool(
            name: "order", description: "Orders.", schema: .object(properties: ["sku": .string(), "quantity": .integer])
        ) { (_: OrderInput, context) in context.success("ok") }
        registry = try ToolRegistry([tool])
        entry = try #require(registry.entry(named: "order"))
    }

    private func refusal(_ arguments: String) -> String? {
        if case .invalid(let reason) = registry.check(arguments, for: entry) { return reason }
        return nil
    }

    @Test func validArgumentsPassParsed() throws {
        guard case .valid(let value) = registry.check(#"{"sku":"A-1","quantity":2}"#, for: entry) else {
            Issue.record("refused")
            return
        }
        #expect(value == ["sku": "A-1", "quantity": 2])
    }

    @Test func wrongTypesAndMissingPropertiesNameTheKeywordAndPointer() {
        #expect(refusal(#"{"sku":5,"quantity":2}"#)
            == "The arguments for 'order' do not match its input schema: /sku: type: expected string, found integer. The tool was not run.")
        #expect(refusal(#"{"sku":"A-1"}"#)?.contains("(root): required:") == true)
        #expect(refusal(#"{"sku":"A-1","quantity":2,"extra":true}"#)?.contains("additionalProperties") == true)
    }

    @Test func textThatIsNotJSONIsRefused() {
        #expect(refusal("sku=A-1") == "The arguments for 'order' are not valid JSON (json_unexpected_character); the tool was not run.")
        #expect(refusal(#"{"sku":"A-1","#)?.hasPrefix("The arguments for 'order' are not valid JSON") == true)
    }

    @Test func hugeAndDeepArgumentsAreRefusedWithoutParsingThemWhole() {
        let huge = #"{"sku":""# + String(repeating: "x", count: 10 * 1024 * 1024) + #"","quantity":1}"#
        #expect(refusal(huge) == "The arguments for 'order' are larger than 1048576 bytes; the tool was not run.")
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(refusal(deep)?.hasPrefix("The arguments for 'order' are not valid JSON (") == true)
    }

    @Test func emptyArgumentsCountAsAnEmptyObject() throws {
        let registry = try ToolRegistry([AgentTool(definition: ToolDefinition(name: "ping", description: "Pings.", inputSchema: ["type": "object"])) { .success($0, text: "pong") }])
        let entry = try #require(registry.entry(named: "ping"))
        guard case .valid(let value) = registry.check("  ", for: entry) else {
            Issue.record("refused")
            return
        }
        #expect(value == [:])
    }

    @Test func aSchemaCodexSchemaCannotEnforceIsRefusedAtConstruction() {
        let tool = AgentTool(definition: ToolDefinition(
            name: "search", description: "Searches.", inputSchema: ["type": "object", "properties": ["q": ["type": "string", "pattern": "^a"]]]
        )) { .success($0, text: "") }
        let error = #expect(throws: AgentRuntimeError.self) { try ToolRegistry([tool]) }
        #expect(error?.code == .invalidToolDefinition)
        #expect(error?.message == "the input schema of tool 'search' cannot be enforced (unsupported_schema_keyword at /properties/q/pattern)")
        #expect(error?.underlying is CodexSchemaError)
    }
}

struct OrderInput: Decodable, Sendable {
    let sku: String
    let quantity: Int
}
