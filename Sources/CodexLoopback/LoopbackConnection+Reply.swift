extension LoopbackConnection {
    /// Plays `reply` back: the head goes out with the first `.bytes` part (or at the end), delays and
    /// holds watch for the client closing, `.closeAbruptly` ends everything.
    /// - Parameters:
    ///   - reply: The scripted reply.
    ///   - omitBody: True for `HEAD` requests: framing headers are sent, body bytes are not.
    ///   - holdGeneration: The hold generation when the request was recorded. A `.hold` waits for a
    ///     `releaseHeld()` after that point (or after the previous `.hold` ended), so a test that releases
    ///     as soon as it sees the bytes before the hold cannot lose the race with this thread.
    /// - Returns: Nil when the whole reply was sent and the connection may continue, else how it ended.
    func play(_ reply: ScriptedReply, omitBody: Bool, holdGeneration: Int) -> Ending? {
        var generation = holdGeneration
        var pendingHead: [UInt8]? = reply.headBytes
        let shouldStop = { self.core.isStopping }
        for part in reply.parts {
            switch part {
            case .bytes(let bytes):
                var out = pendingHead ?? []
                pendingHead = nil
                if !omitBody { out += Self.framed(bytes, reply.framing) }
                if !out.isEmpty, !socket.sendAll(out, shouldStop: shouldStop) { return lostWriteEnding() }
                if !omitBody { core.recordSentBody(bytes.count) }
            case .repeating(let bytes, let times):
                if let head = pendingHead, !head.isEmpty, !socket.sendAll(head, shouldStop: shouldStop) { return lostWriteEnding() }
                pendingHead = nil
                guard !omitBody else { continue }
                let framed = Self.framed(bytes, reply.framing)
                var sent = 0
                while times.map({ sent < $0 }) ?? true {
                    if !socket.sendAll(framed, shouldStop: shouldStop) { return lostWriteEnding() }
                    core.recordSentBody(bytes.count)
                    sent += 1
                }
            case .halfClose:
                if let head = pendingHead, !head.isEmpty, !socket.sendAll(head, shouldStop: shouldStop) { return lostWriteEnding() }
                socket.closeGracefully(drainLimit: .seconds(600)) { self.core.isStopping }
                return .alreadyClosed
            case .delay(let duration):
                if let ending = pause(until: .now + duration, releasedAfter: nil) { return ending }
            case .hold:
                if let ending = pause(until: nil, releasedAfter: generation) { return ending }
                generation = core.holdGeneration
            case .closeAbruptly:
                return .abort
            }
        }
        var out = pendingHead ?? []
        if reply.framing == .chunked, !omitBody { out += ScriptedReply.lastChunk }
        if !out.isEmpty, !socket.sendAll(out, shouldStop: shouldStop) { return lostWriteEnding() }
        return nil
    }

    /// `bytes` as they go on the wire in `framing`.
    private static func framed(_ bytes: [UInt8], _ framing: ScriptedReply.Framing) -> [UInt8] {
        switch framing {
        case .chunked: return bytes.isEmpty ? [] : ScriptedReply.chunk(bytes)
        case .contentLength, .closeDelimited, .raw: return bytes
        }
    }

    /// Why a send failed: shutdown or a vanished client.
    private func lostWriteEnding() -> Ending {
        core.isStopping ? .stopped : .peerClosed
    }

    /// Waits until `deadline`, or (with a `generation`) until the hold generation differs from it, while
    /// reading whatever the client sends (kept for the next request) so that a close is noticed at once.
    /// - Returns: Nil when the wait ended normally, else how the connection ended.
    private func pause(until deadline: ContinuousClock.Instant?, releasedAfter generation: Int?) -> Ending? {
        let released = { generation.map { self.core.holdGeneration != $0 } ?? false }
        while !released() {
            let sliceEnd = ContinuousClock.now + .milliseconds(Int(LoopbackSocket.pollSlice))
            let until = deadline.map { min($0, sliceEnd) } ?? sliceEnd
            switch socket.receive(into: &input, until: until, shouldStop: { self.core.isStopping }) {
            case .received: continue
            case .peerClosed: return .peerClosed
            case .stopped: return .stopped
            case .timedOut:
                if let deadline, ContinuousClock.now >= deadline { return nil }
            }
        }
        return nil
    }
}
