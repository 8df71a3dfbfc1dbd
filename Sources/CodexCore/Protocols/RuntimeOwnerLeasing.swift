/// A held owner lease of one runtime instance on a state store. The lease ends when the value is
/// released, or when the process that holds it exits or is killed.
public protocol RuntimeOwnerLease: AnyObject, Sendable {
    /// The owner's identifier, recorded in the turns the runtime starts (``AgentTurn/ownerID``).
    var ownerID: String { get }
}

/// A state store that can tell, across processes, whether the runtime instance that started a turn is
/// still alive, so that a runtime recovering after a crash closes only turns whose owner is gone.
///
/// Implementation requirements: a lease is held for as long as its value lives and ends by itself when
/// the holder's process dies (a `flock` on a file, not a row that a crash would leave behind);
/// ``isOwnerLeaseHeld(_:)`` never takes over, delays or writes anything a holder needs, and answers
/// `false` for an owner it has never seen.
public protocol RuntimeOwnerLeasing: Sendable {
    /// Takes a new owner lease for one runtime instance.
    /// - Returns: The lease, or `nil` when this store cannot issue one (for example, opened read-only).
    func acquireOwnerLease() throws -> (any RuntimeOwnerLease)?
    /// Whether a live runtime instance holds the lease of `ownerID` now.
    func isOwnerLeaseHeld(_ ownerID: String) throws -> Bool
}
