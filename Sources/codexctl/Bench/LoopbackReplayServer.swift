import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A minimal HTTP/1.1 responder on 127.0.0.1 for benchmarks and the offline demo: each connection gets
/// one request answered with the next body (the last one repeats), written in fixed-size chunks, then
/// the connection closes.
final class LoopbackReplayServer: @unchecked Sendable {
    // @unchecked: `listener` is written once in init; `served` is only touched by the accept thread;
    // `stopped` is atomic.
    let port: Int
    private let listener: Int32
    private let bodies: [[UInt8]]
    private let chunkSize: Int
    private let contentType: String
    private let stopped = Atomic<Bool>(false)
    private var served = 0

    convenience init(body: [UInt8], contentType: String, chunkSize: Int) throws {
        try self.init(bodies: [body], contentType: contentType, chunkSize: chunkSize)
    }

    init(bodies: [[UInt8]], contentType: String, chunkSize: Int) throws {
        self.bodies = bodies
        self.chunkSize = chunkSize
        self.contentType = contentType
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw POSIXError(.EMFILE) }
        var reuse: Int32 = 1
        setsockopt(socketFD, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, size) } }
        guard bound == 0, listen(socketFD, 16) == 0 else {
            close(socketFD)
            throw POSIXError(.EADDRINUSE)
        }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &size) } }
        listener = socketFD
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/") }

    func stop() {
        stopped.store(true, ordering: .releasing)
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while !stopped.load(ordering: .acquiring) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let body = bodies.isEmpty ? [] : bodies[min(served, bodies.count - 1)]
            served += 1
            Thread { [self] in serve(client, body: body) }.start()
        }
    }

    private func serve(_ client: Int32, body: [UInt8]) {
        defer { close(client) }
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var headerEnd: Int?
        while headerEnd == nil {
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            request.append(contentsOf: buffer[0..<count])
            headerEnd = request.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound
        }
        // Drain the request body so the client is not reset.
        let head = String(decoding: request[0..<(headerEnd ?? 0)], as: UTF8.self).lowercased()
        let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        var remaining = length - (request.count - (headerEnd ?? 0))
        while remaining > 0 {
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, min($0.count, remaining), 0) }
            guard count > 0 else { return }
            remaining -= count
        }
        let headers = "HTTP/1.1 200 OK\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        guard write(client, Array(headers.utf8)) else { return }
        var offset = 0
        while offset < body.count {
            let end = min(body.count, offset + chunkSize)
            guard write(client, Array(body[offset..<end])) else { return }
            offset = end
        }
    }

    private func write(_ client: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { send(client, $0.baseAddress.map { $0 + sent }, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { return false }
            sent += count
        }
        return true
    }
}
