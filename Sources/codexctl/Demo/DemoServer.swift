import CodexLoopback
import Foundation
import Synchronization

/// The demo's model service on loopback: serves ``DemoScript`` through real HTTP, SSE framing and
/// connection handling, and counts what it was asked.
final class DemoServer: Sendable {
    /// What the server has seen.
    struct Counts {
        var turnRequests = 0
        var recoveryRequests = 0
        var catalogRequests = 0
        /// The durable step's model requests (from its worker processes).
        var durableRequests = 0
        /// The MCP step's model requests.
        var mcpRequests = 0
        var steerSent = false
        var total: Int { turnRequests + recoveryRequests + catalogRequests + durableRequests + mcpRequests }
    }

    /// The counts, shared with the server's handler.
    private final class Tally: Sendable {
        let counts = Mutex(Counts())
    }

    let server: LoopbackHTTPServer
    private let tally: Tally
    /// The base URL of the Codex backend it imitates.
    var baseURL: URL { server.baseURL.appendingPathComponent("backend-api/codex") }

    init() throws {
        let tally = Tally()
        self.tally = tally
        server = try LoopbackHTTPServer(keepsRequests: false) { request in
            Self.reply(to: request, tally: tally)
        }
    }

    /// A snapshot of the counts.
    var seen: Counts { tally.counts.withLock { $0 } }

    /// Lets the held response go on.
    func releaseHeld() { server.releaseHeld() }

    func shutdown() { server.shutdown() }

    private static func reply(to request: RecordedRequest, tally: Tally) -> ScriptedReply {
        if request.path.hasSuffix("/models") {
            tally.counts.withLock { $0.catalogRequests += 1 }
            return .json(DemoScript.catalog, headers: [.init(name: "ETag", value: "\"demo-1\"")])
        }
        let body = String(decoding: request.body, as: UTF8.self)
        let (number, route) = tally.counts.withLock { counts -> (Int, Route) in
            if body.contains(DemoScript.mcpPrompt) {
                counts.mcpRequests += 1
                return (counts.total, .mcp(body.contains(DemoScript.parcelStatus) ? 2 : 1))
            }
            if body.contains(DemoScript.durablePrompt) {
                counts.durableRequests += 1
                return (counts.total, .durable(body.contains(DemoScript.receiptOutput) ? 3 : body.contains(DemoScript.chargeOutput) ? 2 : 1))
            }
            if body.contains(DemoScript.digestPrompt) {
                counts.recoveryRequests += 1
                return (counts.total, counts.recoveryRequests == 1 ? .cutAttempt : .completeAttempt)
            }
            counts.turnRequests += 1
            let index = min(counts.turnRequests - 1, DemoScript.turnResponses.count - 1)
            if index == DemoScript.turnResponses.count - 1, body.contains(DemoScript.steer) { counts.steerSent = true }
            return (counts.total, index == DemoScript.turnResponses.count - 2 ? .held : .turn(index))
        }
        let headers = [HTTPHeaderField(name: "Content-Type", value: "text/event-stream")]
            + DemoScript.limitHeaders(request: number).map { HTTPHeaderField(name: $0.0, value: $0.1) }
        switch route {
        case .cutAttempt:
            return ScriptedReply(headers: headers, parts: [.bytes(DemoScript.cutAttempt), .closeAbruptly], framing: .chunked)
        case .completeAttempt:
            return ScriptedReply(headers: headers, parts: chunks(DemoScript.completeAttempt), framing: .chunked)
        case .held:
            return ScriptedReply(headers: headers, parts: [.bytes(DemoScript.held.head), .hold, .bytes(DemoScript.held.tail)], framing: .chunked)
        case .turn(let index):
            return ScriptedReply(headers: headers, parts: chunks(DemoScript.turnResponses[index]), framing: .chunked)
        case .durable(let pass):
            return ScriptedReply(headers: headers, parts: chunks(DemoScript.durableResponse(pass: pass)), framing: .chunked)
        case .mcp(let pass):
            return ScriptedReply(headers: headers, parts: chunks(DemoScript.mcpResponse(pass: pass)), framing: .chunked)
        }
    }

    /// Which scripted reply a request gets.
    private enum Route {
        /// The recovery job's first attempt: cut mid-stream with a reset.
        case cutAttempt
        /// The recovery job's replacement, complete.
        case completeAttempt
        /// The steering step's response, held after its first delta until the demo has steered.
        case held
        /// The n-th response of the demo's turns.
        case turn(Int)
        /// The durable turn's response to its n-th model request (told apart by the tool results it carries).
        case durable(Int)
        /// The MCP step's response to its n-th model request.
        case mcp(Int)
    }

    /// The body in 512-byte writes, as a real server streams it.
    private static func chunks(_ body: [UInt8]) -> [ScriptedReply.Part] {
        stride(from: 0, to: body.count, by: 512).map { .bytes(Array(body[$0..<min(body.count, $0 + 512)])) }
    }
}
