/// Keeps a long CPU-bound test loop from holding a thread of Swift's small cooperative pool (two
/// threads on a 2-core machine): call ``tick()`` every iteration and it yields about every 2 ms, so the
/// suite's network tests, whose timeouts are real, still get to run.
public struct CooperativeTicker {
    private var lastYield = ContinuousClock.now

    /// Creates a ticker.
    public init() {}

    /// Yields when 2 ms have passed since the last yield.
    public mutating func tick() async {
        let now = ContinuousClock.now
        if now - lastYield >= .milliseconds(2) {
            await Task.yield()
            lastYield = ContinuousClock.now
        }
    }
}
