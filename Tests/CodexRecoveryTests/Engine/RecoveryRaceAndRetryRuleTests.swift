import CodexCore
@testable import CodexRecovery
import CodexTestSupport
import CodexTransport
import Foundation
import Glibc
import Synchronization
import Testing

/// Lifecycle commands racing an execution, the manual-retry source table, and storage failures around
/// the attempt ledger.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct RecoveryRaceAndRetryRuleTests {
    @Test func cancellingAnIdleOperationKeepsItsSavedCompletionButNeverDeliversIt() async throws {
        let harness = try RecoveryHarness(replies: [Streams.complete()])
        let handle = try await harness.prepare()
        _ = try await harness.send(handle)
        let before = try #require(try harness.record(handle))
        try await harness.recovery.cancel(handle, store: harness.store)
        let record = try #require(try harness.record(handle))
        #expect(record.state == .cancelled)
        #expect(record.completedPayload != nil)
        #expect(record.completedPayload == before.completedPayload)
        #expect(record.request == before.request)
        let reopened = await #expect(throws: AgentRecoveryError.self) { try await harness.send(handle) }
        #expect(reopened?.code == .cancelled)
        let receipt = await #expect(throws: AgentRecoveryError.self) { try await harness.recovery.receipt(handle, store: harness.store) }
        #expect(receipt?.code == .cancelled)
        let acknowledge = await #expect(throws: AgentRecoveryError.self) { try await harness.recovery.acknowledge(handle, store: harness.store) }
        #expect(acknowledge?.code == .cancelled)
        // A later suspend never turns the cancel back into something resumable.
        try await harness.recovery.suspend(handle, store: harness.store)
        #expect(try await harness.status(handle).availability == .permanentlyCancelled)
        try await harness.recovery.abandon(handle, store: harness.store)
        #expect(try harness.record(handle) == nil, "only abandonment removes the content")
        #expect(harness.generationRequests.count == 1)
    }

    @Test func aLateApprovalAfterACancelFromAnotherInstanceSendsNothing() async throws {
        let harness = try RecoveryHarness(replies: [], fallback: Streams.complete())
        let handle = try await harness.prepare()
        let otherStore = try AgentStructuredRecoveryStore(directory: harness.store.directory)
        let recovery = harness.recovery
        await #expect(throws: CancellationError.self) {
            try await recovery.sendRecovering(handle, response: Verdict.self, store: harness.store) { _ in
                try await recovery.cancel(handle, store: otherStore)
                return true
            }
        }
        #expect(harness.generationRequests.isEmpty)
        let status = try await harness.status(handle)
        #expect(status.state == .cancelled)
        #expect(status.attemptsUsed == 0)
    }

    /// A command that comes in after the host's approval, while the owner fetches the credentials to send
    /// with, is seen before anything is spent (by the write that would spend the attempt, under the
    /// control lock): no request, no attempt used, and the state the command asked for.
    @Test(arguments: [false, true])
    func aCommandWhileTheCredentialsAreFetchedSendsNothing(cancel: Bool) async throws {
        let harness = try RecoveryHarness(replies: [], fallback: Streams.complete())
        let handle = try await harness.prepare()
        let otherStore = try AgentStructuredRecoveryStore(directory: harness.store.directory)
        let recovery = harness.recovery
        let approved = Mutex(0)
        let commanded = Mutex(0)
        harness.auth.onCredentials.withLock {
            $0 = {
                // Only the fetch after the approval: the command goes in once.
                guard approved.withLock({ $0 }) == 1, commanded.withLock({ $0 += 1; return $0 }) == 1 else { return }
                if cancel { try await recovery.cancel(handle, store: otherStore) } else { try await recovery.suspend(handle, store: otherStore) }
            }
        }
        await #expect(throws: CancellationError.self) {
            try await recovery.sendRecovering(handle, response: Verdict.self, store: harness.store) { _ in
                approved.withLock { $0 += 1 }
                return true
            }
        }
        #expect(approved.withLock { $0 } == 1)
        #expect(commanded.withLock { $0 } == 1)
        #expect(harness.generationRequests.isEmpty)
        let status = try await harness.status(handle)
        #expect(status.state == (cancel ? .cancelled : .suspended))
        #expect(status.attemptsUsed == 0)
    }

    @Test func statusReadsRunningWhileTheOwnerWaitsForTheHost() async throws {
        let harness = try RecoveryHarness(replies: [Streams.complete()])
        let handle = try await harness.prepare()
        let seen = Mutex<AgentStructuredRecoveryStatus.Availability?>(nil)
        _ = try await harness.recovery.sendRecovering(handle, response: Verdict.self, store: harness.store) { _ in
            let availability = try await harness.status(handle).availability
            seen.withLock { $0 = availability }
            return true
        }
        #expect(seen.withLock { $0 } == .running)
    }

    @Test func suspendingDuringTheCooldownStopsTheWaitAndKeepsIt() async throws {
        let limited = Streams.error(status: 429, code: "rate_limit_exceeded", headers: [HTTPHeaderField(name: "Retry-After", value: "30")])
        let harness = try RecoveryHarness(replies: [limited], fallback: Streams.complete())
        let handle = try await harness.prepare()
        let task = Task { try await harness.send(handle) }
        var waiting = false
        for _ in 0..<400 where !waiting {
            waiting = (try? await harness.status(handle).availability) == .waiting
            if !waiting { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(waiting)
        let saved = try #require(try harness.record(handle)?.nextAttemptAt)
        try await harness.recovery.suspend(handle, store: try AgentStructuredRecoveryStore(directory: harness.store.directory))
        await #expect(throws: CancellationError.self) { try await task.value }
        let status = try await harness.status(handle)
        #expect(status.availability == .suspended)
        #expect(status.nextAttemptAt == saved)
        #expect(harness.generationRequests.count == 1)
    }

    @Test func retryFollowsTheSourceConditionTable() async throws {
        let harness = try RecoveryHarness(replies: [], fallback: Streams.error(status: 503, code: "unavailable"))
        // Expired: allowed.
        let expired = try await harness.prepare(expiresAt: Date(timeIntervalSinceNow: -1))
        _ = try await harness.recovery.retry(expired, retryActionID: "e", store: harness.store, maximumAttempts: 1)

        // Suspended with attempts left: resume instead.
        let suspended = try await harness.prepare(maximumAttempts: 3)
        try await harness.recovery.suspend(suspended, store: harness.store)
        let resumable = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.retry(suspended, retryActionID: "s", store: harness.store, maximumAttempts: 1)
        }
        #expect(resumable?.code == .retryNotAllowed)

        // Suspended and exhausted: allowed.
        let spent = try await harness.prepare(maximumAttempts: 1)
        _ = try? await harness.send(spent)
        try await harness.recovery.suspend(spent, store: harness.store)
        _ = try await harness.recovery.retry(spent, retryActionID: "x", store: harness.store, maximumAttempts: 1)

        // Another account: refused without revealing anything.
        let foreign = try await harness.prepare(maximumAttempts: 1)
        _ = try? await harness.send(foreign)
        harness.auth.state.withLock { $0.binding = RecoveryTestRecords.otherBinding }
        let wrongAccount = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.retry(foreign, retryActionID: "f", store: harness.store, maximumAttempts: 1)
        }
        #expect(wrongAccount?.code == .accountMismatch)
        harness.auth.state.withLock { $0.binding = RecoveryTestRecords.binding }

        // Abandoned: nothing to clone.
        try await harness.recovery.abandon(foreign, store: harness.store)
        let abandoned = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.retry(foreign, retryActionID: "f", store: harness.store, maximumAttempts: 1)
        }
        #expect(abandoned?.code == .stateUnavailable)
    }

    @Test func aRetryRepeatedWithAnotherPolicyIsRejected() async throws {
        let harness = try RecoveryHarness(replies: [], fallback: Streams.error(status: 503, code: "unavailable"))
        let handle = try await harness.prepare(maximumAttempts: 1)
        _ = try? await harness.send(handle)
        _ = try await harness.recovery.retry(handle, retryActionID: "tap", store: harness.store, maximumAttempts: 1)
        let changed = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.retry(
                handle, retryActionID: "tap", store: harness.store, maximumAttempts: 1, retryPolicy: .init(retriesInvalidStructuredOutput: true)
            )
        }
        #expect(changed?.code == .retryConfigurationMismatch)
        let reselected = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.retry(
                handle, retryActionID: "tap", store: harness.store, maximumAttempts: 1, selection: .reselect(.init(model: "other"))
            )
        }
        #expect(reselected?.code == .retryConfigurationMismatch)
    }

    @Test func aRetryRepeatedAfterTheSuccessorWriteFailedCompletesTheSameSuccessor() async throws {
        let faults = FaultInjectingFileSystem()
        let harness = try RecoveryHarness(replies: [], fallback: Streams.error(status: 503, code: "unavailable"), fileSystem: faults)
        let handle = try await harness.prepare(maximumAttempts: 1)
        _ = try? await harness.send(handle)
        // Write 1 reserves the successor on the source; write 2 (the successor's record) hits a full disk.
        faults.fail(.write, errno: ENOSPC, at: 2)
        let failed = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.retry(handle, retryActionID: "tap", store: harness.store, maximumAttempts: 2)
        }
        #expect(failed?.code == .diskFull)
        #expect(try harness.record(handle)?.successor?.actionID == "tap")
        let successor = try await harness.recovery.retry(handle, retryActionID: "tap", store: harness.store, maximumAttempts: 2)
        #expect(try harness.record(successor)?.maximumAttempts == 2)
        let status = try await harness.status(successor)
        #expect(status.availability == .ready, "state \(status.state), blockers \(status.blockers)")
    }

    @Test func aStorageFailureOnTheAttemptLedgerSendsNothingAndSpendsNothing() async throws {
        let faults = FaultInjectingFileSystem()
        let harness = try RecoveryHarness(replies: [], fallback: Streams.complete(), fileSystem: faults)
        let handle = try await harness.prepare()
        let recovery = harness.recovery
        let error = await #expect(throws: AgentRecoveryError.self) {
            try await recovery.sendRecovering(handle, response: Verdict.self, store: harness.store) { _ in
                // From here: write 1 is the consumed attempt.
                faults.fail(.syncFile, errno: EIO, at: 1)
                return true
            }
        }
        #expect(error?.code == .storageFailure)
        #expect(error?.systemErrorNumber == EIO)
        #expect(harness.generationRequests.isEmpty)
        #expect(try harness.record(handle)?.attemptsUsed == 0)
    }

    @Test func abandonWhileAnotherExecutionRunsIsBusy() async throws {
        let held = ScriptedReply.sse([Streams.created("resp_h")]).with(parts: [.hold])
        let harness = try RecoveryHarness(replies: [held], fallback: Streams.complete())
        let handle = try await harness.prepare()
        let task = Task { try await harness.send(handle) }
        #expect(await harness.server.waitForRequests(count: 1, timeout: .hangGuard))
        let busy = await #expect(throws: AgentRecoveryError.self) { try await harness.recovery.abandon(handle, store: harness.store) }
        #expect(busy?.code == .operationBusy)
        #expect(try harness.record(handle) != nil)
        task.cancel()
        harness.server.releaseHeld()
        _ = try? await task.value
    }

    @Test func a401OnTheLastAttemptReportsExhaustionNotSignIn() async throws {
        let harness = try RecoveryHarness(replies: [Streams.error(status: 401, code: "token_expired")], fallback: Streams.complete())
        let handle = try await harness.prepare(maximumAttempts: 1)
        let error = await #expect(throws: AgentRuntimeError.self) { try await harness.send(handle) }
        #expect(error?.http?.statusCode == 401)
        let status = try await harness.status(handle)
        #expect(status.availability == .exhausted)
        #expect(status.blockers.isEmpty)
        #expect(harness.generationRequests.count == 1)
    }
}

