import CodexCore
@testable import CodexRecovery
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization
import Testing

/// Suspension, permanent cancellation, leases against a second sender, host callback behaviour, expiry,
/// contract compatibility, manual retry and telemetry privacy.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct RecoveryLifecycleTests {
    /// A stream that starts and then holds until released.
    static let held = ScriptedReply.sse([Streams.created("resp_held"), Streams.delta("{", 1)]).with(parts: [.hold])

    @Test func cancellingTheOwningTaskSuspendsAndKeepsTheBudget() async throws {
        let harness = try RecoveryHarness(replies: [Self.held, Streams.complete()])
        let handle = try await harness.prepare()
        let task = Task { try await harness.send(handle) }
        #expect(await harness.server.waitForRequests(count: 1, timeout: .hangGuard))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        let status = try await harness.status(handle)
        #expect(status.state == .suspended)
        #expect(status.availability == .suspended)
        #expect(status.attemptsUsed == 1)
        #expect(status.suggestedActions == [.resume, .abandon])
        harness.server.releaseHeld()
        let log = AuthorizationLog()
        _ = try await harness.send(handle, log)
        #expect(log.attempts.map(\.reason) == [.replacement])
        #expect(log.attempts.map(\.number) == [2])
    }

    @Test func suspendFromAnotherInstanceStopsTheOwnerMidGeneration() async throws {
        let harness = try RecoveryHarness(replies: [Self.held, Streams.complete()])
        let handle = try await harness.prepare()
        let task = Task { try await harness.send(handle) }
        #expect(await harness.server.waitForRequests(count: 1, timeout: .hangGuard))
        let other = AgentStructuredRecovery(configuration: .init(endpoint: .chatGPT), httpClient: DefaultHTTPClient(), authProvider: harness.auth)
        let otherStore = try AgentStructuredRecoveryStore(directory: harness.store.directory)
        try await other.suspend(handle, store: otherStore)
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await harness.status(handle).availability == .suspended)
        #expect(await harness.server.waitForClosedConnections(count: 1, timeout: .hangGuard))
        harness.server.releaseHeld()
        // Resuming is allowed and runs the next attempt.
        _ = try await harness.send(handle)
        #expect(harness.generationRequests.count == 2)
    }

    @Test func permanentCancellationFromAnotherInstanceIsTerminal() async throws {
        let harness = try RecoveryHarness(replies: [Self.held], fallback: Streams.complete())
        let handle = try await harness.prepare(maximumAttempts: 1)
        let task = Task { try await harness.send(handle) }
        #expect(await harness.server.waitForRequests(count: 1, timeout: .hangGuard))
        let otherStore = try AgentStructuredRecoveryStore(directory: harness.store.directory)
        try await harness.recovery.cancel(handle, store: otherStore)
        await #expect(throws: CancellationError.self) { try await task.value }
        harness.server.releaseHeld()
        let status = try await harness.status(handle)
        #expect(status.state == .cancelled)
        #expect(status.availability == .permanentlyCancelled)
        let reopened = await #expect(throws: AgentRecoveryError.self) { try await harness.send(handle) }
        #expect(reopened?.code == .cancelled)
        let retry = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.retry(handle, retryActionID: "user-tap-1", store: harness.store, maximumAttempts: 2)
        }
        #expect(retry?.code == .cancelled)
        #expect(harness.generationRequests.count == 1)
    }

    @Test func aSecondSenderIsBusyBeforeItsCallbackRuns() async throws {
        let harness = try RecoveryHarness(replies: [Self.held, Streams.complete()])
        let handle = try await harness.prepare()
        let task = Task { try await harness.send(handle) }
        #expect(await harness.server.waitForRequests(count: 1, timeout: .hangGuard))
        let log = AuthorizationLog()
        let busy = await #expect(throws: AgentRecoveryError.self) { try await harness.send(handle, log) }
        #expect(busy?.code == .operationBusy)
        #expect(log.attempts.isEmpty)
        #expect(try await harness.status(handle).state == .running)
        harness.server.releaseHeld()
        task.cancel()
        _ = try? await task.value
        #expect(harness.generationRequests.count == 1)
    }

    @Test func aStaleRunningRecordWithNoLeaseHolderReadsAsInterrupted() async throws {
        let harness = try RecoveryHarness(replies: [])
        let handle = try await harness.prepare()
        let partition = try #require(try harness.store.locate(handle.operationID))
        var record = try #require(try harness.record(handle))
        record.state = .running
        record.attemptsUsed = 1
        record.attempts = [.init(id: UUID(), number: 1, reason: "initial", reservedAt: Date(), state: .transmissionAuthorized, responseID: "resp_x", lastSequenceNumber: 7)]
        record.responseID = "resp_x"
        record.lastSequenceNumber = 7
        try partition.save(record)
        let status = try await harness.status(handle)
        #expect(status.state == .interrupted)
        #expect(status.availability == .replacementEligible)
        #expect(status.lastSequenceNumber == 7)
        // Reopening asks for attempt 2 as a replacement and carries the previous response ID and cursor.
        harness.enqueue([Streams.complete()])
        let log = AuthorizationLog()
        _ = try await harness.send(handle, log)
        #expect(log.attempts.first?.number == 2)
        #expect(log.attempts.first?.reason == .replacement)
        #expect(log.attempts.first?.previousResponseID == "resp_x")
        #expect(log.attempts.first?.previousSequenceNumber == 7)
    }

    @Test func callbackErrorsPropagateUnchangedAndCancellationFromItSuspends() async throws {
        struct HostFailure: Error, Equatable {}
        let harness = try RecoveryHarness(replies: [], fallback: Streams.complete())
        let handle = try await harness.prepare()
        let seen = Mutex<[UUID]>([])
        await #expect(throws: HostFailure.self) {
            try await harness.recovery.sendRecovering(handle, response: Verdict.self, store: harness.store) { attempt in
                seen.withLock { $0.append(attempt.id) }
                throw HostFailure()
            }
        }
        var status = try await harness.status(handle)
        #expect(status.state == .interrupted)
        #expect(status.lastFailure == nil)
        #expect(status.attemptsUsed == 0)
        await #expect(throws: CancellationError.self) {
            try await harness.recovery.sendRecovering(handle, response: Verdict.self, store: harness.store) { attempt in
                seen.withLock { $0.append(attempt.id) }
                throw CancellationError()
            }
        }
        status = try await harness.status(handle)
        #expect(status.availability == .suspended)
        #expect(status.attemptsUsed == 0)
        // The pending attempt ID is stable across all of these replays.
        let log = AuthorizationLog()
        _ = try await harness.send(handle, log)
        let ids = seen.withLock { $0 } + log.attempts.map(\.id)
        #expect(ids.count == 3)
        #expect(Set(ids).count == 1)
        #expect(harness.generationRequests.count == 1)
    }

    @Test func expiryStopsNewAttemptsAndContractMismatchSpendsNothing() async throws {
        let harness = try RecoveryHarness(replies: [Streams.complete()])
        let expired = try await harness.prepare(expiresAt: Date(timeIntervalSinceNow: -1))
        let error = await #expect(throws: AgentRecoveryError.self) { try await harness.send(expired) }
        #expect(error?.code == .stateExpired)
        #expect(try await harness.status(expired).availability == .expired)
        #expect(harness.generationRequests.isEmpty)

        let handle = try await harness.prepare(contractVersion: "v2")
        _ = try await harness.recovery.sendRecovering(handle, response: Verdict.self, store: harness.store, expectedContractVersion: "v2") { _ in true }
        let other = AgentStructuredOutputFormat(name: "verdict", rawSchema: ["type": "object"])
        let mismatch = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.sendRecovering(handle, response: Verdict.self, format: other, store: harness.store) { _ in true }
        }
        #expect(mismatch?.code == .formatMismatch)
        let version = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.sendRecovering(handle, response: Verdict.self, store: harness.store, expectedContractVersion: "v3") { _ in true }
        }
        #expect(version?.code == .formatMismatch)
        let receipt = try await harness.recovery.receipt(handle, store: harness.store)
        #expect(receipt.contractVersion == "v2")
        #expect(harness.generationRequests.count == 1)
    }

    @Test func manualRetryCreatesOneLinkedSuccessorPerAction() async throws {
        let harness = try RecoveryHarness(replies: [], fallback: Streams.error(status: 503, code: "unavailable"))
        let handle = try await harness.prepare(maximumAttempts: 1)
        _ = try? await harness.send(handle)
        // Not yet exhausted? It is: one attempt, spent.
        let successor = try await harness.recovery.retry(handle, retryActionID: "tap-1", store: harness.store, maximumAttempts: 2)
        let again = try await harness.recovery.retry(handle, retryActionID: "tap-1", store: harness.store, maximumAttempts: 2)
        #expect(again == successor)
        #expect(successor == AgentStructuredRecoveryHandle(operationID: AgentStructuredRecovery.successorID(of: handle.operationID, action: "tap-1")))
        let otherAction = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.retry(handle, retryActionID: "tap-2", store: harness.store, maximumAttempts: 2)
        }
        #expect(otherAction?.code == .retryAlreadyCreated)
        let changed = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.retry(handle, retryActionID: "tap-1", store: harness.store, maximumAttempts: 5)
        }
        #expect(changed?.code == .retryConfigurationMismatch)
        let status = try await harness.status(successor)
        #expect(status.previousOperationID == handle.operationID)
        #expect(status.rootOperationID == handle.operationID)
        #expect(status.maximumAttempts == 2)
        #expect(status.attemptsUsed == 0)
        #expect(try await harness.status(handle).successorOperationID == successor.operationID)
        let source = try #require(try harness.record(handle))
        let child = try #require(try harness.record(successor))
        #expect(child.request == source.request)
        #expect(child.hostJobID == source.hostJobID)
        #expect(source.attemptsUsed == 1)
        // The successor sends the same frozen body.
        harness.enqueue([Streams.complete()])
        _ = try await harness.send(successor)
        let bodies = harness.generationRequests.map(\.body)
        #expect(bodies.count == 2)
        #expect(bodies[0] == bodies[1])
    }

    @Test func manualRetryIsRefusedWhileTheOperationCanStillRunOrHasAResult() async throws {
        let harness = try RecoveryHarness(replies: [Streams.complete()])
        let fresh = try await harness.prepare()
        let runnable = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.retry(fresh, retryActionID: "a", store: harness.store, maximumAttempts: 2)
        }
        #expect(runnable?.code == .retryNotAllowed)
        _ = try await harness.send(fresh)
        let completed = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.retry(fresh, retryActionID: "b", store: harness.store, maximumAttempts: 2)
        }
        #expect(completed?.code == .retryNotAllowed)
    }

    @Test func reselectFreezesTheNewModelForTheSuccessor() async throws {
        let harness = try RecoveryHarness(replies: [], fallback: Streams.error(status: 400, code: "model_not_found"))
        let handle = try await harness.prepare()
        _ = try? await harness.send(handle)
        let successor = try await harness.recovery.retry(
            handle, retryActionID: "reselect-1", store: harness.store, maximumAttempts: 1,
            selection: .reselect(.init(model: "gpt-6-astra-mini", reasoningEffort: .medium))
        )
        let record = try #require(try harness.record(successor))
        let body = try JSONValue(parsing: Array(record.request.body.utf8))
        #expect(body["model"] == "gpt-6-astra-mini")
        #expect(body["reasoning"]?["effort"] == "medium")
        #expect(body["input"] == (try JSONValue(parsing: Array(try #require(try harness.record(handle)).request.body.utf8)))["input"])
        #expect(record.previousOperationID == handle.operationID)
    }

    @Test func telemetryCarriesNoPromptOutputTokenAccountScopeOrJobString() async throws {
        let harness = try RecoveryHarness(replies: [Streams.disconnected(), Streams.error(status: 401, code: "token_expired"), Streams.complete()])
        let handle = try await harness.prepare(maximumAttempts: 5)
        _ = try await harness.send(handle)
        _ = try await harness.recovery.receipt(handle, store: harness.store)
        try await harness.recovery.acknowledge(handle, store: harness.store)
        let events = harness.sink.events.filter { $0.category == .recovery }
        let names = events.map(\.name)
        #expect(names.first == "recovery.operation.prepared")
        #expect(names.filter { $0 == "recovery.attempt.reserved" }.count == 3)
        #expect(names.contains("recovery.attempt.failed"))
        #expect(names.contains("recovery.receipt.saved"))
        #expect(names.last == "recovery.receipt.acknowledged")
        #expect(events.allSatisfy { $0.metadata["event_version"] == "1" && $0.metadata["operation_id"] == handle.operationID.uuidString.lowercased() })
        let forbidden = [
            RecoveryHarness.prompt, "shipment 42", Streams.payload, "carrier confirmed", "token-1", "token-2", "Bearer",
            RecoveryTestRecords.binding, "account-one", "acct", "campaign-secret-scope", "job-secret-42", "rev-7", "refused by the test",
        ]
        for event in harness.sink.events {
            let text = ([event.name, event.message] + event.metadata.keys + event.metadata.values).joined(separator: "|")
            for secret in forbidden {
                #expect(!text.contains(secret), "\(event.name) leaks \(secret)")
            }
        }
    }
}

extension ScriptedReply {
    /// The same reply with `parts` appended.
    func with(parts more: [Part]) -> ScriptedReply {
        var copy = self
        copy.parts += more
        return copy
    }
}
