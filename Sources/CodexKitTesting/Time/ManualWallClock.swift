public import CodexCore
public import Foundation
import Synchronization

/// A wall clock that only moves when told to, forwards or backwards.
public final class ManualWallClock: AgentWallClock {
    private let current: Mutex<Date>

    /// Creates the clock at `date`.
    public init(_ date: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Mutex(date)
    }

    /// The clock's date.
    public func now() -> Date { current.withLock { $0 } }

    /// Moves the clock by `interval` seconds (negative goes back).
    public func advance(by interval: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(interval) }
    }

    /// Sets the clock.
    public func set(_ date: Date) {
        current.withLock { $0 = date }
    }
}
