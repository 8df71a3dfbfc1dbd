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
