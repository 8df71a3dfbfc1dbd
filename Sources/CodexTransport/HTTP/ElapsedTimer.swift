/// Elapsed time since creation on some clock, and sleeping until an elapsed mark.
struct ElapsedTimer: Sendable {
    let elapsed: @Sendable () -> Duration
    let sleepUntil: @Sendable (Duration) async throws -> Void
}

extension Clock where Duration == Swift.Duration {
    /// A timer that starts now on this clock.
    func makeElapsedTimer() -> ElapsedTimer {
        let start = now
        return ElapsedTimer(
            elapsed: { start.duration(to: self.now) },
            sleepUntil: { mark in try await self.sleep(until: start.advanced(by: mark), tolerance: nil) }
        )
    }
}
