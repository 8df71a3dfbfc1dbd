public import CodexCore
import CodexSchema
import Foundation

extension AgentRuntime {
    /// What a thread's next request would send, estimated (``CodexCore/AgentContextEstimator``: UTF-8
    /// bytes ÷ 4), against the model's context window (the account's catalog, else the bundled one).
    /// Reads only; sends nothing.
    ///
    /// ```swift
    /// let usage = try await runtime.fetchThreadContextUsage(id: thread.id)
    /// if let fraction = usage.fractionOfContextWindow, fraction > 0.8 { try await runtime.compactThreadContext(id: thread.id) }
    /// ```
    /// - Throws: `thread_not_found`, or the store's error.
    public func fetchThreadContextUsage(id threadID: AgentThreadID) async throws -> AgentThreadContextUsage {
        let thread = try await resumeThread(threadID)
        let history = try await loadHistory(of: threadID)
        let context = try await compactionContext(of: thread)
        let estimate = AgentContextEstimator.estimate(AgentContextEstimator.replayedItems(history), instructions: context.instructionText)
        let settings = configuration.contextCompaction
        return AgentThreadContextUsage(
            threadID: threadID, model: context.model, items: estimate.items, bytes: estimate.bytes, estimatedTokens: estimate.estimatedTokens,
            contextWindow: context.window,
            compactionThreshold: settings.isEnabled && settings.mode == .automatic ? settings.threshold(contextWindow: context.window) : nil,
            compactions: history.count { if case .contextCompaction = $0 { true } else { false } }
        )
    }

    /// Compacts a thread's context now, with the configured strategy (whatever the mode, and also when
    /// automatic compaction is off): later requests send the compaction's replacement instead of the
    /// history before it. The visible history is untouched; the record is appended to it (and, with
    /// `.visible`, a `context_compacted` event).
    ///
    /// - Returns: The stored record.
    /// - Throws: `thread_not_found`; `thread_busy` while a turn runs on the thread;
    ///   `compaction_unavailable` when there is nothing to compact or the backend cannot compact remotely
    ///   under `.remoteOnly`; the provider's error. A failed compaction stores nothing.
    @discardableResult
    public func compactThreadContext(id threadID: AgentThreadID) async throws -> AgentContextCompaction {
        let thread = try await resumeThread(threadID)
        let reservation = AgentTurnID()
        try activeTurns.reserveCompaction(threadID, id: reservation)
        defer { activeTurns.release(threadID, turnID: reservation) }
        // A running turn of another runtime on the same store makes the thread busy too (its owner
        // lease is held); a turn a crash left running is closed as interrupted first.
        try await closeAbandonedTurn(of: threadID, at: configuration.wallClock.now())
        let work = Task { try await self.compact(thread, history: try await self.loadHistory(of: threadID)).record }
        // Sign-out and background expiry stop it like a turn; cancelling the caller stops it too.
        activeTurns.attach(threadID, turnID: reservation) { work.cancel() }
        return try await withTaskCancellationHandler { try await work.value } onCancel: { work.cancel() }
    }

    /// Before a persistent turn: compacts when automatic compaction is on and the next request's
    /// estimate (history, instructions and the new input) passes the threshold. A failed compaction is
    /// logged and the turn goes on uncompacted. The history the turn replays.
    func compactBeforeTurn(_ thread: AgentThread, history: [AgentHistoryItem], request: Request, model: CodexModel) async throws -> [AgentHistoryItem] {
        let settings = configuration.contextCompaction
        guard settings.isEnabled, settings.mode == .automatic else { return history }
        let context = try await compactionContext(of: thread, model: model)
        let input = AgentMessage(threadID: thread.id, role: .user, text: request.text, images: request.images)
        let estimate = AgentContextEstimator.estimate(AgentContextEstimator.replayedItems(history) + [.message(input)], instructions: context.instructionText)
        let threshold = settings.threshold(contextWindow: context.window)
        guard estimate.estimatedTokens > threshold else { return history }
        // A replacement that is itself near the threshold would be compacted again before every turn:
        // compact only once what came after the latest compaction is a quarter of the threshold.
        if let last = history.lastIndex(where: Self.isCompaction) {
            let fresh = AgentContextEstimator.estimate(history[(last + 1)...] + [.message(input)]).estimatedTokens
            guard fresh * 4 >= threshold else {
                log("runtime.compaction.skipped", thread.id, ["reason": "little_new_history", "estimated_tokens_since": String(fresh)])
                return history
            }
        }
        do {
            return history + (try await compact(thread, history: history, model: model).stored)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            log("runtime.compaction.failed", thread.id, ["error_code": (error as? AgentRuntimeError)?.code.rawValue ?? "failed", "trigger": "threshold"])
            return history
        }
    }

