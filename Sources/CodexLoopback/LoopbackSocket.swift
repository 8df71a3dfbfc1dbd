internal import Glibc

/// A connected or listening TCP socket descriptor with the few interruptible operations the loopback
/// server needs. Every wait polls the socket together with the server's wake descriptor, which becomes
/// readable when the server shuts down, and then consults `shouldStop`: a wait ends at once on shutdown,
/// and an idle wait wakes only once per `idleSlice` (without a wake descriptor, every `pollSlice`).
struct LoopbackSocket: Sendable {
    /// Outcome of waiting for incoming bytes.
    enum ReceiveOutcome {
        /// Bytes were appended to the buffer.
        case received
        /// The peer closed the connection (end of stream) or reset it.
        case peerClosed
        /// The deadline passed with nothing to read.
        case timedOut
        /// `shouldStop` returned true.
        case stopped
    }

    /// The longest single `poll` without a wake descriptor, and the step of a reply's hold, in milliseconds.
    static let pollSlice: Int32 = 10
    /// The longest single `poll` with a wake descriptor, in milliseconds.
    static let idleSlice: Int32 = 1_000

    /// The descriptor.
    let fd: Int32
    /// The server's wake descriptor (the read end of a pipe that becomes readable on shutdown), or -1.
    var wake: Int32 = -1

    /// The longest single `poll`.
    private var slice: Int32 { wake >= 0 ? Self.idleSlice : Self.pollSlice }

    /// Creates a listening socket on 127.0.0.1 with a kernel-chosen port.
    /// - Returns: The socket (non-blocking, close-on-exec) and its port.
    static func listenOnLoopback() throws(LoopbackServerError) -> (socket: LoopbackSocket, port: Int) {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .systemCallFailed(call: "socket", errno: errno) }
        do throws(LoopbackServerError) {
            var reuse: Int32 = 1
            guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                throw LoopbackServerError.systemCallFailed(call: "setsockopt(SO_REUSEADDR)", errno: errno)
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = 0
            address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
            let bound = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else { throw LoopbackServerError.systemCallFailed(call: "bind", errno: errno) }
            guard Glibc.listen(fd, 4_096) == 0 else {
                throw LoopbackServerError.systemCallFailed(call: "listen", errno: errno)
            }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            guard named == 0 else { throw LoopbackServerError.systemCallFailed(call: "getsockname", errno: errno) }
            return (LoopbackSocket(fd: fd), Int(UInt16(bigEndian: address.sin_port)))
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// Waits up to one poll slice for a pending connection and accepts it.
    /// - Returns: The connected socket (blocking, close-on-exec, `TCP_NODELAY`), or nil when none arrived.
    func acceptConnection() -> LoopbackSocket? {
        guard waitFor(events: POLLIN, milliseconds: slice) else { return nil }
        let connected = accept(fd, nil, nil)
        guard connected >= 0 else { return nil }
        _ = fcntl(connected, F_SETFD, FD_CLOEXEC)
        var noDelay: Int32 = 1
        _ = setsockopt(connected, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        return LoopbackSocket(fd: connected, wake: wake)
    }

    /// Receives whatever is available into `buffer`, waiting until `deadline` (nil: no deadline).
    func receive(
        into buffer: inout InputBuffer,
        until deadline: ContinuousClock.Instant?,
        shouldStop: () -> Bool
    ) -> ReceiveOutcome {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            if shouldStop() { return .stopped }
            var wait = slice
            if let deadline {
                let now = ContinuousClock.now
                if now >= deadline { return .timedOut }
                let (seconds, attoseconds) = (deadline - now).components
                wait = Int32(clamping: min(Int64(wait), seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000))
            }
            guard waitFor(events: POLLIN, milliseconds: wait) else { continue }
            let received = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if received > 0 {
                chunk.withUnsafeBytes { buffer.append(UnsafeRawBufferPointer(rebasing: $0[..<received])) }
                return .received
            }
            if received == 0 { return .peerClosed }
            let code = errno
            if code == EINTR || code == EAGAIN || code == EWOULDBLOCK { continue }
            return .peerClosed
        }
    }

    /// Sends all of `bytes`, waiting for buffer space in poll slices.
    /// - Returns: False when the peer is gone or `shouldStop` turned true before everything was sent.
    func sendAll(_ bytes: [UInt8], shouldStop: () -> Bool) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                send(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if sent > 0 {
                offset += sent
                continue
            }
            let code = errno
            guard sent < 0, code == EINTR || code == EAGAIN || code == EWOULDBLOCK else { return false }
            if shouldStop() { return false }
            _ = waitFor(events: POLLOUT, milliseconds: slice)
        }
        return true
    }

    /// Closes at once.
    func close() {
        Glibc.close(fd)
    }

    /// Closes with `SO_LINGER` 0, so the kernel sends a reset instead of a FIN.
    func closeAbortively() {
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        Glibc.close(fd)
    }

    /// Sends a FIN, then reads and discards until the peer closes too (at most `drainLimit`), then closes.
    /// Closing with unread input would make the kernel send a reset that could destroy response bytes the
    /// client has not read yet.
    func closeGracefully(drainLimit: Duration = .seconds(1), shouldStop: () -> Bool) {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
        var discard = InputBuffer()
        let deadline = ContinuousClock.now + drainLimit
        while receive(into: &discard, until: deadline, shouldStop: shouldStop) == .received {
            discard = InputBuffer()
        }
        Glibc.close(fd)
    }

    /// Polls for `events` and the wake descriptor; true when any event (including hang-up or error) is
    /// reported for the socket, false on a timeout or a wake alone.
    private func waitFor(events: Int32, milliseconds: Int32) -> Bool {
        withUnsafeTemporaryAllocation(of: pollfd.self, capacity: 2) { entries in
            entries[0] = pollfd(fd: fd, events: Int16(events), revents: 0)
            // A negative descriptor (no wake descriptor) is ignored by poll.
            entries[1] = pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
            return poll(entries.baseAddress, 2, milliseconds) > 0 && entries[0].revents != 0
        }
    }
}
