public import CodexCore
public import Observation
import Synchronization

/// The state a chat screen shows for one selected thread, kept current from the runtime, with the
/// controls such a screen offers. Built on `Observation`, so SwiftUI views (and any
/// `withObservationTracking` caller) update when a property they read changes; it needs no UI framework.
///
/// ```swift
/// let store = AgentRuntimeStore(runtime: runtime)
/// try await store.select(thread.id)
/// Task { try await store.send(Request(text: "Summarise the thread.")) }
/// // while the turn runs:
/// try await store.steer("Keep it short.")     // "Add to turn"
/// try await store.interrupt()                 // "Stop"
/// ```
///
/// - ``threads`` follows ``AgentRuntime/observeThreads(buffering:)``; ``selectedThread`` and
///   ``messages`` follow ``AgentRuntime/observeThread(id:buffering:)`` and
///   ``AgentRuntime/observeMessages(in:buffering:)`` for the selected thread (latest-value policy).
/// - ``streamingText``, ``latestProgress``, ``rateLimits``, ``activeTurnID`` and the tool activity come
///   from the events of the turns this store sends.
@MainActor @Observable
public final class AgentRuntimeStore {
    /// The runtime the store shows.
    @ObservationIgnored public let runtime: AgentRuntime
    /// Every thread, most recently updated first.
    public private(set) var threads: [AgentThread] = []
    /// The selected thread's ID.
    public private(set) var selectedThreadID: AgentThreadID?
    /// The selected thread as last stored (status, configuration, pending wait).
    public private(set) var selectedThread: AgentThread?
    /// The selected thread's stored messages (every role), oldest first.
    public private(set) var messages: [AgentMessage] = []
    /// Assistant text of the running turn not yet committed as a message.
    public private(set) var streamingText = ""
    /// The latest progress of the running turn (message start and completion, reasoning-summary deltas,
    /// web search), kept after the turn ends until the next one starts.
    public private(set) var latestProgress: AgentTurnProgress?
    /// Every limit family the account reported in this store's turns, sorted by family ID (empty until
    /// one did): an update that names one family replaces that family and keeps the others, as
    /// ``AgentRuntime/rateLimits()`` does.
    public private(set) var rateLimits: [AgentRateLimitSnapshot] = []
    /// The turn this store is running on the selected thread, if any.
    public private(set) var activeTurnID: AgentTurnID?
    /// Tool calls of the running turn that started and have not finished.
    public private(set) var runningToolCalls = 0
    /// The most tool calls that ran at once in the latest turn.
    public private(set) var peakToolConcurrency = 0
    /// The error that ended the latest turn, or the latest observation failure (`nil` after a success).
    public private(set) var lastError: AgentRuntimeError?
    /// The selected thread's outstanding wait (a tool result or an approval), if any.
    public var pending: AgentThreadPendingState? { selectedThread?.pending }

    @ObservationIgnored private let observers = ObserverTasks()
    /// Counts selections; observers of an older selection stop applying what they see.
    @ObservationIgnored private var generation: UInt64 = 0

    /// Creates a store and starts following the runtime's threads.
    public init(runtime: AgentRuntime) {
        self.runtime = runtime
        let threads = runtime.observeThreads()
        observers.set("threads", Task { [weak self] in
            do {
                for try await list in threads { self?.threads = list }
            } catch {
                self?.note(error)
            }
        })
    }

    deinit {
        observers.cancelAll()
    }

    /// Selects a thread (or none) and returns once its thread and messages are loaded. A later `select`
    /// replaces this one even while it loads.
    /// - Throws: `thread_not_found` (nothing is selected then), the state store's error, or
    ///   `CancellationError` when the calling task is cancelled.
    public func select(_ id: AgentThreadID?) async throws {
        observers.cancel("thread")
        observers.cancel("messages")
        generation += 1
        let generation = self.generation
        selectedThreadID = id
        selectedThread = nil
        messages = []
        streamingText = ""
        latestProgress = nil
        activeTurnID = id.flatMap { runtime.activeTurnID(in: $0) }
        guard let id else { return }
        do {
            try await follow(runtime.observeThread(id: id), as: "thread", generation: generation) { store, thread in
                store.selectedThread = thread
                // A turn this store did not start is shown while the thread runs, and cleared once it is idle.
                store.activeTurnID = thread.status == .idle ? nil : store.runtime.activeTurnID(in: id) ?? store.activeTurnID
            } ended: { store in
                store.deselect(id)
            }
            guard generation == self.generation else { return }
            try await follow(runtime.observeMessages(in: id), as: "messages", generation: generation) { store, messages in
                store.messages = messages
            } ended: { _ in }
            try Task.checkCancellation()
        } catch {
            if generation == self.generation {
                observers.cancel("thread")
                observers.cancel("messages")
                deselect(id)
            }
            throw error
        }
    }

