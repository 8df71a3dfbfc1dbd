import CodexCore
import CodexSchema
import Foundation
import Synchronization

/// Runs one accepted turn against the backend: translates backend events into runtime events, runs
/// tool batches within the tool-call budget, and checks the reply (structured or not) before it is
/// accepted. Everything it produces is committed by the caller only after a valid completion.
struct TurnDriver: Sendable {
    let runtime: AgentRuntime
    let plan: TurnPlan
    let channel: AgentEventChannel<AgentEvent>
    /// Images executors gave as bytes, until their batch ends.
    let toolOutputs = ToolCallOutputs()
    /// The number of the turn's next usage-ledger record, kept across the drive's restarts.
    let usageNumbers = TurnUsageNumbers()

    /// The turn's mutable progress (local to one drive).
    struct Progress {
        var toolCalls = 0
        /// The model pass whose response is being read (1-based), for a durable turn's journal.
        var pass = 1
        /// The digest of the current pass's input, chained from pass to pass.
        var inputDigest = ""
        /// Every call answered in this turn: its arguments and result (repeats are answered from it).
        var answeredCalls: [ToolInvocationID: (arguments: String, result: ToolResultEnvelope)] = [:]
        var usage: AgentUsage?
        var pendingItems: [AgentHistoryItem] = []
        var pendingMessages: [AgentMessage] = []
        var committedMessages: [AgentMessage] = []
        var lastReply: AgentMessage?
        var structuredValue: (any Sendable)?
        var structuredCommitted = false
        var frame: StructuredStreamParser?
        var fedDeltas = false
        var sawMessage = false
        /// Plain text streamed since the last completed message.
        var deltaText = ""
        /// A committed payload a custom backend reported, to store with the next assistant message.
        var backendCommit: AgentStructuredOutputMetadata?
        /// Steered input arrived after the committed payload: the next payload replaces it.
        var commitReplaceable = false
        /// The digest of the payload the current message's frame committed, hashed beside its decoding.
        var committedDigest: String?
    }

    /// Starts the backend's turn and runs it. A readiness failure that is safe to retry starts the turn
    /// again under the runtime's readiness retry policy (see ``readinessRetry(after:attempt:)``).
    func drive() async throws -> TurnSuccess {
        let backend = runtime.configuration.backend
        var attempt = 1
        var backendRequest = plan.backendRequest
        var compactedAfterLimit = false
        let start = try await prepareDurableDrive(&backendRequest)
        while true {
            let watch = BeforeOutputWatch()
            let turnStream = try await backend.startTurn(backendRequest)
            // Backends that opted into explicit interruption are told once: at cancellation (releasing
            // their waits at once) or when the turn (or this attempt) fails, whichever comes first.
            let interruption = OnceAction(turnStream.interrupt)
            do {
                return try await withTaskCancellationHandler {
                    do {
                        try await turnStream.waitUntilReady()
                    } catch {
                        throw ReadinessFailure(error: error)
                    }
                    // Steering attaches once the request is accepted, so no steer is taken by an attempt
                    // that is then retried.
                    if plan.persistent { runtime.activeTurns.attachSteering(plan.threadID, turnID: plan.turnID, watch.steer(turnStream.steer)) }
                    plan.readiness.open()
                    do {
                        return try await run(turnStream, watch: watch, start: start)
                    } catch let error as AgentRuntimeError where error.code == .contextLengthExceeded && !watch.reachedHost {
                        // Refused as too long after the request was accepted (`response.failed`), before
                        // anything reached the host or a steer was taken: as safe to retry as a refusal.
                        throw ReadinessFailure(error: error)
                    }
                } onCancel: {
                    Task { await interruption.run() }
                }
            } catch let failure as ReadinessFailure {
                await interruption.run()
                // Too long for the model, before any output: compact once and send the request again once.
                if !compactedAfterLimit, !watch.reachedHost,
                   let compacted = try await runtime.compactAfterContextLimit(plan, failure: failure.error, history: backendRequest.history) {
                    compactedAfterLimit = true
                    backendRequest.history = compacted
                    continue
                }
                try await readinessRetry(after: failure.error, attempt: attempt)
                attempt += 1
            } catch {
                await interruption.run()
                throw error
            }
        }
    }

    private func run(_ turnStream: AgentTurnStream, watch: BeforeOutputWatch, start: Progress) async throws -> TurnSuccess {
        var progress = start
        var completion: AgentTurnSummary?
        for try await event in turnStream.events {
            try Task.checkCancellation()
            watch.note(event)
            if case .turnCompleted(let summary) = event {
                completion = summary
                break
            }
            try await handle(event, progress: &progress, turnStream: turnStream)
        }
        try Task.checkCancellation()
        guard let completion else {
            throw AgentRuntimeError(code: .turnSummaryMissing, message: "the backend ended the turn without turnCompleted")
        }
        if let final = completion.finalMessage, !progress.sawMessage {
            try await handleMessage(final, progress: &progress)
        } else if progress.fedDeltas || !progress.deltaText.isEmpty {
            // Text streamed after the last completed message, which the backend never completed.
            try await handleMessage(AgentMessage(threadID: plan.threadID, role: .assistant, text: progress.deltaText), progress: &progress)
        }
        return try finish(completion, progress: progress)
    }

