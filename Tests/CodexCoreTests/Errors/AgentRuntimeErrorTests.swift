import CodexCore
import Foundation
import Testing

@Suite struct AgentRuntimeErrorTests {
    struct Secret: Error, Sendable {}

    @Test func descriptionIsLogSafeAndCarriesHTTPDetails() {
        let error = AgentRuntimeError(
            code: .quotaExceeded, message: "usage limit reached",
            http: .init(statusCode: 429, providerCode: "usage_limit_reached", requestID: "req_1", retryAfter: 999_999),
            underlying: Secret()
        )
        #expect(error.description == "quota_exceeded: usage limit reached (HTTP 429, provider code usage_limit_reached, request req_1)")
        #expect(error.http?.retryAfter == 86_400)
    }

    @Test func executionLimitsAreInspectable() {
        let error = AgentRuntimeError.executionLimitExceeded(.toolCalls)
        #expect(error.code == .executionLimitExceeded)
        #expect(error.executionLimit == .toolCalls)
        #expect(error.description == "execution_limit_exceeded: the turn exhausted its tool_calls budget (limit: tool_calls)")
    }

    @Test func errorsRoundTripWithoutTheirUnderlyingError() throws {
        let error = AgentRuntimeError(
            code: "future_code", message: "m",
            retry: .init(attempt: 2, maximumAttempts: 3, isRetryable: true, safety: .outputAlreadyEmitted),
            interruption: .init(responseID: "resp_1", lastSequenceNumber: 7, hadOutput: true, transportDomain: "NSURLErrorDomain", transportCode: -1005),
            executionLimit: .responseBytes, underlying: Secret()
        )
        let decoded = try JSONDecoder().decode(AgentRuntimeError.self, from: JSONEncoder().encode(error))
        #expect(decoded == error)
        #expect(decoded.code.rawValue == "future_code")
        #expect(decoded.underlying == nil)
    }

    @Test(arguments: AgentExecutionLimit.allCasesForTests)
    func executionLimitNamesAreStable(limit: AgentExecutionLimit) throws {
        #expect(try JSONDecoder().decode(AgentExecutionLimit.self, from: JSONEncoder().encode(limit)) == limit)
    }
}

extension AgentExecutionLimit {
    static let allCasesForTests: [AgentExecutionLimit] = [.toolCalls, .duration, .modelPasses, .responseBytes, .responseItems]
}
