import CodexCore
import CodexSchema
import Foundation

/// What `send` prints: reply text on stdout, progress on stderr (when shown), or one JSON object per
/// event on stdout with `--json`. Errors print their typed code and a one-line hint, never a credential.
final class SendOutput: @unchecked Sendable {
    // @unchecked: used from the one task that consumes the turn's events.
    private let json: Bool
    private let showsProgress: Bool
    /// A `--schema` turn: the reply's raw text is not shown; its validated value is printed once.
    private let structured: Bool
    private var endsWithNewline = true
    private var summaryOpen = false
    private var summary: AgentTurnSummary?

    init(json: Bool, showsProgress: Bool, structured: Bool = false) {
        self.json = json
        self.showsProgress = showsProgress
        self.structured = structured
    }

    func show(_ event: AgentEvent) {
        switch event {
        case .assistantMessageDelta(_, _, let text):
            guard !structured else { return }
            if json { return emit(["type": "text_delta", "text": .string(text)]) }
            closeSummary()
            Console.out(text)
            endsWithNewline = text.hasSuffix("\n")
        case .progress(let progress):
            showProgress(progress)
        case .rateLimitsUpdated(let limits):
            if json { return emit(["type": "rate_limits", "limits": .array(limits.map(Self.limit))]) }
            guard showsProgress else { return }
            for limit in limits {
                guard let window = limit.primary else { continue }
                let resets = window.resetsAt.map { " (resets \(ISO8601DateFormatter().string(from: $0)))" } ?? ""
                progressLine("limit \(limit.limitID): \(Int(window.remainingPercent.rounded()))% left\(resets)")
            }
        case .toolCallStarted(let call):
            if json { return emit(["type": "tool_started", "call_id": .string(call.id.rawValue), "tool": .string(call.toolName)]) }
            progressLine("tool \(call.toolName) started")
        case .toolCallFinished(let result):
            if json { return emit(["type": "tool_finished", "call_id": .string(result.invocationID.rawValue), "status": .string(result.status.rawValue)]) }
            progressLine("tool \(result.toolName) \(result.status.rawValue)")
        case .turnStarted(let turn):
            if json { emit(["type": "turn_started", "thread_id": .string(turn.threadID.rawValue), "turn_id": .string(turn.id.rawValue)]) }
        case .messageCommitted(let message):
            guard structured, let value = message.structuredOutput?.payload else { return }
            if json { return emit(["type": "structured_output", "value": value]) }
            closeSummary()
            Console.jsonLine(value.canonicalString())
        case .turnCompleted(let completed):
            summary = completed
        default:
            break
        }
    }

