import CodexCore
import Foundation

/// The memories one turn carries: the rendered section and where it goes, and the record of it.
struct TurnMemory: Sendable {
    /// The rendered memory section; `nil` when none applies.
    var text: String?
    var placement: MemoryInstructionPlacement
    var namespace: MemoryNamespace
    var memoryIDs: [MemoryRecordID]
    var notAppliedReason: AgentMemoryApplication.Reason?

    /// The record of the application, given the turn's compiled instructions.
    func application(instructions: String?) -> AgentMemoryApplication {
        AgentMemoryApplication(
            namespace: namespace, memoryIDs: memoryIDs, placement: memoryIDs.isEmpty ? nil : placement,
            instructionsSHA256: AgentMemoryApplication.digest(ofInstructions: instructions), notAppliedReason: notAppliedReason
        )
    }
}

extension AgentRuntime {
    /// Searches the configured store for `request` (ephemeral requests too) and renders what it finds;
    /// `nil` when the runtime has no memory. A store that fails or refuses the query leaves the turn
    /// without memory (recorded as `retrieval_failed` and logged), so memory never stops a turn.
    func retrieveMemory(for request: Request, threadID: AgentThreadID) async throws -> TurnMemory? {
        guard let settings = configuration.memory else { return nil }
        let selection = request.memorySelection
        var memory = TurnMemory(
            text: nil, placement: selection.instructionPlacement ?? settings.instructionPlacement, namespace: settings.namespace,
            memoryIDs: [], notAppliedReason: nil
        )
        guard let filters = selection.filters(configuredScopes: settings.scopes, configuredTags: settings.tags) else {
            memory.notAppliedReason = .disabledByRequest
            return memory
        }
        let query = MemoryQuery(
            namespace: settings.namespace, text: Self.memoryQueryText(selection.text ?? request.text), match: settings.match,
            scopes: filters.scopes, tags: filters.tags, ranking: settings.ranking, budget: settings.budget,
            asOf: configuration.wallClock.now()
        )
        let result: MemorySearchResult
        do {
            result = try await settings.store.search(query)
        } catch {
            try Task.checkCancellation()
            memory.notAppliedReason = .retrievalFailed
            configuration.logSink.record(AgentLogEvent(
                level: .warning, category: .memory, name: "runtime.memory.retrieval_failed",
                metadata: ["thread_id": threadID.rawValue, "error_code": error.code.rawValue]
            ))
            return memory
        }
        guard !result.hits.isEmpty else {
            memory.notAppliedReason = .noMatches
            return memory
        }
        let text = settings.renderer.render(result.records)
        guard !text.isEmpty else {
            memory.notAppliedReason = .noMatches
            return memory
        }
        memory.text = text
        memory.memoryIDs = result.records.map(\.id)
        configuration.logSink.record(AgentLogEvent(
            level: .debug, category: .memory, name: "runtime.memory.applied",
            metadata: ["thread_id": threadID.rawValue, "records": String(result.hits.count), "omitted_by_budget": String(result.omittedByBudget)]
        ))
        return memory
    }

    /// The query of a request's text: its first distinct tokens, as many as a query may hold, so a long
    /// prompt still searches instead of being refused.
    static func memoryQueryText(_ text: String) -> String {
        MemoryText.tokens(text).prefix(MemoryLimits.queryTokens).joined(separator: " ")
    }
}
