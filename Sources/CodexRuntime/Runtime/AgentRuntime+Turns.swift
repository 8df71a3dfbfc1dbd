import CodexCore
import Foundation

extension AgentRuntime {
    /// Accepts a turn: checks, reserves the thread, persists the input, then launches the producer.
    ///
    /// Cancellation: cancelled before preparation → nothing reserved, persisted or launched;
    /// cancelled while the input is being written → the input is kept, the turn is recorded
    /// interrupted and the thread returns to idle, while this call returns at once.
    func beginTurn(
        _ request: Request, in threadID: AgentThreadID, structured: TurnStructuredMode, outcome: TurnOutcome?
    ) async throws -> AgentEventStream<AgentEvent> {
        try await beginExecution(request, in: threadID, structured: structured, outcome: outcome).events
    }

    /// ``beginTurn(_:in:structured:outcome:)`` with the accepted turn's controls.
    func beginExecution(
        _ request: Request, in threadID: AgentThreadID, structured: TurnStructuredMode, outcome: TurnOutcome?
    ) async throws -> AgentTurnExecution {
        try Task.checkCancellation()
        try Self.validate(request)
        let thread = try await resumeThread(threadID)
        let instructions = try instructions(for: request, thread: thread)
        let model = try await selectModel(for: request, thread: thread, structured: structured)
        let memory = try await retrieveMemory(for: request, threadID: threadID)
        // The providers' tools are asked for before anything is reserved or written: one that fails fails
        // the turn with nothing to undo.
        let turnTools = try await self.turnTools.current()
        try Task.checkCancellation()
        let now = configuration.wallClock.now()
        let turn = AgentTurn(threadID: threadID, status: .running, executionMode: request.executionMode, startedAt: now, ownerID: ownership.ownerID)
        let persistent = request.executionMode == .threaded
        var history: [AgentHistoryItem] = []
        if persistent {
            try activeTurns.reserve(threadID, for: turn.id)
            do {
                try await closeAbandonedTurn(of: threadID, at: now)
                history = try await compactBeforeTurn(thread, history: try await loadHistory(of: threadID), request: request, model: model.model)
                try Task.checkCancellation()
            } catch {
                activeTurns.release(threadID, turnID: turn.id)
                throw error
            }
            try await persistInput(request, turn: turn, at: now)
        }
        var backendRequest = AgentBackendTurnRequest(
            threadID: threadID, turnID: turn.id, request: request, history: history,
            model: model.model, reasoningEffort: model.reasoningEffort,
            instructions: instructions.persona, skillInstructions: instructions.skills, tools: turnTools.definitions,
            responseFormat: { if case .oneShot(let contract) = structured { return contract.format } else { return nil } }(),
            responseContract: Self.responseContract(for: structured)
        )
        backendRequest.memoryInstructions = memory?.text
        if let memory { backendRequest.memoryPlacement = memory.placement }
        let durability = try await beginJournal(of: turn, request: backendRequest, structured: structured)
        let plan = TurnPlan(
            thread: thread, turn: turn, backendRequest: backendRequest, structured: structured,
            memoryApplication: memory?.application(instructions: backendRequest.compiledInstructions(base: configuration.backend.baseInstructions)),
            durability: durability, tools: turnTools
        )
        return launch(plan, outcome: outcome)
    }

    /// Makes a persistent turn durable when the recovery policy resumes turns: its journal begins with
    /// what its requests are made of. Turns with streamed structured output are not durable (a resumed
    /// turn has no caller to hand a typed value to): a crash leaves them interrupted, as before.
    /// - Throws: the store's error when the first entry cannot be written; the turn is recorded failed.
    private func beginJournal(of turn: AgentTurn, request: AgentBackendTurnRequest, structured: TurnStructuredMode) async throws -> TurnDurability? {
        guard configuration.turnRecovery.resumes, turn.executionMode == .threaded, case .none = structured else { return nil }
        let journal = TurnJournalWriter(writer: writer, turn: turn.id, thread: turn.threadID, nextSequence: 0)
        let settings = TurnJournalSettings(
            model: request.model, reasoningEffort: request.reasoningEffort, instructions: request.instructions,
            skillInstructions: request.skillInstructions, memoryInstructions: request.memoryInstructions, memoryPlacement: request.memoryPlacement
        )
        do {
            try await journal.record(.turnStarted(settings))
        } catch {
            let failure = (error as? TurnJournalFailure)?.error ?? (error as? AgentRuntimeError)
            try? await writer.finish(recordEnd(of: turn, status: error is CancellationError ? .interrupted : .failed, failure: failure, items: []))
            activeTurns.release(turn.threadID, turnID: turn.id)
            throw failure ?? error
        }
        return .fresh(journal, policy: configuration.turnRecovery)
    }

