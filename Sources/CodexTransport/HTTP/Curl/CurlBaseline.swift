import CCurl
package import CodexCore

/// The bare libcurl loop `codexctl bench transport` compares ``CurlHTTPClient`` with: one easy handle
/// kept across requests (so one kept-alive connection), `curl_easy_perform` on the calling thread, the
/// same request bytes set once, and each reply's bytes copied into one reused buffer (or, for a
/// stream, only counted). No engine thread, no hand-off between threads, no Swift request or response
/// values per exchange. For benchmarks only.
// @unchecked: one caller at a time (the bench's measuring loop); libcurl's easy handle is never shared.
package final class CurlBaseline: @unchecked Sendable {
    private let easy: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let body: UnsafeMutableRawBufferPointer
    /// Whether reply bytes are kept (`false`: only counted, as a reader that drops them would).
    fileprivate let keepsBody: Bool
    fileprivate var received: [UInt8] = []
    fileprivate var receivedCount = 0

    /// Prepares a POST of `body` to `url` with `headers` (`Name: value` lines), or a GET when `body`
    /// is `nil`; `keepsBody: false` only counts the reply's bytes.
    /// - Throws: ``CodexCore/AgentRuntimeError`` with code `transport_failure` when libcurl refuses.
    package init(url: String, headers: [String] = [], body: [UInt8]?, keepsBody: Bool = true) throws(AgentRuntimeError) {
        guard CurlEngine.isReady, let easy = curl_easy_init() else {
            throw AgentRuntimeError(.clientSetup("libcurl could not create a transfer"))
        }
        self.easy = easy
        self.keepsBody = keepsBody
        self.body = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, body?.count ?? 0), alignment: 1)
        if let body { self.body.copyBytes(from: body) }
        if keepsBody { received.reserveCapacity(64 * 1024) }
        var failed = false
        func set(_ option: CURLoption, _ value: Int) { failed = failed || ccurl_easy_setopt_long(easy, option, value) != CURLE_OK }
        func set(_ option: CURLoption, _ value: String) { failed = failed || ccurl_easy_setopt_string(easy, option, value) != CURLE_OK }
        set(CURLOPT_URL, url)
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_TCP_KEEPALIVE, 1)
        // The same request head as the client's: it offers the codings it decodes and no `Expect`.
        set(CURLOPT_ACCEPT_ENCODING, "")
        if let body {
            set(CURLOPT_POST, 1)
            failed = failed || ccurl_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)) != CURLE_OK
            failed = failed || ccurl_easy_setopt_pointer(easy, CURLOPT_POSTFIELDS, self.body.baseAddress) != CURLE_OK
        }
        for header in headers + ["Expect:"] {
            // A failed append returns NULL and leaves the list as it was.
            guard let appended = curl_slist_append(headerList, header) else {
                failed = true
                break
            }
            headerList = appended
        }
        failed = failed || ccurl_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headerList)) != CURLE_OK
        failed = failed || ccurl_easy_setopt_callback(easy, CURLOPT_WRITEFUNCTION, curlBaselineWrite) != CURLE_OK
        failed = failed || ccurl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(self).toOpaque()) != CURLE_OK
        // Every property is set: throwing releases `self`, and `deinit` cleans up.
        if failed { throw AgentRuntimeError(.clientSetup("libcurl refused the baseline's settings")) }
    }

    deinit {
        curl_easy_cleanup(easy)
        if let headerList { curl_slist_free_all(headerList) }
        body.deallocate()
    }

    /// One exchange on the calling thread; returns its status, the reply's body bytes (empty when they
    /// are not kept) and their count.
    /// - Throws: ``CodexCore/AgentRuntimeError`` with code `transport_failure` when libcurl fails.
    package func exchange() throws(AgentRuntimeError) -> (status: Int, body: [UInt8], count: Int) {
        received.removeAll(keepingCapacity: true)
        receivedCount = 0
        let code = curl_easy_perform(easy)
        guard code == CURLE_OK else {
            throw AgentRuntimeError(.connectionFailed(detail: "curl error \(code.rawValue)", domain: "curl", code: Int(code.rawValue)))
        }
        var status = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        return (status, received, receivedCount)
    }
}

private let curlBaselineWrite: ccurl_data_callback = { data, size, count, context in
    guard let context, let data else { return 0 }
    let baseline = Unmanaged<CurlBaseline>.fromOpaque(context).takeUnretainedValue()
    if baseline.keepsBody { baseline.received.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size * count)) }
    baseline.receivedCount += size * count
    return size * count
}
