import CodexCore
import CodexRuntime
import CodexTestSupport
import Foundation
import Testing

/// A backend for runtime tests that do not run turns: it refuses every turn.
struct NoTurnsBackend: AgentBackend {
    func startTurn(_ request: AgentBackendTurnRequest) async throws -> AgentTurnStream {
        throw AgentRuntimeError(code: .invalidConfiguration, message: "this test backend runs no turns")
    }
}

@Suite struct AgentRuntimeConfigurationTests {
    @Test func defaultsMatchTheSpec() throws {
        let runtime = try AgentRuntime(configuration: .init(backend: NoTurnsBackend(), stateStore: InMemoryRuntimeStateStore()))
        #expect(runtime.configuration.maximumBufferedEvents == 64)
        #expect(runtime.configuration.turnLimits == AgentTurnLimits(maximumToolCalls: 128, maximumDuration: 300))
    }

    @Test(arguments: [(0, 1), (-5, 1), (1, 1), (4096, 4096), (5000, 4096)])
    func bufferedEventsAreClamped(requested: Int, expected: Int) throws {
        let runtime = try AgentRuntime(configuration: .init(backend: NoTurnsBackend(), stateStore: InMemoryRuntimeStateStore(), maximumBufferedEvents: requested))
        #expect(runtime.configuration.maximumBufferedEvents == expected)
    }

    @Test(arguments: [
        AgentTurnLimits(maximumToolCalls: -1, maximumDuration: 300), AgentTurnLimits(maximumToolCalls: 1, maximumDuration: 0),
        AgentTurnLimits(maximumToolCalls: 1, maximumDuration: -1), AgentTurnLimits(maximumToolCalls: 1, maximumDuration: .infinity),
        AgentTurnLimits(maximumToolCalls: 1, maximumDuration: .nan), AgentTurnLimits(maximumToolCalls: 1, maximumDuration: 31_536_001),
    ])
    func invalidLimitsFailConstruction(limits: AgentTurnLimits) {
        let error = #expect(throws: AgentRuntimeError.self) {
            try AgentRuntime(configuration: .init(backend: NoTurnsBackend(), stateStore: InMemoryRuntimeStateStore(), turnLimits: limits))
        }
        #expect(error?.code == .invalidTurnLimits)
    }

    @Test func validLimitsIncludingUnlimitedAndOneYearAreAccepted() throws {
        for limits in [AgentTurnLimits.unlimited, AgentTurnLimits(maximumToolCalls: 0, maximumDuration: 31_536_000), AgentTurnLimits(maximumToolCalls: nil, maximumDuration: 1)] {
            _ = try AgentRuntime(configuration: .init(backend: NoTurnsBackend(), stateStore: InMemoryRuntimeStateStore(), turnLimits: limits))
        }
    }
}

@Suite struct AgentRuntimeThreadTests {
    @Test func threadsAreCreatedListedUpdatedResumedAfterARestartAndDeleted() async throws {
        let store = InMemoryRuntimeStateStore()
        let clock = ManualWallClock(Date(timeIntervalSince1970: 1_800_000_000))
        let runtime = try AgentRuntime(configuration: .init(backend: NoTurnsBackend(), stateStore: store, wallClock: clock))
        let first = try await runtime.createThread(title: "Orders", model: "gpt-6-astra", reasoningEffort: .low, skillIDs: ["triage"])
        clock.advance(by: 10)
        let second = try await runtime.createThread(title: "Returns")
        #expect(first.status == .idle)
        #expect(first.configuration.model == "gpt-6-astra")
        #expect(first.configuration.reasoningEffort == .low)
        #expect(first.skillIDs == ["triage"])
        #expect(try await runtime.threads().map(\.id) == [second.id, first.id])

        clock.advance(by: 10)
        let renamed = try await runtime.updateThread(first.id) { $0.title = "Orders (EU)" }
        #expect(renamed.title == "Orders (EU)")
        #expect(try await runtime.threads().map(\.id) == [first.id, second.id])

        // A new runtime over the same store (a restart) resumes what was saved.
        let restarted = try AgentRuntime(configuration: .init(backend: NoTurnsBackend(), stateStore: store))
        #expect(try await restarted.resumeThread(first.id) == renamed)
        try await restarted.deleteThread(second.id)
        #expect(try await restarted.threads().map(\.id) == [first.id])
        let missing = await #expect(throws: AgentRuntimeError.self) { try await restarted.resumeThread(second.id) }
        #expect(missing?.code == .threadNotFound)
    }
}
