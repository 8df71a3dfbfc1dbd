import CodexCore
@testable import CodexRecovery
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Preparation freezes a tool-free request without sending; a completed send saves a receipt that
/// reopening returns without a POST or callback; acknowledgement and abandonment dispose of it.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct RecoveryPrepareAndDeliveryTests {
    @Test func preparePersistsAFrozenToolFreeBodyWithoutSending() async throws {
        let harness = try RecoveryHarness(replies: [])
        let handle = try await harness.prepare()
        #expect(harness.server.requests.isEmpty)
        let record = try #require(try harness.record(handle))
        let body = try JSONValue(parsing: Array(record.request.body.utf8))
        #expect(body["tools"] == .array([]))
        #expect(body["tool_choice"] == "none")
        #expect(body["store"] == false)
        #expect(body["stream"] == true)
        #expect(body["model"] == "gpt-6-astra")
        #expect(body["reasoning"]?["effort"] == "low")
        #expect(body["text"]?["format"]?["name"] == "verdict")
        #expect(record.request.body == body.canonicalString())
        #expect(record.request.digest == SHA256.hexDigest(of: Array(record.request.body.utf8)))
        #expect(!record.request.body.contains("token-1"))
        #expect(record.binding == RecoveryTestRecords.binding)
        #expect(record.rootOperationID == handle.operationID)
        let status = try await harness.status(handle)
        #expect(status.state == .prepared)
        #expect(status.availability == .ready)
        #expect(status.suggestedActions == [.execute])
        #expect(status.remainingAttempts == 3)
    }

    @Test func prepareRefusesThreadsToolsAndOutOfRangeSettings() async throws {
        let harness = try RecoveryHarness(replies: [])
        let model = AgentRecoveryModelConfiguration(model: "gpt-6-astra")
        func code(_ body: () async throws -> AgentStructuredRecoveryHandle) async -> AgentRecoveryError.Code? {
            do {
                _ = try await body()
                return nil
            } catch let error as AgentRecoveryError {
                return error.code
            } catch {
                return "other"
            }
        }
        let threaded = await code { try await harness.recovery.prepare(Request(text: "x"), format: Verdict.responseFormat, model: model, store: harness.store) }
        #expect(threaded == .ephemeralRequired)
        let tool = ToolDefinition(name: "lookup", description: "Looks up.", inputSchema: ["type": "object"])
        let withTools = await code {
            try await harness.recovery.prepare(
                Request(text: "x", executionMode: .ephemeral), format: Verdict.responseFormat, model: model, store: harness.store, requiredTools: [tool]
            )
        }
        #expect(withTools == .toolsUnsupported)
        for attempts in [0, 1001] {
            let outOfRange = await code {
                try await harness.recovery.prepare(
                    Request(text: "x", executionMode: .ephemeral), format: Verdict.responseFormat, model: model, store: harness.store,
                    options: .init(maximumAttempts: attempts)
                )
            }
            #expect(outOfRange == .invalidRecoveryConfiguration)
        }
        let longScope = await code {
            try await harness.recovery.prepare(
                Request(text: "x", executionMode: .ephemeral), format: Verdict.responseFormat, model: model, store: harness.store,
                options: .init(scope: String(repeating: "s", count: 1025))
            )
        }
        #expect(longScope == .invalidRecoveryConfiguration)
        #expect(try harness.store.inventory(binding: RecoveryTestRecords.binding).operationIDs.isEmpty)
        #expect(harness.server.requests.isEmpty)
    }

    @Test func aCompletedSendSavesTheReceiptAndReopeningReturnsItWithoutAPOSTOrCallback() async throws {
        let harness = try RecoveryHarness(replies: [Streams.complete("resp_1")])
        let handle = try await harness.prepare()
        let log = AuthorizationLog()
        let verdict = try await harness.send(handle, log)
        #expect(verdict == Verdict(ok: true, reason: "The carrier confirmed pickup."))
        #expect(log.attempts.count == 1)
        #expect(log.attempts.first?.reason == .initial)
        #expect(log.attempts.first?.number == 1)
        let requests = harness.generationRequests
        #expect(requests.count == 1)
        let record = try #require(try harness.record(handle))
        #expect(requests.first?.body == Array(record.request.body.utf8))
        #expect(requests.first?.header("x-client-request-id") == log.attempts.first?.id.uuidString.lowercased())
        #expect(requests.first?.header("authorization") == "Bearer token-1")
        #expect(record.completedPayload == Streams.payload)
        #expect(record.attempts.map(\.state) == [.completed])
        #expect(record.attempts.first?.responseID == "resp_1")

        // Reopening (a new service instance, as after a relaunch) reads the receipt: no POST, no callback.
        let reopened = AgentStructuredRecovery(
            configuration: .init(endpoint: .chatGPT), httpClient: DefaultHTTPClient(), authProvider: harness.auth
        )
        let secondLog = AuthorizationLog()
        let again = try await reopened.sendRecovering(handle, response: Verdict.self, store: harness.store, authorizeAttempt: secondLog.callback)
        #expect(again == verdict)
        #expect(secondLog.attempts.isEmpty)
        #expect(harness.generationRequests.count == 1)
        let receipt = try await reopened.receipt(handle, store: harness.store)
        #expect(receipt.payload == Array(Streams.payload.utf8))
        #expect(receipt.hostJobID == "job-secret-42")
        #expect(receipt.inputRevision == "rev-7")
        #expect(try receipt.decode(Verdict.self) == verdict)
        let status = try await harness.status(handle)
        #expect(status.availability == .completionSaved)
        #expect(status.hasSavedCompletion)
        #expect(status.suggestedActions == [.readReceipt, .acknowledge])

        // Acknowledge after the host commit: marker first, payload gone, repeatable.
        try await harness.recovery.acknowledge(handle, store: harness.store)
        try await harness.recovery.acknowledge(handle, store: harness.store)
        #expect(try harness.record(handle) == nil)
        #expect(try await harness.status(handle).state == .acknowledged)
        let afterAck = await #expect(throws: AgentRecoveryError.self) { try await harness.send(handle) }
        #expect(afterAck?.code == .stateUnavailable)
        #expect(harness.generationRequests.count == 1)
    }

    @Test func anAcknowledgementInterruptedAfterItsMarkerIsCompletedByRepeatingIt() async throws {
        let harness = try RecoveryHarness(replies: [Streams.complete()])
        let handle = try await harness.prepare()
        _ = try await harness.send(handle)
        // As if the process died between writing the marker and removing the record.
        let partition = try #require(try harness.store.locate(handle.operationID))
        try partition.save(RecoveryDispositionRecord(
            operationID: handle.operationID, binding: RecoveryTestRecords.binding, state: .acknowledged, disposedAt: Date()
        ))
        #expect(try harness.record(handle) != nil)
        try await harness.recovery.acknowledge(handle, store: harness.store)
        #expect(try harness.record(handle) == nil)
        #expect(try await harness.status(handle).availability == .acknowledged)
        let retry = await #expect(throws: AgentRecoveryError.self) {
            try await harness.recovery.retry(handle, retryActionID: "x", store: harness.store, maximumAttempts: 1)
        }
        #expect(retry?.code == .stateUnavailable)
        #expect(harness.generationRequests.count == 1)
    }

    @Test func acknowledgementNeedsASavedCompletionAndAbandonRemovesContent() async throws {
        let harness = try RecoveryHarness(replies: [])
        let handle = try await harness.prepare()
        let early = await #expect(throws: AgentRecoveryError.self) { try await harness.recovery.acknowledge(handle, store: harness.store) }
        #expect(early?.code == .stateInvalid)
        try await harness.recovery.abandon(handle, store: harness.store)
        try await harness.recovery.abandon(handle, store: harness.store)
        #expect(try harness.record(handle) == nil)
        #expect(try await harness.status(handle).availability == .abandoned)
        let send = await #expect(throws: AgentRecoveryError.self) { try await harness.send(handle) }
        #expect(send?.code == .stateUnavailable)
        #expect(harness.server.requests.isEmpty)
        // Cancelling or suspending it says what became of it, not that there is no such operation.
        for command in ["cancel", "suspend"] {
            let refused = await #expect(throws: AgentRecoveryError.self) {
                if command == "cancel" { try await harness.recovery.cancel(handle, store: harness.store) } else { try await harness.recovery.suspend(handle, store: harness.store) }
            }
            #expect(refused?.code == .stateUnavailable)
            #expect(refused?.message == "the operation was abandoned", "\(command)")
        }
    }
}
