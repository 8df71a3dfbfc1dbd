/// A value behind a class reference, for a `Mutex` whose value is closures.
///
/// Reading a function value out of a `Mutex` with `withLock { $0 }` writes it back wrapped in one more
/// reabstraction thunk each time (the lock hands its value over `inout` at its most general form), so a
/// closure read on every message grows a chain of thunks: each call goes through all of them, and
/// freeing the chain recurses once per layer until the stack overflows (an MCP server that sent 60,000
/// requests crashed the client this way). A class reference is copied as it is.
///
/// ```swift
/// let hook = Mutex<SendableReference<@Sendable () -> Void>?>(SendableReference { print("hi") })
/// hook.withLock { $0 }?.value()
/// ```
package final class SendableReference<Value: Sendable>: Sendable {
    /// The value.
    package let value: Value

    /// Holds `value`.
    package init(_ value: Value) {
        self.value = value
    }
}
