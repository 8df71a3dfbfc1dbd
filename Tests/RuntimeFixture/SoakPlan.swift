import CodexCore
import CodexLoopback
import CodexTestSupport
import Foundation

/// The faults the soak injects, one per turn.
enum SoakFault: String, CaseIterable, Sendable {
    /// One model pass, a short reply.
    case none
    /// The model calls the `lookup` tool, which answers; a second pass replies.
    case tool
    /// The model calls the tool, whose executor throws; a second pass replies.
    case toolThrows
    /// The model calls the tool with arguments its schema refuses; a second pass replies.
    case toolBadArguments
    /// A 429 with `Retry-After: 0`, then the reply (the transport retries).
    case rateLimited
    /// A 500 and a 503, then the reply (the transport's third attempt).
    case serverErrors
    /// The connection drops after the response head, before any event (retried).
    case dropBeforeOutput
    /// The connection drops after some output (not retried: the turn fails).
    case dropMidStream
    /// A large streamed reply read by a consumer that pauses (buffering, back-pressure, spill).
    case slowConsumer
    /// The host interrupts the turn after the first delta of a reply that never ends.
    case interrupted
    /// The consumer of the turn's stream cancels itself after the first delta.
    case consumerCancelled
    /// The host steers after the first delta; the runtime sends one more request with the steer.
    case steered

    /// How often each fault is drawn, out of 100.
    var weight: Int {
        switch self {
        case .none: 30
        case .tool: 12
        case .toolThrows: 6
        case .toolBadArguments: 4
        case .rateLimited: 8
        case .serverErrors: 5
        case .dropBeforeOutput: 5
        case .dropMidStream: 5
        case .slowConsumer: 5
        case .interrupted: 8
        case .consumerCancelled: 6
        case .steered: 6
        }
    }

    /// Draws one fault from `faults` (all of them by default), by weight.
    static func draw(_ random: inout SplitMix64, from faults: [SoakFault] = allCases) -> SoakFault {
        var roll = Int(random.next() % UInt64(max(1, faults.reduce(0) { $0 + $1.weight })))
        for fault in faults {
            if roll < fault.weight { return fault }
            roll -= fault.weight
        }
        return .none
    }
}

/// What the host does while a turn streams.
enum SoakHostAction: Sendable {
    /// Reads every event.
    case read
    /// Sleeps this many milliseconds after each of the first events (a slow consumer).
    case pause(milliseconds: Int, events: Int)
    /// Interrupts through the runtime at the first delta.
    case interrupt
    /// Cancels its own task at the first delta.
    case cancel
    /// Steers with this text at the first delta, then lets the held reply finish.
    case steer(String)
}

/// One scripted model request: the reply the server gives and a text the request body must contain.
struct SoakExchange: Sendable {
    var reply: ScriptedReply
    var mustContain: String?
}

/// One turn of the soak: the exchanges in order, what the host does, and what must be recorded.
struct SoakTurnScript: Sendable {
    var fault: SoakFault
    var question: String
    var exchanges: [SoakExchange]
    var action: SoakHostAction
    var status: AgentTurnStatus
    /// The final assistant text of a completed turn.
    var finalText: String?
    /// How many tool calls (each with exactly one result) the turn records.
    var toolCalls: Int

