import CodexCore
import Foundation
import Testing

@Suite struct AgentTurnLimitsTests {
    @Test func defaultsAre128CallsAnd300Seconds() throws {
        #expect(AgentTurnLimits().maximumToolCalls == 128)
        #expect(AgentTurnLimits().maximumDuration == 300)
        #expect(AgentTurnLimits.unlimited.maximumToolCalls == nil)
        #expect(AgentTurnLimits.unlimited.maximumDuration == nil)
        try AgentTurnLimits.unlimited.validate()
        try AgentTurnLimits(maximumToolCalls: 0, maximumDuration: 31_536_000).validate()
    }

    @Test(arguments: [
        AgentTurnLimits(maximumToolCalls: -1), AgentTurnLimits(maximumDuration: 0), AgentTurnLimits(maximumDuration: -5),
        AgentTurnLimits(maximumDuration: .infinity), AgentTurnLimits(maximumDuration: .nan), AgentTurnLimits(maximumDuration: 31_536_000.5),
    ])
    func invalidLimitsAreRefused(limits: AgentTurnLimits) {
        let error = #expect(throws: AgentRuntimeError.self) { try limits.validate() }
        #expect(error?.code == .invalidTurnLimits)
    }

    @Test func aBatchMustFitTheRemainingBudget() {
        let limits = AgentTurnLimits(maximumToolCalls: 4)
        #expect(limits.allowsToolBatch(of: 4, afterUsing: 0))
        #expect(limits.allowsToolBatch(of: 2, afterUsing: 2))
        #expect(!limits.allowsToolBatch(of: 3, afterUsing: 2))
        #expect(AgentTurnLimits.unlimited.allowsToolBatch(of: 1_000, afterUsing: 1_000))
    }
}
