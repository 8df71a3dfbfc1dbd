extension Clock where Duration == Swift.Duration {
    /// Sleeps until `duration` has passed on this clock, in waits of at most `slice` each, against one
    /// deadline fixed at the start (so a manual clock advanced past it in one step wakes it at once).
    ///
    /// For long waits that are usually cancelled: on Linux a cancelled `Task.sleep` resumes at once but
    /// its timer, and the memory it holds, stays until the original deadline. A turn's five-minute
    /// duration budget cancelled when the turn ends would otherwise keep about 0.75 KiB per turn for
    /// five minutes; in slices it keeps one second's worth.
    /// - Throws: `CancellationError` when the task is cancelled.
    package func sleepInSlices(for duration: Duration, slice: Duration = .seconds(1)) async throws {
        let deadline = now.advanced(by: duration)
        while now < deadline {
            try await sleep(until: min(deadline, now.advanced(by: slice)), tolerance: nil)
        }
    }
}
