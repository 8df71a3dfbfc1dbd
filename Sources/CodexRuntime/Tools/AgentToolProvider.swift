import CodexCore
import CodexSchema
import Synchronization

/// Tools that may change between turns, such as an MCP server's (``MCPClient/toolProvider(policy:overrides:)``):
/// the runtime asks every provider at the start of each turn (and of each resumed turn) and offers its
/// tools beside ``AgentRuntime/Configuration/tools``.
///
/// ```swift
/// let runtime = try AgentRuntime(configuration: .init(
///     backend: backend, stateStore: store, toolProviders: [client.toolProvider()]
/// ))
/// ```
///
/// Implementation requirements: answer quickly (cache, and refresh only when the list changed); the
/// names must not collide with each other's or the configured tools' (a collision fails the turn with
/// `invalid_tool_definition`, as it fails a configuration). A provider that throws fails the turn
/// before anything is sent.
public protocol AgentToolProvider: Sendable {
    /// The tools for the turn about to start.
    func currentTools() async throws -> [AgentTool]
}

/// The configured tools and the providers' tools of one turn, compiled once per distinct tool list:
/// the registry is rebuilt only when a provider's list changed.
final class ToolRegistryCache: Sendable {
    /// What a registry was built from: each tool's definition and argument schema.
    private struct Key: Hashable {
        let definitions: [ToolDefinition]
        let argumentSchemas: [JSONValueKey?]
    }

    /// A hashable stand-in for an optional schema (its canonical text).
    private struct JSONValueKey: Hashable {
        let text: String
    }

    private let configured: ToolRegistry
    private let providers: [any AgentToolProvider]
    private let configuredTools: [AgentTool]
    private let last = Mutex<(key: Key, registry: ToolRegistry)?>(nil)

    init(configured: ToolRegistry, configuredTools: [AgentTool], providers: [any AgentToolProvider]) {
        self.configured = configured
        self.configuredTools = configuredTools
        self.providers = providers
    }

    /// The registry of the turn about to start.
    ///
    /// - Throws: What a provider throws, or ``CodexCore/AgentRuntimeError`` `invalid_tool_definition`.
    func current() async throws -> ToolRegistry {
        guard !providers.isEmpty else { return configured }
        var provided: [AgentTool] = []
        for provider in providers { provided += try await provider.currentTools() }
        let tools = configuredTools + provided
        let key = Key(definitions: tools.map(\.definition), argumentSchemas: tools.map { $0.argumentSchema.map { JSONValueKey(text: $0.canonicalString()) } })
        if let cached = last.withLock({ $0 }), cached.key == key { return cached.registry }
        let registry = try ToolRegistry(tools)
        last.withLock { $0 = (key, registry) }
        return registry
    }
}
