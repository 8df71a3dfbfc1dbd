public import CodexCore
import CodexSchema
import Foundation

/// What a memory capture stored.
public struct AgentMemoryCaptureResult: Sendable, Hashable {
    /// The records as stored, in the order the model gave them.
    public var records: [MemoryRecord]
    /// How many were new.
    public var inserted: Int
    /// How many replaced a record with the same dedupe key.
    public var replaced: Int
    /// How many the store refused (for example a duplicate tag); the rest were still stored.
    public var rejected: Int

    /// Creates a result.
    public init(records: [MemoryRecord], inserted: Int, replaced: Int, rejected: Int) {
        self.records = records
        self.inserted = inserted
        self.replaced = replaced
        self.rejected = rejected
    }
}

extension AgentRuntime {
    /// Captures memories from a thread's conversation now, whatever the automatic capture policy: one
    /// structured request with the fixed memory contract over the thread's most recent user and
    /// assistant messages (at most 24,000 characters), validated like any structured output; each
    /// memory is upserted into the configured store with its key as the dedupe key.
    ///
    /// ```swift
    /// let captured = try await runtime.captureMemories(from: thread.id, for: .user)
    /// print(captured.records.map(\.summary))
    /// ```
    /// - Parameters:
    ///   - threadID: The thread whose conversation is read (nothing is written to it).
    ///   - scope: The scope the records get; `nil` uses the automatic capture policy's.
    /// - Throws: `invalid_configuration` without a memory configuration; `thread_not_found`;
    ///   `memory_capture_failed` when the thread has no conversation yet; the request's typed error
    ///   (`structured_output_invalid` for a reply outside the contract); the store's error. Nothing is
    ///   stored when the request fails.
    public func captureMemories(from threadID: AgentThreadID, for scope: MemoryScope? = nil) async throws -> AgentMemoryCaptureResult {
        guard let settings = configuration.memory else {
            throw AgentRuntimeError(code: .invalidConfiguration, message: "the runtime has no memory configuration")
        }
        let thread = try await resumeThread(threadID)
        let messages = try await loadHistory(of: threadID).compactMap { item -> AgentMessage? in
            if case .message(let message) = item, message.phase != .commentary { return message }
            return nil
        }
        let model = settings.automaticCapture.model ?? baselineModel(of: thread)
        return try await captureMemories(
            from: messages, threadID: threadID, turnID: nil, model: model, scope: scope ?? settings.automaticCapture.scope,
            source: "explicit_capture", settings: settings
        )
    }

    /// Waits until every automatic capture started so far (and any started meanwhile) has ended.
    public func waitForMemoryCaptures() async {
        await memoryCaptures.waitForAll()
    }

    /// After a committed persistent turn: starts its automatic capture in the background when the policy
    /// enables it. A failure is logged; the turn stays completed.
    func startAutomaticCapture(_ plan: TurnPlan, success: TurnSuccess) {
        guard plan.persistent, let settings = configuration.memory, settings.automaticCapture.isEnabled else { return }
        let request = plan.backendRequest.request
        var conversation: [AgentMessage] = []
        if !request.text.isEmpty { conversation.append(AgentMessage(threadID: plan.threadID, role: .user, text: request.text)) }
        if let reply = success.summary.finalMessage { conversation.append(reply) }
        let messages = conversation
        guard messages.contains(where: { $0.role == .assistant && !$0.text.isEmpty }) else { return }
        let model = settings.automaticCapture.model ?? plan.backendRequest.model
        let threadID = plan.threadID
        let turnID = plan.turnID
        let logSink = configuration.logSink
        memoryCaptures.start { [weak self] in
            guard let self else { return }
            do {
                let result = try await self.captureMemories(
                    from: messages, threadID: threadID, turnID: turnID, model: model, scope: settings.automaticCapture.scope,
                    source: "automatic_capture", settings: settings
                )
                logSink.record(AgentLogEvent(
                    level: .info, category: .memory, name: "runtime.memory.captured",
                    metadata: [
                        "thread_id": threadID.rawValue, "turn_id": turnID.rawValue, "inserted": String(result.inserted),
                        "replaced": String(result.replaced), "rejected": String(result.rejected),
                    ]
                ))
            } catch {
                let code = (error as? AgentRuntimeError)?.code.rawValue ?? (error as? MemoryStoreError)?.code.rawValue
                    ?? (error is CancellationError ? "cancelled" : "failed")
                logSink.record(AgentLogEvent(
                    level: .warning, category: .memory, name: "runtime.memory.capture_failed",
                    metadata: ["thread_id": threadID.rawValue, "turn_id": turnID.rawValue, "error_code": code]
                ))
            }
        }
    }

