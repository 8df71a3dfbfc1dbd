@testable import CodexTransport
import Testing

@Suite struct ResponsesAttemptTelemetryTests {
    @Test func aRequestIDHoldingTheCredentialIsLeftOut() {
        let secret = "sk-proj-abcdefgh1234"
        #expect(ResponsesAttemptTelemetry.safe("req_123", secrets: [secret]) == "req_123")
        #expect(ResponsesAttemptTelemetry.safe("req-SK-PROJ-ABCDEFGH1234", secrets: [secret]) == nil)
        #expect(ResponsesAttemptTelemetry.safe(nil, secrets: [secret]) == nil)
        // Secrets under 8 characters would match ordinary text: they are not compared.
        #expect(ResponsesAttemptTelemetry.safe("req_abc", secrets: ["abc"]) == "req_abc")
    }
}

@Suite struct CaseInsensitiveContainsTests {
    @Test func asciiTextIsSearchedByteByByteWithoutRegardToCase() {
        let contains = ResponsesAttemptTelemetry.contains(_:caseInsensitive:)
        #expect(contains("abcSK-Proj-XYZ", "sk-proj-xyz"))
        #expect(contains("sk-proj-xyz", "SK-PROJ-XYZ"))
        #expect(contains("xxsk-proj-xy", "sk-proj-xyz") == false)
        #expect(contains("short", "a longer secret") == false)
        #expect(contains("", "secret12") == false)
        // A match at the very end, and one that starts over after a partial match.
        #expect(contains("ababababc-secret", "abc-SECRET"))
        // Letters only fold with letters: `[` (0x5B) and `{` (0x7B) differ.
        #expect(contains("key[abcdefgh", "key{abcdefgh") == false)
        #expect(contains("@-key-abcdefgh", "`-key-abcdefgh") == false)
    }

    @Test func textOutsideASCIIIsComparedThroughLowercasing() {
        let contains = ResponsesAttemptTelemetry.contains(_:caseInsensitive:)
        #expect(contains("req-ÄBCDEFGH-1", "äbcdefgh"))
        #expect(contains("req-abcdefgh", "ÄBCDEFGH") == false)
        #expect(ResponsesAttemptTelemetry.safe("req-ÅÅÅÅ-token", secrets: ["åååå-token"]) == nil)
    }
}
