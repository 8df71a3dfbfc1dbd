import CodexCore
import CodexTransport
import Synchronization

/// One Responses backend turn as a pull-based sequence: each ``next()``, called by the task that reads
/// the turn (the runtime's turn task), advances the turn just far enough to produce its next event. No
/// task and no queue of its own: the network is read only as fast as the reader takes events, and a
/// reader's cancellation cancels the read in progress (and with it the HTTP stream).
///
/// It runs the model passes, maps Responses events to backend events (``ResponsesTurnState``), hands
/// each batch of function calls to the reader and waits, on the reader's next call, for every result
/// (``ToolResultCollector``), takes steering input between passes, and enforces the turn budgets. It
/// ends exactly once: with `turnCompleted` and then `nil`, or with the error that ended the turn
/// (`CancellationError` when interrupted).
///
/// One reader at a time: ``waitUntilReady()`` and ``next()`` are called by one task after the other
/// (the runtime calls `waitUntilReady` first); a second concurrent reader is refused. ``interrupt()``
/// may come from any task.
final class ResponsesTurnRunner: @unchecked Sendable {
    // @unchecked: the mutable fields below are touched only by the one reader, which `reading` admits
    // one call at a time; the collaborators are Sendable.
    let client: ResponsesClient
    let turn: AgentBackendTurnRequest
    let maximumPasses: Int
    let maximumBytes: Int
    let maximumItems: Int
    let toolResults = ToolResultCollector()
    /// Input the host queued for this turn's next request.
    let steering = SteeringQueue()
    /// Opened when the first response was accepted (its first event arrived), or failed.
    let readiness = ReadinessLatch()
    let logSink: any AgentLogSink
    /// Stops the HTTP stream when the turn is interrupted from another task.
    private let interruption = StreamInterruption()
    /// Admits one reader call at a time.
    private let reading = Atomic<Bool>(false)

    private enum Phase {
        /// The first request is not sent yet.
        case notStarted
        /// A pass's response is being read.
        case streaming
        /// The reader has the pass's calls; their results come before the next pass.
        case awaitingResults
        /// `turnCompleted` is queued, or the turn failed: nothing more.
        case finished
    }

    private var phase = Phase.notStarted
    private var state: ResponsesTurnState
    private var request: ResponsesRequest
    private var iterator: ResponsesEventStream.Iterator?
    private var bytesOfEarlierPasses = 0
    private var passes = 0
    /// Events produced and not yet taken, oldest first (at most one stream event's worth).
    private var pending: [AgentBackendEvent] = []
    private var pendingIndex = 0
    /// The error that ended the turn, until a ``next()`` has thrown it (a failure met by
    /// ``waitUntilReady()`` still ends the events with it).
    private var undeliveredFailure: (any Error)?

    /// The events produced and not yet taken by the reader (for tests; read by the reader's task).
    var heldEvents: Int { pending.count - pendingIndex }
    /// Whether a reader's call is in progress (for tests).
    var isBeingRead: Bool { reading.load(ordering: .acquiring) }

    init(client: ResponsesClient, turn: AgentBackendTurnRequest, configuration: CodexResponsesBackendConfiguration, logSink: any AgentLogSink) {
        self.client = client
        self.turn = turn
        request = ResponsesRequestBuilder.request(for: turn, configuration: configuration)
        let budgets = configuration.budgets
        maximumPasses = budgets.passes
        maximumBytes = budgets.bytes
        maximumItems = budgets.items
        state = ResponsesTurnState(threadID: turn.threadID, turnID: turn.turnID, maximumItems: budgets.items)
        self.logSink = logSink
    }

    /// A turn released before its end (its stream and reader gone) stops its HTTP stream.
    deinit {
        interruption.interrupt()
    }

    // MARK: - The reader's calls

    /// The turn's next event, or `nil` after `turnCompleted`.
    ///
    /// - Throws: The error that ended the turn, once (also when ``waitUntilReady()`` met it first; later
    ///   calls return `nil`), `CancellationError` when the reader was cancelled or the turn interrupted,
    ///   or `invalid_request` for a second concurrent reader.
    func next() async throws -> AgentBackendEvent? {
        try enter()
        defer { leave() }
        do {
            while true {
                if pendingIndex < pending.count {
                    let event = pending[pendingIndex]
                    pendingIndex += 1
                    if pendingIndex == pending.count {
                        pending.removeAll(keepingCapacity: true)
                        pendingIndex = 0
                    }
                    return event
                }
                if case .finished = phase {
                    guard let failure = undeliveredFailure else { return nil }
                    undeliveredFailure = nil
                    throw failure
                }
                try await advance()
            }
        } catch {
            let failure = end(after: error)
            undeliveredFailure = nil
            throw failure
        }
    }

