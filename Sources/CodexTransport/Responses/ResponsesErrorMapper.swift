public import CodexCore
import CodexSchema
public import Foundation

/// Turns failed HTTP responses and failed streams into typed ``CodexCore/AgentRuntimeError``s.
///
/// HTTP failures are read from the failed response's own body (capped; never a second request):
/// status, provider code/type/message (`{"error":{…}}` or `{"detail":…}`), request ID and
/// `Retry-After` (`retry-after-ms`, seconds or an HTTP date; capped at one day). Quota and usage-limit
/// codes become `quota_exceeded`, which is never retried, even on 429.
public enum ResponsesErrorMapper {
    /// The most error-body bytes read.
    public static let maximumErrorBodyBytes = 1024 * 1024
    /// The cap on any server-requested wait.
    public static let maximumRetryAfter: TimeInterval = 86_400

    /// Provider codes that mean the account's quota or usage limit is exhausted.
    public static let quotaCodes: Set<String> = [
        "insufficient_quota", "usage_limit_reached", "usage_not_included", "quota_exceeded", "billing_hard_limit_reached",
    ]

    /// The HTTP statuses the ordinary retry policy may retry.
    public static let retryableStatuses: Set<Int> = [408, 409, 425, 429, 500, 502, 503, 504]

    /// Maps a non-2xx response.
    ///
    /// - Parameters:
    ///   - status: The HTTP status.
    ///   - headers: The response headers.
    ///   - body: The first bytes of the body (at most ``maximumErrorBodyBytes``).
    ///   - now: The current date, for HTTP-date `Retry-After` values.
    public static func error(status: Int, headers: HTTPHeaders, body: [UInt8], now: Date) -> AgentRuntimeError {
        let parsed = try? JSONValue(parsing: body, options: .init(maximumDepth: 32))
        let error = parsed?["error"]
        let providerCode = error?["code"]?.stringValue ?? parsed?["code"]?.stringValue
        let providerType = error?["type"]?.stringValue ?? (error?.stringValue)
        let providerMessage = error?["message"]?.stringValue ?? parsed?["detail"]?.stringValue ?? parsed?["message"]?.stringValue
        let requestID = requestID(in: headers)
        let http = AgentRuntimeError.HTTPDetails(
            statusCode: status, providerCode: providerCode, providerType: providerType, requestID: requestID,
            retryAfter: retryAfter(headers: headers, now: now)
        )
        let isQuota = [providerCode, providerType].contains { $0.map(quotaCodes.contains) ?? false }
        let code: AgentRuntimeError.Code
        switch status {
        case 401: code = .unauthorized
        case 403: code = .forbidden
        case 429: code = isQuota ? .quotaExceeded : .rateLimited
        case 400 where providerCode == "context_length_exceeded": code = .contextLengthExceeded
        case 400, 404, 405, 409, 410, 413, 415, 422: code = isQuota ? .quotaExceeded : (status == 409 ? .providerError : .invalidRequest)
        case 503 where ["server_is_overloaded", "slow_down"].contains(providerCode ?? ""): code = .providerOverloaded
        default: code = isQuota ? .quotaExceeded : .providerError
        }
        let retryable = retryableStatuses.contains(status) && code != .quotaExceeded
        var message = "HTTP \(status)"
        if let providerMessage, !providerMessage.isEmpty { message += ": " + truncated(providerMessage) }
        return AgentRuntimeError(
            code: code, message: message, http: http,
            retry: .init(attempt: 1, maximumAttempts: 1, isRetryable: retryable, safety: .beforeOutput)
        )
    }

    /// Maps a terminal stream event (`response.failed`, `response.incomplete` or `error`).
    public static func error(streamEvent event: ResponsesStreamEvent.Kind, responseID: String?) -> AgentRuntimeError? {
        let code: String?
        let type: String?
        let providerMessage: String?
        switch event {
        case .failed(let info):
            code = info.errorCode
            type = nil
            providerMessage = info.errorMessage
        case .incomplete(let info):
            return AgentRuntimeError(
                code: .responseIncomplete, message: "the response is incomplete: \(info.incompleteReason ?? "unknown reason")",
                http: .init(statusCode: 200, providerCode: info.incompleteReason),
                // The same request ends the same way (the output limit, a content filter): sent again it
                // would only be billed again.
                retry: .init(attempt: 1, maximumAttempts: 1, isRetryable: false, safety: .beforeOutput),
                interruption: .init(responseID: responseID)
            )
        case .error(let errorCode, let errorType, let message, _):
            code = errorCode
            type = errorType
            providerMessage = message
        default:
            return nil
        }
        let isQuota = [code, type].contains { $0.map(quotaCodes.contains) ?? false }
        let mapped: AgentRuntimeError.Code
        var retryable = false
        var retryAfter: TimeInterval?
        switch code {
        case _ where isQuota: mapped = .quotaExceeded
        case "context_length_exceeded": mapped = .contextLengthExceeded
        case "invalid_prompt": mapped = .invalidRequest
        case "server_is_overloaded", "slow_down": mapped = .providerOverloaded
        case "rate_limit_exceeded":
            mapped = .rateLimited
            retryable = true
            retryAfter = providerMessage.flatMap(delayFromMessage)
        default:
            mapped = .providerError
            retryable = true
        }
        var message = "the response failed"
        if let code { message += " (\(code))" }
        if let providerMessage, !providerMessage.isEmpty { message += ": " + truncated(providerMessage) }
        return AgentRuntimeError(
            code: mapped, message: message,
            http: .init(statusCode: 200, providerCode: code, providerType: type, retryAfter: retryAfter),
            retry: .init(attempt: 1, maximumAttempts: 1, isRetryable: retryable, safety: .beforeOutput),
            interruption: .init(responseID: responseID)
        )
    }

