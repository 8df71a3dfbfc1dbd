import CodexCore
import Foundation

/// Which runtime instance owns a turn: this runtime's owner ID (its lease's, when the store issues
/// leases) and how to ask whether another owner is alive, so a running turn in the store is closed as
/// abandoned only when its owner is gone.
struct TurnOwnership: Sendable {
    /// Recorded in every turn this runtime starts.
    let ownerID: String
    /// Held for the runtime's lifetime; `nil` when the store issues no leases.
    private let lease: (any RuntimeOwnerLease)?
    private let leasing: (any RuntimeOwnerLeasing)?

    /// Takes an owner lease from `store` when it issues them; otherwise the runtime has a private ID
    /// and treats every other owner as gone (one runtime per store).
    init(store: any RuntimeStateStore) throws {
        leasing = store as? any RuntimeOwnerLeasing
        lease = try leasing?.acquireOwnerLease()
        ownerID = lease?.ownerID ?? UUID().uuidString.lowercased()
    }

    /// Whether `turn` belongs to another runtime instance that is still alive (then it is not abandoned).
    func isAliveElsewhere(_ turn: AgentTurn) throws -> Bool {
        guard let owner = turn.ownerID, owner != ownerID, let leasing else { return false }
        return try leasing.isOwnerLeaseHeld(owner)
    }
}

/// What ``AgentRuntime/closeAbandonedTurn(of:in:at:ownership:)`` found.
enum AbandonedTurnOutcome: Sendable {
    /// The thread's latest turn is not running.
    case noneRunning
    /// Its running turn was abandoned and is now recorded interrupted.
    case closed
    /// Its running turn belongs to another live runtime instance and was left alone.
    case liveElsewhere
}
