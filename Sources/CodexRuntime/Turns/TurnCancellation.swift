import Synchronization

/// Why a turn's producer was cancelled.
final class TurnCancellation: Sendable {
    private let reason = Mutex<String?>(nil)

    /// Notes the first reason given.
    func note(_ text: String) {
        reason.withLock { if $0 == nil { $0 = text } }
    }

    /// The reason, `cancelled` when none was noted.
    var text: String { reason.withLock { $0 } ?? "cancelled" }
}
