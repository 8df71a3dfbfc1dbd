import CodexCore
import Foundation

/// The store as the ordered write queue uses it: every call that fails with a transient error
/// (``CodexCore/TransientStoreError``, e.g. a database locked by another process) is retried with a
/// growing pause (5 ms doubling to 1 s) until it succeeds, so accepted writes are never lost to a lock.
/// Each call is retried on its own, so a write made of several calls never repeats a finished one.
/// The pauses run on the injected clock.
struct RetryingStateStore: RuntimeStateStore {
    let base: any RuntimeStateStore
    let clock: any Clock<Duration>
    let onRetry: @Sendable (String) -> Void

    /// Runs `call`, retrying it after a transient failure (for calls outside the protocol, such as a
    /// journal's).
    func retrying<Value>(_ operation: String, _ call: () async throws -> Value) async throws -> Value {
        var pause = Duration.milliseconds(5)
        while true {
            do {
                return try await call()
            } catch let error as any TransientStoreError where error.isTransient {
                onRetry(operation)
                try? await clock.sleep(for: pause)
                pause = min(pause * 2, .seconds(1))
            }
        }
    }

    func threads() async throws -> [AgentThread] { try await retrying("threads") { try await base.threads() } }
    func thread(_ id: AgentThreadID) async throws -> AgentThread? { try await retrying("thread") { try await base.thread(id) } }
    func upsertThread(_ thread: AgentThread) async throws { try await retrying("upsert_thread") { try await base.upsertThread(thread) } }
    func deleteThread(_ id: AgentThreadID) async throws { try await retrying("delete_thread") { try await base.deleteThread(id) } }
    func appendHistory(_ items: [AgentHistoryItem], to thread: AgentThreadID) async throws {
        try await retrying("append_history") { try await base.appendHistory(items, to: thread) }
    }
    func history(of thread: AgentThreadID, query: AgentHistoryQuery) async throws -> AgentHistoryPage {
        try await retrying("history") { try await base.history(of: thread, query: query) }
    }
    func upsertTurn(_ turn: AgentTurn) async throws { try await retrying("upsert_turn") { try await base.upsertTurn(turn) } }
    func latestTurn(of thread: AgentThreadID) async throws -> AgentTurn? { try await retrying("latest_turn") { try await base.latestTurn(of: thread) } }
    func recordTurn(_ turn: AgentTurn, appending history: [AgentHistoryItem], threadStatus: AgentThreadStatus, at date: Date) async throws {
        try await retrying("record_turn") { try await base.recordTurn(turn, appending: history, threadStatus: threadStatus, at: date) }
    }
}
