import CodexCore
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization
import Testing

/// The middleware chain in front of the real libcurl client and the loopback server.
@Suite struct HTTPMiddlewareTests {
    private final class Trace: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    /// Appends its name to the `x-step` header and to a shared trace, before and after the rest.
    private struct Tracing: HTTPMiddleware {
        let name: String
        let trace: Trace

        func intercept(_ request: HTTPRequest, context: HTTPMiddlewareContext, next: HTTPMiddlewareNext) async throws -> HTTPResponse {
            var request = request
            request.headers.add(name: "x-step", value: name)
            trace.append("\(name).request")
            let response = try await next(request)
            trace.append("\(name).response \(response.statusCode)")
            return response
        }
    }

    private struct HostRefusal: Error, Equatable {}

    private let completed = SSE.stream([SSE.created, SSE.delta("ok", 1), SSE.completed(2)])
    private let credentials = AuthCredentials(bearerToken: "fixed-token-123", accountID: "acct-9", binding: "acct-9", secrets: ["refresh-secret-456"])

    private func client(_ server: LoopbackHTTPServer, _ middlewares: [any HTTPMiddleware], policy: RetryPolicy = .default,
                        clock: ImmediateClock = ImmediateClock(), log: InMemoryAgentLogSink = InMemoryAgentLogSink()) throws -> ResponsesClient {
        ResponsesClient(
            configuration: .init(endpoint: try ResponsesEndpoint(baseURL: server.baseURL.appendingPathComponent("api/codex"), profile: .chatGPT),
                                 retryPolicy: policy),
            httpClient: DefaultHTTPClient(), middlewares: middlewares, clock: clock, logSink: log
        )
    }

    @Test func stepsSeeTheRequestInOrderAndTheResponseInReverse() async throws {
        let server = try LoopbackHTTPServer(replies: [.sse([completed])])
        defer { server.shutdown() }
        let trace = Trace()
        let client = try client(server, [
            Tracing(name: "a", trace: trace), AuthenticationMiddleware(credentials: credentials), Tracing(name: "b", trace: trace),
        ])
        let events = try await client.collect()
        #expect(events.map(\.typeName) == ["response.created", "response.output_text.delta", "response.completed"])
        #expect(trace.all == ["a.request", "b.request", "b.response 200", "a.response 200"])
        let request = try #require(server.requests.first)
        #expect(request.headers.filter { $0.name.lowercased() == "x-step" }.map(\.value) == ["a", "b"])
        #expect(request.header("authorization") == "Bearer fixed-token-123")
        #expect(request.header("chatgpt-account-id") == "acct-9")
        #expect(request.header("session_id") == "thread-1")
        #expect(request.header("x-client-request-id") == "attempt-1")
    }

