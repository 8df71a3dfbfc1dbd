import CodexCore
import CodexRuntime
import CodexStorageSQLite
import CodexTransport
import Foundation
import Synchronization

/// The runtime `send` and `chat` talk to the service with: the first credential found, the endpoint its
/// profile needs, the built-in backend and the state store.
struct LiveRuntime {
    let auth: ResponsesEnvironment.Source?
    let codexHome: String?
    let store: URL
    let endpoint: URL?
    let model: CodexModel?
    let reasoningSummaries: Bool
    /// The state store (a SQLite file, or a PostgreSQL connection URL), or `nil` to keep nothing.
    let database: String?
    /// The MCP servers whose tools the model may call.
    var mcp: CLIMCPServers?
    /// The MCP clients ``make()`` started; ``shutdown()`` ends them.
    let mcpClients = MCPClientSet()
    /// The OpenTelemetry export the `OTEL_*` variables asked for; ``shutdown()`` sends what is left.
    let telemetry = LiveTelemetry()

    /// The runtime.
    /// - Throws: `not_signed_in` without credentials, `invalid_endpoint` for a bad `OPENAI_BASE_URL`, or
    ///   what opening the database throws.
    func make() async throws -> AgentRuntime {
        guard let service = try CLIAuth.environment(store: store, codexHome: codexHome, only: auth) else {
            throw AgentRuntimeError(code: .notSignedIn, message: "no credentials found")
        }
        var configuration = CodexResponsesBackendConfiguration(enableReasoningSummaries: reasoningSummaries)
        if let model { configuration.model = model }
        // --endpoint replaces the base, keeping the profile the credential needs.
        let chosen = try endpoint.map(service.replacingBaseURL) ?? service
        let backend = CodexResponsesBackend(environment: chosen, configuration: configuration)
        var providers: [any AgentToolProvider] = []
        if let mcp, !mcp.servers.isEmpty {
            for warning in mcp.warnings { Console.error("warning: \(warning)\n") }
            let clients = mcp.clients(logSink: NoOpAgentLogSink())
            mcpClients.add(clients.map(\.1))
            providers = try await CLIMCPServers.providers(clients, trusted: mcp.trusted)
        }
        // OTEL_EXPORTER_OTLP_ENDPOINT (and the other standard variables) turn the export on.
        // A bad OTEL_* value is a warning, and the turn runs without the export (the OpenTelemetry
        // specification's rule for a setting it cannot use).
        var exported: AgentTelemetry?
        do {
            let environment = ProcessInfo.processInfo.environment
            var options: AgentTelemetry.Options?
            if OTLPExporterConfiguration.capturesContent(environment) {
                // Content goes to the collector, another host: the credential in use is redacted from it in
                // every form, not only when it has a well-known shape.
                let secrets = (try? await chosen.authProvider.credentials().secrets) ?? []
                options = AgentTelemetry.Options(includeContent: true, secrets: SecretRedactor(secrets: secrets))
            }
            exported = try AgentTelemetry.fromEnvironment(environment, options: options)
        } catch {
            Console.error("warning: \(error.code.rawValue): \(error.setting): \(error.message); telemetry is off\n")
        }
        telemetry.set(exported)
        return try AgentRuntime(configuration: .init(
            backend: backend, stateStore: try await stateStore(), turnLimits: Self.turnLimits, toolProviders: providers, telemetry: exported
        ))
    }

    /// A command-line turn runs up to an hour (the library's default is five minutes, which cut off a
    /// long reply streaming normally); Ctrl-C stops one sooner. The tool-call budget is the default.
    static let turnLimits = AgentTurnLimits(maximumToolCalls: AgentTurnLimits.default.maximumToolCalls, maximumDuration: 3_600)

    /// Ends the MCP servers ``make()`` started and sends the telemetry not sent yet.
    func shutdown() async {
        await mcpClients.shutdown()
        await telemetry.current?.shutdown()
    }

    /// In memory without a database; a PostgreSQL database for a connection URL; else the SQLite
    /// database, its directory created private (0700).
    private func stateStore() async throws -> any RuntimeStateStore {
        guard let database else { return InMemoryRuntimeStateStore() }
        if CLIStateStores.isPostgres(database) { return try await CLIStateStores.open(database, creating: true) }
        let directory = URL(fileURLWithPath: database).deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: directory.path) {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        return try SQLiteRuntimeStateStore(path: database)
    }

}

/// The MCP clients of one run, ended together.
final class MCPClientSet: Sendable {
    private let clients = Mutex<[MCPClient]>([])

    func add(_ started: [MCPClient]) { clients.withLock { $0 += started } }

    func shutdown() async {
        for client in clients.withLock({ $0 }) { await client.shutdown() }
    }
}

/// The telemetry of one run, shut down (flushed) when the run ends.
final class LiveTelemetry: Sendable {
    private let value = Mutex<AgentTelemetry?>(nil)

    func set(_ telemetry: AgentTelemetry?) { value.withLock { $0 = telemetry } }

    var current: AgentTelemetry? { value.withLock { $0 } }
}
