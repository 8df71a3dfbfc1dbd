/// How an observation treats a reader that falls behind.
public enum AgentObservationBuffering: Sendable, Hashable {
    /// Keep only the newest snapshot: a slow reader skips intermediate ones and never falls behind.
    case latest
    /// Keep every snapshot, up to `limit` unread (clamped to 1…4,096; default 64). A reader further
    /// behind gets the buffered snapshots, then `observation_buffer_overflow`: the buffer never grows.
    case buffered(limit: Int = 64)

    /// The limits `buffered(limit:)` is clamped to.
    public static let limitRange = 1...4096

    /// The effective buffer size (`nil` for `.latest`).
    var bufferLimit: Int? {
        guard case .buffered(let limit) = self else { return nil }
        return min(max(limit, Self.limitRange.lowerBound), Self.limitRange.upperBound)
    }
}

/// A live view of runtime state as an async sequence of snapshots: the current value first, then a new
/// one after each change the runtime's state store accepted.
///
/// ```swift
/// for try await threads in runtime.observeThreads() {
///     render(threads)
/// }
/// ```
///
/// Snapshots are read from the state store in order with the runtime's writes, so each reflects every
/// write before it. Ending the loop (or cancelling its task) stops the observation.
public struct AgentObservation<Element: Sendable>: AsyncSequence, Sendable {
    /// The sequence's failure type.
    public typealias Failure = any Error

    let stream: AsyncThrowingStream<Element, any Error>

    /// Iterates the snapshots.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Element, any Error>.AsyncIterator

        /// The next snapshot, or `nil` when the observed thread was deleted.
        /// - Throws: `observation_buffer_overflow` (buffered policy), `thread_not_found` when the thread
        ///   did not exist, or the state store's error.
        public mutating func next() async throws -> Element? {
            try await base.next()
        }
    }

    /// Makes an iterator; consume an observation from one task.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator())
    }
}
