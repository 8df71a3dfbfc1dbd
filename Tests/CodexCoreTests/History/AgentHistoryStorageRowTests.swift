import CodexCore
import CodexSchema
import Foundation
import Testing

@Suite struct AgentHistoryStorageRowTests {
    static let thread = AgentThreadID(rawValue: "thread-1")
    static let call = ToolInvocation(id: ToolInvocationID(rawValue: "call_1"), toolName: "lookup", arguments: #"{"q":"ü \"x\""}"#,
                                     threadID: thread, turnID: AgentTurnID(rawValue: "turn-1"))

    static let items: [AgentHistoryItem] = [
        .message(AgentMessage(id: "m1", threadID: thread, role: .user, text: "Hi 👋\nthere", createdAt: Date(timeIntervalSinceReferenceDate: 812_345_678.123_456_7))),
        .message(AgentMessage(
            id: "m2", threadID: thread, role: .assistant, text: "{}", images: [.png(Data([0x89, 0x50, 0x4E, 0x47]))], phase: .unknown("summary_v2"),
            structuredOutput: AgentStructuredOutputMetadata(formatName: "verdict", payload: ["ok": true]), createdAt: Date(timeIntervalSinceReferenceDate: 0.1)
        )),
        .message(AgentMessage(id: "m3", threadID: thread, role: .assistant, text: "done", phase: .finalAnswer, createdAt: Date(timeIntervalSinceReferenceDate: -5))),
        .toolCall(call),
        .toolCall(ToolInvocation(id: ToolInvocationID(rawValue: "call_2"), toolName: "t", arguments: "")),
        .toolResult(ToolResultEnvelope(
            invocationID: call.id, toolName: "lookup", status: .failure,
            content: [.text("a"), .image(URL(string: "https://example.com/x.png")!), .text("")], session: ToolSessionDescriptor(id: "s", title: "T")
        )),
        .toolResult(.denied(call)),
        .reasoning(AgentReasoningItem(itemID: "rs", summary: ["one", "two"], encryptedContent: "gAAAA")),
        .reasoning(AgentReasoningItem(itemID: "rs2")),
        .systemEvent(AgentSystemEvent(type: .turnFailed, turnID: "turn-1", occurredAt: Date(timeIntervalSinceReferenceDate: 1e9 + 0.5), errorCode: "quota_exceeded")),
        .systemEvent(AgentSystemEvent(type: AgentSystemEventType(rawValue: "future_event"), turnID: "turn-2", occurredAt: Date(timeIntervalSinceReferenceDate: 3))),
        .systemEvent(AgentSystemEvent(
            type: .turnCompleted, turnID: "turn-3", occurredAt: Date(timeIntervalSinceReferenceDate: 4),
            memoryApplication: AgentMemoryApplication(
                namespace: "shop", memoryIDs: ["mem-1", "mem-2"], placement: .beforeSkills, instructionsSHA256: String(repeating: "a", count: 64)
            )
        )),
        .systemEvent(AgentSystemEvent(
            type: .turnCompleted, turnID: "turn-4", occurredAt: Date(timeIntervalSinceReferenceDate: 5),
            memoryApplication: AgentMemoryApplication(
                namespace: "shop", memoryIDs: [], placement: nil, instructionsSHA256: AgentMemoryApplication.digest(ofInstructions: nil), notAppliedReason: .noMatches
            )
        )),
        .contextCompaction(AgentContextCompaction(
            id: "c1", createdAt: Date(timeIntervalSinceReferenceDate: 7.25), strategy: .remote, replacedItemCount: 9, coversItemsBefore: 9,
            providerItems: [["type": "compaction", "encrypted_content": "enc"], ["type": "message", "role": "user", "content": []]],
            estimatedTokensBefore: 4_000, estimatedTokensAfter: 12
        )),
        .contextCompaction(AgentContextCompaction(
            id: "c2", createdAt: Date(timeIntervalSinceReferenceDate: 8), strategy: .local, replacedItemCount: 3, coversItemsBefore: 12,
            summary: "So far: ü", estimatedTokensBefore: 100, estimatedTokensAfter: 20
        )),
    ]

    @Test(arguments: items.indices)
    func everyKindRoundTripsExactly(index: Int) throws {
        let item = Self.items[index]
        let row = item.storageRow()
        #expect(try AgentHistoryItem(storageRow: row) == item)
        #expect(item.storageRow() == row)
        #expect(row.first == 0x01)
    }