    /// One capture request over `messages`, then the upserts.
    private func captureMemories(
        from messages: [AgentMessage], threadID: AgentThreadID, turnID: AgentTurnID?, model: CodexModel, scope: MemoryScope, source: String,
        settings: AgentMemoryConfiguration
    ) async throws -> AgentMemoryCaptureResult {
        let transcript = MemoryCaptureContract.transcript(messages)
        guard messages.contains(where: { !$0.text.isEmpty && ($0.role == .user || $0.role == .assistant) }) else {
            throw AgentRuntimeError(code: .memoryCaptureFailed, message: "the thread has no conversation to capture from")
        }
        let maximum = min(max(settings.automaticCapture.maximumMemories, 1), AgentMemoryCapturePolicy.memoryLimit)
        let contract = try StructuredContract(format: MemoryCaptureContract.format(maximum: maximum))
        let turn = try await configuration.backend.startTurn(AgentBackendTurnRequest(
            threadID: threadID, turnID: AgentTurnID(),
            request: Request(text: transcript, executionMode: .ephemeral), model: model,
            instructions: MemoryCaptureContract.instruction, responseFormat: contract.format,
            responseContract: Self.responseContract(for: .oneShot(contract))
        ))
        var reply: String?
        for try await event in turn.events {
            switch event {
            case .assistantMessageCompleted(let message) where message.phase != .commentary && !message.text.isEmpty:
                reply = message.text
            case .toolCallRequested, .toolCallsRequested:
                throw AgentRuntimeError(code: .memoryCaptureFailed, message: "the capture request asked for a tool")
            default: break
            }
        }
        guard let reply else { throw AgentRuntimeError(code: .memoryCaptureFailed, message: "the capture request returned no reply") }
        let accepted = try contract.acceptedValue(reply)
        let payload: MemoryCaptureContract.Payload
        do {
            payload = try JSONValueDecoder().decode(MemoryCaptureContract.Payload.self, from: accepted)
        } catch {
            throw AgentRuntimeError(code: .structuredOutputDecodingFailed, message: "the capture reply does not decode into memories")
        }
        try Task.checkCancellation()
        let now = configuration.wallClock.now()
        var attributes = ["source": source, "thread_id": threadID.rawValue]
        if let turnID { attributes["turn_id"] = turnID.rawValue }
        var result = AgentMemoryCaptureResult(records: [], inserted: 0, replaced: 0, rejected: 0)
        for memory in payload.memories.prefix(maximum) {
            let evidence = memory.evidence.trimmingCharacters(in: .whitespacesAndNewlines)
            let record = MemoryRecord(
                namespace: settings.namespace, scope: scope, category: MemoryCategory(rawValue: memory.category),
                summary: memory.summary.trimmingCharacters(in: .whitespacesAndNewlines), evidence: evidence.isEmpty ? [] : [evidence],
                importance: memory.importance, tags: memory.tags, attributes: attributes,
                dedupeKey: MemoryCaptureContract.dedupeKey(memory.key), createdAt: now
            )
            let outcome: Result<MemoryUpsertOutcome, MemoryStoreError>
            do {
                outcome = .success(try await settings.store.upsert(record))
            } catch {
                outcome = .failure(error)
            }
            switch outcome {
            case .success(.inserted(let stored)):
                result.inserted += 1
                result.records.append(stored)
            case .success(.replaced(_, let stored)):
                result.replaced += 1
                result.records.append(stored)
            case .failure(let error):
                // A memory the store refuses is skipped; a store that fails stops the capture.
                guard [MemoryStoreError.Code.recordInvalid, .dedupeConflict].contains(error.code) else { throw error }
                result.rejected += 1
            }
        }
        return result
    }
}