    /// Returns once the first request was accepted: drives the turn up to its first response event
    /// (the events it produced on the way wait for ``next()``). Another task's call while the reader is
    /// busy waits for the reader to get there.
    ///
    /// - Throws: The failure of the first request (before any output), or `CancellationError`.
    func waitUntilReady() async throws {
        guard !readiness.isSettled, reading.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            return try await readiness.wait()
        }
        defer { leave() }
        do {
            while !readiness.isSettled {
                if case .finished = phase { break }
                try await advance()
            }
        } catch {
            throw end(after: error)
        }
        try await readiness.wait()
    }

    /// Stops the turn from any task: refuses further steering and results, releases a wait for results,
    /// and stops the HTTP stream (a read in progress ends at once); the reader's call then throws
    /// `CancellationError`.
    func interrupt() {
        steering.close()
        toolResults.close()
        interruption.interrupt()
    }

    private func enter() throws(AgentRuntimeError) {
        guard reading.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            throw AgentRuntimeError(code: .invalidRequest, message: "a turn's events are read by one task at a time")
        }
    }

    private func leave() {
        reading.store(false, ordering: .releasing)
    }

    // MARK: - Advancing the turn

    /// One step: send the first request, read one stream event, end a pass, or take the tool results
    /// and send the next pass.
    private func advance() async throws {
        if interruption.isInterrupted { throw CancellationError() }
        switch phase {
        case .notStarted:
            // Input steered before the first request goes with it; a one-pass turn takes no more.
            appendSteering(steering.drain(closing: maximumPasses <= 1))
            try startPass()
        case .streaming:
            guard let event = try await iterator?.next() else {
                bytesOfEarlierPasses += iterator?.receivedBytes ?? 0
                iterator = nil
                try endPass()
                return
            }
            readiness.open()
            guard bytesOfEarlierPasses + (iterator?.receivedBytes ?? 0) <= maximumBytes else {
                throw AgentRuntimeError.executionLimitExceeded(.responseBytes)
            }
            let log = logSink
            pending += try state.map(event, log: { log.record($0) })
        case .awaitingResults:
            let results = try await toolResults.results()
            if interruption.isInterrupted { throw CancellationError() }
            request.input.append(contentsOf: state.pass.replayItems)
            request.input.append(contentsOf: results.map(ResponsesInputItem.toolResult))
            appendSteering(steering.drain(closing: passes + 1 >= maximumPasses))
            try startPass()
        case .finished:
            return
        }
    }

    /// Sends the next pass's request (its stream opens on the first read).
    private func startPass() throws {
        passes += 1
        guard passes <= maximumPasses else { throw AgentRuntimeError.executionLimitExceeded(.modelPasses) }
        state.beginPass()
        var next = client.stream(request, sessionID: turn.threadID.rawValue, clientRequestID: turn.turnID.rawValue, interruption: interruption)
            .makeAsyncIterator()
        // Checked on every chunk, also for bytes that never become an event (comments, keep-alives).
        next.maximumReceivedBytes = max(0, maximumBytes - bytesOfEarlierPasses)
        iterator = next
        phase = .streaming
    }

    /// A pass's response ended: finish (no calls, nothing steered), continue with steered input, or hand
    /// the calls to the reader.
    private func endPass() throws {
        let calls = state.pass.functionCalls
        guard !calls.isEmpty else {
            // Serialized with steering: queued input gets one more request; otherwise the turn ends and
            // later steers are refused. With no pass left, the queue was closed when the last request went.
            guard passes < maximumPasses, case .continueWith(let inputs) = steering.decideCompletion(closing: passes + 1 >= maximumPasses) else {
                finish()
                return
            }
            request.input.append(contentsOf: state.pass.replayItems)
            appendSteering(inputs)
            try startPass()
            return
        }
        // Every announced call needs a later pass for its result; fail before the host runs tools whose
        // results could never be sent.
        guard passes < maximumPasses else { throw AgentRuntimeError.executionLimitExceeded(.modelPasses) }
        let invocations = try invocations(for: calls)
        toolResults.announce(invocations)
        if invocations.count == 1, let only = invocations.first {
            pending.append(.toolCallRequested(only))
        } else {
            pending.append(.toolCallsRequested(invocations))
        }
        phase = .awaitingResults
    }

    /// The turn succeeded: `turnCompleted` is the last event.
    private func finish() {
        steering.close()
        toolResults.close()
        readiness.open()
        pending.append(.turnCompleted(state.summary()))
        phase = .finished
    }

    /// The turn failed or was interrupted: releases everything, logs once, and returns the error to throw.
    private func end(after error: any Error) -> any Error {
        let failure: any Error = interruption.isInterrupted ? CancellationError() : error
        if case .finished = phase { return failure }
        phase = .finished
        iterator = nil
        pending = []
        pendingIndex = 0
        steering.close()
        toolResults.close()
        readiness.fail(failure)
        undeliveredFailure = failure
        let cancelled = failure is CancellationError
        logSink.record(AgentLogEvent(
            level: cancelled ? .info : .warning, category: .runtime,
            name: cancelled ? "backend.turn.cancelled" : "backend.turn.failed",
            message: cancelled ? "the turn was cancelled" : "the turn failed",
            metadata: ["turn_id": turn.turnID.rawValue, "error_code": (failure as? AgentRuntimeError)?.code.rawValue ?? "cancelled"]
        ))
        return failure
    }

    /// Adds accepted steering input to the next request as user messages, and reports each as consumed
    /// (`userMessageAccepted`: the runtime commits it with the turn).
    private func appendSteering(_ inputs: [SteeringQueueState.Input]) {
        for input in inputs {
            request.input.append(.user(input.text, images: input.images))
            pending.append(.userMessageAccepted(AgentMessage(threadID: turn.threadID, role: .user, text: input.text, images: input.images)))
        }
    }

    /// The host-facing invocations of a pass's function calls.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `provider_error` when a call has no call ID or two calls
    ///   share one (their results could not be told apart).
    private func invocations(for calls: [ResponsesOutputItem.FunctionCall]) throws -> [ToolInvocation] {
        var seen: Set<String> = []
        for call in calls {
            guard !call.callID.isEmpty, seen.insert(call.callID).inserted else {
                throw AgentRuntimeError(code: .providerError, message: "the response has a function call without a unique call ID")
            }
        }
        return calls.map { call in
            ToolInvocation(
                id: ToolInvocationID(rawValue: call.callID), toolName: call.name, arguments: call.arguments,
                threadID: turn.threadID, turnID: turn.turnID
            )
        }
    }
}
