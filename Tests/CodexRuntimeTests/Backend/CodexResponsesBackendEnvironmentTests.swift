import CodexCore
import CodexRuntime
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// The built-in backend from the environment: the endpoint and credential of `ResponsesEnvironment`,
/// the other options as configured, and a turn that goes where the environment says.
@Suite struct CodexResponsesBackendEnvironmentTests {
    @Test func aBackendFromTheEnvironmentSendsItsTurnToOpenAIBaseURLWithTheKey() async throws {
        var script = ResponsesScript()
        script.created("resp_1")
        script.messageDone("msg_1", "From the environment.", index: 0)
        script.completed("resp_1")
        let server = try LoopbackHTTPServer(replies: [.sse(script.events)])
        defer { server.shutdown() }
        let home = try temporaryDirectory("backend-env")
        defer { try? FileManager.default.removeItem(at: home) }
        var configuration = CodexResponsesBackendConfiguration(model: .gpt6Astra)
        configuration.maximumModelPasses = 3
        let backend = try CodexResponsesBackend.fromEnvironment(
            configuration: configuration,
            environment: ["OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": server.baseURL.appendingPathComponent("v1").absoluteString, "CODEX_HOME": home.path]
        )
        #expect(backend.configuration.endpoint.baseURL == server.baseURL.appendingPathComponent("v1"))
        #expect(backend.configuration.maximumModelPasses == 3)
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore()))
        let thread = try await runtime.createThread()
        #expect(try await runtime.send(Request(text: "Hi"), in: thread.id) == "From the environment.")
        #expect(server.requests.first?.path == "/v1/responses")
        #expect(server.requests.first?.header("authorization") == "Bearer sk-env")

        let none = #expect(throws: AgentRuntimeError.self) { try CodexResponsesBackend.fromEnvironment(environment: ["CODEX_HOME": home.path]) }
        #expect(none?.code == .notSignedIn)
    }
}