    @Test func fixedCredentialsAreNeverRenewedAfterA401() async throws {
        let server = try LoopbackHTTPServer(replies: [.json(#"{"error":{"message":"bad token fixed-token-123","code":"invalid_token"}}"#, status: 401)])
        defer { server.shutdown() }
        let client = try client(server, [AuthenticationMiddleware(credentials: credentials)])
        let error = await #expect(throws: AgentRuntimeError.self) { try await client.collect() }
        #expect(error?.code == .unauthorized)
        #expect(error?.retry?.attempt == 1)
        #expect(error?.retry?.isRetryable == false)
        #expect(error?.message.contains("fixed-token-123") == false)
        #expect(server.requestCount == 1)
    }

    @Test func aStepsOwnErrorPassesUnchangedAndIsNeverRetried() async throws {
        struct Refusing: HTTPMiddleware {
            func intercept(_ request: HTTPRequest, context: HTTPMiddlewareContext, next: HTTPMiddlewareNext) async throws -> HTTPResponse {
                throw HostRefusal()
            }
        }
        let server = try LoopbackHTTPServer(replies: [.sse([completed])])
        defer { server.shutdown() }
        let clock = ImmediateClock()
        let client = try client(server, [Refusing()], clock: clock)
        await #expect(throws: HostRefusal()) { try await client.collect() }
        #expect(server.requestCount == 0)
        #expect(clock.sleeps.isEmpty)
    }

    @Test func aStepsOwnRetryableLookingErrorIsStillFinal() async throws {
        struct FailingSignIn: HTTPMiddleware {
            func intercept(_ request: HTTPRequest, context: HTTPMiddlewareContext, next: HTTPMiddlewareNext) async throws -> HTTPResponse {
                throw AgentRuntimeError(code: .transportFailure, message: "the token issuer is unreachable")
            }
        }
        let server = try LoopbackHTTPServer(replies: [.sse([completed])])
        defer { server.shutdown() }
        let clock = ImmediateClock()
        let client = try client(server, [FailingSignIn()], clock: clock)
        let error = await #expect(throws: AgentRuntimeError.self) { try await client.collect() }
        #expect(error?.code == .transportFailure)
        #expect(error?.retry == nil)
        #expect(clock.sleeps.isEmpty)
        #expect(server.requestCount == 0)
    }

    @Test func aRenewalThatThrowsClosesTheRejectedResponse() async throws {
        struct RefusingRenewal: AuthProvider {
            func credentials() async throws -> AuthCredentials { AuthCredentials(bearerToken: "token-abcdef", binding: "acct") }
            func recoverAfterUnauthorized(_ rejected: AuthCredentials) async throws -> AuthCredentials? {
                throw AgentRuntimeError(code: .refreshFailed, message: "sign in again")
            }
        }
        let unauthorized = ScriptedReply(status: 401, headers: [.init(name: "Content-Type", value: "application/json")],
                                         parts: [.bytes(Array(#"{"error":{"message":"expired"}}"#.utf8)), .hold], framing: .chunked)
        let server = try LoopbackHTTPServer(replies: [unauthorized])
        defer { server.shutdown() }
        let client = try client(server, [AuthenticationMiddleware(provider: RefusingRenewal())])
        let error = await #expect(throws: AgentRuntimeError.self) { try await client.collect() }
        #expect(error?.code == .refreshFailed)
        // The 401's body was held open by the server: only the step's cancel closes that connection.
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard))
    }

    @Test func aStepMaySendAgainAndTheUnusedResponseIsClosed() async throws {
        /// Sends once more after a 503, without the stream's retry.
        struct ResendOn503: HTTPMiddleware {
            func intercept(_ request: HTTPRequest, context: HTTPMiddlewareContext, next: HTTPMiddlewareNext) async throws -> HTTPResponse {
                let response = try await next(request)
                guard response.statusCode == 503 else { return response }
                response.body.cancel()
                return try await next(request)
            }
        }
        let unavailable = ScriptedReply(status: 503, headers: [.init(name: "Content-Type", value: "application/json")],
                                        parts: [.bytes(Array(#"{"error":{"message":"busy"}}"#.utf8)), .hold], framing: .chunked)
        let server = try LoopbackHTTPServer(replies: [unavailable, .sse([completed])])
        defer { server.shutdown() }
        let client = try client(server, [AuthenticationMiddleware(credentials: credentials), ResendOn503()], policy: .disabled)
        let events = try await client.collect()
        #expect(events.last?.typeName == "response.completed")
        #expect(server.requestCount == 2)
        // The 503's body was held open by the server: only the step's cancel closes that connection.
        #expect(await server.waitForClosedConnections(count: 1, timeout: .hangGuard))
    }

    @Test func theLoggingStepRecordsEachExchangeAndTheRetryBetweenThem() async throws {
        let server = try LoopbackHTTPServer(replies: [
            ScriptedReply(parts: [.closeAbruptly], framing: .raw),
            .sse([completed], headers: [.init(name: "x-request-id", value: "req_42")]),
        ])
        defer { server.shutdown() }
        let log = InMemoryAgentLogSink()
        let clock = ImmediateClock()
        let client = try client(server, [AuthenticationMiddleware(credentials: credentials), HTTPLoggingMiddleware(logSink: log, clock: clock)],
                                clock: clock, log: log)
        _ = try await client.collect()
        #expect(log.events.map(\.name) == ["network.request.failed", "retry.scheduled", "network.response.received"])
        #expect(log.events.first?.metadata == ["method": "POST", "path": "/api/codex/responses", "error_code": "transport_failure", "duration_ms": "0"])
        #expect(log.events.last?.metadata == ["method": "POST", "path": "/api/codex/responses", "status": "200", "request_id": "req_42", "duration_ms": "0"])
        #expect(clock.sleeps.count == 1)
        for event in log.events {
            let text = "\(event.message) \(event.metadata)"
            #expect(!text.contains("fixed-token-123") && !text.contains("refresh-secret-456"))
        }
    }

    @Test func theContextKeepsEveryCredentialARequestWentOutWith() async throws {
        let context = HTTPMiddlewareContext()
        let renewed = AuthCredentials(bearerToken: "renewed-token-789", accountID: "acct-9", binding: "acct-9")
        context.noteCredentials(credentials)
        context.noteCredentials(renewed)
        #expect(context.credentials.map(\.bearerToken) == ["fixed-token-123", "renewed-token-789"])
        #expect(context.secrets == ["fixed-token-123", "refresh-secret-456", "renewed-token-789"])
    }
}
