/// The consumer side of a runtime event stream: an `AsyncSequence` over an ``AgentEventChannel``.
/// Consume it from one task. Cancelling that task, or releasing the stream and its iterator, cancels the
/// producer: its next (or waiting) send fails, so the turn stops instead of running unobserved.
public struct AgentEventStream<Element: Sendable>: AsyncSequence, Sendable {
    /// Holds the channel for the stream and its iterator; when the last of them is released, the
    /// consumer is gone.
    final class Consumer: Sendable {
        let channel: AgentEventChannel<Element>
        /// The channel's `next()` and `cancelConsumer()`, bound where the runtime makes the stream, in
        /// code compiled for its element type. A host iterates from another module, where only the
        /// generic entry points are visible: through these it reaches the channel's code compiled for
        /// `AgentEvent` instead of running it generically (which looks up type metadata on every call).
        let nextElement: @Sendable () async throws -> Element?
        let cancel: @Sendable () -> Void

        init(_ channel: AgentEventChannel<Element>) {
            self.channel = channel
            nextElement = { try await channel.next() }
            cancel = { channel.cancelConsumer() }
        }

        deinit { cancel() }
    }

    let consumer: Consumer

    init(_ channel: AgentEventChannel<Element>) {
        consumer = Consumer(channel)
    }

    /// Makes the iterator (one per stream).
    public func makeAsyncIterator() -> Iterator {
        Iterator(consumer: consumer)
    }

    /// Reads the events in order; `nil` after the terminal event.
    public struct Iterator: AsyncIteratorProtocol {
        let consumer: Consumer

        /// The next event, `nil` at the end, or the stream's failure.
        public mutating func next() async throws -> Element? {
            try await consumer.nextElement()
        }
    }
}
