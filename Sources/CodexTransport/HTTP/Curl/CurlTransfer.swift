private import CCurl
import CodexCore
import Foundation
import Synchronization

/// One request on a ``CurlEngine``: its easy handle, the callbacks libcurl calls on the engine thread
/// (request body, response head, response body), the body buffer that pauses the transfer, and the
/// hand-off of the response head to the caller of ``CurlHTTPClient/send(_:)``.
///
/// Interim `1xx` responses are skipped; the response head (at most 256 KiB and 1,000 fields) is handed
/// over when its blank line arrives; redirects are returned as they are.
final class CurlTransfer: @unchecked Sendable {
    // @unchecked: the easy handle, the header list, the upload offset and the head being parsed are
    // touched only on the engine thread (configuration happens before the transfer is started); the
    // hand-off state is a Mutex; `body` and `watchdog` are Sendable.

    /// The most bytes of response head (all header lines of all interim and final heads).
    static let maximumHeadBytes = 256 * 1024
    /// The most header fields of one response head.
    static let maximumHeaderFields = 1_000

    private enum HandOff {
        case notStarted
        case cancelledEarly
        case waiting(CheckedContinuation<HTTPResponse, any Error>)
        case delivered
        case ended
    }

    private(set) var easy: UnsafeMutableRawPointer?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let requestBody: [UInt8]?
    /// The request's URL, kept for the server transport failures name (computed only on failure).
    private let url: URL
    /// The server, as transport failures name it (scheme, host and port only).
    private var origin: String? { HTTPRequest.origin(of: url) }
    private var uploadOffset = 0
    private var status = 0
    private var fields: [HTTPHeaders.Field] = []
    private var headBytes = 0
    private var headFailure: AgentRuntimeError?
    private let handOff = Mutex(HandOff.notStarted)
    let body: PausingBody
    let watchdog: TransferWatchdog
    private let engine: CurlEngine

    init(_ request: HTTPRequest, engine: CurlEngine, bufferLimit: Int, certificateAuthorityFile: String? = nil, deadlines: DeadlineScheduler) throws {
        self.engine = engine
        requestBody = request.body
        url = request.url
        watchdog = TransferWatchdog(timeouts: request.timeouts, hasBody: request.body != nil, scheduler: deadlines)
        // The body's callbacks reach the transfer through a box filled below (self is not ready yet).
        let box = TransferBox()
        body = PausingBody(
            limit: bufferLimit,
            onResume: { box.transfer.map { $0.engine.submit(.resume($0)) } },
            onCancel: { box.transfer.map { $0.engine.submit(.stop($0, CancellationError())) } }
        )
        guard let easy = curl_easy_init() else {
            throw AgentRuntimeError(.clientSetup("libcurl could not create a transfer"))
        }
        self.easy = easy
        box.transfer = self
        do {
            try configure(request, certificateAuthorityFile: certificateAuthorityFile)
        } catch {
            cleanUp()
            throw error
        }
    }

    deinit { cleanUp() }

