import CodexCore
import CodexRuntime
import CodexSchema
import CodexStorageSQLite
import CodexTransport
import Foundation

extension DemoRun {
    /// Step 7: the account's model catalog (fetched with the account's credentials, cached) and the
    /// limits the service reported on the replies so far (no new request).
    func account(_ runtime: AgentRuntime) async throws {
        narrator.step(7, "The account: model discovery and rate limits")
        let catalog = try await runtime.listModels()
        let listed = catalog.visibleModels.map { model in
            "\(model.model.rawValue) (\(model.contextWindow / 1000)k context; efforts \(model.supportedReasoningEfforts.map(\.rawValue).joined(separator: ", ")))"
        }
        narrator.say("models", "listModels(): \(catalog.visibleModels.count) visible of \(catalog.models.count), from the \(catalog.source.rawValue) catalog: "
            + listed.joined(separator: "; "), [
                "source": .string(catalog.source.rawValue), "visible": .array(catalog.visibleModels.map { .string($0.model.rawValue) }),
            ])
        let cached = try await runtime.listModels()
        narrator.say("models_cached", "listModels() again: served from the \(cached.source.rawValue), no request", ["source": .string(cached.source.rawValue)])
        for limit in try await runtime.rateLimits() {
            let windows = [("primary", limit.primary), ("secondary", limit.secondary)].compactMap { name, window -> String? in
                guard let window else { return nil }
                let length = window.windowDurationMinutes.map { $0 >= 1440 ? "\($0 / 1440)-day" : "\($0 / 60)-hour" } ?? "unknown"
                let reset = window.resetsAt.map { " resets in \(Int($0.timeIntervalSinceNow / 3600 + 0.5)) h" } ?? ""
                return "\(name) \(length) window \(Int(window.remainingPercent.rounded()))% left\(reset)"
            }
            narrator.say("rate_limits", "rateLimits() \(limit.limitID): " + windows.joined(separator: "; "), [
                "limit_id": .string(limit.limitID),
                "primary_remaining_percent": limit.primary.map { .number(JSONNumber(Int($0.remainingPercent.rounded()))) } ?? .null,
            ])
        }
    }

    /// The end: the SQLite store reopened as after a restart.
    func restart(_ threadID: AgentThreadID, _ server: DemoServer) async throws {
        let reopened = try SQLiteRuntimeStateStore(path: databasePath)
        let items = try await reopened.history(of: threadID, query: AgentHistoryQuery(limit: 1000)).items
        let messages = items.filter { if case .message = $0 { return true } else { return false } }.count
        let turn = try await reopened.latestTurn(of: threadID)
        let title = try await reopened.thread(threadID)?.title ?? "?"
        narrator.note("restart", "After a restart: thread \"\(title)\" has \(items.count) history items (\(messages) messages), "
            + "latest turn \(turn?.status.rawValue ?? "none"); its turns asked the model \(server.seen.turnRequests) times.", spaced: true, [
                "history_items": .number(JSONNumber(items.count)), "messages": .number(JSONNumber(messages)),
                "turn_requests": .number(JSONNumber(server.seen.turnRequests)),
            ])
    }
}
