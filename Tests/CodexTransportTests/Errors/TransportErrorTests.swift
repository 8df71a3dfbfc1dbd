import CodexCore
@testable import CodexTransport
import Foundation
import Testing

/// The module's failures become public errors in one place, with stable codes.
@Suite struct TransportErrorTests {
    /// Every case, with the code and message a host sees.
    static let table: [(TransportError, String, String)] = [
        (.invalidEndpoint(reason: "the endpoint URL is not valid"), "invalid_endpoint", "the endpoint URL is not valid"),
        (.invalidHeader, "invalid_request", "a request header has an invalid name or a line break in its value"),
        (.clientSetup("libcurl could not be initialised"), "transport_failure", "libcurl could not be initialised"),
        (.connectionFailed(detail: "curl error 7: Couldn't connect to server", domain: "curl", code: 7), "transport_failure",
         "the connection failed (curl error 7: Couldn't connect to server)"),
        (.connectionFailed(detail: "curl error 7: Couldn't connect to server", domain: "curl", code: 7, origin: "https://api.example:443"), "transport_failure",
         "the connection to https://api.example:443 failed (curl error 7: Couldn't connect to server)"),
        (.connectionFailedWithoutCode(underlying: CancellationError()), "transport_failure", "the connection failed"),
        (.endedBeforeHead(domain: "curl", code: 52), "transport_failure", "the connection ended before a response head"),
        (.responseHead("has more than 1000 fields"), "transport_failure", "the response head has more than 1000 fields"),
        (.contentEncoding(coding: "gzip", offered: true, curlCode: 61), "transport_failure", "the response body is not valid gzip (curl error 61)"),
        (.contentEncoding(coding: "lzma", offered: false, curlCode: 61), "transport_failure",
         "the response's Content-Encoding lzma is not one the client offered (gzip, deflate, br, zstd)"),
        (.interimResponse(status: 103), "transport_failure", "the server sent an interim 103 response, which URLSession reports instead of the final one"),
        (.noResponse, "transport_failure", "the request ended without a response"),
        (.cannotResendBody, "transport_failure", "the connection closed before the reply, and the request body cannot be sent again on a new connection"),
        (.requestTimedOut(domain: "NSURLErrorDomain", code: -1001), "timed_out", "the request timed out"),
        (.timeout(kind: "idle", limit: .seconds(300)), "timed_out", "the idle timeout of 300.0 seconds passed"),
        (.bodyTooLarge(limit: 10), "response_too_large", "the response body exceeds 10 bytes"),
        (.bodyAheadOfReader(limit: 20), "response_too_large", "the response body is more than 20 bytes ahead of its reader"),
        (.decompressionBomb(coding: "br", domain: "curl", code: 27), "response_too_large",
         "the br response body expanded past the 64 MiB the client holds for a paused reader (a compression bomb)"),
        (.eventTooLarge(limit: 4, byteOffset: 9), "sse_event_too_large", "a server-sent event exceeds the limit of 4 bytes"),
        (.streamEnded(nil), "responses_stream_disconnected", "the stream ended before response.completed"),
        (.connectionLost(nil, underlying: CancellationError()), "responses_stream_disconnected", "the connection was lost before response.completed"),
        (.malformed("the model catalog has no models array"), "responses_event_malformed", "the model catalog has no models array"),
        (.responseFailed, "provider_error", "the response failed"),
        (.notSignedIn("no ChatGPT session is signed in"), "not_signed_in", "no ChatGPT session is signed in"),
        (.sessionReplaced("replaced"), "session_replaced", "replaced"),
        (.accountMismatch("another account"), "account_mismatch", "another account"),
        (.refreshRefused(status: 401, providerCode: "refresh_token_expired"), "refresh_failed",
         "the session can no longer be refreshed (refresh_token_expired); sign in again"),
        (.issuer("device-code polling failed with HTTP 500", status: 500), "provider_error", "device-code polling failed with HTTP 500"),
        (.deviceCodeUnavailable, "device_code_unavailable", "device-code sign-in is not enabled on this issuer"),
        (.deviceCodeExpired, "device_code_expired", "the device code was not approved within 15 minutes"),
        (.secureStore("cannot write the secret", errno: 28), "secure_store_failure", "cannot write the secret: No space left on device (errno 28)"),
        (.unusableSetting("the API key holds a line break"), "invalid_configuration", "the API key holds a line break"),
        (.spillFile("cannot write the spill file", errno: 5), "storage_failure", "cannot write the spill file (errno 5)"),
        (.compactionInvalid("the reply has no output"), "compaction_invalid", "the reply has no output"),
    ]

    @Test func everyFailureMapsToItsStableCodeAndMessage() {
        for (failure, code, message) in Self.table {
            let error = AgentRuntimeError(failure)
            #expect(error.code.rawValue == code, "\(failure)")
            #expect(error.message == message, "\(failure)")
        }
    }

    @Test func theCauseDetailsAndRetryOfAFailureAreKept() {
        let lost = AgentRuntimeError(.connectionLost(.init(transportDomain: "curl", transportCode: 56), underlying: CancellationError()))
        #expect(lost.underlying is CancellationError)
        #expect(lost.interruption?.transportCode == 56)
        let refresh = AgentRuntimeError(.issuer("refreshing the session failed with HTTP 503", status: 503, providerCode: "busy", retryable: true))
        #expect(refresh.http?.statusCode == 503)
        #expect(refresh.http?.providerCode == "busy")
        #expect(refresh.retry?.isRetryable == true)
        #expect(AgentRuntimeError(.issuer("no code")).http == nil)
        let event = AgentRuntimeError(.eventTooLarge(limit: 4, byteOffset: 9))
        #expect(event.byteOffset == 9)
    }

    /// CodexTransport builds `AgentRuntimeError` from a code in two files only: the mapping point of its
    /// own failures and the mapping of the service's errors.
    @Test func theModuleBuildsItsErrorsFromCodesOnlyAtItsTwoMappingPoints() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/CodexTransport")
        var builders: [String] = []
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            let compact = text.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: " ", with: "")
            if compact.contains("AgentRuntimeError(code:") || compact.contains("self.init(code:") { builders.append(file) }
        }
        #expect(builders.sorted() == ["Errors/TransportError.swift", "Responses/ResponsesErrorMapper.swift"])
    }
}
