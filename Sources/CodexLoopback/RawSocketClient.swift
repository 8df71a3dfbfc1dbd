internal import Glibc

/// A blocking TCP client for tests that must control the exact request bytes (chunked uploads,
/// `Expect: 100-continue`, oversized heads), with a receive timeout so a test can never hang; also the
/// bare-socket baseline of the transport benchmark.
public struct RawSocketClient: ~Copyable {
    /// Why a raw exchange failed.
    public enum Failure: Error, Equatable {
        /// A system call failed with this `errno` (0 when the peer closed too early).
        case systemCall(String, Int32)
        /// Nothing arrived before the timeout.
        case timedOut
        /// The reply was not an HTTP/1.1 response with a `Content-Length`.
        case malformedReply
    }

    private let fd: Int32

    /// Connects to 127.0.0.1:`port`.
    /// - Parameter port: The TCP port.
    /// - Throws: `Failure.systemCall` when the socket cannot be created or connected.
    public init(port: Int) throws(Failure) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw .systemCall("socket", errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw .systemCall("connect", code)
        }
        self.fd = fd
    }

    deinit {
        close(fd)
    }

    /// Sends all of `text` as UTF-8.
    /// - Parameter text: The bytes to send.
    /// - Throws: `Failure.systemCall` when the send fails.
    public func send(_ text: String) throws(Failure) {
        try send(bytes: Array(text.utf8))
    }

    /// Sends all of `bytes`.
    /// - Parameter bytes: The bytes to send.
    /// - Throws: `Failure.systemCall` when the send fails.
    public func send(bytes: [UInt8]) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw .systemCall("send", errno) }
            offset += sent
        }
    }

    /// Reads until the bytes received so far end with `suffix` (or the peer closes, with `suffix` nil).
    /// - Parameters:
    ///   - suffix: The bytes that end the read, nil to read until the peer closes.
    ///   - timeout: How long to wait at most.
    /// - Returns: Everything received, decoded as UTF-8.
    /// - Throws: `Failure` when a call fails or the timeout passes.
    public func receive(until suffix: String?, timeout: Duration = .seconds(5 * Sanitizer.slowdown)) throws(Failure) -> String {
        let deadline = ContinuousClock.now + timeout
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var open = true
        while open {
            if let suffix, received.count >= suffix.utf8.count, received.suffix(suffix.utf8.count).elementsEqual(suffix.utf8) {
                break
            }
            open = try read(into: &chunk, deadline: deadline, allowingClose: suffix == nil) { received += $0 }
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Reads one `Content-Length` response (head and body) of an exchange on a kept-alive connection.
    /// - Parameter timeout: How long to wait at most.
    /// - Returns: The number of body bytes.
    /// - Throws: `Failure` when a call fails, the reply has no length, or the timeout passes.
    public func receiveResponse(timeout: Duration = .seconds(5 * Sanitizer.slowdown)) throws(Failure) -> Int {
        let deadline = ContinuousClock.now + timeout
        var received: [UInt8] = []
        // Never read before `recv` writes it, so it need not be zeroed: as the benchmark's baseline, this
        // client does no more per exchange than a bare one must (bytes, no text).
        var chunk = [UInt8](unsafeUninitializedCapacity: 16 * 1024) { _, count in count = 16 * 1024 }
        var headEnd: Int?
        var expected: Int?
        while expected.map({ received.count < $0 }) ?? true {
            try read(into: &chunk, deadline: deadline) { received += $0 }
            if headEnd == nil, let end = Self.headEnd(in: received) {
                guard let length = Self.contentLength(in: received[..<end]) else { throw .malformedReply }
                headEnd = end
                expected = end + length
            }
        }
        return (expected ?? 0) - (headEnd ?? 0)
    }

    /// The offset just past the first empty line (`CRLF CRLF`) of `bytes`, or nil.
    package static func headEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for start in 0...(bytes.count - 4)
        where bytes[start] == 13 && bytes[start + 1] == 10 && bytes[start + 2] == 13 && bytes[start + 3] == 10 {
            return start + 4
        }
        return nil
    }

    /// The value of the first `Content-Length` field of `head` (its name in any case, spaces and tabs
    /// around the digits allowed), or nil when there is none or it is not a decimal number.
    package static func contentLength(in head: ArraySlice<UInt8>) -> Int? {
        let name = Array("content-length:".utf8)
        var lineStart = head.startIndex
        while lineStart < head.endIndex {
            let lineEnd = head[lineStart...].firstIndex(of: 13) ?? head.endIndex
            let line = head[lineStart..<lineEnd]
            if line.count > name.count, zip(line, name).allSatisfy({ ASCII.lowercased($0) == $1 }) {
                var value = 0
                var digits = 0
                for byte in line.dropFirst(name.count) where byte != 32 && byte != 9 {
                    guard byte >= 48, byte <= 57, digits < 18 else { return nil }
                    value = value * 10 + Int(byte - 48)
                    digits += 1
                }
                return digits > 0 ? value : nil
            }
            lineStart = lineEnd + 2
        }
        return nil
    }

    /// Reads and discards everything until the peer closes the connection.
    /// - Parameter timeout: How long to wait at most.
    /// - Returns: The number of bytes read.
    /// - Throws: `Failure` when a call fails or the timeout passes.
    public func drain(timeout: Duration = .hangGuard) throws(Failure) -> Int {
        let deadline = ContinuousClock.now + timeout
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        var total = 0
        var open = true
        while open {
            open = try read(into: &chunk, deadline: deadline, allowingClose: true) { total += $0.count }
        }
        return total
    }

    /// Waits (in 20 ms polls) for bytes and hands one `recv`'s worth to `consume`.
    /// - Returns: false when the peer closed and `allowingClose` is true.
    @discardableResult
    private func read(
        into chunk: inout [UInt8], deadline: ContinuousClock.Instant, allowingClose: Bool = false,
        _ consume: (ArraySlice<UInt8>) -> Void
    ) throws(Failure) -> Bool {
        while true {
            guard ContinuousClock.now < deadline else { throw .timedOut }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 20) > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                consume(chunk[..<count])
                return true
            }
            if count == 0, allowingClose { return false }
            throw .systemCall("recv", count == 0 ? 0 : errno)
        }
    }
}
