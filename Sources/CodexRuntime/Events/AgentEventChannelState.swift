/// Why the event channel refused a send.
enum AgentEventChannelSendFailure: Error, Equatable {
    /// The consumer is gone (cancelled or released).
    case consumerGone
    /// The channel was finished.
    case finished
    /// All reserved lifecycle slots are used.
    case lifecycleSlotsExhausted
}

/// The event channel's state and every rule of it, with no lock and no continuation inside: each method
/// changes the state and returns what the caller must do once it has left the lock (resume a consumer,
/// wake a producer, run the gone-handler). `AgentEventChannel` holds one of these in one `Mutex`; the
/// tests drive it directly, one call at a time, with plain values standing in for the continuations.
///
/// - `Producer`: what wakes a producer that waits for room.
/// - `Consumer`: what resumes the consumer waiting for an element.
/// - `GoneHandler`: what runs once when the consumer goes away.
struct AgentEventChannelState<Element, Producer, Consumer, GoneHandler> {
    /// What a send must do next.
    enum SendAction {
        /// The consumer was waiting on an empty queue: resume it with the element (not buffered).
        case resumeConsumer(Consumer)
        /// The element is buffered.
        case admitted
        /// No room (or earlier producers are waiting): wait for room, then send again with `woken`.
        case suspend
        /// Refused.
        case fail(AgentEventChannelSendFailure)
    }

    /// How a producer that asked to wait continues.
    enum ProducerResumption {
        /// Room appeared before it could wait: send again now.
        case proceed
        /// It cannot wait (consumer gone, finished, cancelled).
        case fail(any Error)
    }

    /// What the consumer's `next()` must do.
    enum NextAction {
        /// Return `element`, and wake `producer` (room just appeared) if there is one.
        case deliver(Element, wake: Producer?)
        /// The stream is over: `nil` after a clean finish, else throw the failure.
        case end((any Error)?)
        /// The consumer is parked; wake `producer` (the queue is empty) if there is one.
        case suspended(wake: Producer?)
        /// The consumer is gone or cancelled: throw `CancellationError`.
        case cancelled
    }

    /// What finishing must do.
    struct FinishAction {
        /// The parked consumer, to resume with `failure` (or `nil`), when nothing is buffered.
        var consumer: Consumer?
        /// The failure the stream ends with.
        var failure: (any Error)?
        /// Waiting producers, to refuse with ``AgentEventChannelSendFailure/finished``.
        var producers: [Producer]
    }

    /// What the consumer going away must do.
    struct GoneAction {
        /// The parked consumer, to resume with `CancellationError`.
        var consumer: Consumer?
        /// Waiting producers, to refuse with ``AgentEventChannelSendFailure/consumerGone``.
        var producers: [Producer]
        /// The gone-handler, to run once (nil when none is installed or it already ran).
        var handler: GoneHandler?
    }

    /// Extra slots lifecycle events may use beyond the capacity.
    let reservedLifecycleSlots: Int
    /// Ordinary events the queue holds before producers wait.
    let capacity: Int

    private var buffer: [Element] = []
    private var head = 0
    private var lifecycleInBuffer = 0
    private var lifecycleAdmitted = false
    private var producers: [(id: UInt64, producer: Producer)] = []
    private var consumer: Consumer?
    private var finished = false
    private var failure: (any Error)?
    private(set) var isConsumerGone = false
    private var goneHandler: GoneHandler?
    private var lastProducerID: UInt64 = 0
    /// The most events ever buffered at once.
    private(set) var peakCount = 0

    /// Creates an empty state.
    init(capacity: Int, reservedLifecycleSlots: Int) {
        self.capacity = capacity
        self.reservedLifecycleSlots = reservedLifecycleSlots
    }

    /// Events buffered now.
    var count: Int { buffer.count - head }
    /// Producers waiting for room now.
    var waitingProducerCount: Int { producers.count }
    /// Whether the consumer is parked waiting for an element.
    var isConsumerParked: Bool { consumer != nil }

    private var hasRoom: Bool { count - lifecycleInBuffer < capacity }

    // MARK: - Producers