    // MARK: - Events

    private func handle(_ event: AgentBackendEvent, progress: inout Progress, turnStream: AgentTurnStream) async throws {
        switch event {
        case .turnStarted, .providerContextUpdated, .turnCompleted:
            break
        case .progress(let value):
            if case .oneShot = plan.structured, case .messageStarted(_, .finalAnswer?) = value {
                // The final one-shot reply (the structured output) has begun.
                runtime.activeTurns.closeSteering(plan.threadID, turnID: plan.turnID)
            }
            try await channel.send(.progress(value))
        case .rateLimitsUpdated(let limits):
            if let metrics = AgentSpan.current?.telemetry.metrics { TurnTelemetry.record(limits, metrics: metrics) }
            try await channel.send(.rateLimitsUpdated(limits))
        case .usageUpdated(let usage):
            progress.usage = progress.usage.map { $0 + usage } ?? usage
            recordUsage(usage)
        case .assistantMessageDelta(let delta):
            try await handleDelta(delta, progress: &progress)
        case .assistantMessageCompleted(let message):
            try await handleMessage(message, progress: &progress)
        case .structuredOutputPartial(let snapshot):
            try await forwardPartial(snapshot)
        case .structuredOutputCommitted(let snapshot):
            try await acceptBackendCommit(snapshot, progress: &progress)
        case .structuredOutputValidationFailed(let error):
            throw error
        case .toolCallRequested(let invocation):
            try await runTools([invocation], progress: &progress, turnStream: turnStream)
        case .toolCallsRequested(let invocations):
            try await runTools(invocations, progress: &progress, turnStream: turnStream)
        case .userMessageAccepted(var message):
            // Steered input after a committed payload asks for an updated reply: its payload replaces it.
            if progress.structuredCommitted { progress.commitReplaceable = true }
            message.threadID = plan.threadID
            progress.pendingItems.append(.message(message))
            progress.pendingMessages.append(message)
        case .reasoningCompleted(let item):
            progress.pendingItems.append(.reasoning(item))
        case .unknown(let unknown):
            try await channel.send(.unknown(unknown))
        }
    }

    private func handleDelta(_ delta: String, progress: inout Progress) async throws {
        guard case .streamed(let contract, _) = plan.structured else {
            progress.deltaText += delta
            try await channel.send(.assistantMessageDelta(plan.threadID, plan.turnID, delta))
            return
        }
        if progress.frame == nil { progress.frame = contract.streamParser() }
        progress.fedDeltas = true
        // Mutated in place (optional chaining): a copy would duplicate the payload buffer on every delta.
        let outputs = try progress.frame?.feed(delta) ?? []
        if progress.frame?.hasBegunPayload == true {
            // The final structured output has begun: the turn takes no more steering.
            runtime.activeTurns.closeSteering(plan.threadID, turnID: plan.turnID)
        }
        try await emit(outputs, contract: contract, progress: &progress)
    }

    private func handleMessage(_ received: AgentMessage, progress: inout Progress) async throws {
        var message = received
        message.threadID = plan.threadID
        progress.sawMessage = true
        progress.deltaText = ""
        if message.role.rawValue.isEmpty { message.role = .assistant }
        switch plan.structured {
        case .none:
            break
        case .oneShot(let contract):
            if message.phase != .commentary, message.role == .assistant, message.images.isEmpty || !message.text.isEmpty {
                let accepted = try await contract.acceptOneShotWithDigest(message.text)
                message.structuredOutput = AgentStructuredOutputMetadata(
                    formatName: contract.format.name, payload: accepted.value, payloadDigest: accepted.payloadDigest
                )
                progress.structuredValue = accepted.decoded
                progress.structuredCommitted = true
            }
        case .streamed(let contract, _):
            var frame = progress.frame ?? contract.streamParser()
            progress.frame = nil  // one owner of the payload buffer before it is mutated
            var outputs: [StructuredStreamOutput] = []
            if !progress.fedDeltas { outputs += try frame.feed(message.text) }
            outputs += try frame.finish()
            try await emit(outputs, contract: contract, progress: &progress, forwardText: progress.fedDeltas)
            message.text = frame.visibleText
            if let commit = frame.committed {
                let digest = progress.committedDigest ?? AgentStructuredOutputMetadata.payloadDigest(of: commit.document)
                message.structuredOutput = AgentStructuredOutputMetadata(formatName: contract.format.name, payload: commit.value, payloadDigest: digest)
            }
            progress.committedDigest = nil
            progress.fedDeltas = false
        }
        if message.role == .assistant, message.structuredOutput == nil, let commit = progress.backendCommit {
            message.structuredOutput = commit
            progress.backendCommit = nil
        }
        // The reply `send` returns: the last non-commentary assistant message, preferring one with text
        // over a later image-only message.
        if message.role == .assistant, message.phase != .commentary, !message.text.isEmpty || progress.lastReply?.text.isEmpty != false {
            progress.lastReply = message
        }
        progress.pendingItems.append(.message(message))
        progress.pendingMessages.append(message)
    }

