internal import Foundation

/// A value guarded by an `NSLock`.
///
/// `Synchronization.Mutex` would be the natural choice, but on Linux its futex-based lock is invisible to
/// ThreadSanitizer, which then reports races between accesses the lock does order. `NSLock` wraps a
/// pthread mutex, which TSan understands, so tests of this server stay clean under `--sanitize=thread`.
///
/// `@unchecked Sendable`: `value` is private and only touched inside `withLock`, under the lock, and
/// every `Value` used here is itself `Sendable`.
final class LockedState<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// Creates the guarded value.
    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
