import CodexCore
import Synchronization

/// The exporter's queue of ended spans, as a pure state machine: bounded, dropping the oldest span
/// when full (and counting it), and saying when a full batch should be sent at once.
struct OTLPSpanQueue {
    /// What the caller should do after ``enqueue(_:)``.
    enum Action: Equatable {
        /// Nothing: the span waits for the next scheduled send.
        case none
        /// A batch is full and no send is scheduled: start one.
        case startSend
    }

    let capacity: Int
    let batchSize: Int
    private var spans: [AgentSpanData] = []
    private var head = 0
    /// Spans dropped because the queue was full or the exporter was shut down.
    private(set) var dropped = 0
    /// Whether a send was started for a full batch and has not yet taken the queue empty.
    private var sendPending = false
    /// Whether the exporter was shut down: every later span is dropped.
    private(set) var isStopped = false

    init(capacity: Int, batchSize: Int) {
        self.capacity = max(1, capacity)
        self.batchSize = max(1, min(batchSize, max(1, capacity)))
    }

    /// Spans waiting now.
    var count: Int { spans.count - head }

    /// Adds a span, dropping the oldest when the queue is full.
    mutating func enqueue(_ span: AgentSpanData) -> Action {
        guard !isStopped else {
            dropped += 1
            return .none
        }
        if count == capacity {
            head += 1
            dropped += 1
        }
        spans.append(span)
        if head > 1_024, head * 2 > spans.count {
            spans.removeFirst(head)
            head = 0
        }
        guard count >= batchSize, !sendPending else { return .none }
        sendPending = true
        return .startSend
    }

    /// Takes up to one batch, oldest first; an empty result ends a pending send.
    mutating func takeBatch() -> [AgentSpanData] {
        let end = min(spans.count, head + batchSize)
        let batch = Array(spans[head..<end])
        head = end
        if head == spans.count {
            spans.removeAll(keepingCapacity: true)
            head = 0
        }
        if batch.isEmpty { sendPending = false }
        return batch
    }

    /// Refuses every later span.
    mutating func stop() {
        isStopped = true
    }

    /// The queue behind a lock, shared by the exporter and its send tasks.
    final class Shared: Sendable {
        private let state: Mutex<OTLPSpanQueue>

        init(_ queue: OTLPSpanQueue) {
            state = Mutex(queue)
        }

        func withLock<Result>(_ body: (inout OTLPSpanQueue) -> Result) -> Result {
            state.withLock { body(&$0) }
        }

        @Sendable func takeBatch() -> [AgentSpanData] {
            state.withLock { $0.takeBatch() }
        }
    }
}