    /// Writes the accepted input (developer messages, the user message, the running turn, the thread's
    /// running status). A caller cancelled while the write waits leaves at once; the write finishes and
    /// the interruption record follows it in order.
    private func persistInput(_ request: Request, turn: AgentTurn, at now: Date) async throws {
        let threadID = turn.threadID
        var items: [AgentHistoryItem] = [.systemEvent(AgentSystemEvent(type: .turnStarted, turnID: turn.id, occurredAt: now))]
        items += request.developerMessages.map { .message(AgentMessage(threadID: threadID, role: .developer, text: $0.text, createdAt: now)) }
        if !request.text.isEmpty || !request.images.isEmpty {
            items.append(.message(AgentMessage(threadID: threadID, role: .user, text: request.text, images: request.images, createdAt: now)))
        }
        let input = items
        let accepted = writer.enqueue { store in
            try await store.recordTurn(turn, appending: input, threadStatus: .running, at: now)
        }
        configuration.logSink.record(AgentLogEvent(
            level: .debug, category: .runtime, name: "runtime.turn.input_accepted",
            metadata: ["thread_id": threadID.rawValue, "turn_id": turn.id.rawValue]
        ))
        do {
            try await writer.wait(accepted)
        } catch {
            let cancelled = error is CancellationError
            let status: AgentTurnStatus = cancelled ? .interrupted : .failed
            let failure = error as? AgentRuntimeError
            recordEnd(of: turn, status: status, failure: failure, items: [])
            activeTurns.release(threadID, turnID: turn.id)
            configuration.logSink.record(AgentLogEvent(
                level: .notice, category: .runtime, name: cancelled ? "runtime.turn.interrupted" : "runtime.turn.failed",
                metadata: ["thread_id": threadID.rawValue, "turn_id": turn.id.rawValue, "phase": "preparation"]
            ))
            throw error
        }
    }

    /// Enqueues the record of a turn's end: history items and the lifecycle event, the turn's status,
    /// and the thread back to idle.
    @discardableResult
    func recordEnd(
        of turn: AgentTurn, status: AgentTurnStatus, failure: AgentRuntimeError?, items: [AgentHistoryItem], usage: AgentUsage? = nil,
        memoryApplication: AgentMemoryApplication? = nil
    ) -> RuntimeStateWriter.Handle {
        let now = configuration.wallClock.now()
        let type: AgentSystemEventType = switch status {
        case .completed: .turnCompleted
        case .interrupted: .turnInterrupted
        default: .turnFailed
        }
        var ended = turn
        ended.status = status
        ended.finishedAt = now
        ended.failure = failure
        ended.usage = usage
        let history = items + [.systemEvent(AgentSystemEvent(
            type: type, turnID: turn.id, occurredAt: now, errorCode: failure?.code.rawValue, memoryApplication: memoryApplication
        ))]
        let record = ended
        return writer.enqueue { store in
            // A thread deleted meanwhile has nothing left to record.
            guard try await store.thread(turn.threadID) != nil else { return }
            try await store.recordTurn(record, appending: history, threadStatus: .idle, at: now)
        }
    }

    /// The whole history of a thread, oldest first, read after every write enqueued before it.
    func loadHistory(of threadID: AgentThreadID) async throws -> [AgentHistoryItem] {
        try await writer.read { store in
            var items: [AgentHistoryItem] = []
            var cursor: String?
            repeat {
                let page = try await store.history(of: threadID, query: AgentHistoryQuery(limit: 1024, cursor: cursor))
                items += page.items
                cursor = page.nextCursor
            } while cursor != nil
            return items
        }
    }

