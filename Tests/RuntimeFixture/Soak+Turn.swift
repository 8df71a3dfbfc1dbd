import CodexCore
import CodexLoopback
import CodexRuntime
import CodexStorageSQLite
import Foundation

/// What the host saw of one turn.
struct SoakObservation: Sendable {
    var turnID: AgentTurnID?
    /// The terminal event: `completed`, `failed` or `interrupted`.
    var terminal: String?
    var finalText: String?
    var failureCode: String?
    /// How the stream ended: `finished`, `cancelled`, or the error code it threw.
    var ending = "finished"
    var hostErrors: [String] = []
}

extension Soak {
    /// Runs one turn as a host would, doing the script's host action at the first delta.
    static func play(_ script: SoakTurnScript, in threadID: AgentThreadID, _ runtime: AgentRuntime, _ server: LoopbackHTTPServer) async -> SoakObservation {
        let consumer = Task { () -> SoakObservation in
            var seen = SoakObservation()
            var acted = false
            var paused = 0
            do {
                let stream = try await runtime.stream(Request(text: script.question), in: threadID)
                for try await event in stream {
                    switch event {
                    case .turnStarted(let turn):
                        seen.turnID = turn.id
                    case .assistantMessageDelta where !acted:
                        acted = true
                        await act(script.action, threadID, seen.turnID, runtime, server, &seen)
                    case .turnCompleted(let summary):
                        seen.terminal = "completed"
                        seen.finalText = summary.finalMessage?.text
                    case .turnFailed(let error):
                        seen.terminal = "failed"
                        seen.failureCode = error.code.rawValue
                    case .turnInterrupted:
                        seen.terminal = "interrupted"
                    default:
                        break
                    }
                    if case .pause(let milliseconds, let events) = script.action, paused < events {
                        paused += 1
                        try await Task.sleep(for: .milliseconds(milliseconds))
                    }
                }
            } catch is CancellationError {
                seen.ending = "cancelled"
            } catch let error as AgentRuntimeError {
                seen.ending = error.code.rawValue
            } catch {
                seen.ending = "unexpected_error"
            }
            return seen
        }
        return await consumer.value
    }

    private static func act(
        _ action: SoakHostAction, _ threadID: AgentThreadID, _ turnID: AgentTurnID?, _ runtime: AgentRuntime, _ server: LoopbackHTTPServer,
        _ seen: inout SoakObservation
    ) async {
        do {
            switch action {
            case .read, .pause:
                break
            case .interrupt:
                try await runtime.interrupt(in: threadID, expectedTurnID: turnID)
            case .cancel:
                withUnsafeCurrentTask { $0?.cancel() }
            case .steer(let text):
                try await runtime.steer(text, in: threadID, expectedTurnID: turnID)
                server.releaseHeld()
            }
        } catch let error as AgentRuntimeError {
            seen.hostErrors.append(error.code.rawValue)
        } catch {
            seen.hostErrors.append("unexpected_error")
        }
    }

    /// Waits until the thread has no active turn and the runtime's writes are on disk.
    static func settle(_ threadID: AgentThreadID, _ runtime: AgentRuntime, _ report: inout SoakReport, index: Int) async {
        var polls = 0
        while runtime.activeTurnID(in: threadID) != nil {
            polls += 1
            if polls > 30_000 {
                report.violation("turn \(index): still active after 30 s")
                break
            }
            try? await Task.sleep(for: .milliseconds(1))
        }
        await runtime.flushPendingWrites()
    }

