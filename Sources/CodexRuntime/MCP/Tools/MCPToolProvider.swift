import CodexCore
import Synchronization

extension MCPClient {
    /// The server's tools as a provider the runtime asks at the start of every turn
    /// (``AgentRuntime/Configuration/toolProviders``): when the server announces that its tool list
    /// changed, the next turn offers the new list. The tools are built as
    /// ``agentTools(policy:overrides:)`` builds them, once per list.
    ///
    /// ```swift
    /// let runtime = try AgentRuntime(configuration: .init(
    ///     backend: backend, stateStore: store, toolProviders: [client.toolProvider(policy: MCPToolPolicy(approvalPolicy: .automatic))]
    /// ))
    /// ```
    public func toolProvider(policy: MCPToolPolicy = .hints, overrides: [String: MCPToolPolicy] = [:]) -> MCPToolProvider {
        MCPToolProvider(client: self, policy: policy, overrides: overrides)
    }
}

/// An MCP server's tools for each turn (``MCPClient/toolProvider(policy:overrides:)``).
public final class MCPToolProvider: AgentToolProvider {
    /// The server's client.
    public let client: MCPClient
    private let policy: MCPToolPolicy
    private let overrides: [String: MCPToolPolicy]
    private let built = Mutex<(generation: Int, tools: [AgentTool])?>(nil)

    init(client: MCPClient, policy: MCPToolPolicy, overrides: [String: MCPToolPolicy]) {
        self.client = client
        self.policy = policy
        self.overrides = overrides
    }

    /// The server's tools now: the ones built for the current list, or the new list's.
    ///
    /// - Throws: ``MCPError`` when the server cannot be reached or listed (the turn fails before anything
    ///   is sent).
    public func currentTools() async throws -> [AgentTool] {
        let generation = client.state.withLock { $0.toolGeneration }
        if let current = built.withLock({ $0 }), current.generation == generation { return current.tools }
        let tools = try await client.agentTools(policy: policy, overrides: overrides)
        built.withLock { $0 = (generation, tools) }
        return tools
    }
}
