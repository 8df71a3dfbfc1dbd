import CodexCore
import CodexRuntime
import CodexSchema
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Provider progress and account limits as a host sees them: from a scripted stream through the real
/// transport, the built-in backend and the runtime.
@Suite struct ProgressEventTests {
    private typealias H = BackendHarness

    private func describe(_ progress: AgentTurnProgress) -> String {
        switch progress {
        case .messageStarted(let id, let phase): return "messageStarted \(id) \(phase?.wireName ?? "nil")"
        case .messageCompleted(let id, let phase): return "messageCompleted \(id) \(phase?.wireName ?? "nil")"
        case .reasoningSummaryDelta(let id, let index, let delta): return "summary \(id)#\(index) \(delta)"
        case .webSearch(let id, let status, let query): return "webSearch \(id) \(status) \(query ?? "-")"
        case .resumed(let pass, let attempt, let reused): return "resumed \(pass) \(attempt) \(reused)"
        case .toolProgress(let id, let progress, let total, let message): return "toolProgress \(id.rawValue) \(progress) \(total.map { "\($0)" } ?? "-") \(message ?? "-")"
        }
    }

    @Test func aStreamYieldsTheExactProgressAndLimitsSequence() async throws {
        var script = ResponsesScript()
        script.created("resp_1")
        script.add("response.reasoning_summary_text.delta", #""item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Checking sources""#)
        script.messageAdded("msg_1", index: 1, phase: "commentary")
        script.messageDone("msg_1", "Let me look.", index: 1, phase: "commentary")
        script.add("response.web_search_call.searching", #""item_id":"ws_1","output_index":2"#)
        script.add("response.output_item.done", #""output_index":2,"item":{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"recent results"}}"#)
        script.add("codex.rate_limits", #""rate_limits":{"primary":{"used_percent":42,"window_minutes":300}},"metered_limit_name":"codex""#)
        script.messageAdded("msg_2", index: 3, phase: "final_answer")
        script.messageDone("msg_2", "Recent results.", index: 3, phase: "final_answer")
        script.completed("resp_1")
        let server = try LoopbackHTTPServer(replies: [.sse(script.events, headers: [
            .init(name: "x-codex-primary-used-percent", value: "40"), .init(name: "x-codex-primary-window-minutes", value: "300"),
        ])])
        defer { server.shutdown() }
        let store = InMemoryRuntimeStateStore()
        let runtime = try AgentRuntime(configuration: .init(backend: try H.backend(server), stateStore: store))
        let thread = try await runtime.createThread()
        var seen: [String] = []
        for try await event in try await runtime.stream(Request(text: "What is new?"), in: thread.id) {
            switch event {
            case .progress(let progress): seen.append(describe(progress))
            case .rateLimitsUpdated(let limits): seen.append("limits " + limits.map { "\($0.limitID) \($0.primary?.usedPercent ?? -1)" }.joined(separator: ", "))
            default: break
            }
        }
        #expect(seen == [
            "limits codex 40.0",
            "summary rs_1#0 Checking sources",
            "messageStarted msg_1 commentary",
            "messageCompleted msg_1 commentary",
            "webSearch ws_1 searching -",
            "webSearch ws_1 completed recent results",
            "limits codex 42.0",
            "messageStarted msg_2 final_answer",
            "messageCompleted msg_2 final_answer",
        ])
        let messages = try await history(store, thread.id).compactMap { item -> AgentMessage? in
            if case .message(let message) = item, message.role == .assistant { return message }
            return nil
        }
        #expect(messages.map(\.phase) == [.commentary, .finalAnswer])
    }
}
