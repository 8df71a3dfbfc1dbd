/// The consumer side of a runtime event stream: an `AsyncSequence` over an ``AgentEventChannel``.
/// Consume it from one task. Cancelling that task, or releasing the stream and its iterator, cancels the
/// producer: its next (or waiting) send fails, so the turn stops instead of running unobserved.
public struct AgentEventStream<Element: Sendable>: AsyncSequence, Sendable {
    /// Holds the channel for the stream and its iterator; when the last of them is released, the
    /// consumer is gone.
    final class Consumer: Sendable {
        let channel: AgentEventChannel<Element>
        init(_ channel: AgentEventChannel<Element>) { self.channel = channel }
        deinit { channel.cancelConsumer() }
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
            try await consumer.channel.next()
        }
    }
}