    /// A progress amount without a needless fraction (`3`, `2.5`).
    private static func amount(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    private func showProgress(_ progress: AgentTurnProgress) {
        switch progress {
        case .reasoningSummaryDelta(_, _, let delta):
            if json { return emit(["type": "reasoning_summary_delta", "text": .string(delta)]) }
            guard showsProgress else { return }
            if !summaryOpen {
                ConsoleOutput.standardError("thinking: ".utf8)
                summaryOpen = true
            }
            ConsoleOutput.standardError(Console.display(delta).utf8)
        case .webSearch(_, let status, let query):
            if json { return emit(["type": "web_search", "status": .string(status), "query": query.map(JSONValue.string) ?? .null]) }
            progressLine("web search \(status)\(query.map { ": \($0)" } ?? "")")
        case .messageStarted(_, let phase):
            if json { emit(["type": "message_started", "phase": phase.map { .string($0.wireName) } ?? .null]) }
        case .messageCompleted(_, let phase):
            if json { emit(["type": "message_completed", "phase": phase.map { .string($0.wireName) } ?? .null]) }
        case .resumed(let pass, let attempt, let reused):
            if json {
                return emit(["type": "turn_resumed", "pass": .number(JSONNumber(pass)), "attempt": .number(JSONNumber(attempt)), "reused_results": .number(JSONNumber(reused))])
            }
            progressLine("resumed at model pass \(pass), attempt \(attempt) (\(reused) finished call\(reused == 1 ? "" : "s") reused)")
        case .toolProgress(let invocation, let progress, let total, let message):
            if json {
                return emit([
                    "type": "tool_progress", "call_id": .string(invocation.rawValue), "progress": JSONNumber(progress).map(JSONValue.number) ?? .null,
                    "total": total.flatMap(JSONNumber.init).map(JSONValue.number) ?? .null, "message": message.map(JSONValue.string) ?? .null,
                ])
            }
            let amount = total.map { "\(Self.amount(progress))/\(Self.amount($0))" } ?? Self.amount(progress)
            progressLine("tool progress \(amount)\(message.map { ": \(Console.display($0))" } ?? "")")
        }
    }

    func finished(threadID: AgentThreadID, persistent: Bool) {
        if json {
            var object: [String: JSONValue] = ["type": "turn_completed", "thread_id": .string(threadID.rawValue)]
            if let summary {
                object["turn_id"] = .string(summary.turnID.rawValue)
                if let usage = summary.usage {
                    object["usage"] = [
                        "input_tokens": usage.inputTokens.map { .number(JSONNumber($0)) } ?? .null,
                        "output_tokens": usage.outputTokens.map { .number(JSONNumber($0)) } ?? .null,
                    ]
                }
            }
            return emit(JSONValue.object(JSONObject(object.sorted { $0.key < $1.key })))
        }
        closeSummary()
        if !endsWithNewline { Console.out("\n") }
        if persistent { progressLine("thread \(threadID.rawValue)") }
    }

    func interrupted() {
        if json { return emit(["type": "turn_interrupted"]) }
        closeSummary()
        if !endsWithNewline { Console.out("\n") }
        // A turn stopped by its own output failing: `main` prints that failure's line instead.
        if ConsoleOutput.failure == nil { Console.error("interrupted\n") }
    }

    func fail(_ error: any Error) {
        let failure = CLIFailure(error)
        let hint = (error as? AgentRuntimeError).flatMap(Self.hint)
        if json {
            // The hint the text form prints, as a field: a program reads what a person would.
            var event: JSONObject = ["type": "error", "error": failure.json["error"] ?? .null]
            if let hint { event["hint"] = .string(hint) }
            return emit(.object(event))
        }
        closeSummary()
        if !endsWithNewline { Console.out("\n") }
        failure.report(json: false)
        if let hint { Console.error("hint: \(hint)\n") }
    }

    /// One line telling the user what to do next, for the failures that have an answer.
    static func hint(_ failure: AgentRuntimeError) -> String? {
        switch failure.code {
        case .notSignedIn, .unauthorized, .refreshFailed, .accountMismatch:
            return "sign in: set OPENAI_API_KEY, run `codex login`, or use `codexctl auth`"
        case .quotaExceeded:
            return "the account's quota or credits are used up; check its plan or billing"
        case .rateLimited:
            return failure.http?.retryAfter.map { "rate limited: try again in \(Int($0.rounded(.up))) s" } ?? "rate limited: try again later"
        case .threadNotFound:
            return "list the threads with `codexctl threads list` (add --db <path> for another store)"
        case .invalidEndpoint:
            return "--endpoint must be https (or http to a loopback address)"
        default:
            return nil
        }
    }

    private static func limit(_ snapshot: AgentRateLimitSnapshot) -> JSONValue {
        func window(_ window: AgentRateLimitWindow?) -> JSONValue {
            guard let window else { return .null }
            return [
                "remaining_percent": JSONNumber(window.remainingPercent).map(JSONValue.number) ?? .null,
                "resets_at": window.resetsAt.map { .string(ISO8601DateFormatter().string(from: $0)) } ?? .null,
            ]
        }
        return ["limit_id": .string(snapshot.limitID), "primary": window(snapshot.primary), "secondary": window(snapshot.secondary)]
    }

    private func progressLine(_ text: String) {
        guard showsProgress, !json else { return }
        closeSummary()
        Console.error(text + "\n")
    }

    private func closeSummary() {
        guard summaryOpen else { return }
        ConsoleOutput.standardError("\n".utf8)
        summaryOpen = false
    }

    private func emit(_ object: JSONValue) {
        Console.exactLine(object.canonicalString())
    }
}