    private func configure(_ request: HTTPRequest, certificateAuthorityFile: String?) throws {
        guard let easy else { return }
        let context = Unmanaged.passUnretained(self).toOpaque()
        var failed = false
        func set(_ option: CURLoption, _ value: Int) { failed = failed || ccurl_easy_setopt_long(easy, option, value) != CURLE_OK }
        func set(_ option: CURLoption, _ value: String) { failed = failed || ccurl_easy_setopt_string(easy, option, value) != CURLE_OK }
        set(CURLOPT_URL, request.url.absoluteString)
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_PROTOCOLS_STR, "http,https")
        set(CURLOPT_FOLLOWLOCATION, 0)
        set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        set(CURLOPT_SSL_VERIFYPEER, 1)
        set(CURLOPT_SSL_VERIFYHOST, 2)
        if let certificateAuthorityFile {
            // Instead of the system's authorities, not beside them: libcurl's built-in CA directory
            // (`/etc/ssl/certs` on Debian) would otherwise still be searched.
            set(CURLOPT_CAINFO, certificateAuthorityFile)
            failed = failed || ccurl_easy_setopt_pointer(easy, CURLOPT_CAPATH, nil) != CURLE_OK
        }
        set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        set(CURLOPT_TCP_KEEPALIVE, 1)
        // Offer every coding this libcurl decodes (gzip, deflate, br, zstd here) and decode it: the
        // body's readers, and so every limit, see decoded bytes.
        set(CURLOPT_ACCEPT_ENCODING, "")
        failed = failed || ccurl_easy_setopt_pointer(easy, CURLOPT_PRIVATE, context) != CURLE_OK
        failed = failed || ccurl_easy_setopt_callback(easy, CURLOPT_WRITEFUNCTION, curlWriteCallback) != CURLE_OK
        failed = failed || ccurl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context) != CURLE_OK
        failed = failed || ccurl_easy_setopt_callback(easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback) != CURLE_OK
        failed = failed || ccurl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, context) != CURLE_OK
        let method = request.method.uppercased()
        if let body = request.body {
            set(CURLOPT_POST, 1)
            failed = failed || ccurl_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)) != CURLE_OK
            failed = failed || ccurl_easy_setopt_callback(easy, CURLOPT_READFUNCTION, curlReadCallback) != CURLE_OK
            failed = failed || ccurl_easy_setopt_pointer(easy, CURLOPT_READDATA, context) != CURLE_OK
            if method != "POST" { set(CURLOPT_CUSTOMREQUEST, method) }
        } else if method == "HEAD" {
            set(CURLOPT_NOBODY, 1)
        } else if method != "GET" {
            set(CURLOPT_CUSTOMREQUEST, method)
        }
        for field in request.headers.fields {
            guard Self.isToken(field.name), !field.value.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) else {
                throw AgentRuntimeError(.invalidHeader)
            }
            headerList = curl_slist_append(headerList, "\(field.name): \(field.value)")
        }
        // No `Expect: 100-continue` round trip before a body.
        headerList = curl_slist_append(headerList, "Expect:")
        failed = failed || ccurl_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headerList)) != CURLE_OK
        if failed { throw AgentRuntimeError(.clientSetup("libcurl refused the request's settings")) }
    }

    private static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            byte > 0x20 && byte < 0x7F && !"()<>@,;:\\\"/[]?={}".utf8.contains(byte)
        }
    }

    private func cleanUp() {
        if let easy { curl_easy_cleanup(easy) }
        easy = nil
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
    }

    // MARK: - Hand-off to the caller

    /// Starts enforcing the request's timeouts on the client's clock.
    func startWatchdog() {
        watchdog.start { kind, error in self.expire(kind, error) }
    }

    /// Registers the caller and starts the transfer; a caller cancelled before this call gets
    /// `CancellationError` and nothing is sent.
    func start(_ continuation: CheckedContinuation<HTTPResponse, any Error>) {
        let cancelled = handOff.withLock { state -> Bool in
            if case .cancelledEarly = state { return true }
            state = .waiting(continuation)
            return false
        }
        if cancelled {
            // Never started, so never completed: the timeouts end here.
            watchdog.update { deadlines, _ in deadlines.finish() }
            continuation.resume(throwing: CancellationError())
            return
        }
        engine.submit(.start(self))
    }

    /// The caller was cancelled while waiting for the response head.
    func cancelBeforeHead() {
        let stop = handOff.withLock { state -> Bool in
            switch state {
            case .notStarted:
                state = .cancelledEarly
                return false
            case .waiting: return true
            case .cancelledEarly, .delivered, .ended: return false
            }
        }
        if stop { engine.submit(.stop(self, CancellationError())) }
    }

    /// A timeout fired and the transfer is stopped. The total timeout is a deadline for the whole
    /// exchange: its error reaches the consumer now, not after the bytes still held. The others report a
    /// silence that began after the held bytes arrived: those are delivered first.
    func expire(_ kind: TransferDeadlines.Kind, _ error: AgentRuntimeError) {
        body.finish(error, discardingHeld: kind == .total)
        engine.submit(.stop(self, error))
    }

    private func deliverHead() {
        let response = HTTPResponse(statusCode: status, headers: HTTPHeaders(fields), body: HTTPResponseBody(source: body))
        watchdog.update { deadlines, now in deadlines.headersReceived(at: now) }
        let waiter = handOff.withLock { state -> CheckedContinuation<HTTPResponse, any Error>? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .delivered
            return continuation
        }
        waiter?.resume(returning: response)
    }

    /// The transfer ended (engine thread): normally (`nil`) or with `error`.
    func completed(with error: (any Error)?) {
        watchdog.update { deadlines, _ in deadlines.finish() }
        cleanUp()
        let waiter = handOff.withLock { state -> CheckedContinuation<HTTPResponse, any Error>? in
            defer { state = .ended }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        if let waiter {
            waiter.resume(throwing: error ?? headFailure ?? AgentRuntimeError(.endedBeforeHead(domain: "curl", code: Int(CURLE_GOT_NOTHING.rawValue), origin: origin)))
        } else {
            body.finish(error)
        }
    }

    /// Whether `error` is a body its `Content-Encoding` could not decode (`CURLE_BAD_CONTENT_ENCODING`):
    /// not a lost connection, so a stream reports it as it is.
    static func isContentDecodingFailure(_ error: AgentRuntimeError) -> Bool {
        error.interruption?.transportDomain == "curl" && error.interruption?.transportCode == Int(CURLE_BAD_CONTENT_ENCODING.rawValue)
    }

    /// The codings the client offers in `Accept-Encoding`, the ones libcurl decodes.
    static let offeredCodings: Set<String> = ["gzip", "x-gzip", "deflate", "br", "zstd", "identity"]

    /// The typed error of a failed transfer: `transport_failure` with curl's code and its generic text
    /// (never the URL, a header or a credential), or the head limit that stopped it.
    func failure(curlCode: UInt32) -> AgentRuntimeError {
        let result = CURLcode(rawValue: curlCode)
        if let headFailure, result == CURLE_WRITE_ERROR { return headFailure }
        if result == CURLE_BAD_CONTENT_ENCODING, let coding = contentEncoding() {
            let codings = coding.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            return AgentRuntimeError(.contentEncoding(coding: coding, offered: codings.allSatisfy(Self.offeredCodings.contains), curlCode: Int(curlCode)))
        }
        if result == CURLE_OUT_OF_MEMORY {
            let delivered = handOff.withLock { if case .delivered = $0 { true } else { false } }
            // Before the head: libcurl refuses a header line over its own limit (100 KiB) as "out of memory".
            if !delivered {
                return AgentRuntimeError(.responseHead("has a line longer than libcurl accepts (curl error \(curlCode))", domain: "curl", code: Int(curlCode)))
            }
            // In an encoded body: while the reader is paused libcurl keeps what one read decodes to, up to 64 MiB.
            if let coding = contentEncoding() {
                return AgentRuntimeError(.decompressionBomb(coding: coding, domain: "curl", code: Int(curlCode)))
            }
        }
        let text = curl_easy_strerror(result).map { String(cString: $0) } ?? "unknown error"
        return AgentRuntimeError(.connectionFailed(detail: "curl error \(curlCode): \(text)", domain: "curl", code: Int(curlCode), origin: origin))
    }

    /// The final head's `Content-Encoding`, printable and at most 64 characters, or `nil` for none.
    private func contentEncoding() -> String? {
        guard let value = fields.last(where: { $0.name.lowercased() == "content-encoding" })?.value, !value.isEmpty else { return nil }
        let printable = String(String.UnicodeScalarView(value.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }.prefix(64)))
        return printable.isEmpty ? "(unprintable)" : printable
    }

    /// Before the engine resumes a paused transfer: the idle clock restarts.
    func willResume() {
        watchdog.update { deadlines, now in deadlines.resume(at: now) }
    }

    // MARK: - Callbacks (engine thread)

    fileprivate func receiveBody(_ data: UnsafeRawBufferPointer) -> Int {
        let offer = body.offer(Array(data))
        if offer == .releaseNow {
            body.release()
        } else if offer == .stored(release: true) {
            engine.releaseAfterPass(self)
        }
        switch offer {
        case .stored, .releaseNow:
            watchdog.update { deadlines, now in deadlines.activity(at: now) }
            return data.count
        case .pause:
            watchdog.update { deadlines, _ in deadlines.pause() }
            return ccurl_writefunc_pause()
        case .reject:
            return 0
        }
    }

    /// One header line from libcurl (status line, field, folded continuation, or the blank line that ends
    /// a head), read as bytes: names and values are cut at ASCII bytes (colon, space, tab), so no UTF-8
    /// sequence is split, and each is decoded once (invalid UTF-8 repaired, as for any text of a reply).
    fileprivate func receiveHeader(_ data: UnsafeRawBufferPointer) -> Int {
        headBytes += data.count
        guard headBytes <= Self.maximumHeadBytes else {
            headFailure = AgentRuntimeError(.responseHead("is larger than \(Self.maximumHeadBytes) bytes"))
            return 0
        }
        watchdog.update { deadlines, now in deadlines.activity(at: now) }
        var end = data.count
        while end > 0, data[end - 1] == 0x0A || data[end - 1] == 0x0D { end -= 1 }
        let line = UnsafeRawBufferPointer(rebasing: data[0..<end])
        if line.starts(with: Self.statusPrefix) {
            // `HTTP/<version> <status> <reason>`: the status is the second space-separated word.
            let words = line.split(separator: 0x20, maxSplits: 2, omittingEmptySubsequences: true)
            status = words.count > 1 ? Int(String(decoding: words[1], as: UTF8.self)) ?? 0 : 0
            fields = []
            return data.count
        }
        if line.isEmpty {
            // The end of a head: interim 1xx heads are skipped, the final one goes to the caller.
            if (100..<200).contains(status) {
                status = 0
                fields = []
            } else if status > 0 {
                deliverHead()
            }
            return data.count
        }
        if let first = line.first, first == 0x20 || first == 0x09, let last = fields.indices.last {
            fields[last].value += " " + Self.text(Self.trimmed(line[...]))
            return data.count
        }
        guard let colon = line.firstIndex(of: 0x3A) else { return data.count }
        fields.append(HTTPHeaders.Field(name: Self.text(Self.trimmed(line[..<colon])), value: Self.text(Self.trimmed(line[(colon + 1)...]))))
        guard fields.count <= Self.maximumHeaderFields else {
            headFailure = AgentRuntimeError(.responseHead("has more than \(Self.maximumHeaderFields) fields"))
            return 0
        }
        return data.count
    }

    private static let statusPrefix = Array("HTTP/".utf8)

    /// `bytes` without leading and trailing spaces and tabs (the optional whitespace around a field's
    /// name and value).
    private static func trimmed(_ bytes: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        var lower = bytes.startIndex
        var upper = bytes.endIndex
        while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
        while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
        return bytes[lower..<upper]
    }

    private static func text(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes), as: UTF8.self)
    }

    fileprivate func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let requestBody else { return 0 }
        let count = min(buffer.count, requestBody.count - uploadOffset)
        if count > 0 {
            requestBody.withUnsafeBytes { source in
                guard let from = source.baseAddress, let to = buffer.baseAddress else { return }
                to.copyMemory(from: from + uploadOffset, byteCount: count)
            }
            uploadOffset += count
        }
        let finished = uploadOffset == requestBody.count
        watchdog.update { deadlines, now in finished ? deadlines.bodySent(at: now) : deadlines.activity(at: now) }
        return count
    }
}

/// Lets a transfer's body callbacks, created before the transfer exists, reach it.
private final class TransferBox: @unchecked Sendable {
    // @unchecked: set once in CurlTransfer.init, before any callback can run, then only read.
    weak var transfer: CurlTransfer?
}

private let curlWriteCallback: ccurl_data_callback = { data, size, count, context in
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
}

private let curlHeaderCallback: ccurl_data_callback = { data, size, count, context in
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.receiveHeader(UnsafeRawBufferPointer(start: data, count: size * count))
}

private let curlReadCallback: ccurl_data_callback = { data, size, count, context in
    guard let context else { return ccurl_readfunc_abort() }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.sendBody(into: UnsafeMutableRawBufferPointer(start: data, count: size * count))
}
