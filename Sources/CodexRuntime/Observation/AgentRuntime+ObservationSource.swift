import CodexCore
import Synchronization

/// What one read of an observation produced.
enum ObservationStep<Value: Sendable>: Sendable {
    /// A snapshot to deliver.
    case value(Value)
    /// Nothing new to deliver.
    case unchanged
    /// The observed thing is gone: the sequence ends.
    case finished
}

/// One observation's tie to the change feed: subscribed at most once, ended at most once, whichever of
/// the reader leaving and the observation finishing comes first.
final class ObservationLink: Sendable {
    private struct State {
        var ended = false
        var subscription: UInt64?
    }

    private let state = Mutex(State())
    let feed: RuntimeChangeFeed

    init(feed: RuntimeChangeFeed) {
        self.feed = feed
    }

    var isEnded: Bool { state.withLock { $0.ended } }

    /// Subscribes `handler` unless the observation already ended.
    func subscribe(_ handler: @escaping RuntimeChangeFeed.Handler) {
        state.withLock { state in
            guard !state.ended else { return }
            state.subscription = feed.subscribe(handler)
        }
    }

    /// Ends the observation's subscription.
    func end() {
        let subscription = state.withLock { state -> UInt64? in
            state.ended = true
            defer { state.subscription = nil }
            return state.subscription
        }
        if let subscription { feed.unsubscribe(subscription) }
    }
}

extension AgentRuntime {
    /// Builds an observation. One step of the write queue reads the initial snapshot and subscribes to
    /// the change feed, so every later write is seen exactly once; each relevant write then reads the
    /// next snapshot inside its own queue step, so a snapshot is exactly the state after that write.
    ///
    /// - Parameters:
    ///   - buffering: The reader policy.
    ///   - relevant: Which changes produce a read.
    ///   - read: One read: `nil` for the initial snapshot, else the change just made.
    func observation<Value: Sendable>(
        buffering: AgentObservationBuffering, relevant: @escaping @Sendable (RuntimeChange) -> Bool,
        read: @escaping @Sendable (any RuntimeStateStore, RuntimeChange?) async throws -> ObservationStep<Value>
    ) -> AgentObservation<Value> {
        let limit = buffering.bufferLimit
        let (stream, output) = AsyncThrowingStream<Value, any Error>.makeStream(
            bufferingPolicy: limit.map { .bufferingOldest($0) } ?? .bufferingNewest(1)
        )
        let link = ObservationLink(feed: changes)
        output.onTermination = { _ in link.end() }
        /// Delivers one step; `false` when the observation ended with it.
        let deliver: @Sendable (ObservationStep<Value>) -> Bool = { step in
            switch step {
            case .unchanged:
                return true
            case .finished:
                output.finish()
                return false
            case .value(let value):
                guard case .dropped = output.yield(value), let limit else { return true }
                output.finish(throwing: AgentRuntimeError(
                    code: .observationBufferOverflow, message: "the observation's reader fell more than \(limit) snapshots behind"
                ))
                return false
            }
        }
        writer.enqueue { store in
            guard !link.isEnded else { return }
            do {
                guard deliver(try await read(store, nil)) else { return }
            } catch {
                output.finish(throwing: error)
                return
            }
            link.subscribe { change, store in
                guard relevant(change) else { return true }
                do {
                    return deliver(try await read(store, change))
                } catch {
                    output.finish(throwing: error)
                    return false
                }
            }
        }
        return AgentObservation(stream: stream)
    }
}
