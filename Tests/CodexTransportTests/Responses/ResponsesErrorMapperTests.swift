import CodexCore
import CodexKitTesting
import CodexTransport
import Foundation
import Testing

@Suite struct ResponsesErrorMapperTests {
    let now = Date(timeIntervalSince1970: 1_445_412_480) // Wed, 21 Oct 2015 07:28:00 GMT

    @Test(arguments: [
        (400, #"{"error":{"code":"decimal_below_min_value","message":"bad","param":"temperature","type":"invalid_request_error"}}"#, AgentRuntimeError.Code.invalidRequest, false),
        (400, #"{"error":{"code":"context_length_exceeded","message":"too long"}}"#, .contextLengthExceeded, false),
        (401, #"{"detail":"Unauthorized"}"#, .unauthorized, false),
        (403, #"{"detail":"Forbidden"}"#, .forbidden, false),
        (429, #"{"error":{"type":"usage_limit_reached"}}"#, .quotaExceeded, false),
        (429, #"{"error":{"type":"usage_not_included"}}"#, .quotaExceeded, false),
        (429, #"{"error":{"code":"insufficient_quota","type":"insufficient_quota"}}"#, .quotaExceeded, false),
        (429, #"{"error":{"code":"rate_limit_exceeded"}}"#, .rateLimited, true),
        (500, "oops", .providerError, true),
        (503, #"{"error":{"code":"server_is_overloaded"}}"#, .providerOverloaded, true),
        (504, "", .providerError, true),
        (404, #"{"detail":"Not Found"}"#, .invalidRequest, false),
        (408, "", .providerError, true),
    ])
    func statusesAndBodiesMapToCodes(status: Int, body: String, code: AgentRuntimeError.Code, retryable: Bool) {
        let error = ResponsesErrorMapper.error(status: status, headers: ["x-request-id": "req_1"], body: Array(body.utf8), now: now)
        #expect(error.code == code)
        #expect(error.http?.statusCode == status)
        #expect(error.http?.requestID == "req_1")
        #expect(error.retry?.isRetryable == retryable)
        #expect(RetryPolicy.isRetryable(error) == retryable)
    }

    /// The wait a rate-limit message names, in every form providers write it: "6m0s" was once read as six
    /// seconds, and "1e309s" as one. A unit it cannot read gives no wait (the back-off applies).
    @Test(arguments: [
        ("Please try again in 11.054s.", 11.054), ("try again in 250ms", 0.25), ("Please try again in 6m0s", 360.0), ("try again in 1h2m3s", 3_723.0),
        ("Try again in 20 seconds", 20.0), ("try again in 2 minutes", 120.0), ("try again in 7", 7.0),
    ] as [(String, Double)])
    func aRateLimitMessageNamesItsWait(message: String, seconds: Double) {
        let error = ResponsesErrorMapper.error(streamEvent: .error(code: "rate_limit_exceeded", type: nil, message: message, param: nil), responseID: nil)
        #expect(error?.code == .rateLimited)
        #expect(error?.http?.retryAfter == seconds)
    }

    @Test(arguments: ["try again in 1e309s", "try again in 5 fortnights", "try again later", "slow down"])
    func aWaitItCannotReadIsNoWait(message: String) {
        let error = ResponsesErrorMapper.error(streamEvent: .error(code: "rate_limit_exceeded", type: nil, message: message, param: nil), responseID: nil)
        #expect(error?.http?.retryAfter == nil)
    }

    @Test func providerFieldsAreKept() {
        let error = ResponsesErrorMapper.error(
            status: 400, headers: [:],
            body: Array(#"{"error":{"code":"decimal_below_min_value","message":"Invalid 'temperature'","param":"temperature","type":"invalid_request_error"}}"#.utf8),
            now: now
        )
        #expect(error.http?.providerCode == "decimal_below_min_value")
        #expect(error.http?.providerType == "invalid_request_error")
        #expect(error.message == "HTTP 400: Invalid 'temperature'")
        #expect(!error.description.contains("Bearer"))
    }

    static let retryAfterCases: [(HTTPHeaders, Double?)] = [
        (["retry-after": "120"], 120), (["retry-after-ms": "250"], 0.25), (["Retry-After": "Wed, 21 Oct 2015 07:29:00 GMT"], 60),
        (["retry-after": "999999999"], 86_400), (["retry-after": "soon"], nil), ([:], nil), (["retry-after": "-5"], nil),
        (["retry-after-ms": "1500", "retry-after": "9"], 1.5), (["retry-after": "1.5"], 1.5),
        // Forms `Double` would read but no server means: not a delay.
        (["retry-after": "1e3"], nil), (["retry-after": "0x10"], nil), (["retry-after": "inf"], nil), (["retry-after": "+5"], nil),
        (["retry-after": "5."], nil), (["retry-after-ms": "1e6"], nil),
    ]

    @Test(arguments: retryAfterCases)
    func retryAfterIsParsedAndCapped(headers: HTTPHeaders, expected: Double?) {
        #expect(ResponsesErrorMapper.retryAfter(headers: headers, now: now) == expected)
    }

    @Test func backoffGrowsToItsCapWithBoundedJitter() {
        var random = SystemRandomNumberGenerator()
        let policy = RetryPolicy(jitter: 0)
        #expect(policy.delay(afterAttempt: 1, retryAfter: nil, using: &random) == .milliseconds(500))
        #expect(policy.delay(afterAttempt: 2, retryAfter: nil, using: &random) == .seconds(1))
        #expect(policy.delay(afterAttempt: 4, retryAfter: nil, using: &random) == .seconds(4))
        #expect(policy.delay(afterAttempt: 9, retryAfter: nil, using: &random) == .seconds(4))
        #expect(policy.delay(afterAttempt: 1, retryAfter: 7.5, using: &random) == .milliseconds(7_500))
        let jittered = RetryPolicy.default
        for _ in 0..<100 {
            let delay = jittered.delay(afterAttempt: 1, retryAfter: nil, using: &random)
            #expect(delay >= .milliseconds(400) && delay <= .milliseconds(600))
        }
        #expect(RetryPolicy.disabled.maximumAttempts == 1)
        #expect(RetryPolicy(maximumAttempts: 0).maximumAttempts == 1)
    }
}

@Suite struct RateLimitParserTests {
    let now = Date(timeIntervalSince1970: 1_699_990_000)

    @Test func parsesEveryFamilyWithCreditsAndNames() {
        let headers: HTTPHeaders = [
            "x-codex-primary-used-percent": "42.5", "x-codex-primary-window-minutes": "300", "x-codex-primary-reset-at": "1700000000",
            "x-codex-secondary-used-percent": "7", "x-codex-secondary-window-minutes": "10080", "x-codex-secondary-reset-after-seconds": "60",
            "x-codex-credits-has-credits": "True", "x-codex-credits-unlimited": "False", "x-codex-credits-balance": "0E-10",
            "x-codex-bengalfox-primary-used-percent": "3", "x-codex-bengalfox-limit-name": "gpt-5.2-codex-sonic",
            "x-codex-limit-name": "codex",
        ]
        let snapshots = RateLimitParser.snapshots(fromHeaders: headers, now: now)
        #expect(snapshots == [
            AgentRateLimitSnapshot(
                limitID: "codex", limitName: "codex",
                primary: .init(usedPercent: 42.5, windowDurationMinutes: 300, resetsAt: Date(timeIntervalSince1970: 1_700_000_000)),
                secondary: .init(usedPercent: 7, windowDurationMinutes: 10_080, resetsAt: Date(timeIntervalSince1970: 1_699_990_060)),
                credits: .init(hasCredits: true, unlimited: false, balance: "0E-10")
            ),
            AgentRateLimitSnapshot(limitID: "codex_bengalfox", limitName: "gpt-5.2-codex-sonic", primary: .init(usedPercent: 3)),
        ])
    }

    @Test func invalidOptionalFieldsAreDroppedWithoutLosingTheWindow() {
        let headers: HTTPHeaders = [
            "x-codex-primary-used-percent": "55", "x-codex-primary-window-minutes": "five hours", "x-codex-primary-reset-at": "",
            "x-codex-secondary-used-percent": "0", "x-codex-secondary-window-minutes": "0", "x-codex-credits-has-credits": "maybe",
        ]
        #expect(RateLimitParser.snapshots(fromHeaders: headers, now: now) == [AgentRateLimitSnapshot(limitID: "codex", primary: .init(usedPercent: 55))])
        #expect(RateLimitParser.snapshots(fromHeaders: ["content-type": "text/plain"], now: now).isEmpty)
    }

    /// Values no server could mean are not reported: the window keeps what is plausible, and a window
    /// left with nothing is absent.
    @Test func implausibleValuesAreAbsentNeverZeroOrAFarFuture() {
        let headers: HTTPHeaders = [
            "x-codex-primary-used-percent": "nan", "x-codex-primary-window-minutes": "-300", "x-codex-primary-reset-at": "1e300",
            "x-codex-secondary-used-percent": "-5", "x-codex-secondary-window-minutes": "99999999", "x-codex-secondary-reset-after-seconds": "inf",
            "x-other-primary-used-percent": "250", "x-other-primary-window-minutes": "60", "x-other-primary-reset-after-seconds": "-60",
            "x-late-primary-used-percent": "12", "x-late-primary-reset-at": "99999999999",
        ]
        #expect(RateLimitParser.snapshots(fromHeaders: headers, now: now) == [
            AgentRateLimitSnapshot(limitID: "late", primary: .init(usedPercent: 12)),
            AgentRateLimitSnapshot(limitID: "other", primary: .init(usedPercent: 0, windowDurationMinutes: 60)),
        ])
    }

    @Test func implausibleEventValuesAreAbsentToo() throws {
        let json = #"{"type":"codex.rate_limits","rate_limits":{"primary":{"used_percent":1e300,"window_minutes":-1,"reset_at":1e300},"secondary":{"used_percent":50,"reset_after_seconds":-3}}}"#
        var decoder = ResponsesEventDecoder(wallClock: ManualWallClock(now))
        let event = try #require(try decoder.decode(SSEEvent(type: "codex.rate_limits", data: json)))
        guard case .rateLimits(let snapshots) = event.kind else {
            Issue.record("not rate limits")
            return
        }
        #expect(snapshots == [AgentRateLimitSnapshot(limitID: "codex", secondary: .init(usedPercent: 50))])
    }
}

@Suite struct ResponsesEndpointTests {
    @Test(arguments: ["https://chatgpt.com/backend-api/codex", "http://127.0.0.1:8080/api/codex/", "http://localhost:1", "http://[::1]:9/x"])
    func acceptedBases(base: String) throws {
        let endpoint = try ResponsesEndpoint(baseURL: try #require(URL(string: base)), profile: .chatGPT)
        #expect(!endpoint.baseURL.absoluteString.hasSuffix("/"))
        #expect(endpoint.url("responses").absoluteString == endpoint.baseURL.absoluteString + "/responses")
    }

    @Test(arguments: ["http://example.com", "ftp://example.com", "https://user:pw@example.com", "https://example.com/?a=1", "https://example.com/#x", "https:///x", "file:///tmp"])
    func refusedBases(base: String) throws {
        let error = #expect(throws: AgentRuntimeError.self) { try ResponsesEndpoint(baseURL: try #require(URL(string: base)), profile: .publicAPI) }
        #expect(error?.code == .invalidEndpoint)
    }

    @Test(arguments: ["http://127.5.6.7:1", "http://[0:0:0:0:0:0:0:1]:1", "http://LOCALHOST:1", "http://127.255.255.255"])
    func everyLoopbackSpellingIsAccepted(base: String) throws {
        _ = try ResponsesEndpoint(baseURL: try #require(URL(string: base)), profile: .publicAPI)
    }

    /// Names that only look like loopback, and numeric spellings a resolver would turn into one, are
    /// refused by their spelling alone: nothing is looked up, so a key never leaves in clear text.
    @Test(arguments: [
        "http://127.attacker.invalid", "http://127.0.0.1.nip.io", "http://localhost.attacker.invalid", "http://127.1",
        "http://0177.0.0.1", "http://2130706433", "http://0x7f.0.0.1", "http://127.0.0.01", "http://[::2]",
        "http://[::ffff:127.0.0.1]", "http://128.0.0.1", "http://10.0.0.1",
    ])
    func namesThatLookLoopbackAreRefusedNamingTheRule(base: String) throws {
        let error = #expect(throws: AgentRuntimeError.self) { try ResponsesEndpoint(baseURL: try #require(URL(string: base)), profile: .publicAPI) }
        #expect(error?.code == .invalidEndpoint)
        #expect(error?.message == "the endpoint must use https; plain http is allowed only to a loopback address (an IPv4 literal in 127.0.0.0/8, [::1]) or the name localhost")
        // The same host over https is a valid endpoint: the rule is about clear text only.
        let https = try #require(URL(string: base.replacingOccurrences(of: "http://", with: "https://")))
        _ = try ResponsesEndpoint(baseURL: https, profile: .publicAPI)
    }

    /// A port outside 1…65535 is a usage mistake found when the endpoint is made, not a transport failure
    /// when the first request goes.
    @Test(arguments: ["http://127.0.0.1:99999/v1", "https://api.example.com:0/v1", "https://api.example.com:65536"])
    func aPortOutOfRangeIsRefused(base: String) throws {
        let error = #expect(throws: AgentRuntimeError.self) { try ResponsesEndpoint(baseURL: try #require(URL(string: base)), profile: .publicAPI) }
        #expect(error?.code == .invalidEndpoint)
        #expect(error?.message == "the endpoint's port must be between 1 and 65535")
    }

    /// A request ID is echoed in errors: one a server made 100 KB long is cut to 256 characters.
    @Test func aLongRequestIDIsCut() {
        let long = String(repeating: "r", count: 100_000)
        let error = ResponsesErrorMapper.error(status: 500, headers: ["x-request-id": long], body: [], now: Date())
        #expect(error.http?.requestID == String(repeating: "r", count: 256) + "…")
        let short = ResponsesErrorMapper.error(status: 500, headers: ["x-request-id": "req_1"], body: [], now: Date())
        #expect(short.http?.requestID == "req_1")
    }

    @Test func builtInProfilesAndQueries() {
        #expect(ResponsesEndpoint.chatGPT.baseURL.absoluteString == "https://chatgpt.com/backend-api/codex")
        #expect(ResponsesEndpoint.publicAPI.url("models", query: [("client_version", "0.153.0")]).absoluteString == "https://api.openai.com/v1/models?client_version=0.153.0")
    }
}
