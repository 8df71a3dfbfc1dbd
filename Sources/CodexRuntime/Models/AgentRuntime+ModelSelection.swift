import CodexCore

extension AgentRuntime {
    /// Resolves a turn's model and effort, exactly once, before anything model-dependent: the request's
    /// override, else the backend's own preparation or the runtime's selector, else the thread's model,
    /// else the backend's default. Logs `model.selected` (the purpose is never logged or sent).
    ///
    /// - Throws: The selector's error (for example `model_unavailable`), or the catalog's.
    func selectModel(for request: Request, thread: AgentThread, structured: TurnStructuredMode) async throws -> CodexModelConfiguration {
        try await selectModel(for: request, thread: thread, responseFormat: structured.contract?.format)
    }

    /// The model of a thread's turns when nothing chooses another: the thread's, else the runtime's,
    /// else the backend's default, else ``CodexCore/CodexModel/default``.
    func baselineModel(of thread: AgentThread) -> CodexModel {
        thread.configuration.model ?? configuration.model ?? configuration.backend.defaultModel ?? .default
    }

    /// ``selectModel(for:thread:structured:)`` for a known response format (structured recovery).
    func selectModel(for request: Request, thread: AgentThread, responseFormat: AgentStructuredOutputFormat?) async throws -> CodexModelConfiguration {
        let backend = configuration.backend
        let baseline = CodexModelConfiguration(
            model: baselineModel(of: thread),
            reasoningEffort: thread.configuration.reasoningEffort
        )
        let selected: CodexModelConfiguration
        let source: String
        var policyID: String?
        if let override = request.modelOverride {
            (selected, source) = (override, "request_override")
        } else {
            let context = CodexModelSelectionContext(
                threadID: thread.id, purpose: request.selectionPurpose, responseFormat: responseFormat, baseline: baseline,
                requirements: request.modelRequirements, needsImageInput: !request.images.isEmpty,
                catalog: CatalogLoader { [self] policy in try await self.listModels(policy: policy) }
            )
            var selection: CodexModelSelection?
            var chooser = "selector"
            if let preparing = backend as? any AgentBackendRequestPreparing {
                selection = try await preparing.prepareModelSelection(in: context)
                chooser = "backend"
            } else if let selector = configuration.modelSelector {
                selection = try await selector.selectModel(in: context)
            }
            if let selection {
                (selected, source, policyID) = (selection.configuration, chooser, selection.policyID)
            } else {
                (selected, source) = (baseline, thread.configuration.model == nil ? "default" : "thread")
            }
        }
        var metadata = ["thread_id": thread.id.rawValue, "model": selected.model.rawValue, "source": source]
        if let effort = selected.reasoningEffort { metadata["reasoning_effort"] = effort.rawValue }
        if let policyID { metadata["policy_id"] = policyID }
        configuration.logSink.record(AgentLogEvent(level: .info, category: .runtime, name: "model.selected", metadata: metadata))
        return selected
    }
}