    /// The wait a response asks for: `retry-after-ms`, else `Retry-After` as seconds or an HTTP date;
    /// capped at one day; `nil` when absent or unparsable.
    public static func retryAfter(headers: HTTPHeaders, now: Date) -> TimeInterval? {
        if let milliseconds = headers["retry-after-ms"].flatMap({ decimal($0.trimmingCharacters(in: .whitespaces)) }) {
            return min(milliseconds / 1000, maximumRetryAfter)
        }
        guard let value = headers["retry-after"]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = decimal(value) { return min(seconds, maximumRetryAfter) }
        if let date = httpDate(value) { return min(max(0, date.timeIntervalSince(now)), maximumRetryAfter) }
        return nil
    }

    /// Digits with an optional fraction (`120`, `1.5`): what the headers carry. `Double`'s parser would
    /// also take `1e3`, `0x10` or `inf`, which no server means.
    static func decimal(_ text: String) -> Double? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }) else { return nil }
        return Double(text)
    }

    /// Parses an IMF-fixdate such as `Wed, 21 Oct 2015 07:28:00 GMT`.
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    /// The provider's request ID (`x-request-id`, `x-oai-request-id` or `request-id`), at most 256
    /// characters: an ID is a few dozen, and one a server made 100 KB long is not echoed whole.
    static func requestID(in headers: HTTPHeaders) -> String? {
        guard let id = headers["x-request-id"] ?? headers["x-oai-request-id"] ?? headers["request-id"] else { return nil }
        return id.count > 256 ? String(id.prefix(256)) + "…" : id
    }

    /// "Please try again in 11.054s" / "in 250ms" / "in 6m0s" / "in 1h2m" / "in 20 seconds" → seconds:
    /// one or more amounts, each with its unit (a bare number is seconds). `nil` when there is no such
    /// phrase or a unit is not one of these (a wait misread is worse than none: the back-off applies).
    static func delayFromMessage(_ message: String) -> TimeInterval? {
        let lower = message.lowercased()
        guard let range = lower.range(of: "try again in") else { return nil }
        var rest = lower[range.upperBound...].drop(while: { $0 == " " })
        var total = 0.0
        var read = false
        let isDigit: (Character) -> Bool = { ("0"..."9").contains($0) }
        while true {
            // Digits, then a fraction only when a digit follows the point (a sentence's full stop is not one).
            var number = String(rest.prefix(while: isDigit))
            guard !number.isEmpty else { break }
            var after = rest.dropFirst(number.count)
            if after.first == ".", let next = after.dropFirst().first, isDigit(next) {
                let fraction = after.dropFirst().prefix(while: isDigit)
                number += "." + fraction
                after = after.dropFirst(1 + fraction.count)
            }
            guard let value = Double(number), value.isFinite else { return nil }
            rest = after.drop(while: { $0 == " " })
            let unit = rest.prefix(while: { ("a"..."z").contains($0) })
            let factor: Double
            switch unit {
            case "ms", "msec", "millisecond", "milliseconds": factor = 0.001
            case "", "s", "sec", "secs", "second", "seconds": factor = 1
            case "m", "min", "mins", "minute", "minutes": factor = 60
            case "h", "hr", "hrs", "hour", "hours": factor = 3600
            default: return nil
            }
            total += value * factor
            read = true
            rest = rest.dropFirst(unit.count)
            if unit.isEmpty { break }
        }
        return read ? min(total, maximumRetryAfter) : nil
    }

    private static func truncated(_ text: String) -> String {
        text.count > 500 ? String(text.prefix(500)) + "…" : text
    }
}
