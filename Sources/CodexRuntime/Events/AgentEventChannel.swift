import CodexCore
import Synchronization

/// The runtime's bounded, lossless event queue (spec 001, "Event buffering"): a producer that finds the
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
    enum SendFailure: Error, Equatable {
        /// The consumer is gone (cancelled or released).
        case consumerGone
        /// The channel was finished.
        case finished
        /// All reserved lifecycle slots are used.
        case lifecycleSlotsExhausted
    }

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var buffer: [Element] = []
        var head = 0
        var lifecycleInBuffer = 0
        var lifecycleAdmitted = false
        var producers: [Waiter] = []
        var consumer: CheckedContinuation<Element?, any Error>?
        var finished = false
        var failure: (any Error)?
        var consumerGone = false
        var nextWaiterID: UInt64 = 0
        var peak = 0

        var count: Int { buffer.count - head }

        mutating func take() -> Element? {
            guard head < buffer.count else { return nil }
            let element = buffer[head]
            head += 1
            if head > 64, head * 2 > buffer.count {
                buffer.removeFirst(head)
                head = 0
            }
            return element
        }
    }

    /// The capacity (clamped to 1…4096).
    let capacity: Int
    private let state = Mutex(State())
    private let consumerGoneHandler = Mutex<(@Sendable () -> Void)?>(nil)

    /// Creates a channel with `capacity` (clamped to 1…4096).
    init(capacity: Int = AgentEventChannel.defaultCapacity) {
        self.capacity = min(max(capacity, Self.capacityRange.lowerBound), Self.capacityRange.upperBound)
    }

    /// The most events ever buffered at once (for tests).
    var peakBufferedCount: Int { state.withLock { $0.peak } }
    /// Producers waiting for room now (for tests).
    var waitingProducerCount: Int { state.withLock { $0.producers.count } }

    // MARK: - Producers

    private enum Admission {
        case delivered(CheckedContinuation<Element?, any Error>)
        case admitted
        case wait
        case fail(SendFailure)
    }

    /// Tries to admit `element` under the lock. A normal event needs a free slot and, unless it was just
    /// woken (`woken`), no earlier waiter; a lifecycle event may use a reserved slot.
    private func admit(_ element: Element, lifecycle: Bool, woken: Bool) -> Admission {
        state.withLock { state in
            if state.consumerGone { return .fail(.consumerGone) }
            if state.finished { return .fail(.finished) }
            // Lifecycle events end a stream: nothing ordinary follows them (so the reserved-slot
            // accounting never lets ordinary events past the capacity).
            if !lifecycle, state.lifecycleAdmitted { return .fail(.finished) }
            if lifecycle { state.lifecycleAdmitted = true }
            if let consumer = state.consumer, state.count == 0 {
                state.consumer = nil
                return .delivered(consumer)
            }
            let full = state.count - state.lifecycleInBuffer >= capacity
            if lifecycle {
                if full {
                    guard state.lifecycleInBuffer < Self.reservedLifecycleSlots else { return .fail(.lifecycleSlotsExhausted) }
                    state.lifecycleInBuffer += 1
                }
            } else if full || (!woken && !state.producers.isEmpty) {
                return .wait
            }
            state.buffer.append(element)
            state.peak = max(state.peak, state.count)
            return .admitted
        }
    }

    /// Admits `element`, waiting while the queue is full.
    /// - Throws: ``SendFailure`` when the consumer is gone or the channel finished, or `CancellationError`
    ///   when the producing task is cancelled while it waits.
    func send(_ element: Element) async throws {
        var woken = false
        while true {
            switch admit(element, lifecycle: false, woken: woken) {
            case .delivered(let consumer):
                consumer.resume(returning: element)
                return
            case .admitted:
                return
            case .fail(let failure):
                throw failure
            case .wait:
                try await waitForCapacity()
                woken = true
            }
        }
    }

    private func waitForCapacity() async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: (any Error)?? = state.withLock { state in
                    if state.consumerGone { return .some(SendFailure.consumerGone) }
                    if state.finished { return .some(SendFailure.finished) }
                    if Task.isCancelled { return .some(CancellationError()) }
                    if state.count - state.lifecycleInBuffer < capacity, state.producers.isEmpty { return .some(nil) }
                    state.producers.append(Waiter(id: id, continuation: continuation))
                    return .none
                }
                if let resumeNow {
                    if let error = resumeNow { continuation.resume(throwing: error) } else { continuation.resume() }
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.producers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.producers.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Admits a lifecycle event without waiting, using a reserved slot when the queue is full. After
    /// the first lifecycle event only lifecycle events are admitted (ordinary sends fail with
    /// ``SendFailure/finished``).
    /// - Throws: ``SendFailure``.
    func sendLifecycle(_ element: Element) throws {
        switch admit(element, lifecycle: true, woken: true) {
        case .delivered(let consumer): consumer.resume(returning: element)
        case .admitted, .wait: break
        case .fail(let failure): throw failure
        }
    }

    /// Ends the stream after the buffered events (with `failure`, if any). Idempotent: later calls are
    /// ignored. Waiting producers are refused.
    func finish(throwing failure: (any Error)? = nil) {
        let (consumer, producers, deliver) = state.withLock { state -> (CheckedContinuation<Element?, any Error>?, [Waiter], Bool) in
            guard !state.finished else { return (nil, [], false) }
            state.finished = true
            state.failure = failure
            let producers = state.producers
            state.producers = []
            let consumer = state.count == 0 ? state.consumer : nil
            if consumer != nil { state.consumer = nil }
            return (consumer, producers, true)
        }
        guard deliver else { return }
        for producer in producers { producer.continuation.resume(throwing: SendFailure.finished) }
        if let consumer {
            if let failure { consumer.resume(throwing: failure) } else { consumer.resume(returning: nil) }
        }
    }

    // MARK: - Consumer

    private enum Take {
        case element(Element, Waiter?)
        case end((any Error)?)
        case wait(Waiter?)
        case cancelled
    }

    /// The next event, `nil` after a clean finish, or the finishing error.
    func next() async throws -> Element? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Element?, any Error>) in
                let step: Take = state.withLock { state in
                    if state.consumerGone || Task.isCancelled { return .cancelled }
                    if let element = state.take() {
                        if state.lifecycleInBuffer > 0, state.count < state.lifecycleInBuffer { state.lifecycleInBuffer = state.count }
                        let waiter = state.producers.isEmpty ? nil : state.producers.removeFirst()
                        return .element(element, waiter)
                    }
                    if state.finished {
                        let failure = state.failure
                        state.failure = nil
                        return .end(failure)
                    }
                    state.consumer = continuation
                    // The queue is empty: a producer still waiting for room may go now.
                    return .wait(state.producers.isEmpty ? nil : state.producers.removeFirst())
                }
                switch step {
                case .element(let element, let waiter):
                    waiter?.continuation.resume()
                    continuation.resume(returning: element)
                case .end(let failure):
                    if let failure { continuation.resume(throwing: failure) } else { continuation.resume(returning: nil) }
                case .wait(let waiter):
                    waiter?.continuation.resume()
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
        let gone = state.withLock { $0.consumerGone }
        if gone {
            handler()
            return
        }
        consumerGoneHandler.withLock { $0 = handler }
        // The consumer may have gone in between: whoever takes the handler out runs it, exactly once.
        if state.withLock({ $0.consumerGone }) {
            let pending = consumerGoneHandler.withLock { stored in
                defer { stored = nil }
                return stored
            }
            pending?()
        }
    }

    /// The consumer is gone: producers are refused from now on and waiting ones are woken with
    /// ``SendFailure/consumerGone``; buffered events are dropped.
    func cancelConsumer() {
        let handler = consumerGoneHandler.withLock { handler in
            defer { handler = nil }
            return handler
        }
        defer { handler?() }
        let (consumer, producers) = state.withLock { state -> (CheckedContinuation<Element?, any Error>?, [Waiter]) in
            state.consumerGone = true
            state.buffer = []
            state.head = 0
            let producers = state.producers
            state.producers = []
            let consumer = state.consumer
            state.consumer = nil
            return (consumer, producers)
        }
        for producer in producers { producer.continuation.resume(throwing: SendFailure.consumerGone) }
        consumer?.resume(throwing: CancellationError())
    }
}
