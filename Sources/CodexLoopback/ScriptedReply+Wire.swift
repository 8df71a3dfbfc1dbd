extension ScriptedReply {
    /// The terminating zero-size chunk of a chunked body (no trailers).
    static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)

    /// The total size of all `.bytes` parts: the `Content-Length` of a `.contentLength` reply.
    var scriptedBodyLength: Int {
        parts.reduce(0) { total, part in
            switch part {
            case .bytes(let bytes): return total + bytes.count
            case .repeating(let bytes, let times?): return total + bytes.count * times
            default: return total
            }
        }
    }

    /// Whether the scripted headers ask the client to close the connection after this reply.
    var requestsClose: Bool {
        framing == .closeDelimited || framing == .raw || headers.containsToken("close", inHeader: "Connection")
    }

    /// The status line, the scripted headers (minus any framing headers) and the server's framing header,
    /// ending with the blank line.
    var headBytes: [UInt8] {
        guard framing != .raw else { return [] }
        var head = "HTTP/1.1 \(status) \(reason ?? Self.standardReason(for: status))\r\n"
        for field in headers where !field.hasName("Content-Length") && !field.hasName("Transfer-Encoding") {
            head += "\(field.name): \(field.value)\r\n"
        }
        switch framing {
        case .contentLength:
            head += "Content-Length: \(scriptedBodyLength)\r\n"
        case .chunked:
            head += "Transfer-Encoding: chunked\r\n"
        case .closeDelimited:
            if headers.firstValue(named: "Connection") == nil { head += "Connection: close\r\n" }
        case .raw:
            break
        }
        head += "\r\n"
        return Array(head.utf8)
    }

    /// `bytes` framed as one HTTP chunk: hexadecimal size, CRLF, data, CRLF.
    static func chunk(_ bytes: [UInt8]) -> [UInt8] {
        Array("\(String(bytes.count, radix: 16))\r\n".utf8) + bytes + [0x0D, 0x0A]
    }

    /// The standard reason phrase for common status codes; empty for the rest (a valid status line).
    static func standardReason(for status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: ""
        }
    }
}