    /// What the host saw against the script, and the store's turn record against both.
    static func check(
        _ script: SoakTurnScript, _ seen: SoakObservation, index: Int, in threadID: AgentThreadID, _ store: SQLiteRuntimeStateStore,
        _ report: inout SoakReport
    ) async {
        let label = "turn \(index) (\(script.fault))"
        let expectedEnding = script.status == .interrupted ? "cancelled" : (script.status == .failed ? seen.failureCode ?? "?" : "finished")
        report.outcomes[script.status.rawValue, default: 0] += 1
        // A consumer that cancelled itself reads no more events: it never sees the terminal one.
        let expectedTerminal: String? = if case .cancel = script.action { nil } else { script.status.rawValue }
        if seen.terminal != expectedTerminal { report.violation("\(label): terminal event \(seen.terminal ?? "none"), expected \(expectedTerminal ?? "none")") }
        if seen.finalText != script.finalText { report.violation("\(label): final text \(seen.finalText ?? "none")") }
        if seen.ending != expectedEnding { report.violation("\(label): stream ended \(seen.ending)") }
        if !seen.hostErrors.isEmpty { report.violation("\(label): host calls failed: \(seen.hostErrors)") }
        if let code = seen.failureCode { report.failureCodes[code, default: 0] += 1 }
        do {
            guard let turn = try await store.latestTurn(of: threadID), turn.id == seen.turnID else {
                report.violation("\(label): the store's latest turn is not this turn")
                return
            }
            if turn.status != script.status { report.violation("\(label): recorded \(turn.status.rawValue)") }
            if turn.finishedAt == nil { report.violation("\(label): recorded without an end") }
            if (turn.failure?.code.rawValue) != seen.failureCode { report.violation("\(label): recorded failure \(turn.failure?.code.rawValue ?? "none")") }
            guard let thread = try await store.thread(threadID), thread.status == .idle else {
                report.violation("\(label): thread not idle after the turn")
                return
            }
        } catch {
            report.violation("\(label): reading the store failed")
        }
    }

    /// The thread's whole history against its turns' scripts: each question once, each turn's terminal
    /// event once with the scripted kind, each completed turn's answer, each tool call with exactly one
    /// result, each steer once.
    static func checkHistory(
        of threadID: AgentThreadID, _ turns: [(script: SoakTurnScript, turnID: AgentTurnID?)], _ runtime: AgentRuntime, _ report: inout SoakReport
    ) async {
        var items: [AgentHistoryItem] = []
        var cursor: String?
        do {
            repeat {
                let page = try await runtime.history(of: threadID, query: AgentHistoryQuery(limit: 256, cursor: cursor))
                items += page.items
                cursor = page.nextCursor
            } while cursor != nil
        } catch {
            report.violation("thread \(threadID.rawValue): reading history failed")
            return
        }
        report.historyItems += items.count
        var userTexts: [String: Int] = [:]
        var assistantTexts: [String: Int] = [:]
        var terminals: [AgentTurnID: [String]] = [:]
        var calls: [String: Int] = [:]
        var results: [String: Int] = [:]
        for item in items {
            switch item {
            case .message(let message) where message.role == .user: userTexts[message.text, default: 0] += 1
            case .message(let message) where message.role == .assistant: assistantTexts[message.text, default: 0] += 1
            case .toolCall(let invocation): calls[invocation.id.rawValue, default: 0] += 1
            case .toolResult(let result): results[result.invocationID.rawValue, default: 0] += 1
            case .systemEvent(let event) where event.type != .turnStarted:
                terminals[event.turnID, default: []].append(event.type.rawValue)
            default: break
            }
        }
        for (script, turnID) in turns {
            let label = "thread \(threadID.rawValue) \(script.question) (\(script.fault))"
            if userTexts[script.question] != 1 { report.violation("\(label): question recorded \(userTexts[script.question] ?? 0) times") }
            if case .steer(let text) = script.action, userTexts[text] != 1 { report.violation("\(label): steer recorded \(userTexts[text] ?? 0) times") }
            if let text = script.finalText, (assistantTexts[text] ?? 0) < 1 { report.violation("\(label): answer not recorded") }
            let expected = "turn_\(script.status.rawValue)"
            if let turnID, terminals[turnID] != [expected] { report.violation("\(label): terminal events \(terminals[turnID] ?? [])") }
        }
        let expectedCalls = turns.reduce(0) { $0 + $1.script.toolCalls }
        if calls.count != expectedCalls || calls.values.contains(where: { $0 != 1 }) { report.violation("thread \(threadID.rawValue): tool calls \(calls)") }
        if results != calls { report.violation("thread \(threadID.rawValue): tool results \(results) for calls \(calls)") }
    }
}
