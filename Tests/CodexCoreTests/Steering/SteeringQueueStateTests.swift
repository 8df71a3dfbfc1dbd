import CodexCore
import Testing

/// The steering queue's rules one call at a time, without tasks or timing.
@Suite struct SteeringQueueStateTests {
    private func input(_ text: String) -> SteeringQueueState.Input { .init(text: text, images: []) }

    @Test func acceptedInputIsDrainedInOrderForTheNextRequest() throws {
        var state = SteeringQueueState()
        try state.accept(input("a"))
        try state.accept(input("b"))
        #expect(state.drain() == [input("a"), input("b")])
        #expect(state.drain().isEmpty)
    }

    @Test func queuedInputTurnsACompletionIntoOneMoreRequest() throws {
        var state = SteeringQueueState()
        try state.accept(input("a"))
        #expect(state.decideCompletion() == .continueWith([input("a")]))
        try state.accept(input("b"))
        #expect(state.decideCompletion() == .continueWith([input("b")]))
        #expect(state.decideCompletion() == .finish)
        #expect(state.isClosed)
    }

    @Test func nothingIsAcceptedAfterTheCompletionDecisionOrTheEnd() throws {
        var finished = SteeringQueueState()
        #expect(finished.decideCompletion() == .finish)
        #expect(throws: AgentRuntimeError(code: .turnNotActive, message: "the turn is finishing or has ended; start a new turn")) {
            try finished.accept(input("late"))
        }
        var ended = SteeringQueueState()
        try ended.accept(input("queued"))
        #expect(ended.close() == [input("queued")])
        let error = #expect(throws: AgentRuntimeError.self) { try ended.accept(input("late")) }
        #expect(error?.code == .turnNotActive)
    }

    @Test func theQueueHoldsAtMost512() throws {
        var state = SteeringQueueState()
        for index in 0..<512 { try state.accept(input("\(index)")) }
        let error = #expect(throws: AgentRuntimeError.self) { try state.accept(input("513th")) }
        #expect(error?.code == .steeringQueueFull)
        #expect(state.drain().count == 512)
        try state.accept(input("after a drain"))
    }
}

@Suite struct SteeringQueueClosingTests {
    private func input(_ text: String) -> SteeringQueueState.Input { .init(text: text, images: []) }

    @Test func theLastRequestTakesWhatIsQueuedAndRefusesMore() throws {
        var draining = SteeringQueueState()
        try draining.accept(input("a"))
        #expect(draining.drain(closing: true) == [input("a")])
        let late = #expect(throws: AgentRuntimeError.self) { try draining.accept(input("late")) }
        #expect(late?.code == .turnNotActive)

        var completing = SteeringQueueState()
        try completing.accept(input("b"))
        #expect(completing.decideCompletion(closing: true) == .continueWith([input("b")]))
        let after = #expect(throws: AgentRuntimeError.self) { try completing.accept(input("late")) }
        #expect(after?.code == .turnNotActive)
    }
}
