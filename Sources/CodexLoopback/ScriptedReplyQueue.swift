/// The replies of `LoopbackHTTPServer(replies:)`, handed out once each in order.
final class ScriptedReplyQueue: Sendable {
    private let remaining: LockedState<ArraySlice<ScriptedReply>>

    /// Creates a queue holding `replies`.
    init(_ replies: [ScriptedReply]) {
        remaining = LockedState(replies[...])
    }

    /// The next reply, or a 500 `no scripted reply` once all have been used.
    func next() -> ScriptedReply {
        remaining.withLock { $0.popFirst() } ?? .text("no scripted reply", status: 500)
    }
}