    @Test func anEventWithAMemoryApplicationHasAKindOfItsOwnAndOneWithoutKeepsTheEarlierForm() throws {
        let plain = AgentSystemEvent(type: .turnCompleted, turnID: "t1", occurredAt: Date(timeIntervalSinceReferenceDate: 1.5))
        var applied = plain
        applied.memoryApplication = AgentMemoryApplication(namespace: "n", memoryIDs: ["m"], placement: .afterSkills, instructionsSHA256: "ab")
        let old = AgentHistoryItem.systemEvent(plain).storageRow()
        let new = AgentHistoryItem.systemEvent(applied).storageRow()
        // Kind 5 stays as it was; kind 7 is the same fields plus the application's JSON as a byte field.
        #expect(old[1] == 5 && new[1] == 7)
        #expect(Array(new.dropFirst(2).prefix(old.count - 2)) == Array(old.dropFirst(2)))
        let json = Array(#"{"instructionsSHA256":"ab","memoryIDs":["m"],"namespace":"n","placement":"after_skills"}"#.utf8)
        #expect(Array(new.dropFirst(old.count)) == [UInt8(json.count + 1)] + json)
        #expect(try AgentHistoryItem(storageRow: old) == .systemEvent(plain))
        #expect(try AgentHistoryItem(storageRow: new) == .systemEvent(applied))
        // A missing or damaged application is a typed error, never a silent drop.
        var missing = old
        missing[1] = 7
        #expect(throws: AgentRuntimeError.self) { try AgentHistoryItem(storageRow: missing + [0]) }
        #expect(throws: AgentRuntimeError.self) { try AgentHistoryItem(storageRow: missing + [3, UInt8(ascii: "{"), UInt8(ascii: "}")]) }
    }

    @Test func theBinaryFormIsPinnedByteForByte() throws {
        let event = AgentHistoryItem.systemEvent(AgentSystemEvent(type: .turnFailed, turnID: "t1", occurredAt: Date(timeIntervalSinceReferenceDate: 1.5), errorCode: "x"))
        // Marker, kind 5, "turn_failed", "t1", 1.5 as little-endian IEEE 754 bits, optional "x" (length + 1).
        let expected: [UInt8] = [0x01, 0x05, 11] + Array("turn_failed".utf8) + [2] + Array("t1".utf8)
            + [0, 0, 0, 0, 0, 0, 0xF8, 0x3F] + [2, UInt8(ascii: "x")]
        #expect(event.storageRow() == expected)
        let call = AgentHistoryItem.toolCall(ToolInvocation(id: ToolInvocationID(rawValue: String(repeating: "c", count: 200)), toolName: "t", arguments: ""))
        let row = call.storageRow()
        // A 200-byte string's length takes two varint bytes (0xC8 0x01); absent optionals are 0.
        #expect(Array(row.prefix(4)) == [0x01, 0x02, 0xC8, 0x01])
        #expect(Array(row.suffix(5)) == [1, UInt8(ascii: "t"), 0, 0, 0])
        #expect(try AgentHistoryItem(storageRow: row) == call)
    }

    @Test func rowsReadInPlaceShareAKnownThreadAndReadAnyOther() throws {
        for item in [Self.items[0], Self.items[3]] {
            let row = item.storageRow()
            #expect(try row.withUnsafeBufferPointer { try AgentHistoryItem(storageRow: $0, thread: Self.thread) } == item)
            #expect(try row.withUnsafeBufferPointer { try AgentHistoryItem(storageRow: $0, thread: AgentThreadID(rawValue: "thread-2")) } == item)
        }
    }

    @Test func compactJSONRowsFromEarlierVersionsAreRead() throws {
        let row = #"{"at":-5,"id":"m3","k":"message","phase":"final_answer","role":"assistant","text":"done","thread":"thread-1"}"#
        #expect(try AgentHistoryItem(storageRow: Array(row.utf8)) == Self.items[2])
        let call = #"{"args":"","id":"call_2","k":"tool_call","tool":"t"}"#
        #expect(try AgentHistoryItem(storageRow: Array(call.utf8)) == Self.items[4])
    }

    @Test func badRowsAreTypedErrors() {
        for row in ["", "[]", #"{"k":"nope"}"#, #"{"k":"message","id":"m"}"#, #"{"k":"tool_result","id":"c","tool":"t","status":"odd","content":[]}"#] {
            let error = #expect(throws: AgentRuntimeError.self) { try AgentHistoryItem(storageRow: Array(row.utf8)) }
            #expect(error?.code == .storageFailure)
        }
    }

    @Test func damagedBinaryRowsAreTypedErrorsNeverCrashes() {
        var damaged: [[UInt8]] = []
        for item in Self.items {
            let row = item.storageRow()
            for length in 1..<row.count { damaged.append(Array(row.prefix(length))) }  // every truncation
            damaged.append(row + [0])  // trailing bytes
        }
        let message = Self.items[0].storageRow()
        var badText = message
        badText[4] = 0xFF  // inside the message ID: not UTF-8
        damaged.append(badText)
        damaged.append([0x01, 0x09])  // an unknown kind
        damaged.append([0x01, 0x02, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F])  // a length past any row
        var status = AgentHistoryItem.toolResult(.denied(Self.call)).storageRow()
        status[status.count - 1] = 7  // the session flag (the last byte) is neither 0 nor 1
        damaged.append(status)
        for row in damaged {
            let error = #expect(throws: AgentRuntimeError.self) { try AgentHistoryItem(storageRow: row) }
            #expect(error?.code == .storageFailure)
        }
    }
}
