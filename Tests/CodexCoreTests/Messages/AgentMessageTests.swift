import CodexCore
import CodexSchema
import Foundation
import Testing

@Suite struct AgentMessageTests {
    @Test(arguments: [("commentary", AgentMessagePhase.commentary), ("final_answer", .finalAnswer), ("summary_v2", .unknown("summary_v2"))])
    func phasesKeepTheirWireNames(wire: String, phase: AgentMessagePhase) throws {
        #expect(AgentMessagePhase(wireName: wire) == phase)
        #expect(phase.wireName == wire)
        #expect(try JSONDecoder().decode(AgentMessagePhase.self, from: JSONEncoder().encode(phase)) == phase)
    }

    @Test func storedMessagesWithoutAPhaseDecodeWithNil() throws {
        let thread = AgentThreadID(rawValue: "t1")
        let message = AgentMessage(id: "m1", threadID: thread, role: .assistant, text: "hi", createdAt: Date(timeIntervalSince1970: 100))
        var object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(message)) as? [String: Any] ?? [:]
        #expect(object["phase"] == nil)
        object.removeValue(forKey: "phase")
        let decoded = try JSONDecoder().decode(AgentMessage.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(decoded == message)
        #expect(decoded.phase == nil)
    }

    @Test func messagesWithPhasesImagesAndStructuredMetadataRoundTrip() throws {
        let message = AgentMessage(
            threadID: "t", role: AgentMessageRole(rawValue: "critic"), text: "x",
            images: [AgentImageAttachment(data: Data([1, 2, 3]), mimeType: "image/png", generationMetadata: .init(revisedPrompt: "p", size: "1024x1024", quality: "high"))],
            phase: .unknown("future"), structuredOutput: AgentStructuredOutputMetadata(formatName: "f", payload: ["a": 1])
        )
        #expect(try JSONDecoder().decode(AgentMessage.self, from: JSONEncoder().encode(message)) == message)
        #expect(message.role.rawValue == "critic")
    }

    @Test func identifiersEncodeAsPlainStrings() throws {
        let id = AgentThreadID(rawValue: "abc")
        #expect(String(decoding: try JSONEncoder().encode([id]), as: UTF8.self) == #"["abc"]"#)
        #expect(AgentThreadID().rawValue.count == 36)
        #expect(AgentThreadID() != AgentThreadID())
    }

    @Test func imagesAreSniffedByTheirBytes() {
        #expect(AgentImageAttachment.sniffMimeType(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0])) == "image/png")
        #expect(AgentImageAttachment.sniffMimeType(Data([0xFF, 0xD8, 0xFF, 0xE0])) == "image/jpeg")
        #expect(AgentImageAttachment.sniffMimeType(Data("GIF89a..".utf8)) == "image/gif")
        #expect(AgentImageAttachment.sniffMimeType(Data("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8)) == "image/webp")
        #expect(AgentImageAttachment.sniffMimeType(Data("\u{0}\u{0}\u{0}\u{18}ftypheic".utf8)) == "image/heic")
        #expect(AgentImageAttachment.sniffMimeType(Data("<html>".utf8)) == nil)
        #expect(AgentImageAttachment.png(Data([1, 2])).dataURL == "data:image/png;base64,AQI=")
    }

    @Test func oversizedImagesAreRefused() {
        let image = AgentImageAttachment(data: Data(count: AgentImageAttachment.maximumByteCount + 1), mimeType: "image/png")
        let error = #expect(throws: AgentRuntimeError.self) { try image.validate() }
        #expect(error?.code == .imageTooLarge)
    }

    @Test(arguments: ["running", "completed", "failed", "interrupted", "paused_v9"])
    func openStatusVocabulariesRoundTrip(name: String) throws {
        let turnStatus = AgentTurnStatus(rawValue: name)
        #expect(try JSONDecoder().decode(AgentTurnStatus.self, from: JSONEncoder().encode(turnStatus)) == turnStatus)
        let threadStatus = AgentThreadStatus(rawValue: name)
        #expect(try JSONDecoder().decode(AgentThreadStatus.self, from: JSONEncoder().encode(threadStatus)) == threadStatus)
        let event = AgentSystemEventType(rawValue: name)
        #expect(try JSONDecoder().decode(AgentSystemEventType.self, from: JSONEncoder().encode(event)) == event)
    }

    @Test func historyItemsRoundTrip() throws {
        let items: [AgentHistoryItem] = [
            .message(AgentMessage(threadID: "t", role: .user, text: "q", createdAt: Date(timeIntervalSince1970: 5))),
            .reasoning(AgentReasoningItem(itemID: "rs_1", summary: ["s"], encryptedContent: "gAAAA")),
            .toolCall(ToolInvocation(id: "call_1", toolName: "lookup", arguments: #"{"q":1}"#)),
            .toolResult(ToolResultEnvelope(invocationID: "call_1", toolName: "lookup", status: .success, content: [.text("r"), .image(URL(string: "https://example.com/a.png")!)])),
            .systemEvent(AgentSystemEvent(type: .turnInterrupted, turnID: "u", occurredAt: Date(timeIntervalSince1970: 9), errorCode: "cancelled")),
        ]
        #expect(try JSONDecoder().decode([AgentHistoryItem].self, from: JSONEncoder().encode(items)) == items)
    }
}