    /// After a turn's first request failed with `context_length_exceeded` before any output: compacts
    /// the history the turn replayed (once; the caller retries once). `nil` when the failure is another
    /// one, compaction is off for it, or compaction failed (the turn then fails with the original error).
    func compactAfterContextLimit(_ plan: TurnPlan, failure: any Error, history: [AgentHistoryItem]) async throws -> [AgentHistoryItem]? {
        let settings = configuration.contextCompaction
        guard plan.persistent, settings.isEnabled, settings.mode == .automatic, settings.retriesAfterContextLengthExceeded,
              (failure as? AgentRuntimeError)?.code == .contextLengthExceeded else { return nil }
        do {
            let record = try await compact(plan.thread, history: history, model: plan.backendRequest.model).record
            log("runtime.compaction.retrying_turn", plan.threadID, ["turn_id": plan.turnID.rawValue])
            return history + [.contextCompaction(record)]
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            log("runtime.compaction.failed", plan.threadID, ["error_code": (error as? AgentRuntimeError)?.code.rawValue ?? "failed", "trigger": "context_length_exceeded"])
            return nil
        }
    }

    /// Compacts `history` (a thread's whole history up to now, or up to a turn's input) of `thread` and
    /// appends the record to the stored history; the caller holds the thread.
    func compact(
        _ thread: AgentThread, history: [AgentHistoryItem], model: CodexModel? = nil
    ) async throws -> (record: AgentContextCompaction, stored: [AgentHistoryItem]) {
        let replayed = AgentContextEstimator.replayedItems(history)
        let context = try await compactionContext(of: thread, model: model)
        let before = AgentContextEstimator.estimate(replayed, instructions: context.instructionText)
        guard replayed.contains(where: { AgentContextEstimator.bytes(of: $0) != nil && !Self.isCompaction($0) }) else {
            throw AgentRuntimeError(code: .compactionUnavailable, message: "there is nothing new to compact")
        }
        try AgentHistoryReplay.validate(replayed)
        let request = AgentBackendCompactionRequest(threadID: thread.id, model: context.model, instructions: context.instructionText, history: replayed)
        let strategy = configuration.contextCompaction.strategy
        var record: AgentContextCompaction
        let now = configuration.wallClock.now()
        if strategy != .localOnly, let remote = configuration.backend as? any AgentBackendContextCompacting {
            do {
                let items = try await remote.compactContext(request)
                record = AgentContextCompaction(
                    createdAt: now, strategy: .remote, replacedItemCount: replayed.count, coversItemsBefore: history.count, providerItems: items,
                    estimatedTokensBefore: before.estimatedTokens, estimatedTokensAfter: 0
                )
            } catch {
                // An invalid replacement is the server misbehaving: no summary is asked of it in its place.
                guard strategy == .remoteThenLocal, !Self.isAuthenticationFailure(error), !(error is CancellationError),
                      !Self.isCertainToFailLocally(error), (error as? AgentRuntimeError)?.code != .compactionInvalid else { throw error }
                log("runtime.compaction.remote_failed", thread.id, ["error_code": (error as? AgentRuntimeError)?.code.rawValue ?? "failed"])
                record = try await localCompaction(request, history: history, window: context.window, before: before.estimatedTokens, at: now)
            }
        } else {
            guard strategy != .remoteOnly else {
                throw AgentRuntimeError(code: .compactionUnavailable, message: "the backend cannot compact remotely")
            }
            record = try await localCompaction(request, history: history, window: context.window, before: before.estimatedTokens, at: now)
        }
        record.estimatedTokensAfter = AgentContextEstimator.estimate([.contextCompaction(record)], instructions: context.instructionText).estimatedTokens
        var items: [AgentHistoryItem] = [.contextCompaction(record)]
        if configuration.contextCompaction.visibility == .visible {
            items.append(.systemEvent(AgentSystemEvent(type: .contextCompacted, turnID: AgentTurnID(rawValue: record.id), occurredAt: now)))
        }
        let stored = items
        // Cancelled before the write: nothing is stored. Once enqueued, the record is written and reported
        // whatever happens to the caller, so a stored compaction is never reported as failed.
        try Task.checkCancellation()
        try await writer.finish(writer.enqueue { store in try await store.appendHistory(stored, to: thread.id) })
        log("runtime.compaction.completed", thread.id, [
            "strategy": record.strategy.rawValue, "replaced_items": String(record.replacedItemCount),
            "estimated_tokens_before": String(record.estimatedTokensBefore), "estimated_tokens_after": String(record.estimatedTokensAfter),
        ])
        return (record, stored)
    }

