import CodexCore
import Synchronization

/// The persistent turns running now: at most one per thread (`thread_busy`), each with the way to
/// interrupt it.
final class ActiveTurnRegistry: Sendable {
    private struct Entry {
        let turnID: AgentTurnID
        var interrupt: (@Sendable () -> Void)?
        var interruptRequested = false
        var committing = false
    }

    private let entries = Mutex<[AgentThreadID: Entry]>([:])

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

    /// Releases the thread if `turnID` still holds it.
    func release(_ threadID: AgentThreadID, turnID: AgentTurnID) {
        entries.withLock { entries in
            if entries[threadID]?.turnID == turnID { entries[threadID] = nil }
        }
    }

    /// The turn holding the thread, if any.
    func activeTurn(in threadID: AgentThreadID) -> AgentTurnID? {
        entries.withLock { $0[threadID]?.turnID }
    }

    /// Interrupts the thread's active turn (now, or as soon as its producer starts).
    /// - Throws: `turn_not_active` when no turn (or another turn than `expectedTurnID`) is active.
    func interrupt(in threadID: AgentThreadID, expectedTurnID: AgentTurnID?) throws(AgentRuntimeError) {
        let action = entries.withLock { entries -> Result<(@Sendable () -> Void)?, AgentRuntimeError> in
            guard let entry = entries[threadID], !entry.committing, expectedTurnID == nil || expectedTurnID == entry.turnID else {
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
