import CodexCore
import CodexTransport
import Testing

/// The two HTTP clients; transport tests run against both.
enum HTTPClientKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case curl
    case urlSession

    /// A new client of this kind on `clock`.
    func make(clock: any Clock<Duration> = ContinuousClock()) -> any HTTPClient {
        switch self {
        case .curl: CurlHTTPClient(clock: clock)
        case .urlSession: URLSessionHTTPClient(clock: clock)
        }
    }

    var testDescription: String { rawValue }
}