    /// A local compaction: one summary request with the fixed instruction, no tools, its final text kept.
    /// When the model's window is known and the history would not fit three quarters of it (the rest is
    /// room for the instruction and the summary), the oldest whole turns that fit are summarised and the
    /// later ones stay replayed as they are after the summary.
    private func localCompaction(
        _ request: AgentBackendCompactionRequest, history: [AgentHistoryItem], window: Int?, before: Int, at now: Date
    ) async throws -> AgentContextCompaction {
        let (summarised, covers) = try Self.localPrefix(request.history, history: history, window: window, instructions: request.instructions)
        let turn = try await configuration.backend.startTurn(AgentBackendTurnRequest(
            threadID: request.threadID, turnID: AgentTurnID(), request: Request(text: AgentContextCompaction.summaryInstruction, executionMode: .ephemeral),
            history: summarised, model: request.model, instructions: request.instructions
        ))
        var summary = ""
        for try await event in turn.events {
            switch event {
            case .assistantMessageCompleted(let message): summary = message.text
            case .toolCallRequested, .toolCallsRequested:
                throw AgentRuntimeError(code: .compactionUnavailable, message: "the summary request asked for a tool")
            default: break
            }
        }
        let text = summary.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw AgentRuntimeError(code: .compactionUnavailable, message: "the summary request returned no text") }
        return AgentContextCompaction(
            createdAt: now, strategy: .local, replacedItemCount: summarised.count, coversItemsBefore: covers, summary: text,
            estimatedTokensBefore: before, estimatedTokensAfter: 0
        )
    }

    /// What a local summary request sends of `replayed` (the items a thread's next request replays, from
    /// its latest compaction record on), and the position in `history` from which items stay replayed
    /// after the new record: all of it and `history.count` when it fits three quarters of `window` (or
    /// the window is unknown); else the longest prefix that fits and ends where a turn starts, after any
    /// earlier compaction's part (so no record is ever replayed twice).
    /// - Throws: `compaction_unavailable` when not even the oldest turn fits.
    static func localPrefix(
        _ replayed: [AgentHistoryItem], history: [AgentHistoryItem], window: Int?, instructions: String
    ) throws -> (items: [AgentHistoryItem], covers: Int) {
        let instruction = AgentContextCompaction.summaryInstruction
        let budget = window.map { $0 * 3 / 4 }
        func fits(_ items: ArraySlice<AgentHistoryItem>) -> Bool {
            guard let budget else { return true }
            return AgentContextEstimator.estimate(items, instructions: instructions + instruction).estimatedTokens <= budget
        }
        if fits(replayed[...]) { return (replayed, history.count) }
        // Where `replayed[i]` sits in `history`, and the first position a cut may take.
        let lastRecord = history.lastIndex(where: isCompaction)
        var positions: [Int] = []
        var firstCut = 0
        if let lastRecord, case .contextCompaction(let record) = history[lastRecord] {
            let start = min(max(record.coversItemsBefore, 0), lastRecord)
            positions = [lastRecord] + Array(start..<lastRecord) + Array((lastRecord + 1)..<history.count)
            firstCut = 1 + (lastRecord - start)
        } else {
            positions = Array(history.indices)
        }
        var best: Int?
        for cut in max(firstCut, 1)..<replayed.count {
            guard case .systemEvent(let event) = replayed[cut], event.type == .turnStarted else { continue }
            guard fits(replayed[..<cut]) else { break }
            best = cut
        }
        guard let cut = best, positions.count == replayed.count else {
            throw AgentRuntimeError(code: .compactionUnavailable, message: "not even the oldest turn fits the model's context window for a summary")
        }
        let prefix = Array(replayed[..<cut])
        try AgentHistoryReplay.validate(prefix)
        try AgentHistoryReplay.validate(Array(replayed[cut...]))
        return (prefix, positions[cut])
    }

    /// The model, instructions and context window a thread's turns use, for estimates and compaction.
    struct CompactionContext {
        let model: CodexModel
        let instructionText: String
        let window: Int?
    }

    func compactionContext(of thread: AgentThread, model chosen: CodexModel? = nil) async throws -> CompactionContext {
        let model = chosen ?? baselineModel(of: thread)
        let instructions = try instructions(for: Request(text: ""), thread: thread)
        let text = ([instructions.persona] + instructions.skills).filter { !$0.isEmpty }.joined(separator: "\n\n")
        let window: Int? = if let discovering = configuration.backend as? CodexResponsesBackend {
            await discovering.contextWindow(for: model)
        } else {
            CodexModelCatalog.bundled.info(for: model)?.contextWindow
        }
        return CompactionContext(model: model, instructionText: text, window: window)
    }

    private static func isCompaction(_ item: AgentHistoryItem) -> Bool {
        if case .contextCompaction = item { true } else { false }
    }

    /// Failures a local summary request would meet as well: the account's rate limit or quota, and a
    /// history too long for the model (the summary request sends it all).
    private static func isCertainToFailLocally(_ error: any Error) -> Bool {
        guard let error = error as? AgentRuntimeError else { return false }
        return [.rateLimited, .quotaExceeded, .contextLengthExceeded].contains(error.code)
    }

    private static func isAuthenticationFailure(_ error: any Error) -> Bool {
        guard let error = error as? AgentRuntimeError else { return false }
        return [.unauthorized, .forbidden, .notSignedIn, .refreshFailed, .accountMismatch].contains(error.code)
    }

    private func log(_ name: String, _ threadID: AgentThreadID, _ metadata: [String: String]) {
        configuration.logSink.record(AgentLogEvent(
            level: .info, category: .compaction, name: name, metadata: metadata.merging(["thread_id": threadID.rawValue]) { $1 }
        ))
    }
}
