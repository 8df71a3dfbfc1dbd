import CodexCore
import Synchronization

/// The runtime's ordered write queue over its state store, which keeps accepted writes through cancellation.
///
/// Every write runs after the ones enqueued before it, in an unstructured task the caller's
/// cancellation does not reach: an accepted write always finishes, and interruption records enqueued
/// after it flush in order once storage is available. A caller waiting for a write can leave early
/// when it is cancelled (``wait(_:)``); the write itself carries on.
final class RuntimeStateWriter: Sendable {
    /// A write's outcome.
    typealias Handle = Task<Result<Void, AgentRuntimeError>, Never>

    private let store: any RuntimeStateStore
    /// The store as a journal, when it keeps turn journals, and the retrying its calls go through.
    private let journalStore: (any TurnJournaling)?
    /// The store as a usage ledger, when it keeps one.
    private let usageStore: (any UsageRecording)?
    private let retrier: RetryingStateStore
    private let tail = Mutex<Handle?>(nil)

    /// - Parameters:
    ///   - store: The state store; transient failures of its calls are retried until they succeed.
    ///   - clock: The clock the pauses between retries run on.
    ///   - logSink: Told about each retry (`runtime.storage.retry`).
    ///   - changes: Told about every write the store accepted, from inside that write's queue step.
    init(
        store: any RuntimeStateStore, clock: any Clock<Duration> = ContinuousClock(), logSink: any AgentLogSink = NoOpAgentLogSink(),
        changes: RuntimeChangeFeed = RuntimeChangeFeed()
    ) {
        let retrying = RetryingStateStore(base: store, clock: clock) { operation in
            logSink.record(AgentLogEvent(level: .notice, category: .persistence, name: "runtime.storage.retry", metadata: ["operation": operation]))
        }
        self.store = ObservedStateStore(base: retrying, feed: changes)
        journalStore = store as? any TurnJournaling
        usageStore = store as? any UsageRecording
        retrier = retrying
    }

    /// Enqueues a call of the store's journal (``CodexCore/TurnJournaling``) in the same order as every
    /// other write, retried after transient failures like them.
    @discardableResult
    func enqueueJournal(_ operation: @escaping @Sendable (any TurnJournaling) async throws -> Void) -> Handle {
        let journal = journalStore
        let retrier = self.retrier
        return enqueue { _ in
            guard let journal else { throw AgentRuntimeError(code: .invalidConfiguration, message: "the state store keeps no turn journals") }
            try await retrier.retrying("journal") { try await operation(journal) }
        }
    }

    /// Whether the store keeps a usage ledger (``CodexCore/UsageRecording``).
    var keepsUsage: Bool { usageStore != nil }

    /// Enqueues usage records in the same order as every other write (nothing when the store keeps no
    /// ledger). A failure goes to `failed`, not to the queue: the ledger never fails a turn.
    func enqueueUsage(_ records: [AgentUsageRecord], failed: @escaping @Sendable (AgentRuntimeError) -> Void) {
        guard let usageStore else { return }
        let retrier = self.retrier
        enqueue(traced: false) { _ in
            do {
                try await retrier.retrying("usage") { try await usageStore.recordUsage(records) }
            } catch {
                failed(AgentRuntimeError.stateStore(error))
            }
        }
    }

    /// The ledger's records matching `query`, after every write enqueued before the read.
    func readUsage(_ query: AgentUsageQuery) async throws -> [AgentUsageRecord] {
        try await readLedger { try await $0.usageRecords(matching: query) }
    }

    /// A read of the store's usage ledger after every write enqueued before it; a retried read runs
    /// `operation` again from its start.
    func readLedger<Value: Sendable>(_ operation: @escaping @Sendable (any UsageRecording) async throws -> Value) async throws -> Value {
        guard let usageStore else { throw AgentRuntimeError(code: .invalidConfiguration, message: "the state store keeps no usage ledger") }
        let retrier = self.retrier
        return try await read { _ in try await retrier.retrying("usage_read") { try await operation(usageStore) } }
    }

