import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP listener on 127.0.0.1 that accepts connections and never reads from them, so a large request
/// body cannot be sent.
final class SilentListener: @unchecked Sendable {
    // @unchecked: `accepted` is only touched on the accept thread and in `close()` after joining it.
    let port: Int
    private let fd: Int32
    private var accepted: [Int32] = []
    private let lock = NSLock()

    init() throws {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, size) } }
        guard bound == 0, listen(socketFD, 8) == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &size) } }
        fd = socketFD
        port = Int(UInt16(bigEndian: address.sin_port))
        start()
    }

    private func start() {
        let listening = fd
        Thread { [weak self] in
            while true {
                let client = accept(listening, nil, nil)
                if client < 0 { return }
                var small: Int32 = 4096
                setsockopt(client, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
                self?.remember(client)
            }
        }.start()
    }

    private func remember(_ client: Int32) {
        lock.lock()
        accepted.append(client)
        lock.unlock()
    }

    func close() {
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
        lock.lock()
        for client in accepted { Glibc.close(client) }
        accepted.removeAll()
        lock.unlock()
    }
}
