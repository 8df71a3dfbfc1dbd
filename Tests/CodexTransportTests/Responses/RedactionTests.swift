import CodexCore
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// A server that echoes the credential in every field it controls: no error that leaves the transport
/// carries it — not its message, provider code or type, request ID, response ID, description or JSON.
@Suite struct RedactionTests {
    static let canary = "sk-canary-7f3a91c2e5b8d4"

    /// Fails when `error` carries the canary anywhere a host could print or store it.
    static func expectClean(_ error: AgentRuntimeError?, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let error = try #require(error, sourceLocation: sourceLocation)
        let encoded = String(decoding: try JSONEncoder().encode(error), as: UTF8.self)
        for text in [error.message, error.description, encoded, error.http?.providerCode ?? "", error.http?.providerType ?? "",
                     error.http?.requestID ?? "", error.interruption?.responseID ?? "", "\((error.underlying as? AgentRuntimeError)?.message ?? "")"] {
            #expect(!text.contains(canary), "\(text)", sourceLocation: sourceLocation)
            #expect(!text.contains("7f3a91c2e5b8d4"), sourceLocation: sourceLocation)
        }
    }

    private func client(_ server: LoopbackHTTPServer, _ kind: HTTPClientKind) throws -> ResponsesClient {
        ResponsesClient(
            configuration: .init(endpoint: try ResponsesEndpoint(baseURL: server.baseURL, profile: .publicAPI), retryPolicy: .disabled),
            httpClient: kind.make(), authProvider: APIKeyAuthProvider(apiKey: Self.canary)
        )
    }

