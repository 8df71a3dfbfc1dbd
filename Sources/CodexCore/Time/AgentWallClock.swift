public import Foundation

/// The current date, injectable so expiry and cache freshness are testable (including a clock that
/// goes backwards).
public protocol AgentWallClock: Sendable {
    /// The current date.
    func now() -> Date
}

/// The system's date.
public struct SystemWallClock: AgentWallClock {
    /// Creates the clock.
    public init() {}
    /// `Date()`.
    public func now() -> Date { Date() }
}
