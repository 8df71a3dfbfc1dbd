public import CodexCore
public import CodexSchema

/// What ``AgentRuntime/sendWithSummary(_:in:)`` returns: the value, the turn summary and its usage.
public struct AgentSendResult<Value: Sendable>: Sendable {
    /// The reply: the final text, or the decoded structured value.
    public var value: Value
    /// The turn's summary (final message, response ID, finish time).
    public var summary: AgentTurnSummary
    /// Token usage summed over the turn's model passes, when reported.
    public var usage: AgentUsage? { summary.usage }

    /// Creates a result.
    public init(value: Value, summary: AgentTurnSummary) {
        self.value = value
        self.summary = summary
    }
}

extension AgentRuntime {
    /// Streams one turn: deltas, progress, tool and approval events, committed messages and the
    /// terminal event (`turnCompleted`, `turnFailed` — then the stream throws the error — or
    /// `turnInterrupted` — then it throws `CancellationError`).
    ///
    /// Consume the stream from one task. Cancelling that task or releasing the stream and its iterator
    /// cancels the turn. A thread runs one persistent turn at a time; ephemeral requests are independent.
    /// - Throws: `thread_not_found`, `thread_busy`, request validation errors, storage errors while the
    ///   input is written, or `CancellationError`.
    public func stream(_ request: Request, in threadID: AgentThreadID) async throws -> AgentEventStream<AgentEvent> {
        try await beginTurn(request, in: threadID, structured: .none, outcome: nil)
    }

    /// Streams one turn whose reply carries prose plus a typed payload: text deltas come without the
    /// payload's framing, `.structuredOutputPartial` snapshots pass the partial schema checks and decode
    /// into `Output`, and `.structuredOutputCommitted` is fully validated and decoded before it is emitted.
    /// - Parameter options: `required: true` (default) fails the turn with `structured_output_missing`
    ///   when no payload arrives.
    /// - Throws: as ``stream(_:in:)``, and `invalid_response_format` / `unsupported_schema_keyword`
    ///   before the turn starts.
    public func stream<Output: AgentStructuredOutput>(
        _ request: Request, in threadID: AgentThreadID, response: Output.Type, options: AgentStructuredStreamingOptions = .init()
    ) async throws -> AgentEventStream<AgentEvent> {
        let contract = try StructuredContract(Output.self)
        return try await beginTurn(request, in: threadID, structured: .streamed(contract, required: options.required), outcome: nil)
    }

    /// Accepts one turn and returns its execution handle at once: the events to consume, and
    /// `waitUntilReady()`, `cancel()` and `steer(_:images:)` for this turn only.
    /// - Throws: as ``stream(_:in:)``.
    public func start(_ request: Request, in threadID: AgentThreadID) async throws -> AgentTurnExecution {
        try await beginExecution(request, in: threadID, structured: .none, outcome: nil)
    }

    /// ``start(_:in:)`` for a reply with prose plus a typed payload, as ``stream(_:in:response:options:)``.
    public func start<Output: AgentStructuredOutput>(
        _ request: Request, in threadID: AgentThreadID, response: Output.Type, options: AgentStructuredStreamingOptions = .init()
    ) async throws -> AgentTurnExecution {
        let contract = try StructuredContract(Output.self)
        return try await beginExecution(request, in: threadID, structured: .streamed(contract, required: options.required), outcome: nil)
    }

    /// Runs one turn and returns the final assistant text (empty when the turn produced none).
    public func send(_ request: Request, in threadID: AgentThreadID) async throws -> String {
        try await sendWithSummary(request, in: threadID).value
    }

    /// Runs one turn with a one-shot structured reply (Responses `text.format` json_schema) and returns
    /// the decoded value. The reply is validated against the schema, then decoded, before the assistant
    /// message is saved or the turn marked successful; commentary messages may be prose.
    /// - Throws: `structured_output_invalid`, `structured_output_decoding_failed`,
    ///   `structured_output_missing`, `structured_output_too_large` (over 4 MiB), schema errors before the
    ///   turn starts, and everything ``stream(_:in:)`` throws.
    public func send<Output: AgentStructuredOutput>(_ request: Request, in threadID: AgentThreadID, response: Output.Type) async throws -> Output {
        try await sendWithSummary(request, in: threadID, response: response).value
    }

