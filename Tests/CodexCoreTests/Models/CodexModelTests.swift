import CodexCore
import Foundation
import Testing

@Suite struct CodexModelTests {
    @Test func astraIsBundledWithItsDocumentedSettings() throws {
        let astra = try #require(CodexModelCatalog.bundled.info(for: .gpt6Astra))
        #expect(astra.model.rawValue == "gpt-6-astra")
        #expect(astra.defaultReasoningEffort == .low)
        #expect(astra.supportedReasoningEfforts == [.low, .medium, .high, .extraHigh, .max, .ultra])
        #expect(astra.contextWindow == 272_000)
        #expect(astra.resolveEffort(nil) == .low)
        #expect(astra.resolveEffort(.minimal) == .low)
        #expect(astra.resolveEffort(.ultra) == .ultra)
    }

    @Test(arguments: [
        (ReasoningEffort.none, "none", "none"), (.minimal, "minimal", "minimal"), (.low, "low", "low"), (.medium, "medium", "medium"),
        (.high, "high", "high"), (.extraHigh, "xhigh", "xhigh"), (.max, "max", "max"), (.ultra, "ultra", "max"),
        (.custom("turbo"), "turbo", "turbo"),
    ])
    func effortsHaveStoredAndWireNames(effort: ReasoningEffort, stored: String, wire: String) throws {
        #expect(effort.rawValue == stored)
        #expect(effort.wireName == wire)
        #expect(ReasoningEffort(rawValue: stored) == effort)
        let encoded = try JSONEncoder().encode([effort])
        #expect(String(decoding: encoded, as: UTF8.self) == "[\"\(stored)\"]")
        #expect(try JSONDecoder().decode([ReasoningEffort].self, from: encoded) == [effort])
    }

    @Test func unknownSlugsMatchTheLongestPrefixAndStayUsable() throws {
        let catalog = CodexModelCatalog.bundled
        #expect(catalog.info(for: "gpt-5.4-mini-2026")?.model == .gpt54Mini)
        #expect(catalog.info(for: "gpt-5.4-2026")?.model == .gpt54)
        #expect(catalog.info(for: "openai/gpt-6-astra")?.model == .gpt6Astra)
        #expect(catalog.info(for: "llama-9") == nil)
        let custom = CodexModel(rawValue: "llama-9")
        #expect(try JSONDecoder().decode(CodexModel.self, from: JSONEncoder().encode(custom)) == custom)
        #expect(catalog.visibleModels.count == catalog.models.count)
        #expect(catalog.info(for: .gpt53CodexSpark)?.inputModalities == [.text])
        #expect(catalog.info(for: .gpt53CodexSpark)?.contextWindow == 128_000)
        #expect(CodexModel.default == .gpt56Sol)
    }

    @Test func catalogsRoundTripThroughCodable() throws {
        let catalog = CodexModelCatalog.bundled
        #expect(try JSONDecoder().decode(CodexModelCatalog.self, from: JSONEncoder().encode(catalog)) == catalog)
    }
}