    /// A read of the store's journal after every write enqueued before it.
    func readJournal<Value: Sendable>(_ operation: @escaping @Sendable (any TurnJournaling) async throws -> Value) async throws -> Value {
        let journal = journalStore
        let retrier = self.retrier
        return try await read { _ in
            guard let journal else { throw AgentRuntimeError(code: .invalidConfiguration, message: "the state store keeps no turn journals") }
            return try await retrier.retrying("journal_read") { try await operation(journal) }
        }
    }

    /// Enqueues `operation` after every earlier write. A failure becomes the runtime error its meaning
    /// names (``CodexCore/AgentRuntimeError/stateStore(_:)``: `thread_not_found`, `storage_conflict`,
    /// `storage_failure`), with the store's error kept as `underlying`.
    /// `traced`: whether the write gets a `codexkit.storage.commit` span under the enqueuing task's span
    /// (usage-ledger bookkeeping does not).
    @discardableResult
    func enqueue(traced: Bool = true, _ operation: @escaping @Sendable (any RuntimeStateStore) async throws -> Void) -> Handle {
        let store = self.store
        return tail.withLock { tail in
            let previous = tail
            let handle = Task<Result<Void, AgentRuntimeError>, Never> {
                _ = await previous?.value
                // The write's span, under the turn that enqueued it (task-locals follow the task).
                let span = traced ? AgentSpan.current?.child("codexkit.storage.commit") : nil
                do {
                    try await operation(store)
                    StorageTelemetry.end(span, failure: nil)
                    return .success(())
                } catch {
                    let failure = AgentRuntimeError.stateStore(error)
                    StorageTelemetry.end(span, failure: failure)
                    return .failure(failure)
                }
            }
            tail = handle
            return handle
        }
    }

    /// Runs a read after every write enqueued before it (so it sees them) and returns its value; the
    /// caller can leave early when cancelled.
    func read<Value: Sendable>(_ operation: @escaping @Sendable (any RuntimeStateStore) async throws -> Value) async throws -> Value {
        let box = ReadResult<Value>()
        try await wait(enqueue(traced: false) { store in box.value = try await operation(store) })
        guard let value = box.value else { throw CancellationError() }
        return value
    }

    /// Waits for a write, or throws `CancellationError` as soon as the caller is cancelled (the write
    /// continues).
    func wait(_ handle: Handle) async throws {
        let gate = ResumeOnce<Result<Void, AgentRuntimeError>>()
        let result = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result<Void, AgentRuntimeError>, any Error>) in
                gate.install(continuation)
                Task { gate.resume(returning: await handle.value) }
            }
        } onCancel: {
            gate.resume(throwing: CancellationError())
        }
        try result.get()
    }

    /// Waits for a write whatever happens to the caller (used for commits and final records).
    func finish(_ handle: Handle) async throws {
        try await handle.value.get()
    }

    /// Waits until every write enqueued so far has finished.
    func drain() async {
        let last = tail.withLock { $0 }
        _ = await last?.value
    }
}

/// Carries a queued read's value out of the write queue.
private final class ReadResult<Value: Sendable>: Sendable {
    private let storage = Mutex<Value?>(nil)
    var value: Value? {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}

/// A continuation resumed exactly once, by whichever comes first; a resumption that arrives before the
/// continuation is installed is kept and delivered at installation.
final class ResumeOnce<Value: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Value, any Error>)
        case early(Result<Value, any Error>)
        case done
    }

    private let state = Mutex<State>(.empty)

    /// Installs the continuation (once).
    func install(_ continuation: CheckedContinuation<Value, any Error>) {
        let early: Result<Value, any Error>? = state.withLock { state in
            switch state {
            case .empty:
                state = .waiting(continuation)
                return nil
            case .early(let result):
                state = .done
                return result
            case .waiting, .done:
                return nil
            }
        }
        if let early { continuation.resume(with: early) }
    }

    /// Resumes with a value, if nothing resumed it yet.
    func resume(returning value: Value) { resume(with: .success(value)) }

    /// Resumes with an error, if nothing resumed it yet.
    func resume(throwing error: any Error) { resume(with: .failure(error)) }

    private func resume(with result: Result<Value, any Error>) {
        let continuation: CheckedContinuation<Value, any Error>? = state.withLock { state in
            switch state {
            case .empty:
                state = .early(result)
                return nil
            case .waiting(let continuation):
                state = .done
                return continuation
            case .early, .done:
                return nil
            }
        }
        continuation?.resume(with: result)
    }
}
