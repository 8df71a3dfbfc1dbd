import CodexCore
@testable import CodexRuntime
import CodexSchema
import CodexTestSupport
import Foundation
import Testing


/// Random model output rich in marker fragments and JSON tokens, fed in random splits: the parser never
/// crashes or hangs, fails only with its typed codes, gives the same result for every split, never shows
/// an open marker as text, and keeps its parse work linear.
@Suite(.timeLimit(.minutes(6 * Sanitizer.slowdown))) struct StructuredStreamParserPropertyTests {
    static let pieces = [
        StructuredStreamParser.openMarker, StructuredStreamParser.closeMarker, "<", "</", "<codex", "codexkit_", "structured_output>",
        "{", "}", "[", "]", "\"", "\\", "\\\"", ":", ",", " ", "\n", "\r\n", "1", "-2.5e3", "true", "null", "\"subject\"", "\"urgency\"",
        "\"low\"", "\"reply\"", "é", "😀", "prose ", "\u{0}",
    ]

    static func randomText(_ random: inout SplitMix64) -> String {
        var text = ""
        for _ in 0..<Int.random(in: 0...60, using: &random) { text += pieces[Int.random(in: 0..<pieces.count, using: &random)] }
        // Often wrap a plausible payload in a frame, so commits and partials happen too.
        if Bool.random(using: &random) {
            text += "\n\(StructuredStreamParser.openMarker)\n{\"subject\":\"s\",\"reply\":\"r\",\"urgency\":\"low\"}\n\(StructuredStreamParser.closeMarker)\n"
        }
        return text
    }

    static func split(_ text: String, _ random: inout SplitMix64) -> [String] {
        var deltas: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            let length = Int.random(in: 1...max(1, min(rest.count, 40)), using: &random)
            deltas.append(String(rest.prefix(length)))
            rest = rest.dropFirst(length)
        }
        return deltas
    }

    /// The observable outcome of one run.
    struct Outcome: Equatable, Sendable {
        var visible: String
        var committed: [UInt8]?
        var errorCode: String?
    }

    static func outcome(_ deltas: [String]) throws -> (Outcome, parsedBytes: Int) {
        var parser = try StructuredStreamParserTests.makeParser(maximumPayloadBytes: 4096)
        do {
            for delta in deltas { _ = try parser.feed(delta) }
            _ = try parser.finish()
            return (Outcome(visible: parser.visibleText, committed: parser.committed?.bytes, errorCode: nil), parser.parsedBytes)
        } catch {
            return (Outcome(visible: "", committed: nil, errorCode: error.code.rawValue), parser.parsedBytes)
        }
    }

    /// One generated case's outcomes.
    struct Case: Sendable {
        let iteration: Int
        let whole: Outcome
        let split: Outcome
        let single: Outcome
        let parsedBytes: Int
        let inputBytes: Int
    }

    @Test func randomOutputInRandomSplitsBehavesTheSameAndStaysWithinItsContract() async throws {
        let seed: UInt64 = 0xC0DE_C17
        // CPU-bound: run on its own thread so the cooperative pool stays free for other tests.
        let cases = try await runOffCooperativePool {
            var random = SplitMix64(seed: seed)
            return try (0..<1_500).map { iteration in
                let text = Self.randomText(&random)
                let (whole, parsedBytes) = try Self.outcome([text])
                let (split, _) = try Self.outcome(Self.split(text, &random))
                let (single, _) = try Self.outcome(text.map { String($0) })
                return Case(iteration: iteration, whole: whole, split: split, single: single, parsedBytes: parsedBytes, inputBytes: text.utf8.count)
            }
        }
        let allowedCodes: Set<String> = ["structured_output_invalid", "structured_output_too_large"]
        var commits = 0
        var failures = 0
        for item in cases {
            #expect(item.whole == item.split, "seed \(seed) iteration \(item.iteration): a random split changed the outcome")
            #expect(item.whole == item.single, "seed \(seed) iteration \(item.iteration): character-by-character changed the outcome")
            if let code = item.whole.errorCode {
                failures += 1
                #expect(allowedCodes.contains(code), "seed \(seed) iteration \(item.iteration): unexpected code \(code)")
            } else {
                #expect(!item.whole.visible.contains(StructuredStreamParser.openMarker), "seed \(seed) iteration \(item.iteration): marker shown as text")
                if item.whole.committed != nil { commits += 1 }
            }
            #expect(item.parsedBytes <= 4 * item.inputBytes + 256, "seed \(seed) iteration \(item.iteration): parse work \(item.parsedBytes)")
        }
        // The generator exercises both outcomes.
        #expect(commits > 100)
        #expect(failures > 100)
    }
}
