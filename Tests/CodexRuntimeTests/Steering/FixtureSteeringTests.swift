import CodexCore
import CodexRuntime
import CodexSchema
import CodexTestSupport
import Foundation
import Testing

/// The public fixture backend scripts steering and explicit interruption, for host tests.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct FixtureSteeringTests {
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

    @Test func aSteerTheScriptNeverConsumedIsConsumedAtCompletion() async throws {
        // The fixture produces its next step as soon as the runtime asks: a sleep on a manual clock holds
        // the turn until the test has steered.
        let clock = ManualClock()
        let backend = FixtureAgentBackend(
            turns: [FixtureAgentBackend.Turn([.event(.assistantMessageDelta("Working")), .sleep(.seconds(1)), .complete()], acceptsSteering: true)],
            clock: clock
        )
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore()))
        let thread = try await runtime.createThread()
        var names: [String] = []
        for try await event in try await runtime.stream(Request(text: "Go."), in: thread.id) {
            names.append(name(event))
            if case .assistantMessageDelta = event {
                try await runtime.steer("Also this.", in: thread.id)
                await clock.waitForSleepers(count: 1)
                clock.advance(by: .seconds(1))
            }
        }
        #expect(names.contains("committed(user: Also this.)"))
        #expect(names.last == "turnCompleted")
    }

    @Test func aSteerAcceptedBeforeThePayloadLetsTheNextReplysPayloadReplaceIt() async throws {
        let frame = { (subject: String) in "<codexkit_structured_output>\n{\"subject\":\"\(subject)\"}\n</codexkit_structured_output>" }
        let firstText = "Draft.\n" + frame("First")
        let secondText = "Updated.\n" + frame("Second")
        let clock = ManualClock()
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([
            .event(.assistantMessageDelta("Draft.\n")), .sleep(.seconds(1)), .event(.assistantMessageDelta(frame("First"))),
            .event(.assistantMessageCompleted(AgentMessage(threadID: "", role: .assistant, text: firstText))),
            .consumeSteering,
            .event(.assistantMessageDelta(secondText)),
            .event(.assistantMessageCompleted(AgentMessage(threadID: "", role: .assistant, text: secondText))),
            .complete(),
        ], acceptsSteering: true)], clock: clock)
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore()))
        let thread = try await runtime.createThread()
        var subjects: [String] = []
        var refusal: AgentRuntimeError.Code?
        for try await event in try await runtime.stream(Request(text: "Draft it."), in: thread.id, response: FixtureDraft.self) {
            switch event {
            case .assistantMessageDelta(_, _, "Draft.\n"):
                try await runtime.steer("Shorter.", in: thread.id)  // before the payload: accepted
                await clock.waitForSleepers(count: 1)
                clock.advance(by: .seconds(1))
            case .structuredOutputCommitted(let snapshot):
                subjects.append(snapshot.value["subject"]?.stringValue ?? "")
                if subjects.count == 1 {
                    do { try await runtime.steer("Too late.", in: thread.id) } catch let error as AgentRuntimeError { refusal = error.code }
                }
            default:
                break
            }
        }
        #expect(subjects == ["First", "Second"])
        #expect(refusal == .turnNotActive)
        #expect(backend.acceptedSteers == ["Shorter."])
    }

    @Test func aOneShotTurnTakesSteeringUntilItsFinalAnswerStarts() async throws {
        let clock = ManualClock()
        let reply = AgentMessage(threadID: "", role: .assistant, text: #"{"subject":"Hi"}"#, phase: .finalAnswer)
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([
            .event(.progress(.messageStarted(itemID: "c1", phase: .commentary))), .sleep(.seconds(1)), .consumeSteering,
            .event(.progress(.messageStarted(itemID: "f1", phase: .finalAnswer))), .sleep(.seconds(1)),
            .event(.assistantMessageCompleted(reply)), .complete(),
        ], acceptsSteering: true)], clock: clock)
        let runtime = try AgentRuntime(configuration: .init(backend: backend, stateStore: InMemoryRuntimeStateStore()))
        let thread = try await runtime.createThread()
        let send = Task { try await runtime.send(Request(text: "Draft it."), in: thread.id, response: FixtureDraft.self) }
        let draft = try await withTaskCancellationHandler {
            await clock.waitForSleepers(count: 1)
            try await runtime.steer("Be brief.", in: thread.id)  // during commentary: accepted
            clock.advance(by: .seconds(1))
            await clock.waitForSleepers(count: 1)
            let refused = await #expect(throws: AgentRuntimeError.self) { try await runtime.steer("Too late.", in: thread.id) }
            #expect(refused?.code == .turnNotActive)
            clock.advance(by: .seconds(1))
            return try await send.value
        } onCancel: { send.cancel() }
        #expect(draft.subject == "Hi")
        #expect(backend.acceptedSteers == ["Be brief."])
    }

    @Test func aSteerWaitingForTheBackendTurnCanBeCancelled() async throws {
        let gate = AsyncStream<Void>.makeStream()
        let entered = AsyncStream<Void>.makeStream()
        struct GatedBackend: AgentBackend {
            let inner: FixtureAgentBackend
            let gate: AsyncStream<Void>
            let entered: AsyncStream<Void>.Continuation
            func startTurn(_ request: AgentBackendTurnRequest) async throws -> AgentTurnStream {
                entered.yield()
                for await _ in gate { break }
                return try await inner.startTurn(request)
            }
        }
        let inner = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.consumeSteering, .complete()], acceptsSteering: true)])
        let runtime = try AgentRuntime(configuration: .init(
            backend: GatedBackend(inner: inner, gate: gate.stream, entered: entered.continuation), stateStore: InMemoryRuntimeStateStore()
        ))
        let thread = try await runtime.createThread()
        let stream = try await runtime.stream(Request(text: "Go."), in: thread.id)
        let consumer = Task { await collect(stream) }
        var starts = entered.stream.makeAsyncIterator()
        _ = await starts.next()
        // The backend's turn has not started: a steer waits for it, and its caller may give up.
        let waiting = Task { try await runtime.steer("Never mind.", in: thread.id) }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        gate.continuation.yield()
        try await runtime.steer("This one.", in: thread.id)
        let (_, error) = await consumer.value
        #expect(error == nil)
        #expect(inner.acceptedSteers == ["This one."])
    }
}

/// The structured reply of the fixture steering tests.
struct FixtureDraft: AgentStructuredOutput {
    let subject: String
    static let responseFormat = AgentStructuredOutputFormat(name: "draft", schema: .object(properties: ["subject": .string()]))
}
