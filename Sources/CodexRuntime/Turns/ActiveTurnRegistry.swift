import CodexCore
import Synchronization

/// The persistent turns running now: at most one per thread (`thread_busy`), each with the way to
/// interrupt and to steer it.
final class ActiveTurnRegistry: Sendable {
    /// How a turn takes steering input: its backend's `steer`, or `nil` when the backend cannot.
    typealias Steer = @Sendable (String, [AgentImageAttachment]) async throws -> Void

    private enum SteeringSlot {
        /// The backend's turn has not started yet; steer calls wait for it (by waiter ID).
        case waiting([UInt64: CheckedContinuation<Steer?, any Error>])
        /// The backend's `steer` (`nil`: unsupported).
        case attached(Steer?)
        /// The turn's final structured output has begun: no more steering.
        case closed

        /// The steer calls still waiting for the backend's turn.
        var waiters: [CheckedContinuation<Steer?, any Error>] {
            if case .waiting(let waiters) = self { return Array(waiters.values) }
            return []
        }
    }

    private struct Entry {
        let turnID: AgentTurnID
        var interrupt: (@Sendable () -> Void)?
        var interruptRequested = false
        var committing = false
        var steering: SteeringSlot = .waiting([:])
        /// The thread is held by a context compaction, not a turn: no turn is active, steering and
        /// interruption of a turn are refused; stopping all work (sign-out) cancels it.
        var isCompaction = false
    }

    private let entries = Mutex<[AgentThreadID: Entry]>([:])
    private let waiterIDs = Mutex<UInt64>(0)

    /// Reserves the thread for a turn.
    /// - Throws: `thread_busy` when another persistent turn holds it.
    func reserve(_ threadID: AgentThreadID, for turnID: AgentTurnID) throws(AgentRuntimeError) {
        let reserved = entries.withLock { entries in
            guard entries[threadID] == nil else { return false }
            entries[threadID] = Entry(turnID: turnID, interrupt: nil)
            return true
        }
        guard reserved else {
            throw AgentRuntimeError(code: .threadBusy, message: "the thread already has an active turn")
        }
    }

    /// Reserves the thread for a context compaction under `id`: new turns get `thread_busy`, while no
    /// turn is reported active (``activeTurn(in:)`` is `nil`, steering and ``interrupt(in:expectedTurnID:)``
    /// get `turn_not_active` at once).
    /// - Throws: `thread_busy` when a turn or another compaction holds the thread.
    func reserveCompaction(_ threadID: AgentThreadID, id: AgentTurnID) throws(AgentRuntimeError) {
        let reserved = entries.withLock { entries in
            guard entries[threadID] == nil else { return false }
            entries[threadID] = Entry(turnID: id, interrupt: nil, steering: .closed, isCompaction: true)
            return true
        }
        guard reserved else {
            throw AgentRuntimeError(code: .threadBusy, message: "the thread already has an active turn")
        }
    }

    /// Records how to interrupt the reserved turn.
    /// An interruption requested before this call is carried out now.
    func attach(_ threadID: AgentThreadID, turnID: AgentTurnID, interrupt: @escaping @Sendable () -> Void) {
        let requested = entries.withLock { entries -> Bool in
            guard entries[threadID]?.turnID == turnID else { return false }
            entries[threadID]?.interrupt = interrupt
            return entries[threadID]?.interruptRequested ?? false
        }
        if requested { interrupt() }
    }

    /// The turn's completion was accepted and is being committed: it can no longer be interrupted.
    /// - Returns: `false` when an interruption already arrived (the caller then treats the turn as
    ///   interrupted).
    func markCommitting(_ threadID: AgentThreadID, turnID: AgentTurnID) -> Bool {
        entries.withLock { entries in
            guard entries[threadID]?.turnID == turnID else { return true }
            if entries[threadID]?.interruptRequested == true { return false }
            entries[threadID]?.committing = true
            entries[threadID]?.interrupt = nil
            return true
        }
    }

    /// Releases the thread if `turnID` still holds it; steer calls still waiting get `turn_not_active`.
    func release(_ threadID: AgentThreadID, turnID: AgentTurnID) {
        let waiters = entries.withLock { entries -> [CheckedContinuation<Steer?, any Error>] in
            guard let entry = entries[threadID], entry.turnID == turnID else { return [] }
            entries[threadID] = nil
            return entry.steering.waiters
        }
        for waiter in waiters { waiter.resume(throwing: Self.notActive) }
    }