    /// The script of turn `index` under `fault`.
    static func make(_ fault: SoakFault, index: Int) -> SoakTurnScript {
        let question = "Question \(index)"
        let answer = "Answer \(index)"
        let done = SoakEvents.reply(index, answer)
        var script = SoakTurnScript(
            fault: fault, question: question, exchanges: [.init(reply: done, mustContain: question)], action: .read,
            status: .completed, finalText: answer, toolCalls: 0
        )
        switch fault {
        case .none:
            break
        case .tool, .toolThrows, .toolBadArguments:
            let arguments = switch fault {
            case .tool: #"{"n":\#(index)}"#
            case .toolThrows: #"{"n":-\#(index)}"#
            default: #"{"n":"\#(index)"}"#
            }
            let output = fault == .tool ? "value \(index)" : "call_\(index)"
            script.exchanges = [
                .init(reply: SoakEvents.toolCall(index, arguments: arguments), mustContain: question),
                .init(reply: done, mustContain: output),
            ]
            script.toolCalls = 1
        case .rateLimited:
            let limited = ScriptedReply.json(
                #"{"error":{"type":"rate_limit_exceeded","message":"Slow down."}}"#, status: 429, headers: [.init(name: "Retry-After", value: "0")]
            )
            script.exchanges.insert(.init(reply: limited, mustContain: question), at: 0)
        case .serverErrors:
            let failing = [500, 503].map { ScriptedReply.json(#"{"error":{"type":"server_error","message":"Try again."}}"#, status: $0) }
            script.exchanges.insert(contentsOf: failing.map { .init(reply: $0, mustContain: question) }, at: 0)
        case .dropBeforeOutput:
            let dropped = ScriptedReply(
                headers: [.init(name: "Content-Type", value: "text/event-stream")], parts: [.closeAbruptly], framing: .chunked
            )
            script.exchanges.insert(.init(reply: dropped, mustContain: question), at: 0)
        case .dropMidStream:
            script.exchanges = [.init(reply: SoakEvents.partial(index, then: [.closeAbruptly]), mustContain: question)]
            script.status = .failed
            script.finalText = nil
        case .slowConsumer:
            script.exchanges = [.init(reply: SoakEvents.long(index, answer), mustContain: question)]
            script.action = .pause(milliseconds: 20, events: 3)
        case .interrupted, .consumerCancelled:
            script.exchanges = [.init(reply: SoakEvents.partial(index, then: [.hold]), mustContain: question)]
            script.action = fault == .interrupted ? .interrupt : .cancel
            script.status = .interrupted
            script.finalText = nil
        case .steered:
            let steer = "Steer \(index)"
            let early = SoakEvents.partial(index, then: [.hold] + SoakEvents.finish(index, "Early \(index)"))
            script.exchanges = [.init(reply: early, mustContain: question), .init(reply: SoakEvents.reply(index, answer), mustContain: steer)]
            script.action = .steer(steer)
        }
        return script
    }
}

/// Responses streams for the soak's replies.
enum SoakEvents {
    private static let headers = [HTTPHeaderField(name: "Content-Type", value: "text/event-stream")]

    private static func event(_ type: String, _ sequence: Int, _ fields: String) -> String {
        "event: \(type)\ndata: {\"type\":\"\(type)\",\"sequence_number\":\(sequence),\(fields)}\n\n"
    }

    private static func created(_ index: Int) -> String {
        event("response.created", 0, #""response":{"id":"resp_\#(index)","status":"in_progress"}"#)
    }

    private static func delta(_ index: Int, _ sequence: Int, _ text: String) -> String {
        event("response.output_text.delta", sequence, #""item_id":"msg_\#(index)","output_index":0,"content_index":0,"delta":"\#(text)""#)
    }

    private static func messageDone(_ index: Int, _ sequence: Int, _ text: String) -> String {
        event(
            "response.output_item.done", sequence,
            #""output_index":0,"item":{"id":"msg_\#(index)","type":"message","role":"assistant","status":"completed","phase":"final_answer","content":[{"type":"output_text","text":"\#(text)","annotations":[]}]}"#
        )
    }

    private static func completed(_ index: Int, _ sequence: Int) -> String {
        event(
            "response.completed", sequence,
            #""response":{"id":"resp_\#(index)","status":"completed","usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}}"#
        )
    }

    /// The parts that finish a reply started by `partial`: the message and `response.completed`.
    static func finish(_ index: Int, _ text: String) -> [ScriptedReply.Part] {
        [.bytes(Array((messageDone(index, 2, text) + completed(index, 3)).utf8))]
    }

    /// A whole one-message reply.
    static func reply(_ index: Int, _ text: String) -> ScriptedReply {
        .sse([created(index), delta(index, 1, text), messageDone(index, 2, text), completed(index, 3)])
    }

    /// `response.created` and one delta, then `rest` (a hold, a dropped connection, or the finish).
    static func partial(_ index: Int, then rest: [ScriptedReply.Part]) -> ScriptedReply {
        ScriptedReply(headers: headers, parts: [.bytes(Array((created(index) + delta(index, 1, "Par")).utf8))] + rest, framing: .chunked)
    }

    /// A reply of 256 deltas of 2 KiB each (512 KiB of events), then the message.
    static func long(_ index: Int, _ text: String) -> ScriptedReply {
        let chunk = String(repeating: "w", count: 2048)
        let deltas = (0..<256).map { delta(index, 1 + $0, chunk) }
        return .sse([created(index)] + deltas + [messageDone(index, 257, text), completed(index, 258)])
    }

    /// A reply that calls the `lookup` tool once with `arguments` (JSON text).
    static func toolCall(_ index: Int, arguments: String) -> ScriptedReply {
        let escaped = arguments.replacingOccurrences(of: "\"", with: "\\\"")
        let call = event(
            "response.output_item.done", 1,
            #""output_index":0,"item":{"id":"fc_\#(index)","type":"function_call","status":"completed","call_id":"call_\#(index)","name":"lookup","arguments":"\#(escaped)"}"#
        )
        return .sse([created(index), call, completed(index, 2)])
    }
}
