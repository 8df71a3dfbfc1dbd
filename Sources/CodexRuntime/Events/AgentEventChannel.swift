import CodexCore
import Synchronization

/// The runtime's bounded, lossless event queue: a producer that finds the
/// queue full waits for capacity (nothing is dropped), admitted events keep their order, and up to
/// ``reservedLifecycleSlots`` lifecycle events (completion, failure) may go past the capacity so a full
/// queue never hides the terminal outcome. One consumer. Cancelling the consumer (or releasing its
/// iterator) cancels waiting and future producers.
final class AgentEventChannel<Element: Sendable>: Sendable {
    /// Extra slots lifecycle events may use beyond the capacity.
    static var reservedLifecycleSlots: Int { 4 }
    /// The default and bounds of the capacity (`maximumBufferedEvents`).
    static var defaultCapacity: Int { 64 }
    static var capacityRange: ClosedRange<Int> { 1...4096 }

    /// Why a send was refused.
    typealias SendFailure = AgentEventChannelSendFailure

    private typealias State = AgentEventChannelState<
        Element, CheckedContinuation<Void, any Error>, CheckedContinuation<Element?, any Error>, @Sendable () -> Void
    >

    /// The capacity (clamped to 1…4096).
    let capacity: Int
    /// Every rule lives in `State`; this class only takes its one lock and carries out what it returns.
    private let state: Mutex<State>

    /// Creates a channel with `capacity` (clamped to 1…4096).
    init(capacity: Int = AgentEventChannel.defaultCapacity) {
        self.capacity = min(max(capacity, Self.capacityRange.lowerBound), Self.capacityRange.upperBound)
        state = Mutex(State(capacity: self.capacity, reservedLifecycleSlots: Self.reservedLifecycleSlots))
    }

    /// The most events ever buffered at once (for tests).
    var peakBufferedCount: Int { state.withLock { $0.peakCount } }
    /// Producers waiting for room now (for tests).
    var waitingProducerCount: Int { state.withLock { $0.waitingProducerCount } }
    /// 1 while the consumer is parked waiting for an element, else 0 (for tests).
    var parkedConsumerCount: Int { state.withLock { $0.isConsumerParked ? 1 : 0 } }

    // MARK: - Producers

    /// Admits `element`, waiting while the queue is full.
    /// - Throws: ``SendFailure`` when the consumer is gone or the channel finished, or `CancellationError`
    ///   when the producing task is cancelled while it waits.
    func send(_ element: Element) async throws {
        var woken = false
        while true {
            switch state.withLock({ $0.send(element, lifecycle: false, woken: woken) }) {
            case .resumeConsumer(let consumer):
                consumer.resume(returning: element)
                return
            case .admitted:
                return
            case .fail(let failure):
                throw failure
            case .suspend:
                try await waitForCapacity()
                woken = true
            }
        }
    }

    /// Admits `elements` in order, taking the lock once for as many as there is room for, and waiting
    /// (as ``send(_:)`` does) only when the queue is full: a batch wakes a waiting consumer once.
    /// - Throws: as ``send(_:)``; the elements before the one refused were admitted.
    func send(contentsOf elements: [Element]) async throws {
        var next = elements.startIndex
        var woken = false
        while next < elements.endIndex {
            var resumed: (CheckedContinuation<Element?, any Error>, Element)?
            var failure: SendFailure?
            var mustWait = false
            state.withLock { state in
                while next < elements.endIndex {
                    switch state.send(elements[next], lifecycle: false, woken: woken) {
                    case .resumeConsumer(let consumer): resumed = (consumer, elements[next])
                    case .admitted: break
                    case .fail(let refusal): failure = refusal
                    case .suspend: mustWait = true
                    }
                    if failure != nil || mustWait { return }
                    next += 1
                    woken = false
                }
            }
            if let (consumer, element) = resumed { consumer.resume(returning: element) }
            if let failure { throw failure }
            if mustWait {
                try await waitForCapacity()
                woken = true
            }
        }
    }

    private func waitForCapacity() async throws {
        let id = state.withLock { $0.makeProducerID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                switch state.withLock({ $0.park(continuation, id: id, isCancelled: Task.isCancelled) }) {
                case nil: break
                case .proceed: continuation.resume()
                case .fail(let error): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            state.withLock { $0.cancelProducer(id: id) }?.resume(throwing: CancellationError())
        }
    }

    /// Admits a lifecycle event without waiting, using a reserved slot when the queue is full. After
    /// the first lifecycle event only lifecycle events are admitted (ordinary sends fail with
    /// ``SendFailure/finished``).
    /// - Throws: ``SendFailure``.
    func sendLifecycle(_ element: Element) throws {
        switch state.withLock({ $0.send(element, lifecycle: true, woken: true) }) {
        case .resumeConsumer(let consumer): consumer.resume(returning: element)
        case .admitted, .suspend: break
        case .fail(let failure): throw failure
        }
    }

    /// Ends the stream after the buffered events (with `failure`, if any). Idempotent: later calls are
    /// ignored. Waiting producers are refused.
    func finish(throwing failure: (any Error)? = nil) {
        guard let action = state.withLock({ $0.finish(throwing: failure) }) else { return }
        for producer in action.producers { producer.resume(throwing: SendFailure.finished) }
        if let consumer = action.consumer {
            if let failure = action.failure { consumer.resume(throwing: failure) } else { consumer.resume(returning: nil) }
        }
    }

    // MARK: - Consumer

    /// The next event, `nil` after a clean finish, or the finishing error.
    func next() async throws -> Element? {
        // An event already buffered is taken without parking (no continuation, no cancellation handler).
        if !Task.isCancelled, let (element, producer) = state.withLock({ $0.takeBuffered() }) {
            producer?.resume()
            return element
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Element?, any Error>) in
                switch state.withLock({ $0.next(continuation, isCancelled: Task.isCancelled) }) {
                case .deliver(let element, let producer):
                    producer?.resume()
                    continuation.resume(returning: element)
                case .end(let failure):
                    if let failure { continuation.resume(throwing: failure) } else { continuation.resume(returning: nil) }
                case .suspended(let producer):
                    producer?.resume()
                case .cancelled:
                    continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            cancelConsumer()
        }
    }

    /// Runs `handler` once when the consumer goes away (at once if it already has): the runtime cancels
    /// the turn's producer with it, so a producer waiting on the network stops promptly too.
    func onConsumerGone(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.installGoneHandler(handler) }?()
    }

    /// The consumer is gone: producers are refused from now on and waiting ones are woken with
    /// ``SendFailure/consumerGone``; buffered events are dropped.
    func cancelConsumer() {
        let action = state.withLock { $0.consumerGone() }
        for producer in action.producers { producer.resume(throwing: SendFailure.consumerGone) }
        action.consumer?.resume(throwing: CancellationError())
        action.handler?()
    }
}
