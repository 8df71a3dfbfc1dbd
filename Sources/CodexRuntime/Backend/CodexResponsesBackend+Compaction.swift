import CodexCore
public import CodexSchema
import CodexTransport

extension CodexResponsesBackend: AgentBackendContextCompacting {
    /// Posts the history (as the thread's next request would replay it) with the turn's instructions to
    /// `{base}/responses/compact`; the reply's `output` items.
    public func compactContext(_ request: AgentBackendCompactionRequest) async throws -> [JSONValue] {
        let instructions = AgentBackendTurnRequest.compileInstructions(persona: request.instructions, skills: [], base: configuration.instructions)
        return try await compactionClient.compact(
            model: request.model.rawValue, instructions: instructions, input: ResponsesRequestBuilder.replayed(request.history)
        )
    }
}