    /// Records how the turn's backend takes steering input (`nil`: it cannot); waiting steer calls go on.
    func attachSteering(_ threadID: AgentThreadID, turnID: AgentTurnID, _ steer: Steer?) {
        let waiters = entries.withLock { entries -> [CheckedContinuation<Steer?, any Error>] in
            guard let entry = entries[threadID], entry.turnID == turnID else { return [] }
            switch entry.steering {
            // A retried request (after a compaction) replaces the first attempt's steering.
            case .waiting, .attached: entries[threadID]?.steering = .attached(steer)
            case .closed: return []
            }
            return entry.steering.waiters
        }
        for waiter in waiters { waiter.resume(returning: steer) }
    }

    /// The turn's final structured output has begun: steering is refused from now on.
    func closeSteering(_ threadID: AgentThreadID, turnID: AgentTurnID) {
        let waiters = entries.withLock { entries -> [CheckedContinuation<Steer?, any Error>] in
            guard let entry = entries[threadID], entry.turnID == turnID else { return [] }
            entries[threadID]?.steering = .closed
            return entry.steering.waiters
        }
        for waiter in waiters { waiter.resume(throwing: Self.notActive) }
    }

    /// How to steer the thread's active turn, waiting for its backend turn to start if needed.
    ///
    /// - Throws: `turn_not_active` (no such turn, another turn than `expectedTurnID`, committing, or its
    ///   final structured output has begun), `steering_unsupported`.
    func steering(in threadID: AgentThreadID, expectedTurnID: AgentTurnID?) async throws -> Steer {
        let id = waiterIDs.withLock { next -> UInt64 in
            next += 1
            return next
        }
        let steer: Steer? = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Steer?, any Error>) in
                let now = entries.withLock { entries -> Result<Steer?, any Error>? in
                    guard let entry = entries[threadID], !entry.committing, !entry.interruptRequested,
                          expectedTurnID == nil || expectedTurnID == entry.turnID else { return .failure(Self.notActive) }
                    switch entry.steering {
                    case .closed:
                        return .failure(Self.notActive)
                    case .attached(let steer):
                        return .success(steer)
                    case .waiting(var waiters):
                        if Task.isCancelled { return .failure(CancellationError()) }
                        waiters[id] = continuation
                        entries[threadID]?.steering = .waiting(waiters)
                        return nil
                    }
                }
                if let now { continuation.resume(with: now) }
            }
        } onCancel: {
            let waiter = entries.withLock { entries -> CheckedContinuation<Steer?, any Error>? in
                guard case .waiting(var waiters)? = entries[threadID]?.steering, let waiter = waiters.removeValue(forKey: id) else { return nil }
                entries[threadID]?.steering = .waiting(waiters)
                return waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
        guard let steer else {
            throw AgentRuntimeError(code: .steeringUnsupported, message: "the backend cannot take input during a turn")
        }
        return steer
    }

    private static var notActive: AgentRuntimeError {
        AgentRuntimeError(code: .turnNotActive, message: "no such active turn in the thread, or it can no longer take input")
    }

    /// How many steer calls wait for the thread's turn to become ready (for tests).
    func steeringWaiterCount(in threadID: AgentThreadID) -> Int {
        entries.withLock { $0[threadID]?.steering.waiters.count ?? 0 }
    }

    /// The turn holding the thread, if any.
    func activeTurn(in threadID: AgentThreadID) -> AgentTurnID? {
        entries.withLock { entries in
            guard let entry = entries[threadID], !entry.isCompaction else { return nil }
            return entry.turnID
        }
    }

    /// Interrupts every active turn that is not committing (sign-out, background expiry).
    /// - Returns: How many turns were asked to stop.
    @discardableResult
    func interruptAll() -> Int {
        let actions = entries.withLock { entries -> [(@Sendable () -> Void)?] in
            var actions: [(@Sendable () -> Void)?] = []
            for (threadID, entry) in entries where !entry.committing {
                entries[threadID]?.interruptRequested = true
                actions.append(entry.interrupt)
            }
            return actions
        }
        for action in actions { action?() }
        return actions.count
    }

    /// Interrupts the thread's active turn (now, or as soon as its producer starts).
    /// - Throws: `turn_not_active` when no turn (or another turn than `expectedTurnID`) is active.
    func interrupt(in threadID: AgentThreadID, expectedTurnID: AgentTurnID?) throws(AgentRuntimeError) {
        let action = entries.withLock { entries -> Result<(@Sendable () -> Void)?, AgentRuntimeError> in
            guard let entry = entries[threadID], !entry.committing, !entry.isCompaction, expectedTurnID == nil || expectedTurnID == entry.turnID else {
                return .failure(AgentRuntimeError(code: .turnNotActive, message: "no such active turn in the thread"))
            }
            entries[threadID]?.interruptRequested = true
            return .success(entry.interrupt)
        }
        switch action {
        case .failure(let error): throw error
        case .success(let interrupt): interrupt?()
        }
    }
}
