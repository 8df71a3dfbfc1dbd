import CodexCore
@testable import CodexRecovery
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Glibc
import Synchronization
import Testing

/// One test per row of the recovery failure table (Docs/Recovery.md), through the real transport against the loopback server.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct RecoveryFailureTableTests {
    @Test func aMidStreamDisconnectIsReplacedWithTheSameBodyAndNoPartialOutput() async throws {
        let harness = try RecoveryHarness(replies: [Streams.disconnected("resp_cut", sequence: 7), Streams.complete("resp_2")])
        let handle = try await harness.prepare()
        let log = AuthorizationLog()
        let verdict = try await harness.send(handle, log)
        #expect(verdict.ok)
        let requests = harness.generationRequests
        #expect(requests.count == 2)
        #expect(requests[0].body == requests[1].body)
        #expect(requests[0].header("x-client-request-id") != requests[1].header("x-client-request-id"))
        #expect(log.attempts.map(\.reason) == [.initial, .replacement])
        #expect(log.attempts.map(\.number) == [1, 2])
        #expect(log.attempts[1].previousResponseID == "resp_cut")
        #expect(log.attempts[1].previousSequenceNumber == 7)
        #expect(log.attempts[1].previousFailure?.code == "responses_stream_disconnected")
        #expect(log.attempts[1].previousFailure?.hadOutput == true)
        let record = try #require(try harness.record(handle))
        #expect(record.attempts.map(\.state) == [.failed, .completed])
        #expect(record.attempts.map(\.failureCode) == ["responses_stream_disconnected", nil])
        #expect(requests.map { $0.header("x-client-request-id") } == record.attempts.map { $0.id.uuidString.lowercased() })
    }

    @Test func anAbruptNetworkLossIsReplacedAndKeepsTheTransportCause() async throws {
        let cut = ScriptedReply(
            headers: [HTTPHeaderField(name: "Content-Type", value: "text/event-stream")],
            parts: [.bytes(Array(Streams.created("resp_net").utf8)), .delay(.milliseconds(20)), .closeAbruptly], framing: .chunked
        )
        let harness = try RecoveryHarness(replies: [cut, Streams.complete()])
        let handle = try await harness.prepare()
        let log = AuthorizationLog()
        _ = try await harness.send(handle, log)
        #expect(harness.generationRequests.count == 2)
        let cause = try #require(log.attempts.last?.previousFailure)
        #expect(["transport_failure", "responses_stream_disconnected"].contains(cause.code))
        #expect(log.attempts.last?.previousResponseID == "resp_net")
    }

    @Test func anIdleTimeoutIsReplaced() async throws {
        // The stream goes silent until the client gives up: only the idle timeout can end it, however slow the machine.
        let stalled = ScriptedReply.sse([Streams.created("resp_slow")]).with(parts: [.hold])
        let harness = try RecoveryHarness(
            replies: [stalled, Streams.complete()], timeouts: HTTPTimeouts(connect: .seconds(10), firstByte: .seconds(20), idle: .milliseconds(300))
        )
        let handle = try await harness.prepare()
        let log = AuthorizationLog()
        _ = try await harness.send(handle, log)
        #expect(harness.generationRequests.count == 2)
        #expect(log.attempts.last?.previousFailure?.code == "timed_out")
        #expect(log.attempts.last?.previousResponseID == "resp_slow")
    }

    @Test func aSchemaValidPayloadThatDoesNotDecodeIsTerminal() async throws {
        struct Stricter: Decodable { let ok: Bool; let reason: String; let carrier: String }
        let harness = try RecoveryHarness(replies: [Streams.complete()], fallback: Streams.complete())
        let handle = try await harness.prepare()
        let error = await #expect(throws: AgentRuntimeError.self) {
            try await harness.recovery.sendRecovering(handle, response: Stricter.self, format: Verdict.responseFormat, store: harness.store) { _ in true }
        }
        #expect(error?.code == .structuredOutputDecodingFailed)
        #expect(harness.generationRequests.count == 1)
        #expect(try await harness.status(handle).state == .failed)
    }

    @Test func aCorruptRecordFailsClosedWithoutGenerating() async throws {
        let harness = try RecoveryHarness(replies: [], fallback: Streams.complete())
        let handle = try await harness.prepare()
        let url = harness.store.recordURL(handle.operationID, scope: "campaign-secret-scope")
        var bytes = try Data(contentsOf: url)
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: url)
        let log = AuthorizationLog()
        let error = await #expect(throws: AgentRecoveryError.self) { try await harness.send(handle, log) }
        #expect(error?.code == .recordCorrupt)
        #expect(error?.isStorageFailure == true)
        #expect(log.attempts.isEmpty)
        #expect(harness.generationRequests.isEmpty)
        #expect(try Data(contentsOf: url) == bytes)
        let status = await #expect(throws: AgentRecoveryError.self) { try await harness.status(handle) }
        #expect(status?.code == .recordCorrupt)
    }

    @Test func aReceiptOverTheQuotaIsNotDeliveredAndNothingIsEvicted() async throws {
        let reason = String(repeating: "r", count: 10_000)
        let text = #"{"ok":true,"reason":"\#(reason)"}"#
        let harness = try RecoveryHarness(replies: [Streams.complete(text: text)])
        let handle = try await harness.prepare()
        let used = try harness.store.usedBytes()
        // Room for the attempt bookkeeping, not for a 10 kB payload.
        let tight = try AgentStructuredRecoveryStore(directory: harness.store.directory, maximumBytes: used + 8_192)
        let error = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.sendRecovering(handle, response: Verdict.self, store: tight) { _ in true }
        }
        #expect(error?.code == .storageLimitExceeded)
        #expect(harness.generationRequests.count == 1)
        #expect(try tight.usedBytes() <= used + 8_192)
        #expect(try harness.record(handle)?.completedPayload == nil)
        let receipt = await #expect(throws: AgentRecoveryError.self) { try await harness.recovery.receipt(handle, store: tight) }
        #expect(receipt?.code == .completionUnavailable)
    }

    @Test func theBudgetCapsPOSTsExactlyAndReopeningAnExhaustedOperationAsksNobody() async throws {
        let harness = try RecoveryHarness(replies: [], fallback: Streams.error(status: 503, code: "unavailable"))
        let handle = try await harness.prepare(maximumAttempts: 3)
        let log = AuthorizationLog()
        let error = await #expect(throws: AgentRuntimeError.self) { try await harness.send(handle, log) }
        #expect(error?.http?.statusCode == 503)
        #expect(harness.generationRequests.count == 3)
        #expect(log.attempts.count == 3)
        let secondLog = AuthorizationLog()
        let exhausted = await #expect(throws: AgentRecoveryError.self) { try await harness.send(handle, secondLog) }
        #expect(exhausted?.code == .attemptsExhausted)
        #expect(secondLog.attempts.isEmpty)
        #expect(harness.generationRequests.count == 3)
        let status = try await harness.status(handle)
        #expect(status.availability == .exhausted)
        #expect(status.remainingAttempts == 0)
        #expect(status.lastFailure?.httpStatus == 503)
        #expect(status.suggestedActions == [.manualRetry, .abandon])
    }

    @Test func a429IsReplacedAfterItsPersistedRetryAfter() async throws {
        let limited = Streams.error(status: 429, code: "rate_limit_exceeded", headers: [HTTPHeaderField(name: "Retry-After", value: "1")])
        let harness = try RecoveryHarness(replies: [limited, Streams.complete()])
        let handle = try await harness.prepare(maximumAttempts: 2)
        let task = Task { try await harness.send(handle) }
        // Wait until the first attempt failed and the cooldown is saved.
        var saved: Date?
        for _ in 0..<400 where saved == nil {
            saved = try harness.record(handle)?.nextAttemptAt
            if saved == nil { try await Task.sleep(for: .milliseconds(5)) }
        }
        let nextAttemptAt = try #require(saved)
        let status = try await harness.status(handle)
        #expect(status.nextAttemptAt == nextAttemptAt)
        #expect(status.lastFailure?.httpStatus == 429)
        // Suspend by cancelling the owner; the cooldown survives.
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        let suspended = try await harness.status(handle)
        #expect(suspended.availability == .suspended)
        #expect(suspended.nextAttemptAt == nextAttemptAt)
        #expect(harness.generationRequests.count == 1)
        // Reopen: the second POST waits for the saved cooldown.
        _ = try await harness.send(handle)
        let second = try #require(harness.generationRequests.last)
        #expect(harness.generationRequests.count == 2)
        let first = try #require(harness.generationRequests.first)
        #expect(second.receivedAt - first.receivedAt >= .milliseconds(900))
    }

    @Test func quotaExhaustionIsTerminalEvenOn429() async throws {
        let quota = Streams.error(status: 429, code: "insufficient_quota", type: "insufficient_quota")
        let harness = try RecoveryHarness(replies: [quota], fallback: Streams.complete())
        let handle = try await harness.prepare()
        let error = await #expect(throws: AgentRuntimeError.self) { try await harness.send(handle) }
        #expect(error?.code == .quotaExceeded)
        let reopened = await #expect(throws: AgentRecoveryError.self) { try await harness.send(handle) }
        #expect(reopened?.code == .permanentlyFailed)
        #expect(harness.generationRequests.count == 1)
        let status = try await harness.status(handle)
        #expect(status.state == .failed)
        #expect(status.lastFailure?.code == "quota_exceeded")
        #expect(status.attemptsUsed == 1)
    }

    @Test func nonRetryableStatusesAndForbiddenAreTerminalAndNeverRefreshed() async throws {
        for status in [400, 403] {
            let harness = try RecoveryHarness(replies: [Streams.error(status: status, code: "nope")], fallback: Streams.complete())
            let handle = try await harness.prepare()
            let error = await #expect(throws: AgentRuntimeError.self) { try await harness.send(handle) }
            #expect(error?.http?.statusCode == status)
            #expect(harness.generationRequests.count == 1)
            #expect(harness.auth.state.withLock { $0.renewals } == 0)
            #expect(try await harness.status(handle).state == .failed)
        }
    }

    @Test func a401ReissueSpendsAnAttemptAndAnAuthorizationWithTheRenewedToken() async throws {
        let harness = try RecoveryHarness(replies: [Streams.error(status: 401, code: "token_expired"), Streams.complete()])
        let handle = try await harness.prepare()
        let log = AuthorizationLog()
        _ = try await harness.send(handle, log)
        #expect(log.attempts.map(\.reason) == [.initial, .authenticationReissue])
        let requests = harness.generationRequests
        #expect(requests.map { $0.header("authorization") } == ["Bearer token-1", "Bearer token-2"])
        #expect(requests[0].body == requests[1].body)
        #expect(harness.auth.state.withLock { $0.renewals } == 1)
        #expect(try harness.record(handle)?.attemptsUsed == 2)
        let file = try Data(contentsOf: harness.store.recordURL(handle.operationID, scope: "campaign-secret-scope"))
        #expect(String(decoding: file, as: UTF8.self).contains("token-") == false)
    }

    @Test func a401WithoutRenewalBlocksForSignInAndADeniedReissueSendsNothing() async throws {
        let harness = try RecoveryHarness(replies: [Streams.error(status: 401, code: "token_expired")], fallback: Streams.complete())
        harness.auth.state.withLock { $0.renewsAfterUnauthorized = false }
        let handle = try await harness.prepare()
        let error = await #expect(throws: AgentRuntimeError.self) { try await harness.send(handle) }
        #expect(error?.http?.statusCode == 401)
        let status = try await harness.status(handle)
        #expect(status.blockers == [.authenticationRequired])
        #expect(status.attemptsUsed == 1)

        let second = try RecoveryHarness(replies: [Streams.error(status: 401, code: "token_expired")], fallback: Streams.complete())
        let reissued = try await second.prepare()
        let denied = await #expect(throws: AgentRecoveryError.self) { try await second.send(reissued, AuthorizationLog(answers: [true, false])) }
        #expect(denied?.code == .attemptNotAuthorized)
        #expect(second.generationRequests.count == 1)
        #expect(try second.record(reissued)?.attemptsUsed == 1)
        // The same pending attempt is offered again on reopen, still as the reissue.
        let log = AuthorizationLog()
        _ = try await second.send(reissued, log)
        #expect(log.attempts.map(\.reason) == [.authenticationReissue])
        #expect(log.attempts.map(\.number) == [2])
    }

    @Test func responseFailedIsReplacedOnlyForAllowedProviderCodes() async throws {
        let failed = ScriptedReply.sse([
            Streams.created("resp_f"),
            Streams.event("response.failed", 1, #""response":{"id":"resp_f","status":"failed","error":{"code":"server_error","message":"oops"}}"#),
        ])
        let strict = try RecoveryHarness(replies: [failed], fallback: Streams.complete())
        let strictHandle = try await strict.prepare()
        let error = await #expect(throws: AgentRuntimeError.self) { try await strict.send(strictHandle) }
        #expect(error?.http?.providerCode == "server_error")
        #expect(strict.generationRequests.count == 1)
        #expect(try await strict.status(strictHandle).state == .failed)

        let lenient = try RecoveryHarness(replies: [failed], fallback: Streams.complete())
        let policy = AgentRecoveryRetryPolicy(initialBackoff: 0, maximumBackoff: 0, retryableProviderCodes: ["server_error"])
        let lenientHandle = try await lenient.prepare(policy: policy)
        _ = try await lenient.send(lenientHandle)
        #expect(lenient.generationRequests.count == 2)
    }

    @Test func invalidOutputIsTerminalByDefaultAndReplacedWhenThePolicyOptsIn() async throws {
        let outputs = [#"{"ok":"yes","reason":"x"}"#, "not json at all", #"{"ok":true}"#]
        for text in outputs {
            let harness = try RecoveryHarness(replies: [Streams.complete(text: text)], fallback: Streams.complete())
            let handle = try await harness.prepare()
            let error = await #expect(throws: AgentRuntimeError.self) { try await harness.send(handle) }
            #expect(error?.code == .structuredOutputInvalid)
            #expect(error?.description.contains(text) == false)
            #expect(harness.generationRequests.count == 1)
            let record = try #require(try harness.record(handle))
            #expect(record.state == .failed)
            #expect(record.completedPayload == nil)
        }
        let optIn = try RecoveryHarness(replies: [Streams.complete(text: "nope")], fallback: Streams.complete())
        let handle = try await optIn.prepare(policy: .init(initialBackoff: 0, maximumBackoff: 0, retriesInvalidStructuredOutput: true))
        _ = try await optIn.send(handle)
        #expect(optIn.generationRequests.count == 2)
    }

    @Test func toolActivityIsRejectedAndNeverReplaced() async throws {
        let call: JSONValue = ["type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "ship", "arguments": "{}", "status": "in_progress"]
        let tool = ScriptedReply.sse([
            Streams.created("resp_t"),
            Streams.event("response.output_item.added", 1, #""output_index":0,"item":\#(call.canonicalString())"#),
        ])
        let harness = try RecoveryHarness(replies: [tool], fallback: Streams.complete())
        let handle = try await harness.prepare()
        let error = await #expect(throws: AgentRuntimeError.self) { try await harness.send(handle) }
        #expect(error?.interruption?.hadToolActivity == true)
        #expect(harness.generationRequests.count == 1)
        let status = try await harness.status(handle)
        #expect(status.state == .failed)
        #expect(status.lastFailure?.hadToolActivity == true)
    }

    @Test func anAccountChangeStopsWithoutDeliveringAndRedactsStatus() async throws {
        let harness = try RecoveryHarness(replies: [], fallback: Streams.complete())
        let handle = try await harness.prepare()
        harness.auth.state.withLock { $0.binding = RecoveryTestRecords.otherBinding }
        let error = await #expect(throws: AgentRecoveryError.self) { try await harness.send(handle) }
        #expect(error?.code == .accountMismatch)
        #expect(harness.generationRequests.isEmpty)
        let status = try await harness.status(handle)
        #expect(status.isRedacted)
        #expect(status.blockers == [.accountMismatch])
        #expect(status.lastFailure == nil)
        let receipt = await #expect(throws: AgentRecoveryError.self) { try await harness.recovery.receipt(handle, store: harness.store) }
        #expect(receipt?.code == .accountMismatch)

        // An account switch while the host is authorizing prevents transmission.
        harness.auth.state.withLock { $0.binding = RecoveryTestRecords.binding }
        let auth = harness.auth
        let switched = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.sendRecovering(handle, response: Verdict.self, store: harness.store) { _ in
                auth.state.withLock { $0.binding = RecoveryTestRecords.otherBinding }
                return true
            }
        }
        #expect(switched?.code == .accountMismatch)
        #expect(harness.generationRequests.isEmpty)
        #expect(try harness.record(handle)?.attemptsUsed == 0)
    }

    /// The account is checked before anything is sent, delivered or acknowledged, whether the provider
    /// names its account without a network call (checked in the step that loads the record) or only
    /// through its credentials (checked after the load): such a provider's result is delivered too.
    @Test(arguments: [true, false])
    func sendAndAcknowledgeCheckTheAccountWhetherOrNotTheProviderKnowsItUpFront(knowsBinding: Bool) async throws {
        let harness = try RecoveryHarness(replies: [], fallback: Streams.complete())
        harness.auth.state.withLock { $0.knowsBinding = knowsBinding }
        let handle = try await harness.prepare()
        harness.auth.state.withLock { $0.binding = RecoveryTestRecords.otherBinding }
        let sent = await #expect(throws: AgentRecoveryError.self) { try await harness.send(handle) }
        #expect(sent?.code == .accountMismatch)
        let acknowledged = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.acknowledge(handle, store: harness.store)
        }
        #expect(acknowledged?.code == .accountMismatch)
        #expect(harness.generationRequests.isEmpty)
        #expect(try harness.record(handle)?.attemptsUsed == 0)

        harness.auth.state.withLock { $0.binding = RecoveryTestRecords.binding }
        #expect(try await harness.send(handle) == Verdict(ok: true, reason: "The carrier confirmed pickup."))
        harness.auth.state.withLock { $0.binding = RecoveryTestRecords.otherBinding }
        let late = await #expect(throws: AgentRecoveryError.self) { try await harness.recovery.acknowledge(handle, store: harness.store) }
        #expect(late?.code == .accountMismatch)
        #expect(try harness.record(handle)?.completedPayload != nil, "a refused acknowledgement removes nothing")
        harness.auth.state.withLock { $0.binding = RecoveryTestRecords.binding }
        try await harness.recovery.acknowledge(handle, store: harness.store)
        #expect(try harness.record(handle) == nil)
        #expect(try await harness.status(handle).state == .acknowledged)
        #expect(harness.generationRequests.count == 1)
    }

    /// A provider that cannot name its account without credentials is asked again before the result is
    /// saved: an account switch during the generation is caught there (nothing delivered, the attempt
    /// spent), and a cancellation of the task while it answers suspends the operation as a
    /// cancellation during the generation does.
    @Test(arguments: [false, true])
    func aProviderWithoutACurrentBindingIsAskedAgainBeforeDelivery(cancelled: Bool) async throws {
        let harness = try RecoveryHarness(replies: [], fallback: Streams.complete())
        harness.auth.state.withLock { $0.knowsBinding = false }
        let handle = try await harness.prepare()
        let approved = Mutex(false)
        let afterApproval = Mutex(0)
        let auth = harness.auth
        auth.onCredentials.withLock {
            $0 = {
                guard approved.withLock({ $0 }) else { return }
                // The first fetch after the approval is for sending; the second is the delivery's check.
                guard afterApproval.withLock({ $0 += 1; return $0 }) == 2 else { return }
                if cancelled {
                    withUnsafeCurrentTask { $0?.cancel() }
                    throw CancellationError()
                }
                auth.state.withLock { $0.binding = RecoveryTestRecords.otherBinding }
            }
        }
        let send: @Sendable () async throws -> Verdict = {
            try await harness.recovery.sendRecovering(handle, response: Verdict.self, store: harness.store) { _ in
                approved.withLock { $0 = true }
                return true
            }
        }
        if cancelled {
            await #expect(throws: CancellationError.self) { _ = try await Task { try await send() }.value }
        } else {
            let error = await #expect(throws: AgentRecoveryError.self) { _ = try await send() }
            #expect(error?.code == .accountMismatch)
        }
        #expect(afterApproval.withLock { $0 } == 2)
        #expect(harness.generationRequests.count == 1)
        let record = try #require(try harness.record(handle))
        #expect(record.completedPayload == nil, "nothing is delivered")
        #expect(record.attemptsUsed == 1)
        #expect(record.state == (cancelled ? .suspended : .interrupted))
    }

    @Test func signedOutStatusAsksForSignIn() async throws {
        let harness = try RecoveryHarness(replies: [])
        let handle = try await harness.prepare()
        harness.auth.state.withLock { $0.binding = nil }
        let status = try await harness.status(handle)
        #expect(status.availability == .authenticationRequired)
        #expect(status.suggestedActions == [.signIn, .abandon])
        #expect(status.isRedacted)
    }

    @Test func aCompletionThatCannotBeSavedIsNeverReturned() async throws {
        let faults = FaultInjectingFileSystem()
        let harness = try RecoveryHarness(replies: [Streams.complete()], fileSystem: faults)
        let handle = try await harness.prepare()
        let auth = harness.auth
        let error = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.sendRecovering(handle, response: Verdict.self, store: harness.store) { _ in
                // Writes from here: the consumed, transmission-authorized attempt (1), the receipt (2, fails).
                _ = auth
                faults.fail(.write, errno: ENOSPC, at: 2, persistent: true)
                return true
            }
        }
        #expect(error?.code == .diskFull)
        #expect(harness.generationRequests.count == 1)
        faults.heal()
        let record = try #require(try harness.record(handle))
        #expect(record.completedPayload == nil)
        #expect(try await harness.status(handle).hasSavedCompletion == false)
    }
}
