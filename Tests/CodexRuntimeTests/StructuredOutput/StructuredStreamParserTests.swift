import CodexCore
@testable import CodexRuntime
import CodexSchema
import CodexTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(6 * Sanitizer.slowdown))) struct StructuredStreamParserTests {
    /// The open marker.
    static let open = StructuredStreamParser.openMarker
    /// The close marker.
    static let close = StructuredStreamParser.closeMarker
    /// The reply-draft schema of the tests.
    static let schema: JSONSchema = .object(
        properties: ["subject": .string(), "reply": .string(), "urgency": .string(enum: ["low", "medium", "high"])],
        required: ["subject", "reply", "urgency"],
        additionalProperties: false
    )
    /// A valid payload with escapes and non-ASCII text.
    static let payload = #"{"subject": "Parcel 4471 delayed", "reply": "Sorry \"about\" the wait — it ships today 📦.", "urgency": "high"}"#
    /// Prose, the framed payload and trailing prose.
    static let message = "Some prose for the user, café ☕.\n\(open)\n\(payload)\n\(close)\nThanks — trailing prose.\n"
    /// The visible text of ``message``: the line break after the close marker is dropped.
    static let expectedVisible = "Some prose for the user, café ☕.\nThanks — trailing prose.\n"

    /// The decoded payload.
    struct Reply: Decodable, Equatable { let subject: String; let reply: String; let urgency: String }

    /// A parser for ``schema``.
    static func makeParser(maximumPayloadBytes: Int = 4 * 1024 * 1024) throws -> StructuredStreamParser {
        StructuredStreamParser(formatName: "reply_draft", validator: try JSONSchemaValidator(schema: schema), maximumPayloadBytes: maximumPayloadBytes)
    }

    /// Feeds the deltas and finishes; returns the parser and every output.
    static func run(_ deltas: [String], parser: StructuredStreamParser? = nil) throws -> (StructuredStreamParser, [StructuredStreamOutput]) {
        var parser = try parser ?? makeParser()
        var outputs: [StructuredStreamOutput] = []
        for delta in deltas { outputs += try parser.feed(delta) }
        outputs += try parser.finish()
        return (parser, outputs)
    }

    /// The error thrown while streaming `deltas`, or `nil`.
    static func failure(_ deltas: [String], maximumPayloadBytes: Int = 4 * 1024 * 1024) throws -> AgentRuntimeError? {
        var parser = try makeParser(maximumPayloadBytes: maximumPayloadBytes)
        do {
            for delta in deltas { _ = try parser.feed(delta) }
            _ = try parser.finish()
            return nil
        } catch {
            return error
        }
    }

    /// The `.text` outputs.
    static func texts(_ outputs: [StructuredStreamOutput]) -> [String] {
        outputs.compactMap { if case .text(let text) = $0 { text } else { nil } }
    }

    /// The `.partial` outputs.
    static func partials(_ outputs: [StructuredStreamOutput]) -> [(JSONValue, [UInt8])] {
        outputs.compactMap { if case .partial(let value, let bytes) = $0 { (value, bytes) } else { nil } }
    }

    /// The `.committed` outputs.
    static func commits(_ outputs: [StructuredStreamOutput]) -> [StructuredStreamCommit] {
        outputs.compactMap { if case .committed(let commit) = $0 { commit } else { nil } }
    }

    /// Checks one complete run of ``message``.
    static func expectCanonicalRun(_ deltas: [String], _ comment: Comment) throws {
        let (parser, outputs) = try run(deltas)
        let texts = texts(outputs)
        #expect(texts.joined() == expectedVisible, comment)
        #expect(parser.visibleText == expectedVisible, comment)
        #expect(!texts.contains { $0.isEmpty || $0.contains("<") || $0.contains(">") || $0.contains("codexkit") }, comment)
        let commits = commits(outputs)
        #expect(commits.count == 1, comment)
        #expect(commits.first?.bytes == Array(payload.utf8), comment)
        #expect(commits.first?.value == (try JSONValue(parsing: payload)), comment)
        #expect(parser.committed == commits.first, comment)
    }

    @Test func oneDeltaYieldsProseCommitAndTrailingProseInOrder() throws {
        let (parser, outputs) = try Self.run([Self.message])
        let commit = StructuredStreamCommit(value: try JSONValue(parsing: Self.payload), bytes: Array(Self.payload.utf8))
        #expect(outputs == [.text("Some prose for the user, café ☕.\n"), .committed(commit), .text("Thanks — trailing prose.\n")])
        let decoded = try JSONDecoder().decode(Reply.self, from: Data(try #require(parser.committed).bytes))
        #expect(decoded == Reply(subject: "Parcel 4471 delayed", reply: "Sorry \"about\" the wait — it ships today 📦.", urgency: "high"))
    }

    @Test func everySplitPointGivesTheSameProseAndCommit() throws {
        let characters = Array(Self.message)
        for split in 0...characters.count {
            try Self.expectCanonicalRun([String(characters[..<split]), String(characters[split...])], "split at \(split)")
        }
        try Self.expectCanonicalRun(characters.map { String($0) }, "one character at a time")
        for size in [2, 3, 5, 7, 13, 29] {
            let chunks = stride(from: 0, to: characters.count, by: size).map { String(characters[$0..<min($0 + size, characters.count)]) }
            try Self.expectCanonicalRun(chunks, "chunks of \(size)")
        }
    }

    @Test func onlyPartialsTheCheckAcceptsAreEmittedAndTheCommitDecodesFromItsDocument() throws {
        // A turn passes its decode as the check: a snapshot missing a required member is not emitted.
        let parser = StructuredStreamParser(
            formatName: "reply_draft", validator: try JSONSchemaValidator(schema: Self.schema),
            acceptsPartial: { document in (try? JSONValueDecoder().decode(Reply.self, from: document)) != nil }
        )
        let (finished, outputs) = try Self.run(["\(Self.open)\n{", #""subject": "s", "#, #""reply": "r", "urgency": "low"}"#, "\n\(Self.close)"], parser: parser)
        #expect(Self.partials(outputs).map(\.0) == [["subject": "s", "reply": "r", "urgency": "low"]])
        let commit = try #require(finished.committed)
        #expect(try JSONValueDecoder().decode(Reply.self, from: commit.document) == Reply(subject: "s", reply: "r", urgency: "low"))
        #expect(commit.document.value == commit.value)
        // Without a check, every snapshot that validates is emitted.
        let (_, all) = try Self.run(["\(Self.open)\n{", #""subject": "s", "#, #""reply": "r", "urgency": "low"}"#, "\n\(Self.close)"])
        #expect(Self.partials(all).map(\.0) == [[:], ["subject": "s"], ["subject": "s", "reply": "r", "urgency": "low"]])
    }

    @Test func proseIsReleasedAsSoonAsItCannotBeAMarker() throws {
        var parser = try Self.makeParser()
        #expect(try parser.feed("Hello <co") == [.text("Hello ")])
        #expect(try parser.feed("dexkit_structured_output>") == [])
        #expect(try parser.feed("\n{") == [.partial([:], bytes: Array("{}".utf8))])
        let rest = #""subject": "s", "reply": "r", "urgency": "low"}"#
        #expect(try parser.feed(rest) == [.partial(["subject": "s", "reply": "r", "urgency": "low"], bytes: Array("{\(rest)".utf8))])
        let commit = try parser.feed("\n</codexkit_structured_output>  \n\n  after")
        #expect(Self.commits(commit).map(\.value) == [["subject": "s", "reply": "r", "urgency": "low"]])
        #expect(Self.texts(commit) == ["after"])
        #expect(try parser.finish() == [])
        #expect(parser.visibleText == "Hello after")
    }

    @Test func markerLookalikesComeOutAsTextUnchanged() throws {
        let text = "Use <codex or <codexkit_structured_outputs> or </codexkit_structured_output> here: << <codexkit_structured"
        let (whole, wholeOutputs) = try Self.run([text])
        #expect(Self.texts(wholeOutputs) == ["Use <codex or <codexkit_structured_outputs> or </codexkit_structured_output> here: << ", "<codexkit_structured"])
        #expect(whole.visibleText == text)
        #expect(whole.committed == nil)
        let (single, singleOutputs) = try Self.run(text.map { String($0) })
        #expect(single.visibleText == text)
        #expect(Self.texts(singleOutputs).joined() == text)
        var parser = try Self.makeParser()
        #expect(try parser.feed("a <codex") == [.text("a ")])
        #expect(try parser.feed("kit_x") == [.text("<codexkit_x")])
    }

    @Test func partialSnapshotsGrowMonotonicallyAndNeverHoldADanglingKey() throws {
        let longReply = String(repeating: "We are sorry for the delay. ", count: 12)
        let payload = #"{"subject": "Delayed parcel", "reply": "\#(longReply)", "urgency": "medium"}"#
        let full = try JSONValue(parsing: payload)
        let validator = try JSONSchemaValidator(schema: Self.schema)
        let keyOrder = ["subject", "reply", "urgency"]
        for size in [1, 3, 16, 64] {
            let text = "\(Self.open)\n\(payload)\n\(Self.close)"
            let characters = Array(text)
            let chunks = stride(from: 0, to: characters.count, by: size).map { String(characters[$0..<min($0 + size, characters.count)]) }
            let (parser, outputs) = try Self.run(chunks)
            let partials = Self.partials(outputs)
            var previousKeys = -1
            var previousSize = 0
            for (value, bytes) in partials {
                #expect(try JSONValue(parsing: bytes) == value)
                #expect(try validator.validate(value, mode: .partial).isValid)
                let object = try #require(value.objectValue)
                #expect(object.keys == Array(keyOrder.prefix(object.count)), "keys in order, none without a value")
                for key in object.keys { #expect(object[key] == full[key], "\(key) is complete") }
                #expect(object.count >= previousKeys && bytes.count > previousSize, "monotonic at chunk size \(size)")
                previousKeys = object.count
                previousSize = bytes.count
            }
            #expect(parser.committed?.value == full)
            #expect(parser.committed?.bytes == Array(payload.utf8))
            if size == 1 {
                #expect(partials.map(\.0) == [[:], ["subject": "Delayed parcel"], ["subject": "Delayed parcel", "reply": .string(longReply)]])
            }
        }
    }

    @Test func invalidPartialsAreSkippedAndTheInvalidFinalPayloadThrows() throws {
        let payload = #"{"subject": "SECRET-SUBJECT", "extra": "LEAKY-VALUE", "reply": "r", "urgency": "low"}"#
        var parser = try Self.makeParser()
        var outputs: [StructuredStreamOutput] = []
        for character in "\(Self.open)\(payload)" { outputs += try parser.feed(String(character)) }
        #expect(Self.partials(outputs).map(\.0) == [[:], ["subject": "SECRET-SUBJECT"]])
        #expect(throws: AgentRuntimeError.self) { try parser.feed(Self.close) }
    }

    @Test(arguments: [
        (#"{"subject": "SECRET-SUBJECT", "reply": "SECRET-REPLY", "urgency": "extreme"}"#, "enum at /properties/urgency/enum"),
        (#"{"subject": "SECRET-SUBJECT", "reply": "SECRET-REPLY", "urgency": "low", "leakyKey": "SECRET-VALUE"}"#, "additionalProperties at /additionalProperties"),
        (#"{"subject": "SECRET-SUBJECT", "reply": "SECRET-REPLY"}"#, "required at /required"),
        (#"{"subject": "SECRET-SUBJECT", "reply": SECRET-REPLY}"#, "is not valid JSON (json_unexpected_character)"),
        (#"{"subject": "SECRET-SUBJECT"} trailing SECRET"#, "is not valid JSON (json_trailing_data)"),
        ("   ", "frame holds no JSON value"),
    ])
    func anInvalidFinalPayloadThrowsWithoutEchoingIt(payload: String, expectedFragment: String) throws {
        let message = "prose\n\(Self.open)\n\(payload)\n\(Self.close)\nafter"
        for deltas in [[message], message.map { String($0) }] {
            let error = try #require(try Self.failure(deltas))
            #expect(error.code == .structuredOutputInvalid)
            #expect(error.message.contains(expectedFragment), "\(error.message)")
            for secret in ["SECRET", "leakyKey", "extreme", payload.trimmingCharacters(in: .whitespaces)] where !secret.isEmpty {
                #expect(!error.message.contains(secret) && !error.description.contains(secret))
            }
        }
    }

    @Test func thePayloadCapCountsTheBytesBetweenTheMarkers() throws {
        let message = "\(Self.open)\n\(Self.payload)\n\(Self.close)"
        let stored = Self.payload.utf8.count + 1  // leading whitespace is skipped, the trailing line break counts
        var parser = try Self.makeParser(maximumPayloadBytes: stored)
        #expect(Self.commits(try parser.feed(message)).count == 1)
        for deltas in [[message], message.map { String($0) }] {
            let error = try #require(try Self.failure(deltas, maximumPayloadBytes: stored - 1))
            #expect(error.code == .structuredOutputTooLarge)
            #expect(error.message == "the structured output 'reply_draft' exceeded \(stored - 1) bytes")
        }
    }

    @Test func anUnterminatedFrameOrASecondFrameThrowsAndSpendsTheParser() throws {
        var parser = try Self.makeParser()
        _ = try parser.feed("prose \(Self.open)\n{\"subject\": \"x\"")
        #expect(throws: AgentRuntimeError(code: .structuredOutputInvalid, message: "the structured output 'reply_draft' frame was not closed before the message ended")) {
            try parser.finish()
        }
        #expect(throws: AgentRuntimeError(code: .structuredOutputInvalid, message: "the structured output stream already finished or failed")) {
            try parser.feed("more")
        }
        let second = try #require(try Self.failure([Self.message + "again <codexkit_structured_", "output>{}"]))
        #expect(second == AgentRuntimeError(code: .structuredOutputInvalid, message: "the message opened a second structured output frame; only one is accepted"))
        let (noFrame, outputs) = try Self.run(["just prose <"])
        #expect(outputs == [.text("just prose "), .text("<")])
        #expect(noFrame.committed == nil)
    }

    @Test func theScannerCutsAfterCompleteValuesOnly() {
        let cases: [(String, String)] = [
            (#"{"a": [1, {"b": tr"#, #"{"a": [1, {}]}"#),
            (#"{"subject": "x", "reply""#, #"{"subject": "x"}"#),
            (#"{"subject": "x", "reply": "hal"#, #"{"subject": "x"}"#),
            (#"{"n": 12"#, "{}"),
            (#"{"n": 12,"#, #"{"n": 12}"#),
            ("[true, nul", "[true]"),
            (#"{"s": "a\"b}", "t": "c\\""#, #"{"s": "a\"b}", "t": "c\\"}"#),
            (#"{"a": {"b": [[]"#, #"{"a": {"b": [[]]}}"#),
            (#""str"#, ""),
            ("", ""),
        ]
        for (prefix, expected) in cases {
            let bytes = Array(prefix.utf8)
            var whole = PartialJSONScanner()
            whole.scan(bytes[...])
            #expect(String(decoding: bytes[..<whole.safeCut] + whole.closers, as: UTF8.self) == expected, "\(prefix)")
            var stepwise = PartialJSONScanner()
            for index in bytes.indices { stepwise.scan(bytes[index...index]) }
            #expect(stepwise.safeCut == whole.safeCut && stepwise.closers == whole.closers && stepwise.scannedCount == bytes.count)
        }
    }

    @Test func parseWorkStaysLinearForALargePayload() async throws {
        // CPU-bound: run on its own thread so the cooperative pool stays free for other tests.
        let (payload, committed, parsedBytes, partialCount, visible) = try await runOffCooperativePool {
            let item = JSONSchema.object(properties: ["id": .integer, "name": .string(), "tags": .array(items: .string())])
            let validator = try JSONSchemaValidator(schema: JSONSchema.object(properties: ["items": .array(items: item)]))
            let items = (0..<20_000).map { #"{"id": \#($0), "name": "item-\#($0)", "tags": ["alpha", "beta"]}"# }
            let payload = Array(#"{"items": [\#(items.joined(separator: ", "))]}"#.utf8)
            let message = Array("prose\n\(Self.open)\n".utf8) + payload + Array("\n\(Self.close)\n".utf8)
            var parser = StructuredStreamParser(formatName: "items", validator: validator)
            var partialCount = 0
            for start in stride(from: 0, to: message.count, by: 1024) {
                let outputs = try parser.feed(String(decoding: message[start..<min(start + 1024, message.count)], as: UTF8.self))
                partialCount += Self.partials(outputs).count
            }
            _ = try parser.finish()
            return (payload, parser.committed?.bytes, parser.parsedBytes, partialCount, parser.visibleText)
        }
        #expect(payload.count > 1_000_000)
        #expect(committed == payload)
        #expect(parsedBytes <= 4 * payload.count, "parsed \(parsedBytes) bytes for a \(payload.count)-byte payload")
        #expect(partialCount >= 8 && partialCount <= 12, "geometric schedule: \(partialCount) snapshots")
        #expect(visible == "prose\n")
    }

    @Test func frameInstructionsStateTheContract() throws {
        let schema: JSONValue = ["type": "object", "properties": ["a": ["type": "string"]]]
        let text = StructuredStreamParser.frameInstructions(formatName: "reply_draft", schema: schema)
        #expect(text == """
            Response contract
            Write any prose for the user first. Then return the final result exactly once, serialized as `reply_draft` JSON matching this JSON schema: {"type":"object","properties":{"a":{"type":"string"}}}
            Put the JSON between these two markers, each marker on its own line:
            <codexkit_structured_output>
            { ...the JSON value... }
            </codexkit_structured_output>
            Write nothing else between the markers and do not open the markers a second time.
            """)
    }
}
