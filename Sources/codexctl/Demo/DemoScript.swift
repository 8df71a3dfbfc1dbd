import CodexSchema
import Foundation

/// The scripted model side of `codexctl demo`: Responses SSE streams, one per model request of the
/// demo's turns in the order they make them, the structured-recovery job's two attempts, and the
/// account's model catalog.
enum DemoScript {
    /// One SSE event with its `type` and `sequence_number`.
    private static func event(_ type: String, _ sequence: inout Int, _ fields: JSONObject) -> String {
        var object: JSONObject = ["type": .string(type), "sequence_number": .number(JSONNumber(sequence))]
        for member in fields { object[member.key] = member.value }
        sequence += 1
        return "event: \(type)\ndata: \(JSONValue.object(object).compactString())\n\n"
    }

    private static func response(_ id: String, status: String, usage: (Int, Int)? = nil) -> JSONValue {
        var object: JSONObject = ["id": .string(id), "status": .string(status), "model": "gpt-6-astra"]
        if let (input, output) = usage {
            object["usage"] = [
                "input_tokens": .number(JSONNumber(input)), "output_tokens": .number(JSONNumber(output)),
                "total_tokens": .number(JSONNumber(input + output)),
            ]
        }
        return .object(object)
    }

    /// The events of a response whose message streams `text` in pieces of `piece` characters.
    static func messageEvents(_ id: String, _ text: String, piece: Int, usage: (Int, Int)) -> [String] {
        var sequence = 0
        var out = [event("response.created", &sequence, ["response": response(id, status: "in_progress")])]
        let item = "msg_\(id)"
        out.append(event("response.output_item.added", &sequence, [
            "output_index": 0, "item": ["id": .string(item), "type": "message", "role": "assistant", "status": "in_progress", "content": [], "phase": "final_answer"],
        ]))
        var rest = Substring(text)
        while !rest.isEmpty {
            let delta = String(rest.prefix(piece))
            rest = rest.dropFirst(piece)
            out.append(event("response.output_text.delta", &sequence, ["item_id": .string(item), "output_index": 0, "content_index": 0, "delta": .string(delta)]))
        }
        out.append(event("response.output_item.done", &sequence, [
            "output_index": 0,
            "item": [
                "id": .string(item), "type": "message", "role": "assistant", "status": "completed", "phase": "final_answer",
                "content": [["type": "output_text", "text": .string(text), "annotations": []]],
            ],
        ]))
        out.append(event("response.completed", &sequence, ["response": response(id, status: "completed", usage: usage)]))
        return out
    }

    /// ``messageEvents(_:_:piece:usage:)`` as one body.
    static func message(_ id: String, _ text: String, piece: Int, usage: (Int, Int)) -> [UInt8] {
        Array(messageEvents(id, text, piece: piece, usage: usage).joined().utf8)
    }

    /// A response that thinks aloud (reasoning-summary deltas), then calls functions (one batch the
    /// runtime may run in parallel).
    static func functionCalls(
        _ id: String, thinking: [String] = [], _ calls: [(callID: String, name: String, arguments: String)], usage: (Int, Int)
    ) -> [UInt8] {
        var sequence = 0
        var out = event("response.created", &sequence, ["response": response(id, status: "in_progress")])
        let reasoning = "rs_\(id)"
        out += event("response.output_item.added", &sequence, [
            "output_index": 0, "item": ["id": .string(reasoning), "type": "reasoning", "summary": []],
        ])
        for delta in thinking {
            out += event("response.reasoning_summary_text.delta", &sequence, [
                "item_id": .string(reasoning), "output_index": 0, "summary_index": 0, "delta": .string(delta),
            ])
        }
        out += event("response.output_item.done", &sequence, [
            "output_index": 0,
            "item": [
                "id": .string(reasoning), "type": "reasoning", "summary": [["type": "summary_text", "text": .string(thinking.joined())]],
                "encrypted_content": "demo-encrypted-reasoning",
            ],
        ])
        for (offset, call) in calls.enumerated() {
            out += event("response.output_item.done", &sequence, [
                "output_index": .number(JSONNumber(offset + 1)),
                "item": [
                    "id": .string("fc_\(id)_\(offset)"), "type": "function_call", "status": "completed", "call_id": .string(call.callID),
                    "name": .string(call.name), "arguments": .string(call.arguments),
                ],
            ])
        }
        out += event("response.completed", &sequence, ["response": response(id, status: "completed", usage: usage)])
        return Array(out.utf8)
    }

    /// What the first turn's model thinks before it calls the tool (reasoning-summary deltas).
    static let thinking = ["The customer asks about ", "order A-1; ", "look it up before answering."]

    /// The steer of the steering step.
    static let steer = "List the most recent order first."

    /// The response held open after its first delta while the demo steers (the seventh request's).
    static let held: (head: [UInt8], tail: [UInt8]) = {
        let events = messageEvents("resp_7", "Both orders are on their way.", piece: 10, usage: (760, 9))
        return (Array(events.prefix(3).joined().utf8), Array(events.dropFirst(3).joined().utf8))
    }()

    /// The typed one-shot reply.
    static let draft = #"{"subject":"Your order A-1 is on its way","reply":"Sorry for the wait: A-1 shipped with DHL and arrives Tuesday.","urgency":"medium"}"#