    /// Runs one turn and returns the final text with the turn's summary and usage.
    public func sendWithSummary(_ request: Request, in threadID: AgentThreadID) async throws -> AgentSendResult<String> {
        let outcome = TurnOutcome()
        let summary = try await consume(try await beginTurn(request, in: threadID, structured: .none, outcome: outcome), outcome: outcome)
        return AgentSendResult(value: summary.finalMessage?.text ?? "", summary: summary)
    }

    /// Runs one turn with a one-shot structured reply and returns the decoded value with the summary.
    public func sendWithSummary<Output: AgentStructuredOutput>(
        _ request: Request, in threadID: AgentThreadID, response: Output.Type
    ) async throws -> AgentSendResult<Output> {
        let contract = try StructuredContract(Output.self)
        let outcome = TurnOutcome()
        let summary = try await consume(try await beginTurn(request, in: threadID, structured: .oneShot(contract), outcome: outcome), outcome: outcome)
        guard let value = outcome.value as? Output else {
            throw AgentRuntimeError(code: .structuredOutputMissing, message: "the turn ended without a structured reply")
        }
        return AgentSendResult(value: value, summary: summary)
    }

    /// Runs one turn whose reply is a JSON value matching `format`, a contract known only at run time (a
    /// schema file, a host's user-defined form): sent as the Responses `text.format`, then parsed and
    /// validated locally like a typed reply before it is committed. Returns the validated value.
    ///
    /// ```swift
    /// let format = AgentStructuredOutputFormat(name: "verdict", rawSchema: try JSONValue(parsing: schemaBytes))
    /// let result = try await runtime.sendWithSummary(Request(text: "Decide."), in: threadID, format: format)
    /// print(result.value.canonicalString())
    /// ```
    ///
    /// - Throws: as ``send(_:in:response:)``: `invalid_response_format` or `unsupported_schema_keyword`
    ///   before the turn starts, `structured_output_invalid` or `structured_output_missing` after it.
    public func sendWithSummary(_ request: Request, in threadID: AgentThreadID, format: AgentStructuredOutputFormat) async throws -> AgentSendResult<JSONValue> {
        let contract = try StructuredContract(format: format)
        let outcome = TurnOutcome()
        let summary = try await consume(try await beginTurn(request, in: threadID, structured: .oneShot(contract), outcome: outcome), outcome: outcome)
        guard let value = outcome.value as? JSONValue else {
            throw AgentRuntimeError(code: .structuredOutputMissing, message: "the turn ended without a structured reply")
        }
        return AgentSendResult(value: value, summary: summary)
    }

    /// ``start(_:in:)`` for a one-shot reply validated against a run-time `format`, as
    /// ``sendWithSummary(_:in:format:)``: the validated value arrives as the committed assistant
    /// message's ``CodexCore/AgentMessage/structuredOutput`` payload.
    public func start(_ request: Request, in threadID: AgentThreadID, format: AgentStructuredOutputFormat) async throws -> AgentTurnExecution {
        let contract = try StructuredContract(format: format)
        return try await beginExecution(request, in: threadID, structured: .oneShot(contract), outcome: nil)
    }

    /// The active persistent turn of a thread, if any.
    public func activeTurnID(in threadID: AgentThreadID) -> AgentTurnID? {
        activeTurns.activeTurn(in: threadID)
    }

    /// Interrupts the thread's active persistent turn: the turn is recorded `.interrupted`, the thread
    /// returns to idle, the stream emits `turnInterrupted` and ends with `CancellationError`.
    /// - Parameter expectedTurnID: When given, only that turn is interrupted.
    /// - Throws: `turn_not_active` when no such turn is running.
    public func interrupt(in threadID: AgentThreadID, expectedTurnID: AgentTurnID? = nil) async throws {
        try activeTurns.interrupt(in: threadID, expectedTurnID: expectedTurnID)
    }

