/// Waits until `value` stops changing (the same over `stablePolls` polls 50 ms apart), reaches `limit`,
/// or `timeout` passes, and returns its last reading: how far a sender gets against a reader that
/// stopped, or where a count settles once background work is done.
/// - Parameters:
///   - limit: Stop watching once the value reaches this.
///   - stablePolls: How many unchanged polls in a row count as settled.
///   - timeout: How long to watch at most.
///   - value: The reading, taken on each poll.
public func waitForPlateau(limit: Int = .max, stablePolls: Int = 8, timeout: Duration = .hangGuard, _ value: () -> Int) async -> Int {
    let deadline = ContinuousClock.now + timeout
    var last = value()
    var unchanged = 0
    while unchanged < stablePolls, last < limit, ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(50))
        let now = value()
        unchanged = now == last ? unchanged + 1 : 0
        last = now
    }
    return last
}
