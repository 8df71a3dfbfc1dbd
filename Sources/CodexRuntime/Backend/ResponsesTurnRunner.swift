import CodexCore
import CodexTransport

/// The producer of one Responses backend turn: runs the model passes, publishes events into the
/// turn's bounded channel, waits for tool results between passes and enforces the turn budgets.
///
/// It pulls one Responses event at a time and publishes its backend events before reading on, so a
/// paused reader (a full channel) pauses the network read. It ends the channel exactly once: with
/// `turnCompleted` (a lifecycle slot) and a clean finish, or with the error that ended the turn
/// (`CancellationError` when interrupted or when the reader went away).
final class ResponsesTurnRunner: Sendable {
    let client: ResponsesClient
    let turn: AgentBackendTurnRequest
    let firstRequest: ResponsesRequest
    let maximumPasses: Int
    let maximumBytes: Int
    let maximumItems: Int
    let channel: AgentEventChannel<AgentBackendEvent>
    let toolResults = ToolResultCollector()
    /// Input the host queued for this turn's next request.
    let steering = SteeringQueue()
    let readiness = ReadinessLatch()
    let logSink: any AgentLogSink

    init(
        client: ResponsesClient, turn: AgentBackendTurnRequest, configuration: CodexResponsesBackendConfiguration,
        channel: AgentEventChannel<AgentBackendEvent>, logSink: any AgentLogSink
    ) {
        self.client = client
        self.turn = turn
        firstRequest = ResponsesRequestBuilder.request(for: turn, configuration: configuration)
        let budgets = configuration.budgets
        maximumPasses = budgets.passes
        maximumBytes = budgets.bytes
        maximumItems = budgets.items
        self.channel = channel
        self.logSink = logSink
    }

    /// Runs the turn to its end; never throws (the outcome goes into the channel).
    func run() async {
        do {
            let summary = try await runPasses()
            steering.close()
            toolResults.close()
            readiness.open()
            try? channel.sendLifecycle(.turnCompleted(summary))
            channel.finish()
        } catch {
            let failure: any Error = error is AgentEventChannel<AgentBackendEvent>.SendFailure ? CancellationError() : error
            steering.close()
            toolResults.close()
            readiness.fail(failure)
            logSink.record(AgentLogEvent(
                level: failure is CancellationError ? .info : .warning, category: .runtime,
                name: failure is CancellationError ? "backend.turn.cancelled" : "backend.turn.failed",
                message: failure is CancellationError ? "the turn was cancelled" : "the turn failed",
                metadata: ["turn_id": turn.turnID.rawValue, "error_code": (failure as? AgentRuntimeError)?.code.rawValue ?? "cancelled"]
            ))
            channel.finish(throwing: failure)
        }
    }

    /// The pass loop: stream a response, publish its events, and either finish (no function calls) or
    /// hand the calls to the host, wait for every result and send the next pass.
    private func runPasses() async throws -> AgentTurnSummary {
        var state = ResponsesTurnState(threadID: turn.threadID, turnID: turn.turnID, maximumItems: maximumItems)
        var request = firstRequest
        var bytesOfEarlierPasses = 0
        var passes = 0
        // Input steered before the first request goes with it; a one-pass turn takes no more.
        try await appendSteering(steering.drain(closing: maximumPasses <= 1), to: &request)
        while true {
            passes += 1
            guard passes <= maximumPasses else { throw AgentRuntimeError.executionLimitExceeded(.modelPasses) }
            state.beginPass()
            bytesOfEarlierPasses += try await streamPass(request, state: &state, bytesOfEarlierPasses: bytesOfEarlierPasses)

            let calls = state.pass.functionCalls
            guard !calls.isEmpty else {
                // Serialized with steering: queued input gets one more request; otherwise the turn ends
                // and later steers are refused.
                guard passes < maximumPasses else {
                    // No pass is left for queued input: the queue was closed when the last request went.
                    return state.summary()
                }
                guard case .continueWith(let inputs) = steering.decideCompletion(closing: passes + 1 >= maximumPasses) else {
                    return state.summary()
                }
                request.input.append(contentsOf: state.pass.replayItems)
                try await appendSteering(inputs, to: &request)
                continue
            }
            // Every announced call needs a later pass for its result; fail before the host runs tools
            // whose results could never be sent.
            guard passes < maximumPasses else { throw AgentRuntimeError.executionLimitExceeded(.modelPasses) }
            let invocations = try invocations(for: calls)
            toolResults.announce(invocations)
            if invocations.count == 1, let only = invocations.first {
                try await channel.send(.toolCallRequested(only))
            } else {
                try await channel.send(.toolCallsRequested(invocations))
            }
            let results = try await toolResults.results()
            request.input.append(contentsOf: state.pass.replayItems)
            request.input.append(contentsOf: results.map(ResponsesInputItem.toolResult))
            try await appendSteering(steering.drain(closing: passes + 1 >= maximumPasses), to: &request)
        }
    }

    /// Adds accepted steering input to the next request as user messages, and reports each as consumed
    /// (`userMessageAccepted`: the runtime commits it with the turn).
    private func appendSteering(_ inputs: [SteeringQueueState.Input], to request: inout ResponsesRequest) async throws {
        for input in inputs {
            request.input.append(.user(input.text, images: input.images))
            try await channel.send(.userMessageAccepted(AgentMessage(threadID: turn.threadID, role: .user, text: input.text, images: input.images)))
        }
    }

    /// Streams one response and publishes its events.
    ///
    /// - Returns: The bytes the pass received (all its attempts, SSE framing included).
    private func streamPass(_ request: ResponsesRequest, state: inout ResponsesTurnState, bytesOfEarlierPasses: Int) async throws -> Int {
        var iterator = client.stream(request, sessionID: turn.threadID.rawValue, clientRequestID: turn.turnID.rawValue).makeAsyncIterator()
        // Checked on every chunk, also for bytes that never become an event (comments, keep-alives).
        iterator.maximumReceivedBytes = max(0, maximumBytes - bytesOfEarlierPasses)
        let log = logSink
        while let event = try await iterator.next() {
            readiness.open()
            guard bytesOfEarlierPasses + iterator.receivedBytes <= maximumBytes else {
                throw AgentRuntimeError.executionLimitExceeded(.responseBytes)
            }
            for mapped in try state.map(event, log: { log.record($0) }) {
                try await channel.send(mapped)
            }
        }
        return iterator.receivedBytes
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
