import CodexCore
import CodexLoopback
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// A successful reply that is a page or a document, not an event stream (a wrong endpoint, a captive
/// portal, a proxy's own answer), is a typed error at once, through the default client: it is not read
/// as a stream that ended without an event and sent again as if the connection had dropped.
@Suite struct ResponsesContentTypeTests {
    private func outcome(_ reply: ScriptedReply) async throws -> (error: AgentRuntimeError?, requests: Int, events: [String]) {
        let server = try LoopbackHTTPServer { _ in reply }
        defer { server.shutdown() }
        let client = ResponsesClient(
            configuration: .init(endpoint: try ResponsesEndpoint(baseURL: server.baseURL, profile: .publicAPI)),
            httpClient: DefaultHTTPClient(), authProvider: APIKeyAuthProvider(apiKey: "sk-test"), clock: ImmediateClock()
        )
        var events: [String] = []
        do {
            for try await event in client.stream(ResponsesRequest(model: "m")) { events.append(event.typeName) }
            return (nil, server.requestCount, events)
        } catch let error as AgentRuntimeError {
            return (error, server.requestCount, events)
        }
    }

    @Test(arguments: [
        ("text/html; charset=utf-8", "text/html"), ("application/json", "application/json"), ("Application/Problem+JSON", "application/problem+json"),
        ("text/xml", "text/xml"),
    ])
    func aPageOrADocumentIsRefusedOnceAndNotSentAgain(contentType: String, media: String) async throws {
        let result = try await outcome(.text("<html><body>Sign in to the Wi-Fi</body></html>", headers: [.init(name: "Content-Type", value: contentType)]))
        #expect(result.error?.code == .responsesEventMalformed)
        #expect(result.error?.message == "the server answered HTTP 200 with \(media), not an event stream: check the endpoint")
        #expect(result.error.map(RetryPolicy.isRetryable) == false)
        #expect(result.requests == 1)
        #expect(result.events.isEmpty)
    }

    @Test func aStreamLabelledLooselyIsStillRead() async throws {
        // Proxies label streams text/plain or not at all: those are read as the stream they are.
        let stream = SSE.stream([SSE.created, SSE.delta("Hi", 1), SSE.completed(2)])
        for headers in [[HTTPHeaderField(name: "Content-Type", value: "text/plain")], [HTTPHeaderField(name: "Content-Type", value: "text/event-stream; charset=utf-8")]] {
            let result = try await outcome(.text(stream, headers: headers))
            #expect(result.error == nil)
            #expect(result.events == ["response.created", "response.output_text.delta", "response.completed"])
        }
    }
}
