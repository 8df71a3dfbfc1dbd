import CodexCore
import CodexKitTesting
import CodexSchema
import CodexTransport
import Foundation
import Synchronization
import Testing

@Suite struct ResponsesClientTests {
    private let sse = SSE.stream([SSE.created, SSE.delta("Hel", 1), SSE.delta("lo", 2), SSE.completed(3)])

    @Test func sendsTheCanonicalBodyAndHeadersAndStreamsTypedEvents() async throws {
        let http = ScriptedHTTPClient(replies: [.text(sse, headers: ["Content-Type": "text/event-stream", "x-codex-primary-used-percent": "12.5"])])
        let client = ResponsesClient.testing(http)
        var request = ResponsesRequest(model: "gpt-6-astra", instructions: "Be brief.", input: [.user("Hi")])
        request.reasoning = .init(effort: .ultra, summary: "auto")
        let events = try await client.collect(request)
        #expect(events.map(\.typeName) == [
            "codex.rate_limits", "response.created", "response.output_text.delta", "response.output_text.delta", "response.completed",
        ])
        guard case .completed(let info) = events.last?.kind else {
            Issue.record("no completion")
            return
        }
        #expect(info.usage == AgentUsage(inputTokens: 10, cachedInputTokens: 2, outputTokens: 5, reasoningOutputTokens: 1, totalTokens: 15))
        let sent = try #require(http.requests.first)
        #expect(sent.method == "POST")
        #expect(sent.url.absoluteString == "https://chatgpt.com/backend-api/codex/responses")
        #expect(sent.body == request.body())
        #expect(sent.headers["authorization"] == "Bearer token-1")
        #expect(sent.headers["chatgpt-account-id"] == "acct-1")
        #expect(sent.headers["session_id"] == "thread-1")
        #expect(sent.headers["x-client-request-id"] == "attempt-1")
        #expect(sent.headers["accept"] == "text/event-stream")
        #expect(sent.timeouts.idle == .seconds(300))
        #expect(client.rateLimits(for: "acct-1").first?.primary?.usedPercent == 12.5)
    }

    @Test func aStreamWithoutCompletionAfterOutputIsDisconnectedAndNotRetried() async throws {
        let partial = SSE.stream([SSE.created, SSE.delta("Hel", 1)])
        let http = ScriptedHTTPClient(replies: [.text(partial), .text(sse)])
        let client = ResponsesClient.testing(http)
        var received: [String] = []
        let error = await #expect(throws: AgentRuntimeError.self) {
            for try await event in client.stream(ResponsesRequest(model: "m")) { received.append(event.typeName) }
        }
        #expect(error?.code == .responsesStreamDisconnected)
        #expect(error?.retry?.safety == .outputAlreadyEmitted)
        #expect(error?.interruption?.responseID == "resp_1")
        #expect(error?.interruption?.lastSequenceNumber == 1)
        #expect(error?.interruption?.hadOutput == true)
        #expect(received == ["response.created", "response.output_text.delta"])
        #expect(http.requests.count == 1)
    }

    @Test func aFailureBeforeOutputIsRetriedWithTheSameBody() async throws {
        let clock = ImmediateClock()
        let http = ScriptedHTTPClient(replies: [
            .text(SSE.stream([SSE.created])),
            .init(sendError: AgentRuntimeError(code: .transportFailure, message: "reset")),
            .text(sse),
        ])
        let client = ResponsesClient.testing(http, clock: clock)
        let events = try await client.collect()
        #expect(events.filter { if case .outputTextDelta = $0.kind { true } else { false } }.count == 2)
        #expect(http.requests.count == 3)
        #expect(http.requests[0].body == http.requests[2].body)
        #expect(clock.sleeps.count == 2)
        #expect(clock.sleeps.allSatisfy { $0 >= .milliseconds(400) && $0 <= .milliseconds(1_200) })
    }

    @Test func retriesStopAtThreeAttempts() async throws {
        let clock = ImmediateClock()
        let http = ScriptedHTTPClient { _, _ in .text(#"{"error":{"message":"boom","type":"server_error"}}"#, status: 502) }
        let error = await #expect(throws: AgentRuntimeError.self) { try await ResponsesClient.testing(http, clock: clock).collect() }
        #expect(error?.code == .providerError)
        #expect(error?.http?.statusCode == 502)
        #expect(error?.retry == .init(attempt: 3, maximumAttempts: 3, isRetryable: true, safety: .beforeOutput))
        #expect(http.requests.count == 3)
        #expect(clock.sleeps.count == 2)
        #expect(clock.sleeps[1] >= .milliseconds(800))
    }

    @Test func quotaErrorsAreNeverRetriedEvenOn429() async throws {
        let body = #"{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached","plan_type":"plus","resets_at":1777936568}}"#
        let http = ScriptedHTTPClient(replies: [.text(body, status: 429, headers: [
            "x-request-id": "req_9", "retry-after": "30", "x-codex-primary-used-percent": "100", "x-codex-primary-window-minutes": "300",
        ])])
        let client = ResponsesClient.testing(http)
        let error = await #expect(throws: AgentRuntimeError.self) { try await client.collect() }
        #expect(error?.code == .quotaExceeded)
        #expect(error?.http == .init(statusCode: 429, providerType: "usage_limit_reached", requestID: "req_9", retryAfter: 30))
        #expect(error?.retry?.isRetryable == false)
        #expect(http.requests.count == 1)
        #expect(client.rateLimits(for: "acct-1").first?.primary == AgentRateLimitWindow(usedPercent: 100, windowDurationMinutes: 300))
    }

    @Test func retryAfterLongerThanTheBackoffIsHonoured() async throws {
        let clock = ImmediateClock()
        let http = ScriptedHTTPClient(replies: [
            .text(#"{"error":{"code":"rate_limit_exceeded","message":"slow down"}}"#, status: 429, headers: ["retry-after-ms": "2500"]),
            .text(sse),
        ])
        _ = try await ResponsesClient.testing(http, clock: clock).collect()
        #expect(http.requests.count == 2)
        #expect(clock.sleeps == [.milliseconds(2_500)])
    }

    @Test func unauthorizedIsRecoveredOnceForTheSameBinding() async throws {
        let auth = CountingAuthProvider()
        let http = ScriptedHTTPClient(replies: [.text(#"{"detail":"Unauthorized"}"#, status: 401), .text(sse)])
        _ = try await ResponsesClient.testing(http, auth: auth).collect()
        #expect(auth.recoveries == 1)
        #expect(http.requests.map { $0.headers["authorization"] } == ["Bearer token-1", "Bearer token-2"])

        let twice = ScriptedHTTPClient { _, _ in .text(#"{"detail":"Unauthorized"}"#, status: 401) }
        let again = CountingAuthProvider()
        let error = await #expect(throws: AgentRuntimeError.self) { try await ResponsesClient.testing(twice, auth: again).collect() }
        #expect(error?.code == .unauthorized)
        #expect(error?.message == "HTTP 401: Unauthorized")
        #expect(again.recoveries == 1)
        #expect(twice.requests.count == 2)
    }

    @Test func forbiddenIsNeverRefreshed() async throws {
        let auth = CountingAuthProvider()
        let http = ScriptedHTTPClient(replies: [.text(#"{"detail":"Forbidden"}"#, status: 403)])
        let error = await #expect(throws: AgentRuntimeError.self) { try await ResponsesClient.testing(http, auth: auth).collect() }
        #expect(error?.code == .forbidden)
        #expect(auth.recoveries == 0)
        #expect(http.requests.count == 1)
    }

    @Test func failedStreamsBecomeTypedErrorsWithTheProviderCode() async throws {
        let recorded = try StreamFixtures.bytes("vercel-error")
        let http = ScriptedHTTPClient(replies: [.init(chunks: [recorded]), .init(chunks: [recorded])])
        let error = await #expect(throws: AgentRuntimeError.self) { try await ResponsesClient.testing(http).collect() }
        #expect(error?.code == .quotaExceeded)
        #expect(error?.http?.providerCode == "insufficient_quota")
        #expect(http.requests.count == 1)

        let rateLimited = SSE.stream([
            SSE.created,
            #"{"type":"response.failed","sequence_number":1,"response":{"id":"resp_1","status":"failed","error":{"code":"rate_limit_exceeded","message":"Rate limit reached. Please try again in 11.054s. Visit …"}}}"#,
        ])
        let clock = ImmediateClock()
        let retried = ScriptedHTTPClient(replies: [.text(rateLimited), .text(sse)])
        _ = try await ResponsesClient.testing(retried, clock: clock).collect()
        #expect(retried.requests.count == 2)
        #expect(clock.sleeps == [.milliseconds(11_054)])
    }

    /// An incomplete response is not sent again, whatever the retry policy: the same request ends the
    /// same way, and each attempt is billed (it was sent three times).
    @Test func incompleteResponsesSurfaceTheirReasonAndAreNotSentAgain() async throws {
        let incomplete = SSE.stream([
            SSE.created, #"{"type":"response.incomplete","sequence_number":1,"response":{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}}"#,
        ])
        let http = ScriptedHTTPClient { _, _ in .text(incomplete, headers: ["x-request-id": "req_77"]) }
        let error = await #expect(throws: AgentRuntimeError.self) {
            try await ResponsesClient.testing(http, clock: ImmediateClock()).collect()
        }
        #expect(error?.code == .responseIncomplete)
        // The failure came on a 200 response: its head's request ID is the one to quote to support.
        #expect(error?.http?.requestID == "req_77")
        #expect(error?.message == "the response is incomplete: max_output_tokens")
        #expect(http.requests.count == 1)
    }

    @Test func duplicatesAreDroppedAndUnknownEventsKept() async throws {
        let stream = SSE.stream([
            SSE.created, SSE.delta("a", 1), SSE.delta("a", 1), #"{"type":"keepalive"}"#,
            #"{"type":"response.mcp_call.progress","sequence_number":2,"detail":{"x":1}}"#, SSE.completed(3),
        ])
        let events = try await ResponsesClient.testing(ScriptedHTTPClient(replies: [.text(stream)])).collect()
        #expect(events.map(\.typeName) == ["response.created", "response.output_text.delta", "keepalive", "response.mcp_call.progress", "response.completed"])
        guard case .unknown(let type, let raw) = events[3].kind else {
            Issue.record("not unknown")
            return
        }
        #expect(type == "response.mcp_call.progress")
        #expect(raw["detail"] == ["x": 1])
    }

    @Test func errorBodiesAreReadFromTheSameResponseWithACap() async throws {
        let huge = #"{"error":{"message":"x"}}"# + String(repeating: " ", count: 3 * 1024 * 1024)
        let http = ScriptedHTTPClient(replies: [.text(huge, status: 400)])
        let error = await #expect(throws: AgentRuntimeError.self) { try await ResponsesClient.testing(http).collect() }
        #expect(error?.code == .invalidRequest)
        #expect(http.requests.count == 1)
    }

    @Test func malformedEventsAndOversizedEventsAreTypedErrors() async throws {
        let malformed = ScriptedHTTPClient(replies: [.text("event: response.created\ndata: {not json\n\n")])
        let error = await #expect(throws: AgentRuntimeError.self) { try await ResponsesClient.testing(malformed).collect() }
        #expect(error?.code == .responsesEventMalformed)
        #expect(malformed.requests.count == 1)
    }

    /// All in one chunk: the events before a bad one are delivered, then its error, and nothing after
    /// it; a framing error after the response's terminal event is never raised.
    @Test func eventsBeforeAFailureInAChunkAreDeliveredAndNothingAfterTheEnd() async throws {
        func received(_ body: String) async -> (types: [String], code: AgentRuntimeError.Code?) {
            var configuration = ResponsesClient.Configuration(endpoint: .chatGPT)
            configuration.maximumEventBytes = 1_024
            let client = ResponsesClient(
                configuration: configuration, httpClient: ScriptedHTTPClient(replies: [.text(body)]), authProvider: CountingAuthProvider(),
                clock: ImmediateClock()
            )
            var types: [String] = []
            do {
                for try await event in client.stream(ResponsesRequest(model: "m")) { types.append(event.typeName) }
                return (types, nil)
            } catch {
                return (types, (error as? AgentRuntimeError)?.code)
            }
        }
        let oversized = "event: message\ndata: " + String(repeating: "x", count: 2_000) + "\n\n"
        let malformed = "event: response.output_text.delta\ndata: {not json\n\n"
        let afterMalformed = await received(SSE.stream([SSE.created, SSE.delta("Hel", 1)]) + malformed + SSE.stream([SSE.delta("lo", 2), SSE.completed(3)]))
        #expect(afterMalformed.types == ["response.created", "response.output_text.delta"])
        #expect(afterMalformed.code == .responsesEventMalformed)
        let beforeOversized = await received(SSE.stream([SSE.created, SSE.delta("Hel", 1)]) + oversized)
        #expect(beforeOversized.types == ["response.created", "response.output_text.delta"])
        #expect(beforeOversized.code == .sseEventTooLarge)
        // A decoding error and then a framing error in one chunk: the decoding error, which came first.
        let bothFailures = await received(SSE.stream([SSE.created]) + malformed + oversized)
        #expect(bothFailures.types == ["response.created"])
        #expect(bothFailures.code == .responsesEventMalformed)
        let afterTheEnd = await received(SSE.stream([SSE.created, SSE.delta("Hel", 1), SSE.completed(2)]) + malformed + oversized)
        #expect(afterTheEnd.types == ["response.created", "response.output_text.delta", "response.completed"])
        #expect(afterTheEnd.code == nil)
    }

    @Test func modelsETagsAreReportedWithTheBinding() async throws {
        let seen = Mutex<[String]>([])
        let http = ScriptedHTTPClient(replies: [.text(sse, headers: ["X-Models-Etag": "W/\"c8e3\""])])
        var configuration = ResponsesClient.Configuration(endpoint: .chatGPT)
        configuration.modelsETagObserver = { etag, binding in seen.withLock { $0.append("\(binding) \(etag)") } }
        let client = ResponsesClient(configuration: configuration, httpClient: http, authProvider: CountingAuthProvider(), clock: ImmediateClock())
        _ = try await client.collect()
        #expect(seen.withLock { $0 } == ["acct-1 W/\"c8e3\""])
        #expect(client.latestModelsETag == "W/\"c8e3\"")
    }
}
