import CodexSchema
import Foundation

/// The scripted model side of `codexctl demo`: Responses SSE streams, one per model request, in the
/// order the demo's turns make them.
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

    /// A response whose message streams `text` in pieces of `piece` characters.
    static func message(_ id: String, _ text: String, piece: Int, usage: (Int, Int)) -> [UInt8] {
        var sequence = 0
        var out = event("response.created", &sequence, ["response": response(id, status: "in_progress")])
        let item = "msg_\(id)"
        out += event("response.output_item.added", &sequence, [
            "output_index": 0, "item": ["id": .string(item), "type": "message", "role": "assistant", "status": "in_progress", "content": [], "phase": "final_answer"],
        ])
        var rest = Substring(text)
        while !rest.isEmpty {
            let delta = String(rest.prefix(piece))
            rest = rest.dropFirst(piece)
            out += event("response.output_text.delta", &sequence, ["item_id": .string(item), "output_index": 0, "content_index": 0, "delta": .string(delta)])
        }
        out += event("response.output_item.done", &sequence, [
            "output_index": 0,
            "item": [
                "id": .string(item), "type": "message", "role": "assistant", "status": "completed", "phase": "final_answer",
                "content": [["type": "output_text", "text": .string(text), "annotations": []]],
            ],
        ])
        out += event("response.completed", &sequence, ["response": response(id, status: "completed", usage: usage)])
        return Array(out.utf8)
    }

    /// ``message(_:_:piece:usage:)`` cut after its first text delta: the demo holds the rest of the
    /// response until a steer has been accepted.
    static func heldMessage(_ id: String, _ text: String, piece: Int, usage: (Int, Int)) -> (head: [UInt8], tail: [UInt8]) {
        let events = String(decoding: message(id, text, piece: piece, usage: usage), as: UTF8.self)
            .components(separatedBy: "\n\n").filter { !$0.isEmpty }.map { $0 + "\n\n" }
        return (Array(events.prefix(3).joined().utf8), Array(events.dropFirst(3).joined().utf8))
    }

    /// The steer of the demo's fifth step.
    static let steer = "List the most recent order first."
    /// The response the demo holds open while it steers (the seventh request's).
    static let held = heldMessage("resp_7", "Both orders are on their way.", piece: 10, usage: (760, 9))

    /// A response that calls one function.
    static func functionCall(_ id: String, callID: String, name: String, arguments: String, usage: (Int, Int)) -> [UInt8] {
        functionCalls(id, [(callID, name, arguments)], usage: usage)
    }

    /// A response that calls several functions (one batch the runtime may run in parallel).
    static func functionCalls(_ id: String, _ calls: [(callID: String, name: String, arguments: String)], usage: (Int, Int)) -> [UInt8] {
        var sequence = 0
        var out = event("response.created", &sequence, ["response": response(id, status: "in_progress")])
        out += event("response.output_item.done", &sequence, [
            "output_index": 0,
            "item": ["id": .string("rs_\(id)"), "type": "reasoning", "summary": [["type": "summary_text", "text": "Look the order up."]], "encrypted_content": "demo-encrypted-reasoning"],
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

    /// Every model response of the demo, in order.
    static var responses: [[UInt8]] {
        let draft = #"{"subject":"Your order A-1 is on its way","reply":"Sorry for the wait: A-1 shipped with DHL and arrives Tuesday.","urgency":"medium"}"#
        let framed = "Here is a reply you can send.\n<codexkit_structured_output>\n\(draft)\n</codexkit_structured_output>\nWant a shorter one?"
        return [
            functionCall("resp_1", callID: "call_1", name: "lookup_order", arguments: #"{"order_id":"A-1"}"#, usage: (412, 31)),
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
    }
}