    // MARK: - Streamed structured output

    private func emit(
        _ outputs: [StructuredStreamOutput], contract: StructuredContract, progress: inout Progress, forwardText: Bool = true
    ) async throws {
        for output in outputs {
            switch output {
            case .text(let text):
                if forwardText, !text.isEmpty { try await channel.send(.assistantMessageDelta(plan.threadID, plan.turnID, text)) }
            case .partial(let value, _):
                // The frame parser emitted it only after it decoded into the Swift type.
                try await channel.send(.structuredOutputPartial(AgentStructuredOutputSnapshot(formatName: contract.format.name, value: value, isCommitted: false)))
            case .committed(let commit):
                guard !progress.structuredCommitted || progress.commitReplaceable else {
                    throw AgentRuntimeError(code: .structuredOutputInvalid, message: "the reply carried more than one structured payload")
                }
                // The parser validated the payload fully with this contract's validator.
                let accepted = try await contract.decodeValidatedWithDigest(commit)
                progress.structuredValue = accepted.decoded
                progress.committedDigest = accepted.payloadDigest
                progress.structuredCommitted = true
                progress.commitReplaceable = false
                try await channel.send(.structuredOutputCommitted(AgentStructuredOutputSnapshot(formatName: contract.format.name, value: commit.value, isCommitted: true)))
            }
        }
    }

    /// A partial snapshot a custom backend produced itself: forwarded only when it passes the partial
    /// checks (or when the turn is not structured).
    private func forwardPartial(_ snapshot: AgentStructuredOutputSnapshot) async throws {
        if let contract = plan.structured.contract {
            guard (try? contract.validator.isValid(snapshot.value, mode: .partial)) == true,
                  contract.decodes(snapshot.value) else { return }
        }
        try await channel.send(.structuredOutputPartial(snapshot))
    }

    /// A committed payload a custom backend produced itself: validated and decoded like our own.
    private func acceptBackendCommit(_ snapshot: AgentStructuredOutputSnapshot, progress: inout Progress) async throws {
        if let contract = plan.structured.contract {
            guard !progress.structuredCommitted else {
                throw AgentRuntimeError(code: .structuredOutputInvalid, message: "the reply carried more than one structured payload")
            }
            let bytes = Array(snapshot.value.compactString().utf8)
            guard bytes.count <= StructuredContract.maximumPayloadBytes else {
                throw AgentRuntimeError(code: .structuredOutputTooLarge, message: "the structured payload exceeds 4 MiB")
            }
            progress.structuredValue = try contract.accept(snapshot.value)
            progress.structuredCommitted = true
            progress.backendCommit = AgentStructuredOutputMetadata(formatName: contract.format.name, payload: snapshot.value)
        }
        try await channel.send(.structuredOutputCommitted(snapshot))
    }

    // MARK: - Completion

    private func finish(_ completion: AgentTurnSummary, progress: Progress) throws -> TurnSuccess {
        switch plan.structured {
        case .none:
            break
        case .oneShot:
            guard progress.structuredCommitted else {
                throw AgentRuntimeError(code: .structuredOutputMissing, message: "the turn ended without a structured reply")
            }
        case .streamed(_, let required):
            if required, !progress.structuredCommitted {
                throw AgentRuntimeError(code: .structuredOutputMissing, message: "the turn ended without a structured payload")
            }
        }
        var summary = completion
        summary.threadID = plan.threadID
        summary.turnID = plan.turnID
        summary.usage = completion.usage ?? progress.usage
        summary.finalMessage = progress.lastReply
        return TurnSuccess(summary: summary, items: progress.pendingItems, messages: progress.pendingMessages, value: progress.structuredValue)
    }
}

/// An async action that runs at most once, whoever asks first.
final class OnceAction: Sendable {
    private let action: Mutex<(@Sendable () async -> Void)?>

    init(_ action: (@Sendable () async -> Void)?) {
        self.action = Mutex(action)
    }

    func run() async {
        let pending = action.withLock { action in
            defer { action = nil }
            return action
        }
        await pending?()
    }
}

/// Whether anything of a backend attempt reached the host (an event the host sees) or a steer was
/// taken by it: until then the attempt can be replaced without anyone noticing.
final class BeforeOutputWatch: Sendable {
    private let reached = Mutex(false)

    /// Whether output or an accepted steer happened.
    var reachedHost: Bool { reached.withLock { $0 } }

    /// Notes an event of the attempt; only bookkeeping events leave it untouched.
    func note(_ event: AgentBackendEvent) {
        switch event {
        case .turnStarted, .providerContextUpdated, .rateLimitsUpdated, .usageUpdated: break
        default: reached.withLock { $0 = true }
        }
    }

    /// `steer`, noting each accepted steer.
    func steer(_ steer: ActiveTurnRegistry.Steer?) -> ActiveTurnRegistry.Steer? {
        guard let steer else { return nil }
        return { text, images in
            try await steer(text, images)
            self.reached.withLock { $0 = true }
        }
    }
}
