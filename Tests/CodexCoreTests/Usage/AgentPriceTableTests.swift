@testable import CodexCore
import CodexSchema
import Foundation
import Testing

@Suite struct AgentPriceTableTests {
    static func decimal(_ text: String) -> Decimal { Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) ?? .nan }

    static let file = """
        {
          "version": 1,
          "prices": [
            {"model": "gpt-6-astra", "effective_from": "2026-01-01", "input": 1.25, "cached_input": 0.125, "output": 10},
            {"model": "gpt-6-astra", "effective_from": "2026-07-01T00:00:00Z", "currency": "USD", "input": "1.00", "output": "8", "reasoning_output": "16"},
            {"model": "gpt-6-astra-mini", "effective_from": "2026-01-01", "currency": "EUR", "input": 2.5e-1, "output": 0.000001}
          ]
        }
        """

    @Test func aFileLoadsWithItsDefaultsAndExactDecimals() throws {
        let table = try AgentPriceTable(json: Array(Self.file.utf8))
        let january = Date(timeIntervalSince1970: 1_767_225_600)
        let july = Date(timeIntervalSince1970: 1_782_864_000)
        #expect(table.entries == [
            AgentModelPrice(model: "gpt-6-astra", effectiveFrom: january, input: Self.decimal("1.25"), cachedInput: Self.decimal("0.125"), output: 10),
            AgentModelPrice(model: "gpt-6-astra", effectiveFrom: july, input: 1, output: 8, reasoningOutput: 16),
            AgentModelPrice(model: "gpt-6-astra-mini", effectiveFrom: january, currency: "EUR", input: Self.decimal("0.25"), output: Self.decimal("0.000001")),
        ])
        #expect(table.entries[1].effectiveCachedInput == 1)
        #expect(table.entries[0].effectiveReasoningOutput == 10)
        #expect(table.entries[1].effectiveReasoningOutput == 16)
    }

    @Test func thePriceIsTheLatestEntryOfTheModelAtOrBeforeTheDate() throws {
        let table = try AgentPriceTable(json: Array(Self.file.utf8))
        let july = Date(timeIntervalSince1970: 1_782_864_000)
        #expect(table.price(for: "gpt-6-astra", at: Date(timeIntervalSince1970: 1_767_225_599)) == nil)
        #expect(table.price(for: "gpt-6-astra", at: Date(timeIntervalSince1970: 1_767_225_600))?.input == Self.decimal("1.25"))
        #expect(table.price(for: "gpt-6-astra", at: july.addingTimeInterval(-0.001))?.input == Self.decimal("1.25"))
        #expect(table.price(for: "gpt-6-astra", at: july)?.input == 1)
        #expect(table.price(for: "gpt-6-astra", at: july.addingTimeInterval(86_400 * 365))?.output == 8)
        #expect(table.price(for: "GPT-6-astra", at: july) == nil)
        #expect(table.price(for: "gpt-6", at: july) == nil)
        // Entries in any order; of equal dates (only possible when built in code) the last wins.
        let shuffled = AgentPriceTable(entries: [table.entries[1], table.entries[0], AgentModelPrice(model: "gpt-6-astra", effectiveFrom: july, input: 3, output: 3)])
        #expect(shuffled.price(for: "gpt-6-astra", at: july)?.input == 3)
        #expect(shuffled.price(for: "gpt-6-astra", at: july.addingTimeInterval(-1))?.input == Self.decimal("1.25"))
    }

    @Test func cachedInputIsPartOfInputAndReasoningPartOfOutput() {
        let price = AgentModelPrice(model: "m", effectiveFrom: .distantPast, input: Self.decimal("1.25"), cachedInput: Self.decimal("0.125"), output: 10)
        let usage = AgentUsage(inputTokens: 1_000_000, cachedInputTokens: 400_000, outputTokens: 200_000, reasoningOutputTokens: 50_000)
        // 600,000 × 1.25 + 400,000 × 0.125 + 200,000 × 10, per million.
        #expect(price.cost(of: usage) == Self.decimal("2.8"))
        var reasoning = price
        reasoning.reasoningOutput = 20
        // + 150,000 × 10 + 50,000 × 20 instead of 200,000 × 10.
        #expect(reasoning.cost(of: usage) == Self.decimal("3.3"))
        // Prices without their own cached or reasoning price need neither count.
        let plain = AgentModelPrice(model: "m", effectiveFrom: .distantPast, input: Self.decimal("1.25"), output: 10)
        #expect(plain.cost(of: AgentUsage(inputTokens: 1_234, outputTokens: 56)) == Self.decimal("0.0021025"))
        #expect(plain.cost(of: usage) == Self.decimal("3.25"))
        #expect(plain.cost(of: AgentUsage(inputTokens: 0, outputTokens: 0)) == 0)
        // Decimal, not Double: 0.1 + 0.2 is 0.3 exactly.
        let tenths = AgentModelPrice(model: "m", effectiveFrom: .distantPast, input: Self.decimal("0.1"), output: Self.decimal("0.2"))
        #expect(tenths.cost(of: AgentUsage(inputTokens: 1_000_000, outputTokens: 1_000_000)) == Self.decimal("0.3"))
    }

    @Test func aCostNeedingAnUnknownOrContradictoryCountIsNil() throws {
        let price = AgentModelPrice(model: "m", effectiveFrom: .distantPast, input: 2, cachedInput: 1, output: 10, reasoningOutput: 20)
        let plain = AgentModelPrice(model: "m", effectiveFrom: .distantPast, input: 2, output: 10)
        #expect(price.cost(of: AgentUsage(outputTokens: 10, reasoningOutputTokens: 0)) == nil)
        #expect(plain.cost(of: AgentUsage(inputTokens: 10)) == nil)
        #expect(price.cost(of: AgentUsage(inputTokens: 10, outputTokens: 10, reasoningOutputTokens: 0)) == nil, "the cached count is needed")
        #expect(price.cost(of: AgentUsage(inputTokens: 10, cachedInputTokens: 0, outputTokens: 10)) == nil, "the reasoning count is needed")
        #expect(price.cost(of: AgentUsage(inputTokens: 10, cachedInputTokens: 11, outputTokens: 10, reasoningOutputTokens: 0)) == nil)
        #expect(price.cost(of: AgentUsage(inputTokens: 10, cachedInputTokens: 0, outputTokens: 10, reasoningOutputTokens: 11)) == nil)
        #expect(plain.cost(of: AgentUsage(inputTokens: -1, outputTokens: 10)) == nil)
        #expect(plain.cost(of: AgentUsage(inputTokens: 1_000_000, cachedInputTokens: 5, outputTokens: 0, reasoningOutputTokens: 1)) == nil, "reasoning above output")
        let table = try AgentPriceTable(json: Array(Self.file.utf8))
        let record = AgentUsageRecord(
            threadID: "t", turnID: "u", sequence: 0, model: "gpt-6-astra", recordedAt: Date(timeIntervalSince1970: 1_700_000_000),
            usage: AgentUsage(inputTokens: 1, outputTokens: 1)
        )
        #expect(table.cost(of: record) == nil, "no price before the first entry")
        var priced = record
        priced.recordedAt = Date(timeIntervalSince1970: 1_790_000_000)
        priced.usage = AgentUsage(inputTokens: 2_000_000, cachedInputTokens: 0, outputTokens: 1_000_000, reasoningOutputTokens: 500_000)
        // July's prices: 2,000,000 × 1 + 500,000 × 8 + 500,000 × 16, per million.
        #expect(table.cost(of: priced) == 14)
    }

    @Test(arguments: [
        ("not json", AgentPriceTableError.Code.malformed, nil, nil),
        ("[]", .malformed, nil, nil),
        (#"{"prices": []}"#, .malformed, nil, nil),
        (#"{"version": 2, "prices": []}"#, .unsupportedVersion, nil, nil),
        (#"{"version": "1", "prices": []}"#, .unsupportedVersion, nil, nil),
        (#"{"version": 1}"#, .malformed, nil, nil),
        (#"{"version": 1, "prices": {}}"#, .malformed, nil, nil),
        (#"{"version": 1, "prices": [], "currency": "USD"}"#, .malformed, nil, nil),
        (#"{"version": 1, "prices": [7]}"#, .entryInvalid, 0, nil),
        (#"{"version": 1, "prices": [{"effective_from": "2026-01-01", "input": 1, "output": 1}]}"#, .entryInvalid, 0, "model"),
        (#"{"version": 1, "prices": [{"model": "", "effective_from": "2026-01-01", "input": 1, "output": 1}]}"#, .entryInvalid, 0, "model"),
        (#"{"version": 1, "prices": [{"model": "m", "effective_from": "2026-13-01", "input": 1, "output": 1}]}"#, .entryInvalid, 0, "effective_from"),
        (#"{"version": 1, "prices": [{"model": "m", "effective_from": 1767225600, "input": 1, "output": 1}]}"#, .entryInvalid, 0, "effective_from"),
        (#"{"version": 1, "prices": [{"model": "m", "effective_from": "2026-01-01", "currency": "", "input": 1, "output": 1}]}"#, .entryInvalid, 0, "currency"),
        (#"{"version": 1, "prices": [{"model": "m", "effective_from": "2026-01-01", "input": -1, "output": 1}]}"#, .entryInvalid, 0, "input"),
        (#"{"version": 1, "prices": [{"model": "m", "effective_from": "2026-01-01", "input": "1.2.3", "output": 1}]}"#, .entryInvalid, 0, "input"),
        (#"{"version": 1, "prices": [{"model": "m", "effective_from": "2026-01-01", "input": "1.", "output": 1}]}"#, .entryInvalid, 0, "input"),
        (#"{"version": 1, "prices": [{"model": "m", "effective_from": "2026-01-01", "input": true, "output": 1}]}"#, .entryInvalid, 0, "input"),
        (#"{"version": 1, "prices": [{"model": "m", "effective_from": "2026-01-01", "input": 1}]}"#, .entryInvalid, 0, "output"),
        (#"{"version": 1, "prices": [{"model": "m", "effective_from": "2026-01-01", "input": 1, "output": 1, "cached_input": null}]}"#, .entryInvalid, 0, "cached_input"),
        (#"{"version": 1, "prices": [{"model": "m", "effective_from": "2026-01-01", "input": 1, "output": 1, "reasoning_output": 1e99}]}"#, .entryInvalid, 0, "reasoning_output"),
        (#"{"version": 1, "prices": [{"model": "m", "effective_from": "2026-01-01", "input": 1, "output": 1}, {"model": "m", "effective_from": "2026-01-01", "input": 1, "output": 1, "cached_imput": 1}]}"#, .entryInvalid, 1, nil),
        (#"{"version": 1, "prices": [{"model": "m", "effective_from": "2026-01-01", "input": 1, "output": 1}, {"model": "n", "effective_from": "2026-01-01", "input": 1, "output": 1}, {"model": "m", "effective_from": "2026-01-01T00:00:00Z", "input": 2, "output": 2}]}"#, .entryInvalid, 2, "effective_from"),
    ] as [(String, AgentPriceTableError.Code, Int?, String?)])
    func aMalformedFileIsATypedErrorNamingTheEntry(json: String, code: AgentPriceTableError.Code, index: Int?, field: String?) {
        let error = #expect(throws: AgentPriceTableError.self) { try AgentPriceTable(json: Array(json.utf8)) }
        #expect(error?.code == code)
        #expect(error?.entryIndex == index)
        #expect(error?.field == field)
        if let index { #expect(error?.message.hasPrefix("price entry \(index)") == true, "\(error?.message ?? "")") }
    }

    @Test func anErrorNeverQuotesTheFile() {
        let secret = "sk-canary-\(UUID().uuidString)"
        for json in [
            #"{"version": 1, "prices": [{"model": "\#(secret)", "effective_from": "\#(secret)", "input": 1, "output": 1}]}"#,
            #"{"version": 1, "prices": [{"model": "m", "effective_from": "2026-01-01", "input": "\#(secret)", "output": 1}]}"#,
            #"{"version": 1, "prices": [{"model": "m", "\#(secret)": 1, "effective_from": "2026-01-01", "input": 1, "output": 1}]}"#,
            #"{"version": "\#(secret)", "prices": []}"#, #"{"\#(secret)": 1}"#, "\(secret)",
        ] {
            let error = #expect(throws: AgentPriceTableError.self) { try AgentPriceTable(json: Array(json.utf8)) }
            #expect(error.map { !$0.description.contains(secret) && !$0.description.contains("canary") } == true, "\(error?.description ?? "")")
        }
        let entry = #expect(throws: AgentPriceTableError.self) {
            try AgentPriceTable(json: Array(#"{"version": 1, "prices": [{"model": "m", "effective_from": "2026-01-01", "input": "x", "output": 1}]}"#.utf8))
        }
        #expect(entry?.description == #"price_table_entry_invalid: price entry 0 field input is not a non-negative decimal number (a JSON number or a string such as "1.25")"#)
    }

    @Test func theCodableFormIsThePriceFileWithExactPrices() throws {
        let table = try AgentPriceTable(json: Array(Self.file.utf8))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(table)
        #expect(try JSONDecoder().decode(AgentPriceTable.self, from: data) == table)
        #expect(try AgentPriceTable(json: Array(data)) == table)
        #expect(table.document["prices"]?[0] == [
            "model": "gpt-6-astra", "effective_from": "2026-01-01T00:00:00Z", "currency": "USD", "input": "1.25", "cached_input": "0.125", "output": "10",
        ])
        #expect(table.document["prices"]?[2]?["output"] == "0.000001")
        #expect(table.document["version"] == 1)
    }

    @Test(arguments: [
        ("12", "12"), ("0.125", "0.125"), ("1.5e+3", "1500"), ("2E-4", "0.0002"), ("007", "7"), ("1e-7", "0.0000001"), ("0", "0"),
        ("0." + String(repeating: "0", count: 200), "0"), ("1." + String(repeating: "0", count: 29), "1"), ("0.5e-59", "0.000000000000000000000000000000000000000000000000000000000005"),
    ])
    func decimalTextIsReadDigitByDigit(text: String, value: String) {
        #expect(AgentPriceTable.decimal(text) == Self.decimal(value))
    }

    /// The last ones are values past 10^±60 once trailing zeros are set aside: a price of 0.<200 zeros>1
    /// once rounded to zero and cost nothing.
    @Test(arguments: [
        "", ".5", "1.", "-1", "+1", "1e", "1e61", "1.2.3", "1_000", " 1", "1234567890123456789012345678901",
        "0." + String(repeating: "0", count: 200) + "1", "0.5e-60", "0.1e-60",
    ])
    func decimalTextRefusesAnythingElse(text: String) {
        #expect(AgentPriceTable.decimal(text) == nil)
    }
}
