import CodexCore
import CodexRuntime
import CodexTestSupport
import Foundation
import Testing

/// The public fixture backend scripts steering and explicit interruption, for host tests.
@Suite(.timeLimit(.minutes(3))) struct FixtureSteeringTests {
    @Test func aScriptedTurnConsumesTheHostsSteerAndRefusesOneAfterCompletion() async throws {
        let done = AgentMessage(threadID: "", role: .assistant, text: "Checked A and B.", phase: .finalAnswer)
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn(
            [.event(.assistantMessageDelta("Checking A")), .consumeSteering, .event(.assistantMessageCompleted(done)), .complete()],
            acceptsSteering: true
        )])
        let store = InMemoryRuntimeStateStore()
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: store))
        let thread = try await runtime.createThread()
        var names: [String] = []
        for try await event in try await runtime.stream(Request(text: "Check A."), in: thread.id) {
            names.append(name(event))
            if case .assistantMessageDelta = event { try await runtime.steer("Also check B.", in: thread.id) }
        }
        #expect(backend.acceptedSteers == ["Also check B."])
        #expect(names.filter { $0.hasPrefix("committed") } == ["committed(user: Also check B.)", "committed(assistant: Checked A and B.)"])
        #expect(describe(try await history(store, thread.id)).filter { !$0.hasPrefix("event") } == [
            "user: Check A.", "user: Also check B.", "assistant: Checked A and B.",
        ])
        let late = await #expect(throws: AgentRuntimeError.self) { try await runtime.steer("Too late.", in: thread.id) }
        #expect(late?.code == .turnNotActive)
    }

    @Test func interruptingAScriptedTurnReachesTheFixture() async throws {
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.event(.assistantMessageDelta("Working")), .consumeSteering, .complete()], acceptsSteering: true)])
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore()))
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "Go."), in: thread.id)
        await #expect(throws: CancellationError.self) {
            for try await event in stream {
                if case .assistantMessageDelta = event { try await runtime.interrupt(in: thread.id) }
            }
        }
        await eventually("the fixture saw the interruption") { backend.interruptions > 0 }
        #expect(backend.interruptions == 1)
        #expect(backend.acceptedSteers.isEmpty)
    }
}
