@testable import CodexRuntime
import CodexCore
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Parallel host tools through the built-in Responses backend, the real transport and the loopback
/// server: what the provider receives.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct ToolLoopbackTests {
    private typealias H = BackendHarness

    @Test func outputsReachTheProviderInTheModelsOrderWhenExecutorsFinishInReverse() async throws {
        var first = ResponsesScript()
        first.created("resp_1")
        first.functionCallDone("fc_1", callID: "call_1", name: "lookup", arguments: #"{"sku":"A"}"#, index: 0)
        first.functionCallDone("fc_2", callID: "call_2", name: "lookup", arguments: #"{"sku":"B"}"#, index: 1)
        first.functionCallDone("fc_3", callID: "call_3", name: "lookup", arguments: #"{"sku":"C"}"#, index: 2)
        first.completed("resp_1")
        var second = ResponsesScript()
        second.created("resp_2")
        second.messageDone("msg_1", "Done.", index: 0, phase: "final_answer")
        second.completed("resp_2")
        let server = try LoopbackHTTPServer(replies: [.sse(first.events), .sse(second.events)])
        defer { server.shutdown() }

        let probe = ToolProbe()
        struct Lookup: Decodable, Sendable { let sku: String }
        let lookup = AgentTool(name: "lookup", description: "Reads a product.", schema: .object(properties: ["sku": .string()]),
                               supportsParallelExecution: true) { (input: Lookup, context) in
            probe.enter(input.sku)
            switch input.sku {
            case "A": await probe.wait(for: "B done")
            case "B": await probe.wait(for: "C done")
            default: break
            }
            probe.leave(input.sku)
            probe.open("\(input.sku) done")
            return context.success("product \(input.sku)")
        }
        let runtime = try AgentRuntime(configuration: .init(
            backend: try H.backend(server), stateStore: InMemoryRuntimeStateStore(), tools: [lookup], maximumParallelToolCalls: 4
        ))
        let thread = try await runtime.createThread()
        let reply = try await runtime.send(Request(text: "Look up A, B and C"), in: thread.id)
        #expect(reply == "Done.")
        #expect(probe.log.filter { $0.hasPrefix("end") } == ["end C", "end B", "end A"])

        let firstBody = try H.body(server, 0)
        #expect(firstBody["parallel_tool_calls"] == true)
        #expect(firstBody["tools"]?[0]?["strict"] == true)
        #expect(firstBody["tools"]?[0]?["parameters"] == [
            "type": "object", "properties": ["sku": ["type": "string"]], "required": ["sku"], "additionalProperties": false,
        ])
        let outputs = (try H.body(server, 1)["input"]?.arrayValue ?? []).filter { $0["type"] == "function_call_output" }
        #expect(outputs.map { $0["call_id"]?.stringValue ?? "" } == ["call_1", "call_2", "call_3"])
        #expect(outputs.map { $0["output"]?.stringValue ?? "" } == ["product A", "product B", "product C"])
    }
}
