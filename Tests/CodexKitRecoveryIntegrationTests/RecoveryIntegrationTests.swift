// The recovery handoff as a host writes it against AgentRuntime, through public API only.
import CodexCore
import CodexRecovery
import CodexRuntime
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct RecoveryIntegrationTests {
    private static let luna = CodexModelConfiguration(model: .gpt6Luna, reasoningEffort: .low)
    private static let astra = CodexModelConfiguration(model: .gpt6Astra, reasoningEffort: .high)

    private func model(of request: RecordedRequest) throws -> String? {
        try JSONValue(parsing: request.body)["model"]?.stringValue
    }

    @Test func threeConcurrentJobsCompleteIndependentlyAndTheExhaustedOneIsRetriedDeliberately() async throws {
        let app = try FixtureApplication(["gamma": [.status(503, retryAfter: nil), .status(503, retryAfter: nil)]])
        let policy = PurposeSelector(["news": Self.luna])
        let runtime = try app.runtime(policy: policy)
        var handles: [String: AgentStructuredRecoveryHandle] = [:]
        for job in ["alpha", "beta", "gamma"] { handles[job] = try await app.prepare(job, on: runtime, maximumAttempts: 2) }
        #expect(app.transport.server.requests.isEmpty, "preparation sends nothing")

        let outcomes = await withTaskGroup(of: (String, Result<NewsDigest, any Error>).self) { group in
            for (job, handle) in handles {
                group.addTask {
                    do { return (job, .success(try await app.finish(job, handle: handle, on: runtime))) } catch { return (job, .failure(error)) }
                }
            }
            var outcomes: [String: Result<NewsDigest, any Error>] = [:]
            for await (job, outcome) in group { outcomes[job] = outcome }
            return outcomes
        }
        #expect(try outcomes["alpha"]?.get().headline == FixtureTransport.headline("alpha"))
        #expect(try outcomes["beta"]?.get().headline == FixtureTransport.headline("beta"))
        #expect(throws: (any Error).self) { try outcomes["gamma"]?.get() }
        let gamma = try #require(handles["gamma"])
        #expect(try await runtime.structuredRecoveryStatus(gamma, store: app.recoveryStore).availability == .exhausted)
        #expect(app.transport.requests(for: "gamma").count == 2, "the budget bounds the POSTs")

        // A deliberate retry: the same action returns the same successor, another action is refused.
        let successor = try await runtime.retryStructuredRecovery(gamma, retryActionID: "tap-1", store: app.recoveryStore, maximumAttempts: 2, selection: .preserve)
        #expect(try await runtime.retryStructuredRecovery(gamma, retryActionID: "tap-1", store: app.recoveryStore, maximumAttempts: 2, selection: .preserve) == successor)
        let other = await #expect(throws: AgentRecoveryError.self) {
            _ = try await runtime.retryStructuredRecovery(gamma, retryActionID: "tap-2", store: app.recoveryStore, maximumAttempts: 2)
        }
        #expect(other?.code == .retryAlreadyCreated)
        try app.host.update("gamma", revision: "r1") { $0.handle = successor }
        #expect(try await app.finish("gamma", handle: successor, on: runtime).headline == FixtureTransport.headline("gamma"))

        for job in ["alpha", "beta", "gamma"] {
            let stored = try #require(try app.host.job(job))
            #expect(stored.commitCount == 1)
            #expect(stored.acknowledged)
            let bodies = app.transport.requests(for: job).map(\.body)
            #expect(Set(bodies).count == 1, "every attempt of a job sends the same frozen body")
            #expect(try bodies.first.map { try JSONValue(parsing: $0)["model"]?.stringValue } == "gpt-6-luna")
            #expect(!bodies.contains { String(decoding: $0, as: UTF8.self).contains("news\"") }, "the purpose is never sent")
        }
        // Acknowledging again is harmless.
        try await runtime.acknowledgeStructuredRecovery(try #require(handles["alpha"]), store: app.recoveryStore)
        #expect(policy.calls == 3, "one selection per prepared job; retries with .preserve select nothing")
    }

    @Test func aReopenedRuntimeWhosePolicyRejectsEverythingStillReturnsSavedReceipts() async throws {
        let app = try FixtureApplication()
        let first = try app.runtime(policy: PurposeSelector(["news": Self.luna]))
        let handle = try await app.prepare("alpha", on: first)
        _ = try await first.sendRecovering(handle, response: NewsDigest.self, store: app.recoveryStore) { _ in true }
        // The process ends here, before the host commit.
        let reopened = try app.runtime(policy: RejectingSelector())
        let callbacks = Mutex(0)
        let digest = try await reopened.sendRecovering(handle, response: NewsDigest.self, store: app.recoveryStore) { _ in
            callbacks.withLock { $0 += 1 }
            return true
        }
        #expect(digest.headline == FixtureTransport.headline("alpha"))
        #expect(callbacks.withLock { $0 } == 0)
        #expect(app.transport.server.requests.count == 1, "no second generation")
        try app.host.commit("alpha", revision: "r1", digest)
        try await reopened.acknowledgeStructuredRecovery(handle, store: app.recoveryStore)
        #expect(try app.host.job("alpha")?.commitCount == 1)
    }

    @Test func aSuspendedOperationKeepsItsFrozenModelAfterThePolicyChanges() async throws {
        let app = try FixtureApplication(["alpha": [.hold]])
        let policy = PurposeSelector(["news": Self.luna])
        let runtime = try app.runtime(policy: policy)
        let handle = try await app.prepare("alpha", on: runtime)
        let send = Task { try await runtime.sendRecovering(handle, response: NewsDigest.self, store: app.recoveryStore) { _ in true } }
        let outcome = await withTaskCancellationHandler {
            _ = await app.transport.server.waitForRequests(count: 1, timeout: .hangGuard)
            send.cancel()
            return await send.result
        } onCancel: { send.cancel() }
        app.transport.server.releaseHeld()
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(try await runtime.structuredRecoveryStatus(handle, store: app.recoveryStore).state == .suspended)

        policy.use(Self.astra, for: "news")
        let refused = await #expect(throws: AgentRecoveryError.self) {
            _ = try await runtime.retryStructuredRecovery(handle, retryActionID: "tap-1", store: app.recoveryStore, maximumAttempts: 2)
        }
        #expect(refused?.code == .retryNotAllowed, "a suspended operation with attempts left is resumed, not retried")
        let attempts = Mutex<[Int]>([])
        let reopened = try app.runtime(policy: policy)
        _ = try await reopened.sendRecovering(handle, response: NewsDigest.self, store: app.recoveryStore) { attempt in
            attempts.withLock { $0.append(attempt.number) }
            return true
        }
        #expect(attempts.withLock { $0 } == [2])
        let sent = app.transport.requests(for: "alpha")
        #expect(sent.count == 2)
        #expect(try sent.map(model) == ["gpt-6-luna", "gpt-6-luna"], "the frozen model, not the policy's new one")
        #expect(sent[0].body == sent[1].body)
    }

    @Test func permanentCancellationFromAnotherRuntimeStopsTheOwner() async throws {
        let app = try FixtureApplication(["alpha": [.hold]])
        let owner = try app.runtime(policy: PurposeSelector(["news": Self.luna]))
        let handle = try await app.prepare("alpha", on: owner)
        let send = Task { try await owner.sendRecovering(handle, response: NewsDigest.self, store: app.recoveryStore) { _ in true } }
        let outcome = try await withTaskCancellationHandler {
            _ = await app.transport.server.waitForRequests(count: 1, timeout: .hangGuard)
            let other = try app.runtime(policy: RejectingSelector())
            try await other.cancelStructuredRecovery(handle, store: app.recoveryStore)
            return await send.result
        } onCancel: { send.cancel() }
        app.transport.server.releaseHeld()
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(try await owner.structuredRecoveryStatus(handle, store: app.recoveryStore).availability == .permanentlyCancelled)
        let again = await #expect(throws: AgentRecoveryError.self) {
            _ = try await owner.sendRecovering(handle, response: NewsDigest.self, store: app.recoveryStore) { _ in true }
        }
        #expect(again?.code == .cancelled)
        #expect(app.transport.requests(for: "alpha").count == 1)
        #expect(try app.host.job("alpha")?.commitCount == 0)
    }

    @Test func aRateLimitCooldownPersistsAcrossSuspensionAndIsHonouredOnReopening() async throws {
        let app = try FixtureApplication(["alpha": [.status(429, retryAfter: 30)]])
        let clock = ManualClock()
        let wallClock = ManualWallClock(Date(timeIntervalSince1970: 1_000_000))
        let runtime = try app.runtime(policy: PurposeSelector(["news": Self.luna]), clock: clock, wallClock: wallClock)
        let handle = try await app.prepare("alpha", on: runtime)
        let send = Task { try await runtime.sendRecovering(handle, response: NewsDigest.self, store: app.recoveryStore) { _ in true } }
        let outcome = try await withTaskCancellationHandler {
            _ = await app.transport.server.waitForRequests(count: 1, timeout: .hangGuard)
            // The 429's cooldown is saved before the sender waits it out.
            try await poll { try await runtime.structuredRecoveryStatus(handle, store: app.recoveryStore).nextAttemptAt != nil }
            send.cancel()
            return await send.result
        } onCancel: { send.cancel() }
        #expect(throws: CancellationError.self) { try outcome.get() }
        let suspended = try await runtime.structuredRecoveryStatus(handle, store: app.recoveryStore)
        #expect(suspended.state == .suspended)
        #expect(suspended.nextAttemptAt == Date(timeIntervalSince1970: 1_000_030), "the server's Retry-After is saved")

        // A fresh runtime waits out the same cooldown on its clock (in lifecycle-poll slices) before it sends.
        let reopened = try app.runtime(policy: PurposeSelector(["news": Self.luna]), clock: clock, wallClock: wallClock)
        let resumed = Task { try await reopened.sendRecovering(handle, response: NewsDigest.self, store: app.recoveryStore) { _ in true } }
        let (digest, waited) = try await withTaskCancellationHandler {
            var waited = Duration.zero
            while app.transport.requests(for: "alpha").count < 2, waited < .seconds(120) {
                // Wait for the sender to sleep again (or to have sent); never for a sleeper that may not come.
                try await poll { clock.sleeperCount > 0 || app.transport.requests(for: "alpha").count >= 2 }
                guard app.transport.requests(for: "alpha").count < 2 else { break }
                clock.advance(by: .milliseconds(50))
                waited += .milliseconds(50)
            }
            return (try await resumed.value, waited)
        } onCancel: { resumed.cancel() }
        #expect(digest.headline == FixtureTransport.headline("alpha"))
        #expect(app.transport.requests(for: "alpha").count == 2)
        #expect(waited >= .seconds(30), "no request before the saved cooldown elapsed")
    }

    /// Polls `condition` (bounded) until it holds.
    private func poll(_ condition: () async throws -> Bool) async throws {
        for _ in 0..<60_000 {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(1))
        }
        Issue.record("the condition never held")
    }

    @Test func reselectFreezesANewlySelectedModelLinkedToItsSource() async throws {
        let app = try FixtureApplication(["alpha": [.status(503, retryAfter: nil)]])
        let policy = PurposeSelector(["news": Self.luna])
        let runtime = try app.runtime(policy: policy)
        let handle = try await app.prepare("alpha", on: runtime, maximumAttempts: 1)
        await #expect(throws: (any Error).self) { _ = try await app.finish("alpha", handle: handle, on: runtime) }
        policy.use(Self.astra, for: "news")
        let successor = try await runtime.retryStructuredRecovery(handle, retryActionID: "tap-1", store: app.recoveryStore, maximumAttempts: 1, selection: .reselect)
        let status = try await runtime.structuredRecoveryStatus(successor, store: app.recoveryStore)
        #expect(status.previousOperationID == handle.operationID)
        #expect(status.rootOperationID == handle.operationID)
        try app.host.update("alpha", revision: "r1") { $0.handle = successor }
        _ = try await app.finish("alpha", handle: successor, on: runtime)
        #expect(try app.transport.requests(for: "alpha").map(model) == ["gpt-6-luna", "gpt-6-astra"])
        #expect(try app.host.job("alpha")?.commitCount == 1)
    }
}