    /// Follows `observation` in a task kept under `role` while selection `generation` lasts, and returns
    /// once its first snapshot was applied (or the observation failed or ended first, or the caller was
    /// cancelled).
    private func follow<Value: Sendable>(
        _ observation: AgentObservation<Value>, as role: String, generation: UInt64,
        apply: @escaping @MainActor (AgentRuntimeStore, Value) -> Void, ended: @escaping @MainActor (AgentRuntimeStore) -> Void
    ) async throws {
        let observers = self.observers
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (loaded: CheckedContinuation<Void, any Error>) in
                observers.set(role, Task { @MainActor [weak self] in
                    var first: CheckedContinuation<Void, any Error>? = loaded
                    do {
                        for try await value in observation {
                            guard !Task.isCancelled, let self, self.generation == generation else { break }
                            apply(self, value)
                            first?.resume()
                            first = nil
                        }
                        if first == nil, !Task.isCancelled, let self, self.generation == generation { ended(self) }
                        first?.resume()
                    } catch {
                        self?.note(error)
                        first?.resume(throwing: error)
                    }
                })
            }
        } onCancel: {
            observers.cancel(role)
        }
    }

    /// Creates a thread and selects it.
    @discardableResult
    public func createThread(title: String? = nil, configuration: AgentThreadConfiguration = AgentThreadConfiguration()) async throws -> AgentThread {
        let thread = try await runtime.createThread(title: title, configuration: configuration)
        try await select(thread.id)
        return thread
    }

    /// Runs one turn on the selected thread and returns its summary once it ended, keeping
    /// ``streamingText``, ``latestProgress``, ``rateLimits``, ``activeTurnID`` and the tool activity
    /// current meanwhile.
    /// - Throws: `invalid_request` when no thread is selected; the turn's error; `CancellationError`
    ///   when it was interrupted.
    @discardableResult
    public func send(_ request: Request) async throws -> AgentTurnSummary {
        let threadID = try requireSelection()
        let events = try await runtime.stream(request, in: threadID)
        lastError = nil
        runningToolCalls = 0
        peakToolConcurrency = 0
        defer {
            if selectedThreadID == threadID {
                activeTurnID = nil
                streamingText = ""
                runningToolCalls = 0
            }
        }
        do {
            var summary: AgentTurnSummary?
            for try await event in events {
                if case .turnCompleted(let completed) = event { summary = completed }
                guard selectedThreadID == threadID else { continue }
                apply(event)
            }
            guard let summary else { throw CancellationError() }
            return summary
        } catch {
            if selectedThreadID == threadID, let failure = error as? AgentRuntimeError { lastError = failure }
            throw error
        }
    }

    /// Sends text (see ``send(_:)-(Request)``).
    @discardableResult
    public func send(_ text: String) async throws -> AgentTurnSummary {
        try await send(Request(text: text))
    }

    /// Adds input to the selected thread's running turn ("Add to turn").
    /// - Throws: `invalid_request` when no thread is selected, and the errors of
    ///   ``AgentRuntime/steer(_:images:in:expectedTurnID:)``.
    public func steer(_ text: String, images: [AgentImageAttachment] = []) async throws {
        let threadID = try requireSelection()
        try await runtime.steer(text, images: images, in: threadID, expectedTurnID: activeTurnID ?? runtime.activeTurnID(in: threadID))
    }

    /// Interrupts the selected thread's running turn ("Stop").
    /// - Throws: `invalid_request` when no thread is selected, `turn_not_active` when no turn runs.
    public func interrupt() async throws {
        let threadID = try requireSelection()
        try await runtime.interrupt(in: threadID, expectedTurnID: activeTurnID ?? runtime.activeTurnID(in: threadID))
    }

    // MARK: - Events

    private func apply(_ event: AgentEvent) {
        switch event {
        case .turnStarted(let turn):
            activeTurnID = turn.id
            streamingText = ""
            latestProgress = nil
        case .progress(let progress):
            latestProgress = progress
        case .rateLimitsUpdated(let limits):
            rateLimits = AgentRateLimitSnapshot.merging(rateLimits, with: limits)
        case .assistantMessageDelta(_, _, let delta):
            streamingText += delta
        case .messageCommitted(let message):
            if message.role == .assistant { streamingText = "" }
        case .toolCallStarted:
            runningToolCalls += 1
            peakToolConcurrency = max(peakToolConcurrency, runningToolCalls)
        case .toolCallFinished:
            runningToolCalls = max(0, runningToolCalls - 1)
        case .turnCompleted, .turnFailed, .turnInterrupted:
            activeTurnID = nil
        default:
            break
        }
    }

    private func requireSelection() throws -> AgentThreadID {
        guard let id = selectedThreadID else { throw AgentRuntimeError(code: .invalidRequest, message: "no thread is selected") }
        return id
    }

    private func deselect(_ id: AgentThreadID) {
        guard selectedThreadID == id else { return }
        selectedThreadID = nil
        selectedThread = nil
        messages = []
    }

    private func note(_ error: any Error) {
        if let failure = error as? AgentRuntimeError { lastError = failure }
    }
}

/// The store's observation tasks by role, cancelled when replaced and when the store goes away.
private final class ObserverTasks: Sendable {
    private let tasks = Mutex<[String: Task<Void, Never>]>([:])

    func set(_ role: String, _ task: Task<Void, Never>) {
        tasks.withLock { $0.updateValue(task, forKey: role) }?.cancel()
    }

    func cancel(_ role: String) {
        tasks.withLock { $0.removeValue(forKey: role) }?.cancel()
    }

    func cancelAll() {
        let all = tasks.withLock { tasks in
            defer { tasks = [:] }
            return Array(tasks.values)
        }
        for task in all { task.cancel() }
    }
}
