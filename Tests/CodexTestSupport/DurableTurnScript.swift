import Foundation

/// The model of the durable-turn tests, played by the loopback server in the test process for every
/// host process that runs or resumes the turn: the first pass asks for three tools (a read, a charge, a
/// refund that needs approval); a request that carries the tools' outputs gets the final answer.
public enum DurableTurnScript {
    /// The tool names, in the model's call order.
    public static let toolNames = ["lookup_order", "charge_card", "refund_order"]
    /// The call IDs, in the model's call order.
    public static let callIDs = ["call_lookup", "call_charge", "call_refund"]
    /// The final answer.
    public static let answer = "All done: looked up, charged and refunded."

    /// One SSE event.
    static func event(_ type: String, _ sequence: Int, _ fields: String) -> String {
        "event: \(type)\ndata: {\"type\":\"\(type)\",\"sequence_number\":\(sequence)\(fields.isEmpty ? "" : "," + fields)}\n\n"
    }

    /// The first pass: a reasoning item, then the three calls.
    public static func toolCalls(response: String = "resp_tools") -> String {
        var events = [event("response.created", 0, #""response":{"id":"\#(response)","status":"in_progress","model":"gpt-6-astra"}"#)]
        events.append(event(
            "response.output_item.done", 1,
            #""output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Look up, charge, refund."}],"encrypted_content":"gAAAAB-durable"}"#
        ))
        let arguments = [#"{\"order\":\"A-1\"}"#, #"{\"order\":\"A-1\",\"cents\":1299}"#, #"{\"order\":\"A-1\",\"cents\":300}"#]
        for (index, name) in toolNames.enumerated() {
            events.append(event(
                "response.output_item.done", index + 2,
                #""output_index":\#(index + 1),"item":{"id":"fc_\#(index)","type":"function_call","status":"completed","call_id":"\#(callIDs[index])","name":"\#(name)","arguments":"\#(arguments[index])"}"#
            ))
        }
        events.append(event("response.completed", 9, #""response":{"id":"\#(response)","status":"completed","usage":{"input_tokens":20,"output_tokens":9,"total_tokens":29}}"#))
        return events.joined()
    }

    /// The second pass: the final answer.
    public static func finalAnswer(response: String = "resp_final") -> String {
        [
            event("response.created", 0, #""response":{"id":"\#(response)","status":"in_progress","model":"gpt-6-astra"}"#),
            event("response.output_text.delta", 1, #""item_id":"msg_final","output_index":0,"content_index":0,"delta":"\#(answer)""#),
            event(
                "response.output_item.done", 2,
                #""output_index":0,"item":{"id":"msg_final","type":"message","role":"assistant","status":"completed","phase":"final_answer","content":[{"type":"output_text","text":"\#(answer)","annotations":[]}]}"#
            ),
            event("response.completed", 3, #""response":{"id":"\#(response)","status":"completed","usage":{"input_tokens":40,"output_tokens":8,"total_tokens":48}}"#),
        ].joined()
    }

    /// Whether a request body carries the tools' outputs (the second pass).
    public static func carriesOutputs(_ body: [UInt8]) -> Bool {
        String(decoding: body, as: UTF8.self).contains("function_call_output")
    }

    /// The call IDs of the outputs a request carries, in the order it carries them.
    public static func outputOrder(_ body: [UInt8]) -> [String] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let input = object["input"] as? [[String: Any]] else { return [] }
        return input.filter { $0["type"] as? String == "function_call_output" }.compactMap { $0["call_id"] as? String }
    }

    /// A server handler: the tools first, the answer once the outputs come.
    public static func reply(_ request: RecordedRequest) -> ScriptedReply {
        .sse([carriesOutputs(request.body) ? finalAnswer() : toolCalls()])
    }
}
