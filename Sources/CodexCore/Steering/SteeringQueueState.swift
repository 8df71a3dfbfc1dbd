/// The steering queue of one backend turn as a pure state machine: accepting input and deciding that
/// the turn completes are steps of one value, so under one lock every steer is either accepted before
/// the completion decision (and then consumed by a later request of the turn) or refused after it. Every
/// backend of this package that steers follows it (the built-in backend and the fixture backend).
package struct SteeringQueueState: Sendable {
    /// One accepted steer.
    package struct Input: Sendable, Hashable {
        package var text: String
        package var images: [AgentImageAttachment]

        /// Creates an input.
        package init(text: String, images: [AgentImageAttachment]) {
            self.text = text
            self.images = images
        }
    }

    /// What the turn does when a response finishes without tool calls.
    package enum CompletionDecision: Sendable, Hashable {
        /// Nothing is queued: the turn completes, and the queue refuses from now on.
        case finish
        /// Input is queued: send one more request with it.
        case continueWith([Input])
    }

    /// The most queued inputs.
    package static let capacity = 512

    package private(set) var queued: [Input] = []
    package private(set) var isClosed = false

    /// An empty, open queue.
    package init() {}

    /// Queues `input` for the next request.
    ///
    /// - Throws: `turn_not_active` once the turn's completion was decided or it ended;
    ///   `steering_queue_full` at ``capacity``.
    package mutating func accept(_ input: Input) throws(AgentRuntimeError) {
        guard !isClosed else {
            throw AgentRuntimeError(code: .turnNotActive, message: "the turn is finishing or has ended; start a new turn")
        }
        guard queued.count < Self.capacity else {
            throw AgentRuntimeError(code: .steeringQueueFull, message: "the turn already has \(Self.capacity) queued steering inputs")
        }
        queued.append(input)
    }

    /// Takes the oldest queued input, if any.
    package mutating func takeFirst() -> Input? {
        queued.isEmpty ? nil : queued.removeFirst()
    }

    /// Takes everything queued, for the request about to be sent (after tool results). When that
    /// request is the turn's last (`closing`), the queue also refuses from now on: no later request could
    /// carry more.
    package mutating func drain(closing: Bool = false) -> [Input] {
        if closing { isClosed = true }
        defer { queued = [] }
        return queued
    }

    /// Decides, when a response finished without tool calls, whether the turn completes; `closing` as
    /// for ``drain(closing:)`` when the request it would add is the turn's last.
    package mutating func decideCompletion(closing: Bool = false) -> CompletionDecision {
        guard !queued.isEmpty else {
            isClosed = true
            return .finish
        }
        return .continueWith(drain(closing: closing))
    }

    /// Refuses further input (the turn failed, was interrupted or ended); returns what was still queued.
    package mutating func close() -> [Input] {
        isClosed = true
        return drain()
    }
}