    /// A turn the store still shows running although this runtime does not run it was cut short by a
    /// crash or a kill: it is recorded interrupted (and the thread idle) before the next turn starts. A
    /// running turn of another live runtime instance (its owner lease is held) is not abandoned: the
    /// thread is busy.
    /// - Throws: `thread_busy` when another live runtime runs a turn on the thread, or (with the resume
    ///   policy) when the thread's durable turn waits to be resumed: it is never closed behind its back.
    func closeAbandonedTurn(of threadID: AgentThreadID, at now: Date) async throws {
        if configuration.turnRecovery.resumes, try await hasDurableTurnToResume(threadID) {
            throw AgentRuntimeError(code: .threadBusy, message: "a durable turn on the thread waits to be resumed (resumeTurn) or for its approval")
        }
        let ownership = self.ownership
        let outcome = try await writer.read { store in try await Self.closeAbandonedTurn(of: threadID, in: store, at: now, ownership: ownership) }
        if case .liveElsewhere = outcome {
            throw AgentRuntimeError(code: .threadBusy, message: "another runtime instance runs a turn on the thread")
        }
    }

    /// Whether the thread's latest turn is a durable one no live runtime runs: parked for an approval, or
    /// left running by a runtime that is gone, with a journal to resume from.
    private func hasDurableTurnToResume(_ threadID: AgentThreadID) async throws -> Bool {
        guard let turn = try await writer.read({ store in try await store.latestTurn(of: threadID) }) else { return false }
        if turn.status == .waitingForApproval { return true }
        guard turn.status == .running, try !ownership.isAliveElsewhere(turn) else { return false }
        let entries = try await writer.readJournal { journal in try await journal.journal(of: turn.id) }
        return TurnResumePoint.analyze(entries).map { $0.stage != .committed } ?? false
    }

    /// Records the thread's latest turn interrupted (and the thread idle) if the store shows it running
    /// and its owner is gone.
    static func closeAbandonedTurn(
        of threadID: AgentThreadID, in store: any RuntimeStateStore, at now: Date, ownership: TurnOwnership
    ) async throws -> AbandonedTurnOutcome {
        guard var turn = try await store.latestTurn(of: threadID), turn.status == .running else { return .noneRunning }
        if try ownership.isAliveElsewhere(turn) { return .liveElsewhere }
        turn.status = .interrupted
        turn.finishedAt = now
        try await store.recordTurn(
            turn, appending: [.systemEvent(AgentSystemEvent(type: .turnInterrupted, turnID: turn.id, occurredAt: now))], threadStatus: .idle, at: now
        )
        return .closed
    }

    /// The turn's instructions: the most specific persona's, and the selected skills' instructions.
    /// - Throws: `invalid_request` for a skill ID the runtime does not know.
    func instructions(for request: Request, thread: AgentThread) throws -> (persona: String, skills: [String]) {
        let persona = AgentPersonaStack.resolve(request: request.personaOverride, thread: thread.persona, runtime: configuration.persona)
        var skills: [String] = []
        for skillID in request.skillSelection.resolve(threadSkills: thread.skillIDs) {
            guard let skill = configuration.skills.first(where: { $0.id == skillID }) else {
                throw AgentRuntimeError(code: .invalidRequest, message: "unknown skill '\(skillID)'")
            }
            if !skill.instructions.isEmpty { skills.append(skill.instructions) }
        }
        return (persona?.renderedInstructions ?? "", skills)
    }

    /// The "Response contract" developer message of a structured turn.
    static func responseContract(for structured: TurnStructuredMode) -> String? {
        switch structured {
        case .none: return nil
        case .oneShot(let contract): return "Response contract\nReturn the final result serialized as `\(contract.typeName)`."
        case .streamed(let contract, _):
            return StructuredStreamParser.frameInstructions(formatName: contract.typeName, schema: contract.format.schema)
        }
    }

    /// Checks a request's images before anything is reserved.
    static func validate(_ request: Request) throws {
        guard request.images.count <= AgentImageAttachment.maximumPerMessage else {
            throw AgentRuntimeError(code: .tooManyImages, message: "at most \(AgentImageAttachment.maximumPerMessage) images per message")
        }
        for image in request.images { try image.validate() }
    }
}