    /// Every model response of the demo's turns, in order.
    static let turnResponses: [[UInt8]] = {
        let framed = "Here is a reply you can send.\n<codexkit_structured_output>\n\(draft)\n</codexkit_structured_output>\nWant a shorter one?"
        return [
            functionCalls("resp_1", thinking: thinking, [("call_1", "lookup_order", #"{"order_id":"A-1"}"#)], usage: (412, 31)),
            message("resp_2", "Order A-1 shipped with DHL and arrives on Tuesday.", piece: 6, usage: (470, 14)),
            message("resp_3", draft, piece: 24, usage: (520, 40)),
            message("resp_4", framed, piece: 12, usage: (560, 61)),
            functionCalls("resp_5", [
                ("call_2", "lookup_order", #"{"order_id":"B-2"}"#), ("call_3", "estimate_delivery", #"{"order_id":"B-2","postcode":"0150"}"#),
            ], usage: (610, 48)),
            message("resp_6", "Order B-2 is packed and should arrive Thursday.", piece: 8, usage: (700, 12)),
            held.head + held.tail,
            message("resp_8", "Most recent first: B-2 arrives Thursday; A-1 arrived Tuesday.", piece: 12, usage: (800, 17)),
        ]
    }()

    // MARK: - The structured-recovery job

    /// The recovery job's prompt; the server recognises its requests by it.
    static let digestPrompt = "Write the shipping incident digest for 2026-12-01."

    /// The digest the job's second attempt returns.
    static let digest = #"{"headline":"Two late parcels, both now moving","incidents":2,"severity":"low"}"#

    /// The job's first attempt: the stream starts, then the connection is cut before the response ends.
    static let cutAttempt: [UInt8] = Array(messageEvents("resp_digest_1", digest, piece: 20, usage: (300, 30)).prefix(4).joined().utf8)

    /// The job's replacement attempt, complete.
    static let completeAttempt = message("resp_digest_2", digest, piece: 20, usage: (300, 30))

    // MARK: - The durable turn

    /// The durable turn's prompt; the server recognises its requests by it.
    static let durablePrompt = "Charge order A-2 (12.99 EUR) and email the customer a receipt."

    /// What the charge tool returns; a request that carries it is the turn's second model request.
    static let chargeOutput = "charged 12.99 EUR for order A-2"

    /// What the receipt tool returns; a request that carries it is the turn's third.
    static let receiptOutput = "receipt emailed for order A-2"

    /// The durable turn's reply.
    static let durableReply = "Order A-2 is paid and the customer has the receipt."

    /// The response to the durable turn's `pass`-th model request (1: charge the card; 2: email the
    /// receipt; 3: the reply).
    static func durableResponse(pass: Int) -> [UInt8] {
        switch pass {
        case 1: functionCalls("resp_durable_1", [("call_charge", "charge_card", #"{"order_id":"A-2","amount_cents":1299}"#)], usage: (300, 20))
        case 2: functionCalls("resp_durable_2", [("call_receipt", "email_receipt", #"{"order_id":"A-2"}"#)], usage: (340, 16))
        default: message("resp_durable_3", durableReply, piece: 12, usage: (380, 12))
        }
    }

    // MARK: - The MCP step

    /// The MCP step's prompt; the server recognises its requests by it.
    static let mcpPrompt = "Where is parcel A-3?"

    /// What the demo's MCP server answers for parcel A-3; a request that carries it is the step's second.
    static let parcelStatus = "Parcel A-3: out for delivery in Oslo, due today by 18:00."

    /// The MCP step's reply.
    static let mcpReply = "Parcel A-3 is out for delivery and should arrive today by 18:00."

    /// The response to the MCP step's `pass`-th model request (1: call the MCP tool; 2: the reply).
    static func mcpResponse(pass: Int) -> [UInt8] {
        switch pass {
        case 1: functionCalls("resp_mcp_1", [("call_parcel", "parcels__track_parcel", #"{"parcel_id":"A-3"}"#)], usage: (260, 18))
        default: message("resp_mcp_2", mcpReply, piece: 12, usage: (310, 14))
        }
    }

    // MARK: - The account

    /// The account's model catalog (`GET {base}/models`), in the Codex backend's shape.
    static let catalog = #"""
    {"models":[
     {"slug":"gpt-6-astra","display_name":"GPT-6 Astra","default_reasoning_level":"low","priority":1,"context_window":272000,
      "supported_reasoning_levels":[{"effort":"low"},{"effort":"medium"},{"effort":"high"},{"effort":"xhigh"}],
      "input_modalities":["text","image"],"visibility":"list","supports_parallel_tool_calls":true},
     {"slug":"gpt-6-luna","display_name":"GPT-6 Luna","default_reasoning_level":"low","priority":2,"context_window":128000,
      "supported_reasoning_levels":[{"effort":"low"},{"effort":"medium"}],"input_modalities":["text"],"visibility":"list"},
     {"slug":"gpt-6-review","display_name":"Review","priority":3,"context_window":64000,"visibility":"hide"}
    ]}
    """#

    /// The limit headers every `/responses` reply carries: the five-hour window fills a little with each
    /// request.
    static func limitHeaders(request number: Int) -> [(String, String)] {
        [
            ("x-codex-primary-used-percent", String(6 + 2 * number)), ("x-codex-primary-window-minutes", "300"),
            ("x-codex-primary-reset-after-seconds", "7200"),
            ("x-codex-secondary-used-percent", "9"), ("x-codex-secondary-window-minutes", "10080"),
            ("x-codex-secondary-reset-after-seconds", "432000"),
        ]
    }
}
