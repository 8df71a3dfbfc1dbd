import CodexCore
import CodexKitTesting
import CodexTransport
import Foundation
import Synchronization

/// A clock whose sleeps return at once and are recorded, for asserting backoff waits.
final class ImmediateClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let state = Mutex<(now: Duration, sleeps: [Duration])>((.zero, []))

    var now: Instant { Instant(offset: state.withLock { $0.now }) }
    var minimumResolution: Duration { .zero }
    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        state.withLock { state in
            state.sleeps.append(deadline.offset - state.now)
            state.now = max(state.now, deadline.offset)
        }
    }
}

/// Credentials that change on recovery, counting the calls.
final class CountingAuthProvider: AuthProvider {
    private let state = Mutex<(credentialsCalls: Int, recoveries: Int)>((0, 0))
    let recovers: Bool

    init(recovers: Bool = true) { self.recovers = recovers }

    var recoveries: Int { state.withLock { $0.recoveries } }

    func credentials() async throws -> AuthCredentials {
        state.withLock { $0.credentialsCalls += 1 }
        return AuthCredentials(bearerToken: "token-1", accountID: "acct-1", binding: "acct-1")
    }

    func currentBinding() async -> String? { "acct-1" }

    func recoverAfterUnauthorized(_ rejected: AuthCredentials) async throws -> AuthCredentials? {
        state.withLock { $0.recoveries += 1 }
        return recovers ? AuthCredentials(bearerToken: "token-2", accountID: "acct-1", binding: "acct-1") : nil
    }
}

enum SSE {
    /// `event: <type>\ndata: <json>\n\n` for each JSON line.
    static func stream(_ jsonLines: [String]) -> String {
        jsonLines.map { line -> String in
            let type = (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["type"] as? String ?? "message"
            return "event: \(type)\ndata: \(line)\n\n"
        }.joined()
    }

    static let created = #"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","model":"gpt-6-astra"}}"#
    static func delta(_ text: String, _ sequence: Int) -> String {
        #"{"type":"response.output_text.delta","sequence_number":\#(sequence),"item_id":"msg_1","output_index":0,"content_index":0,"delta":"\#(text)"}"#
    }
    static func completed(_ sequence: Int) -> String {
        #"{"type":"response.completed","sequence_number":\#(sequence),"response":{"id":"resp_1","status":"completed","usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":2},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":1},"total_tokens":15}}}"#
    }
}

extension ResponsesClient {
    static func testing(_ http: any HTTPClient, clock: ImmediateClock = ImmediateClock(), auth: any AuthProvider = CountingAuthProvider(),
                        policy: RetryPolicy = .default, endpoint: ResponsesEndpoint = .chatGPT) -> ResponsesClient {
        ResponsesClient(
            configuration: .init(endpoint: endpoint, retryPolicy: policy), httpClient: http, authProvider: auth, clock: clock,
            wallClock: ManualWallClock(Date(timeIntervalSince1970: 1_800_000_000))
        )
    }

    func collect(_ request: ResponsesRequest = ResponsesRequest(model: "gpt-6-astra")) async throws -> [ResponsesStreamEvent] {
        var events: [ResponsesStreamEvent] = []
        for try await event in stream(request, sessionID: "thread-1", clientRequestID: "attempt-1") { events.append(event) }
        return events
    }
}