    @Test(arguments: HTTPClientKind.allCases)
    func anHTTPErrorEchoingTheKeyInEveryFieldIsScrubbed(kind: HTTPClientKind) async throws {
        let body = #"{"error":{"message":"Incorrect API key provided: \#(Self.canary)","code":"\#(Self.canary)","type":"bad \#(Self.canary)"}}"#
        let server = try LoopbackHTTPServer(replies: [.json(body, status: 401, headers: [.init(name: "x-request-id", value: "req-\(Self.canary)")])])
        defer { server.shutdown() }
        let error = await #expect(throws: AgentRuntimeError.self) {
            for try await _ in try client(server, kind).stream(ResponsesRequest(model: "m")) {}
        }
        try Self.expectClean(error)
        #expect(error?.message == "HTTP 401: Incorrect API key provided: <redacted>")
        #expect(error?.http?.providerCode == "<redacted>")
        #expect(error?.http?.requestID == "req-<redacted>")
        #expect(server.requests.first?.header("Authorization") == "Bearer \(Self.canary)", "the key was really sent")
    }

    @Test(arguments: HTTPClientKind.allCases)
    func aFailedResponseAndAnErrorEventEchoingTheKeyAreScrubbed(kind: HTTPClientKind) async throws {
        let failed = SSE.stream([
            #"{"type":"response.created","sequence_number":0,"response":{"id":"resp-\#(Self.canary)"}}"#,
            #"{"type":"response.failed","sequence_number":1,"response":{"id":"resp-\#(Self.canary)","error":{"code":"\#(Self.canary)","message":"key \#(Self.canary) refused"}}}"#,
        ])
        let errorEvent = SSE.stream([#"{"type":"error","sequence_number":0,"error":{"code":"bad_\#(Self.canary)","message":"no: \#(Self.canary)"}}"#])
        for stream in [failed, errorEvent] {
            let server = try LoopbackHTTPServer(replies: [.sse([stream])])
            defer { server.shutdown() }
            let error = await #expect(throws: AgentRuntimeError.self) {
                for try await _ in try client(server, kind).stream(ResponsesRequest(model: "m")) {}
            }
            try Self.expectClean(error)
            #expect(error?.message.contains("<redacted>") == true)
        }
    }

    @Test func theModelCatalogAndASessionRefreshEchoingTokensAreScrubbed() async throws {
        let catalogServer = try LoopbackHTTPServer(replies: [.json(#"{"error":{"message":"key \#(Self.canary) is bad","code":"\#(Self.canary)"}}"#, status: 500)])
        defer { catalogServer.shutdown() }
        let catalog = ModelCatalogClient(
            endpoint: try ResponsesEndpoint(baseURL: catalogServer.baseURL, profile: .publicAPI), httpClient: DefaultHTTPClient(),
            authProvider: APIKeyAuthProvider(apiKey: Self.canary)
        )
        let catalogError = await #expect(throws: AgentRuntimeError.self) { _ = try await catalog.catalog(policy: .refresh) }
        try Self.expectClean(catalogError)

        let refreshToken = "rt-canary-7f3a91c2e5b8d4"
        let issuer = try LoopbackHTTPServer(replies: [.json(#"{"error":{"code":"refresh token \#(refreshToken) reused"}}"#, status: 401)])
        defer { issuer.shutdown() }
        let session = try ChatGPTSession(
            idToken: TestJWT.idToken(account: "acct-canary", plan: "plus"), accessToken: TestJWT.accessToken(expiresAt: 100, marker: "old"),
            refreshToken: refreshToken, accountID: "acct-canary", lastRefresh: nil
        )
        let provider = ChatGPTSessionAuthProvider(session: session, issuer: try AuthIssuer(baseURL: issuer.baseURL), httpClient: DefaultHTTPClient())
        let refreshError = await #expect(throws: AgentRuntimeError.self) { _ = try await provider.refresh() }
        #expect(refreshError?.code == .refreshFailed)
        let encoded = String(decoding: try JSONEncoder().encode(try #require(refreshError)), as: UTF8.self)
        for text in [refreshError?.message ?? "", refreshError?.description ?? "", refreshError?.http?.providerCode ?? "", encoded] {
            #expect(!text.contains(refreshToken), "\(text)")
        }
        #expect(refreshError?.http?.providerCode == "refresh token <redacted> reused")
    }

    /// A longer key with the characters that encode differently in base64, base64url and URLs.
    static let key = "sk-proj-Q7f3a91c2e5b8d4XyZ0wVu/+Kd=="

    /// Each form of the key, echoed in an HTTP error's message, code, type and `x-request-id`, in a
    /// success's `x-request-id` (the log event) and in a response ID a dropped stream reports in its
    /// interruption details: none of it comes back.
    @Test(arguments: SecretForms.all(of: RedactionTests.key).map(\.name))
    func everyFormOfTheKeyIsScrubbedOnEveryPath(name: String) async throws {
        let form = try #require(SecretForms.all(of: Self.key).first { $0.name == name })
        let json = String(decoding: try JSONEncoder().encode(form.text), as: UTF8.self)
        // A header value cannot hold a line break: the server folds it to a space.
        let header = form.text.replacingOccurrences(of: "\n", with: " ")
        let log = InMemoryAgentLogSink()
        let server = try LoopbackHTTPServer(replies: [
            .json(#"{"error":{"message":"bad key \#(json.dropFirst().dropLast())","code":\#(json),"type":\#(json)}}"#, status: 401,
                  headers: [.init(name: "x-request-id", value: "req \(header)")]),
            .sse([SSE.stream([#"{"type":"response.created","sequence_number":0,"response":{"id":\#(json)}}"#])],
                 headers: [.init(name: "x-request-id", value: header)]),
        ])
        defer { server.shutdown() }
        let client = ResponsesClient(
            configuration: .init(endpoint: try ResponsesEndpoint(baseURL: server.baseURL, profile: .publicAPI), retryPolicy: .disabled),
            httpClient: DefaultHTTPClient(), authProvider: APIKeyAuthProvider(apiKey: Self.key), logSink: log
        )
        let httpError = await #expect(throws: AgentRuntimeError.self) {
            for try await _ in client.stream(ResponsesRequest(model: "m")) {}
        }
        #expect(httpError?.code == .unauthorized)
        #expect(httpError?.http?.statusCode == 401)
        let dropped = await #expect(throws: AgentRuntimeError.self) {
            for try await _ in client.stream(ResponsesRequest(model: "m")) {}
        }
        #expect(dropped?.code == .responsesStreamDisconnected)
        #expect(dropped?.interruption?.responseID?.contains(SecretRedactor.replacement) == true)
        #expect(log.events.map(\.name).contains("network.response.received"))
        #expect(log.events.last { $0.name == "network.response.received" }?.metadata["request_id"]?.contains(SecretRedactor.replacement) == true)
        for error in [httpError, dropped] {
            let error = try #require(error)
            let encoded = String(decoding: try JSONEncoder().encode(error), as: UTF8.self)
            for text in [error.message, error.description, encoded, error.http?.providerCode ?? "", error.http?.providerType ?? "",
                         error.http?.requestID ?? "", error.interruption?.responseID ?? ""] {
                #expect(!SecretForms.leaks(Self.key, form: form, in: text), "\(name): \(text)")
            }
        }
        for event in log.events {
            #expect(!SecretForms.leaks(Self.key, form: form, in: "\(event.message) \(event.metadata)"), "\(name): \(event.metadata)")
        }
        #expect(server.requests.first?.header("Authorization") == "Bearer \(Self.key)", "the key was really sent")
    }
}
