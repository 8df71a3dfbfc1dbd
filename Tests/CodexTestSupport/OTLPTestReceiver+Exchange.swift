import Foundation

extension OTLPTestReceiver {
    /// One request on a connection of its own (`Connection: close`), made with the blocking
    /// ``RawSocketClient`` on a thread of its own, never one of Swift's cooperative pool.
    /// - Returns: The response body of a 200 answer.
    /// - Throws: ``Failure`` for a socket error, a timeout or a status other than 200.
    func exchange(_ method: String, _ path: String, body: String = "") async throws -> String {
        let port = self.port
        return try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try Self.blockingExchange(port: port, method, path, body: body) })
            }.start()
        }
    }

    private static func blockingExchange(port: Int, _ method: String, _ path: String, body: String) throws -> String {
        let reply: String
        do {
            let socket = try RawSocketClient(port: port)
            try socket.send(
                "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
            )
            reply = try socket.receive(until: nil)
        } catch {
            throw Failure(description: "\(method) \(path) to the OTLP receiver failed: \(error)")
        }
        guard let separator = reply.range(of: "\r\n\r\n") else {
            throw Failure(description: "\(method) \(path): the OTLP receiver's reply has no head: \(reply.prefix(200))")
        }
        // "\r\n" is one Character in Swift.
        let statusLine = reply[..<separator.lowerBound].prefix { $0 != "\r\n" }
        let fields = statusLine.split(separator: " ")
        let responseBody = String(reply[separator.upperBound...])
        guard fields.count >= 2, fields[1] == "200" else {
            throw Failure(description: "\(method) \(path): the OTLP receiver answered \(statusLine): \(responseBody.prefix(500))")
        }
        return responseBody
    }
}
