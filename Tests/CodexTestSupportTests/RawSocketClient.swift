import Glibc

/// A blocking TCP client for tests that must control the exact request bytes (chunked uploads,
/// `Expect: 100-continue`, oversized heads), with a receive timeout so a test can never hang.
struct RawSocketClient: ~Copyable {
    /// Why a raw exchange failed.
    enum Failure: Error, Equatable {
        case systemCall(String, Int32)
        case timedOut
    }

    private let fd: Int32

    /// Connects to 127.0.0.1:`port`.
    init(port: Int) throws(Failure) {
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
    func send(_ text: String) throws(Failure) {
        let bytes = Array(text.utf8)
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
    /// - Returns: Everything received, decoded as UTF-8.
    func receive(until suffix: String?, timeout: Duration = .seconds(5)) throws(Failure) -> String {
        let deadline = ContinuousClock.now + timeout
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let suffix, received.count >= suffix.utf8.count, received.suffix(suffix.utf8.count).elementsEqual(suffix.utf8) {
                return String(decoding: received, as: UTF8.self)
            }
            guard ContinuousClock.now < deadline else { throw .timedOut }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 20) > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += chunk[..<count]
            } else if count == 0, suffix == nil {
                return String(decoding: received, as: UTF8.self)
            } else {
                throw .systemCall("recv", count == 0 ? 0 : errno)
            }
        }
    }
}