/// Receipts without a live backend, unknown record versions at the engine, and scoped purges.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct RecoveryReceiptAndRetentionRuleTests {
    @Test func aReceiptNeedsNoLiveBackendOrUnexpiredPermission() async throws {
        let harness = try RecoveryHarness(replies: [Streams.complete()])
        let handle = try await harness.prepare(expiresAt: Date(timeIntervalSinceNow: 3600))
        _ = try await harness.send(handle)
        harness.server.shutdown()
        // Another service instance, pointed at nothing reachable, after the permission expired.
        let endpoint = try ResponsesEndpoint(baseURL: try #require(URL(string: "http://127.0.0.1:9/api")), profile: .publicAPI)
        let wallClock = ManualWallClock(Date(timeIntervalSinceNow: 7200))
        let offline = AgentStructuredRecovery(
            configuration: .init(endpoint: endpoint), httpClient: DefaultHTTPClient(), authProvider: harness.auth, wallClock: wallClock
        )
        let receipt = try await offline.receipt(handle, store: harness.store)
        #expect(receipt.payload == Array(Streams.payload.utf8))
        let reopened = try await offline.sendRecovering(handle, response: Verdict.self, store: harness.store) { _ in true }
        #expect(reopened.ok)
        #expect(try await offline.status(handle, store: harness.store).availability == .completionSaved)
    }

    @Test func anUnknownRecordVersionIsNeverSentOrRewritten() async throws {
        let harness = try RecoveryHarness(replies: [], fallback: Streams.complete())
        let handle = try await harness.prepare()
        let url = harness.store.recordURL(handle.operationID, scope: "campaign-secret-scope")
        let text = String(decoding: try Data(contentsOf: url), as: UTF8.self).replacingOccurrences(of: #""version":2"#, with: #""version":999"#)
        try Data(text.utf8).write(to: url)
        let error = await #expect(throws: AgentRecoveryError.self) { try await harness.send(handle) }
        #expect(error?.code == .unsupportedRecordVersion)
        #expect(harness.generationRequests.isEmpty)
        #expect(String(decoding: try Data(contentsOf: url), as: UTF8.self) == text)
        let inventory = try harness.store.inventory(binding: RecoveryTestRecords.binding)
        #expect(inventory.unreadableOperationIDs == [handle.operationID])
    }

    @Test func purgeWithAScopeLeavesOtherScopesAlone() async throws {
        let scratch = try ScratchDirectory()
        let store = try AgentStructuredRecoveryStore(directory: scratch.storeURL)
        let inScope = RecoveryTestRecords.operation(scope: "campaign-1")
        let otherScope = RecoveryTestRecords.operation(scope: "campaign-2")
        try store.testPartition(scope: "campaign-1").save(inScope)
        try store.testPartition(scope: "campaign-2").save(otherScope)
        let result = try store.purgeAccount(RecoveryTestRecords.binding, scope: "campaign-1")
        #expect(result.removed == [inScope.operationID])
        #expect(try store.inventory(binding: RecoveryTestRecords.binding).operationIDs == [otherScope.operationID])
    }
}
