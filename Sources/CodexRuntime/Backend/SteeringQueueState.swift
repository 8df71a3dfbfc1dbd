import CodexCore

/// The steering queue of one backend turn as a pure state machine: accepting input and deciding that
/// the turn completes are steps of one value, so under one lock every steer is either accepted before
/// the completion decision (and then consumed by a later request of the turn) or refused after it.
struct SteeringQueueState: Sendable {
    /// One accepted steer.
    struct Input: Sendable, Hashable {
        var text: String
        var images: [AgentImageAttachment]
    }

    /// What the turn does when a response finishes without tool calls.
    enum CompletionDecision: Sendable, Hashable {
        /// Nothing is queued: the turn completes, and the queue refuses from now on.
        case finish
        /// Input is queued: send one more request with it.
        case continueWith([Input])
    }

    /// The most queued inputs.
    static let capacity = 512

    private(set) var queued: [Input] = []
    private(set) var isClosed = false

    /// Queues `input` for the next request.
    ///
    /// - Throws: `turn_not_active` once the turn's completion was decided or it ended;
    ///   `steering_queue_full` at ``capacity``.
    mutating func accept(_ input: Input) throws(AgentRuntimeError) {
        guard !isClosed else {
            throw AgentRuntimeError(code: .turnNotActive, message: "the turn is finishing or has ended; start a new turn")
        }
        guard queued.count < Self.capacity else {
            throw AgentRuntimeError(code: .steeringQueueFull, message: "the turn already has \(Self.capacity) queued steering inputs")
        }
        queued.append(input)
    }

    /// Takes the oldest queued input, if any.
    mutating func takeFirst() -> Input? {
        queued.isEmpty ? nil : queued.removeFirst()
    }

    /// Takes everything queued, for the request about to be sent (after tool results). When that
    /// request is the turn's last (`closing`), the queue also refuses from now on: no later request could
    /// carry more.
    mutating func drain(closing: Bool = false) -> [Input] {
        if closing { isClosed = true }
        defer { queued = [] }
        return queued
    }

    /// Decides, when a response finished without tool calls, whether the turn completes; `closing` as
    /// for ``drain(closing:)`` when the request it would add is the turn's last.
    mutating func decideCompletion(closing: Bool = false) -> CompletionDecision {
        guard !queued.isEmpty else {
            isClosed = true
            return .finish
        }
        return .continueWith(drain(closing: closing))
    }

    /// Refuses further input (the turn failed, was interrupted or ended); returns what was still queued.
    mutating func close() -> [Input] {
        isClosed = true
        return drain()
    }
}
