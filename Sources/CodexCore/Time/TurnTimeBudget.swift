/// What is left of the running turn's duration budget, visible to every task the turn starts.
///
/// The runtime binds it while a turn with a duration limit runs; a retry layer reads it before it waits,
/// so a server asking for a longer wait than the turn has left fails the request at once (with the
/// server's wait in the error) instead of sleeping into the duration limit.
package struct TurnTimeBudget: Sendable {
    private let remainingTime: @Sendable () -> Duration

    /// A budget of `total` on `clock`, counted from now.
    package init<C: Clock>(total: Duration, clock: C) where C.Duration == Duration {
        let start = clock.now
        remainingTime = { total - start.duration(to: clock.now) }
    }

    /// The time left; zero or negative once the budget is spent.
    package var remaining: Duration { remainingTime() }

    /// Whether a wait of `delay` would end after the budget does.
    package func cannotAfford(_ delay: Duration) -> Bool { delay >= remaining }

    /// The budget of the turn the current task works for, if the turn has a duration limit.
    @TaskLocal package static var current: TurnTimeBudget?
}