    /// Offers `element`. An ordinary event needs a free slot and, unless it was just woken (`woken`), no
    /// earlier waiter; a lifecycle event may use a reserved slot. After the first lifecycle event only
    /// lifecycle events are admitted, so the reserved slots never let ordinary events past the capacity.
    mutating func send(_ element: Element, lifecycle: Bool, woken: Bool) -> SendAction {
        if isConsumerGone { return .fail(.consumerGone) }
        if finished { return .fail(.finished) }
        if !lifecycle, lifecycleAdmitted { return .fail(.finished) }
        if lifecycle { lifecycleAdmitted = true }
        if let waiting = consumer, count == 0 {
            consumer = nil
            return .resumeConsumer(waiting)
        }
        if lifecycle {
            if !hasRoom {
                guard lifecycleInBuffer < reservedLifecycleSlots else { return .fail(.lifecycleSlotsExhausted) }
                lifecycleInBuffer += 1
            }
        } else if !hasRoom || (!woken && !producers.isEmpty) {
            return .suspend
        }
        buffer.append(element)
        peakCount = max(peakCount, count)
        return .admitted
    }

    /// A fresh identity for a producer about to wait.
    mutating func makeProducerID() -> UInt64 {
        lastProducerID += 1
        return lastProducerID
    }

    /// Parks a producer until room appears, unless it cannot or need not wait.
    /// - Returns: nil when parked (a later ``next(_:isCancelled:)``, ``finish(throwing:)`` or
    ///   ``consumerGone()`` wakes it); otherwise how it continues at once.
    mutating func park(_ producer: Producer, id: UInt64, isCancelled: Bool) -> ProducerResumption? {
        if isConsumerGone { return .fail(AgentEventChannelSendFailure.consumerGone) }
        if finished { return .fail(AgentEventChannelSendFailure.finished) }
        if isCancelled { return .fail(CancellationError()) }
        if hasRoom, producers.isEmpty { return .proceed }
        producers.append((id, producer))
        return nil
    }

    /// Takes a parked producer out (its task was cancelled); nil when it is no longer parked.
    mutating func cancelProducer(id: UInt64) -> Producer? {
        guard let index = producers.firstIndex(where: { $0.id == id }) else { return nil }
        return producers.remove(at: index).producer
    }

    /// Ends the stream after the buffered events. Only the first call does anything (later ones return nil).
    mutating func finish(throwing failure: (any Error)?) -> FinishAction? {
        guard !finished else { return nil }
        finished = true
        self.failure = failure
        let waiting = producers.map(\.producer)
        producers = []
        var parked: Consumer?
        if count == 0 {
            parked = consumer
            consumer = nil
        }
        return FinishAction(consumer: parked, failure: failure, producers: waiting)
    }

    // MARK: - Consumer

    /// The consumer asks for the next element, and parks as `consumer` when there is none yet.
    mutating func next(_ consumer: Consumer, isCancelled: Bool) -> NextAction {
        if isConsumerGone || isCancelled { return .cancelled }
        if let (element, producer) = takeBuffered() { return .deliver(element, wake: producer) }
        if finished {
            let ending = failure
            failure = nil
            return .end(ending)
        }
        self.consumer = consumer
        // The queue is empty: a producer still waiting for room may go now.
        return .suspended(wake: wakeFirstProducer())
    }

    /// The oldest buffered element and the producer room just appeared for, when an element is buffered
    /// and the consumer is not gone; nil otherwise (nothing changes). The consumer's fast path: it takes
    /// an element without parking when one is there.
    mutating func takeBuffered() -> (Element, wake: Producer?)? {
        guard !isConsumerGone, head < buffer.count else { return nil }
        let element = buffer[head]
        head += 1
        if head > 64, head * 2 > buffer.count {
            buffer.removeFirst(head)
            head = 0
        }
        // Reserved slots free up as the queue drains below them.
        if lifecycleInBuffer > 0, count < lifecycleInBuffer { lifecycleInBuffer = count }
        return (element, wakeFirstProducer())
    }

    /// The consumer is gone: producers are refused from now on, buffered events are dropped, and the
    /// gone-handler is handed out once.
    mutating func consumerGone() -> GoneAction {
        isConsumerGone = true
        buffer = []
        head = 0
        let waiting = producers.map(\.producer)
        producers = []
        let parked = consumer
        consumer = nil
        let handler = goneHandler
        goneHandler = nil
        return GoneAction(consumer: parked, producers: waiting, handler: handler)
    }

    /// Installs the handler that runs when the consumer goes away.
    /// - Returns: the handler itself when the consumer is already gone (the caller runs it now), else nil.
    mutating func installGoneHandler(_ handler: GoneHandler) -> GoneHandler? {
        if isConsumerGone { return handler }
        goneHandler = handler
        return nil
    }

    private mutating func wakeFirstProducer() -> Producer? {
        producers.isEmpty ? nil : producers.removeFirst().producer
    }
}
