import CodexCore
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// The default client offers and decodes every coding its libcurl knows (gzip, deflate, br, zstd);
/// limits count decoded bytes; a bomb fails with a limit's error in bounded memory; a coding it did not
/// offer, or a body that is not what its coding says, is a `transport_failure` that names the coding.
@Suite(.timeLimit(.minutes(6 * Sanitizer.slowdown))) struct ContentEncodingTests {
    static let events = SSE.stream([
        #"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1"}}"#,
        #"{"type":"response.output_text.delta","sequence_number":1,"item_id":"m","output_index":0,"content_index":0,"delta":"Hi"}"#,
        #"{"type":"response.completed","sequence_number":2,"response":{"id":"resp_1","status":"completed"}}"#,
    ])

    private func client(_ server: LoopbackHTTPServer) throws -> ResponsesClient {
        ResponsesClient(
            configuration: .init(endpoint: try ResponsesEndpoint(baseURL: server.baseURL, profile: .publicAPI), retryPolicy: .disabled),
            httpClient: CurlHTTPClient(), authProvider: APIKeyAuthProvider(apiKey: "sk-test")
        )
    }

    private func reply(coding: String, _ body: [UInt8]) -> ScriptedReply {
        ScriptedReply(headers: [.init(name: "Content-Type", value: "text/event-stream"), .init(name: "Content-Encoding", value: coding)], parts: [.bytes(body)])
    }

    @Test func anEncodedStreamIsDecodedIntoItsEvents() async throws {
        let server = try LoopbackHTTPServer(replies: [reply(coding: "zstd", DeflateBomb.zstdFrame(storing: Array(Self.events.utf8)))])
        defer { server.shutdown() }
        var names: [String] = []
        for try await event in try client(server).stream(ResponsesRequest(model: "m")) { names.append(event.typeName) }
        #expect(names == ["response.created", "response.output_text.delta", "response.completed"])
        #expect(server.requests.first?.header("Accept-Encoding") == "deflate, gzip, br, zstd")
    }

    @Test(arguments: ["xz", "compress", "gzip, xz"])
    func aCodingTheClientDidNotOfferIsATransportFailureNamingIt(coding: String) async throws {
        let server = try LoopbackHTTPServer(replies: [reply(coding: coding, Array(Self.events.utf8))])
        defer { server.shutdown() }
        let error = await #expect(throws: AgentRuntimeError.self) {
            for try await _ in try client(server).stream(ResponsesRequest(model: "m")) {}
        }
        #expect(error?.code == .transportFailure)
        #expect(error?.message == "the response's Content-Encoding \(coding) is not one the client offered (gzip, deflate, br, zstd)")
    }

    @Test(arguments: ["gzip", "deflate", "br", "zstd"])
    func aBodyThatIsNotItsCodingIsATransportFailureNamingIt(coding: String) async throws {
        let server = try LoopbackHTTPServer(replies: [reply(coding: coding, Array("data: not compressed at all, and long enough to tell\n\n".utf8))])
        defer { server.shutdown() }
        let error = await #expect(throws: AgentRuntimeError.self) {
            for try await _ in try client(server).stream(ResponsesRequest(model: "m")) {}
        }
        #expect(error?.code == .transportFailure)
        #expect(error?.message.hasPrefix("the response body is not valid \(coding) (curl error 61") == true, "\(error?.message ?? "")")
    }

    /// In a process of its own (this one's memory also carries the suites beside it): a 256 MiB bomb read
    /// with a 4 MiB limit fails with a limit's error, and memory grows by far less than the bomb. DEFLATE
    /// codings expand about 1,270 times, so one read never holds more than about 21 MiB; br and zstd
    /// expand further in one read, and libcurl holds at most 64 MiB of that while the reader is paused.
    @Test(arguments: ["gzip", "deflate", "br", "zstd"], ["sse", "collect"])
    func aBombFailsWithALimitsErrorInBoundedMemory(coding: String, reader: String) async throws {
        let outcome = try await ChildProcess.run(ChildProcess.product("TransportFixture"), ["bomb", "--coding", coding, "--reader", reader])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let figures = try JSONDecoder().decode([String: Int].self, from: Data(outcome.stdout.utf8))
        #expect(figures["offersAll"] == 1)
        let deflating = coding == "gzip" || coding == "deflate"
        if deflating, reader == "sse" {
            #expect(figures["eventTooLarge"] == 1, "\(figures)")
        } else {
            #expect(figures["responseTooLarge"] == 1, "\(figures)")
        }
        let grown = (figures["peak"] ?? .max) - (figures["baseline"] ?? 0)
        let budget = (deflating ? 40 : 112) * 1024 * 1024 * Sanitizer.slowdown
        #expect(grown <= budget, "memory grew \(grown) bytes reading a 256 MiB \(coding) bomb")
    }
}
