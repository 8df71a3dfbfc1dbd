extension LoopbackConnection {
    /// Why a request could not be read.
    enum ReadFailure: Error {
        /// The client closed or reset the connection before the request was complete.
        case peerClosed
        /// The server is shutting down.
        case stopped
        /// The request is malformed or too large; reply with this status and close.
        case rejected(status: Int)
    }

    /// Reads and parses the next request head, skipping blank lines before it.
    func readHead() throws(ReadFailure) -> HTTPRequestHead {
        while true {
            input.skipLeadingLineBreaks()
            if let length = input.offsetPastHeadTerminator(limit: Self.headLimit) {
                guard let head = HTTPRequestHead.parse(input.take(length)) else { throw .rejected(status: 400) }
                return head
            }
            if input.count >= Self.headLimit { throw .rejected(status: 431) }
            try receiveMore()
        }
    }

    /// Reads the body `head` announces: chunked, `Content-Length`, or none. Sends `100 Continue` first
    /// when the client asked for it and a body follows.
    func readBody(for head: HTTPRequestHead) throws(ReadFailure) -> [UInt8] {
        if head.isChunked {
            try sendContinueIfExpected(head)
            return try readChunkedBody()
        }
        guard let lengthText = head.headers.firstValue(named: "Content-Length") else { return [] }
        guard !lengthText.isEmpty, lengthText.allSatisfy(\.isASCII), lengthText.allSatisfy(\.isNumber),
            let length = Int(lengthText)
        else { throw .rejected(status: 400) }
        guard length <= Self.bodyLimit else { throw .rejected(status: 413) }
        guard length > 0 else { return [] }
        try sendContinueIfExpected(head)
        return try readExactly(length)
    }

    /// Decodes a chunked body; chunk extensions and trailers are read and discarded.
    private func readChunkedBody() throws(ReadFailure) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let sizeLine = try readLine()
            let sizeText = (sizeLine.split(separator: ";", maxSplits: 1).first ?? "").trimmingASCIISpaces()
            guard !sizeText.isEmpty, let size = Int(sizeText, radix: 16), size >= 0 else {
                throw .rejected(status: 400)
            }
            guard body.count + size <= Self.bodyLimit else { throw .rejected(status: 413) }
            if size == 0 {
                while try !readLine().isEmpty {}
                return body
            }
            body += try readExactly(size)
            guard try readLine().isEmpty else { throw .rejected(status: 400) }
        }
    }

    /// Sends `HTTP/1.1 100 Continue` when `head` carries `Expect: 100-continue`.
    private func sendContinueIfExpected(_ head: HTTPRequestHead) throws(ReadFailure) {
        guard head.expectsContinue else { return }
        guard socket.sendAll(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), shouldStop: { core.isStopping }) else {
            throw core.isStopping ? .stopped : .peerClosed
        }
    }

    /// Reads one line (at most 8 KiB) and returns it without its CRLF or LF.
    private func readLine() throws(ReadFailure) -> String {
        let limit = 8 * 1024
        while true {
            if let length = input.offsetPastLineFeed(limit: limit) {
                var line = input.take(length).dropLast()
                if line.last == 0x0D { line = line.dropLast() }
                return String(decoding: line, as: UTF8.self)
            }
            if input.count >= limit { throw .rejected(status: 400) }
            try receiveMore()
        }
    }

    /// Reads exactly `length` bytes.
    private func readExactly(_ length: Int) throws(ReadFailure) -> [UInt8] {
        while input.count < length { try receiveMore() }
        return input.take(length)
    }

    /// Waits for more input.
    private func receiveMore() throws(ReadFailure) {
        switch socket.receive(into: &input, until: nil, shouldStop: { core.isStopping }) {
        case .received, .timedOut: return
        case .peerClosed: throw .peerClosed
        case .stopped: throw .stopped
        }
    }
}
