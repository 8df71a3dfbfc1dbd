import CodexCore
import CodexSchema
import CodexTransport
import Foundation
import Testing

@Suite struct ResponsesRequestTests {
    @Test func encodesEveryFieldCanonically() throws {
        var request = ResponsesRequest(model: "gpt-6-astra", instructions: "Be brief.")
        request.input = [
            .developer(AgentDeveloperMessage(kind: .context, text: #"{"a":1}"#)),
            .user("Describe", images: [.png(Data([1, 2, 3]))], imageDetail: "high"),
            .message(role: .assistant, content: [.outputText("Looking")], phase: .commentary),
            .reasoning(summary: ["thinking"], encryptedContent: "gAAAA"),
            .functionCall(callID: "call_1", name: "lookup", arguments: #"{"q":"x"}"#),
            .toolResult(ToolResultEnvelope(invocationID: "call_1", toolName: "lookup", status: .success, content: [.text("a"), .text(""), .text("b")])),
        ]
        request.tools = [ResponsesTool(ToolDefinition(name: "lookup", description: "Find", inputSchema: ["type": "object"])), .imageGeneration(outputFormat: "png")]
        request.toolChoice = .none
        request.parallelToolCalls = true
        request.reasoning = .init(effort: .ultra, summary: "auto")
        request.include = ["reasoning.encrypted_content"]
        request.textFormat = .init(AgentStructuredOutputFormat(name: "reply", rawSchema: ["type": "object"]))
        request.promptCacheKey = "thread-1"
        let expected = #"{"include":["reasoning.encrypted_content"],"input":[{"content":[{"text":"{\"a\":1}","type":"input_text"}],"role":"developer","type":"message"},{"content":[{"text":"Describe","type":"input_text"},{"detail":"high","image_url":"data:image/png;base64,AQID","type":"input_image"}],"role":"user","type":"message"},{"content":[{"text":"Looking","type":"output_text"}],"phase":"commentary","role":"assistant","type":"message"},{"encrypted_content":"gAAAA","summary":[{"text":"thinking","type":"summary_text"}],"type":"reasoning"},{"arguments":"{\"q\":\"x\"}","call_id":"call_1","name":"lookup","type":"function_call"},{"call_id":"call_1","output":"a\n\nb","type":"function_call_output"}],"instructions":"Be brief.","model":"gpt-6-astra","parallel_tool_calls":true,"prompt_cache_key":"thread-1","reasoning":{"effort":"max","summary":"auto"},"store":false,"stream":true,"text":{"format":{"name":"reply","schema":{"type":"object"},"strict":true,"type":"json_schema"}},"tool_choice":"none","tools":[{"description":"Find","name":"lookup","parameters":{"properties":{},"type":"object"},"strict":false,"type":"function"},{"output_format":"png","type":"image_generation"}]}"#
        #expect(String(decoding: request.body(), as: UTF8.self) == expected)
        #expect(SHA256.hexDigest(of: request.body()) == SHA256.hexDigest(of: Array(expected.utf8)))
    }

    @Test func defaultsAreStatelessStreamingWithoutTools() {
        let body = String(decoding: ResponsesRequest(model: "m", instructions: "").body(), as: UTF8.self)
        #expect(body == #"{"include":[],"input":[],"model":"m","parallel_tool_calls":false,"store":false,"stream":true,"tool_choice":"auto","tools":[]}"#)
    }

    @Test func functionToolChoiceAndContentOutputs() {
        #expect(ResponsesToolChoice.function(name: "f").jsonValue == ["type": "function", "name": "f"])
        let output = ResponsesInputItem.functionCallOutput(callID: "c", output: .content([.inputText("t"), .inputImage(url: "https://x/y.png", detail: nil)]))
        #expect(output.jsonValue == [
            "type": "function_call_output", "call_id": "c",
            "output": [["type": "input_text", "text": "t"], ["type": "input_image", "image_url": "https://x/y.png"]],
        ])
    }
}
