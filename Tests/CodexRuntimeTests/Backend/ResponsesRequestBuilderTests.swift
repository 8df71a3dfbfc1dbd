@testable import CodexRuntime
import CodexCore
import CodexTransport
import Testing

/// What the built-in backend asks of the provider, from the turn and its configuration.
@Suite struct ResponsesRequestBuilderTests {
    private func turn(model: CodexModel, effort: ReasoningEffort? = nil) -> AgentBackendTurnRequest {
        AgentBackendTurnRequest(threadID: "t", turnID: "u", request: Request(text: "hi"), model: model, reasoningEffort: effort)
    }

    @Test func enabledSummariesAreRequestedWhateverTheModel() {
        var configuration = CodexResponsesBackendConfiguration()
        configuration.enableReasoningSummaries = true
        let unknown = ResponsesRequestBuilder.request(for: turn(model: "house-model-7"), configuration: configuration)
        #expect(unknown.reasoning?.summary == "auto")
        #expect(unknown.reasoning?.effort == nil)
        #expect(unknown.include == [ResponsesRequestBuilder.encryptedReasoningInclude])
        let bundled = ResponsesRequestBuilder.request(for: turn(model: .gpt6Astra), configuration: configuration)
        #expect(bundled.reasoning?.summary == "auto")
    }

    @Test func withoutSummariesAnUnknownModelWithoutAnEffortGetsNoReasoning() {
        let request = ResponsesRequestBuilder.request(for: turn(model: "house-model-7"), configuration: CodexResponsesBackendConfiguration())
        #expect(request.reasoning == nil)
        #expect(request.include.isEmpty)
        let withEffort = ResponsesRequestBuilder.request(for: turn(model: "house-model-7", effort: .high), configuration: CodexResponsesBackendConfiguration())
        #expect(withEffort.reasoning?.effort == .high)
        #expect(withEffort.reasoning?.summary == nil)
    }
}