    /// Adds input to the thread's active persistent turn: it is sent with the turn's next model request,
    /// and when the current response would finish the turn, one more request is made for it. It cannot
    /// change a response already being generated. Acceptance is decided together with the backend's
    /// completion decision, so an accepted steer is always consumed by this turn (its user message is
    /// committed when the backend sends it) and a refused one never is.
    ///
    /// ```swift
    /// try await runtime.steer("Focus on recent results.", in: threadID, expectedTurnID: turnID)
    /// ```
    ///
    /// - Parameters:
    ///   - text: The input.
    ///   - images: Images sent with it (each within ``CodexCore/AgentImageAttachment/maximumByteCount``,
    ///     at most ``CodexCore/AgentImageAttachment/maximumPerMessage``).
    ///   - threadID: The thread.
    ///   - expectedTurnID: When given, only that turn is steered.
    /// - Throws: ``CodexCore/AgentRuntimeError`` `turn_not_active` (no such turn, a stale ID, a finished
    ///   turn, or one whose final structured output has begun), `steering_queue_full` (512 queued),
    ///   `steering_unsupported`, `image_too_large`, `too_many_images`.
    public func steer(_ text: String, images: [AgentImageAttachment] = [], in threadID: AgentThreadID, expectedTurnID: AgentTurnID? = nil) async throws {
        guard images.count <= AgentImageAttachment.maximumPerMessage else {
            throw AgentRuntimeError(code: .tooManyImages, message: "at most \(AgentImageAttachment.maximumPerMessage) images per message")
        }
        for image in images { try image.validate() }
        let steer = try await activeTurns.steering(in: threadID, expectedTurnID: expectedTurnID)
        try await steer(text, images)
        configuration.logSink.record(AgentLogEvent(level: .info, category: .runtime, name: "runtime.turn.steered", metadata: ["thread_id": threadID.rawValue]))
    }

    /// Prepares the stored state after a restart: turns a previous process left running (it was killed
    /// mid-turn) are recorded `.interrupted` and their threads set `.idle`. Optional — each thread's next
    /// turn does the same for that thread — but it makes `threads()` accurate at once.
    ///
    /// Only abandoned turns are closed: a running turn whose owner (another runtime instance, in this or
    /// another process, on the same store) still holds its owner lease is left alone.
    ///
    /// A caller cancelled before it begins changes nothing; a caller cancelled while storage is locked
    /// (another process holds the database) leaves at once with `CancellationError`, and the recovery
    /// write runs in order when storage is available.
    /// With ``AgentTurnRecoveryPolicy/resume(unfinishedCalls:maximumAttempts:authorizeAttempt:)``, an
    /// abandoned durable turn is resumed instead (``resumeTurn(_:in:)``) and run to its end, as is a turn
    /// parked for an approval that has been answered; one that cannot be resumed (no journal) is closed.
    /// - Returns: How many abandoned turns were closed or resumed.
    @discardableResult
    public func recoverAbandonedTurns() async throws -> Int {
        try Task.checkCancellation()
        if configuration.turnRecovery.resumes { return try await resumeAbandonedTurns() }
        let now = configuration.wallClock.now()
        let activeTurns = self.activeTurns
        let ownership = self.ownership
        let logSink = configuration.logSink
        return try await writer.read { store in
            logSink.record(AgentLogEvent(level: .debug, category: .runtime, name: "runtime.start.recovering"))
            var closed = 0
            for thread in try await store.threads() where thread.status != .idle && activeTurns.activeTurn(in: thread.id) == nil {
                switch try await Self.closeAbandonedTurn(of: thread.id, in: store, at: now, ownership: ownership) {
                case .closed:
                    closed += 1
                case .noneRunning:
                    try await store.upsertThread({ var idle = thread; idle.settle(.idle, at: now); return idle }())
                case .liveElsewhere:
                    break
                }
            }
            return closed
        }
    }

    /// Waits until every state write accepted so far (including interruption records of turns whose
    /// callers left early) has reached the store.
    public func flushPendingWrites() async {
        await writer.drain()
    }

    /// Reads a turn's stream to its end and returns its summary.
    private func consume(_ stream: AgentEventStream<AgentEvent>, outcome: TurnOutcome) async throws -> AgentTurnSummary {
        var summary: AgentTurnSummary?
        for try await event in stream {
            // The turn is committed once `turnCompleted` arrives: a cancellation after it changes nothing.
            if case .turnCompleted(let completed) = event {
                summary = completed
                break
            }
        }
        guard let summary = summary ?? outcome.summary else {
            throw AgentRuntimeError(code: .turnSummaryMissing, message: "the turn ended without a summary")
        }
        return summary
    }
}
