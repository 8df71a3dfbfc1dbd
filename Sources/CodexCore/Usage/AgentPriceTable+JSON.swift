public import CodexSchema
import Foundation

extension AgentPriceTable: Codable {
    /// The version of the price file format this build reads and writes.
    public static let formatVersion = 1

    /// Reads a price file:
    ///
    /// ```json
    /// {
    ///   "version": 1,
    ///   "prices": [
    ///     {"model": "gpt-6-astra", "effective_from": "2026-01-01", "input": 1.25, "cached_input": 0.125, "output": 10},
    ///     {"model": "gpt-6-astra", "effective_from": "2026-07-01T00:00:00Z", "currency": "USD", "input": "1.00", "output": "8"}
    ///   ]
    /// }
    /// ```
    ///
    /// `version` must be 1: a file of another version is refused, never guessed at. Each entry has `model` (non-empty), `effective_from` (`2026-01-01`, midnight UTC, or
    /// an instant such as `2026-01-01T10:00:00Z`), optional `currency` (default `USD`), and prices per
    /// million tokens: `input` and `output` (required), `cached_input` (default: `input`) and
    /// `reasoning_output` (default: `output`). A price is a non-negative JSON number or decimal string,
    /// read exactly (never through `Double`). Unknown fields are refused, so a misspelt price is not
    /// silently replaced by its default; two entries with the same model and date are refused.
    /// - Throws: ``AgentPriceTableError`` `price_table_malformed`, `price_table_unsupported_version`, or
    ///   `price_table_entry_invalid` naming the entry's index and field. Messages never quote the file.
    public init(json bytes: some Collection<UInt8>) throws(AgentPriceTableError) {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes)
        } catch {
            throw AgentPriceTableError(code: .malformed, message: "the price file is not valid JSON (\(error.code.rawValue))")
        }
        try self.init(document: value)
    }

    /// Reads the price file's document (see ``init(json:)``).
    /// - Throws: ``AgentPriceTableError``.
    public init(document: JSONValue) throws(AgentPriceTableError) {
        guard let object = document.objectValue else {
            throw AgentPriceTableError(code: .malformed, message: "the price file is not a JSON object")
        }
        guard let version = object["version"] else {
            throw AgentPriceTableError(code: .malformed, message: "the price file has no version")
        }
        guard let number = version.numberValue, number == JSONNumber(Self.formatVersion) else {
            throw AgentPriceTableError(code: .unsupportedVersion, message: "the price file's version is not \(Self.formatVersion), the one this build reads")
        }
        guard let list = object["prices"]?.arrayValue else {
            throw AgentPriceTableError(code: .malformed, message: "the price file has no prices array")
        }
        guard object.count == 2 else {
            throw AgentPriceTableError(code: .malformed, message: "the price file has fields other than version and prices")
        }
        var entries: [AgentModelPrice] = []
        var seen: [String: [Date: Int]] = [:]
        for (index, item) in list.enumerated() {
            let entry = try Self.entry(item, index: index)
            if let earlier = seen[entry.model]?[entry.effectiveFrom] {
                throw AgentPriceTableError(
                    code: .entryInvalid, entryIndex: index, field: "effective_from",
                    message: "price entry \(index) has the model and effective date of entry \(earlier)"
                )
            }
            seen[entry.model, default: [:]][entry.effectiveFrom] = index
            entries.append(entry)
        }
        self.init(entries: entries)
    }

    /// The table as its price file's document: prices as decimal strings, dates as ISO 8601 instants in
    /// UTC (to the microsecond).
    public var document: JSONValue {
        let prices: [JSONValue] = entries.map { entry in
            var object: JSONObject = [
                "model": .string(entry.model), "effective_from": .string(ISO8601Instant.text(of: entry.effectiveFrom)), "currency": .string(entry.currency),
                "input": .string(Self.text(entry.input)), "output": .string(Self.text(entry.output)),
            ]
            if let cachedInput = entry.cachedInput { object["cached_input"] = .string(Self.text(cachedInput)) }
            if let reasoningOutput = entry.reasoningOutput { object["reasoning_output"] = .string(Self.text(reasoningOutput)) }
            return .object(object)
        }
        return ["version": .number(JSONNumber(Self.formatVersion)), "prices": .array(prices)]
    }

    /// Decodes the price file's document (see ``init(json:)``); numbers pass through what the decoder
    /// offers, so read files with ``init(json:)`` for exact prices.
    public init(from decoder: any Decoder) throws {
        try self.init(document: try JSONValue(from: decoder))
    }

    /// Encodes ``document``.
    public func encode(to encoder: any Encoder) throws {
        try document.encode(to: encoder)
    }

    private static let fields: Set<String> = ["model", "effective_from", "currency", "input", "cached_input", "output", "reasoning_output"]

    /// One entry of `prices`.
    private static func entry(_ item: JSONValue, index: Int) throws(AgentPriceTableError) -> AgentModelPrice {
        func invalid(_ field: String?, _ problem: String) -> AgentPriceTableError {
            AgentPriceTableError(
                code: .entryInvalid, entryIndex: index, field: field, message: "price entry \(index)" + (field.map { " field \($0)" } ?? "") + " " + problem
            )
        }
        guard let object = item.objectValue else { throw invalid(nil, "is not an object") }
        guard object.keys.allSatisfy(fields.contains) else { throw invalid(nil, "has an unknown field") }
        guard let model = object["model"]?.stringValue, !model.isEmpty else { throw invalid("model", "is missing or not a non-empty string") }
        guard let dateText = object["effective_from"]?.stringValue, let effectiveFrom = ISO8601Instant.date(from: dateText) else {
            throw invalid("effective_from", "is missing or not an ISO 8601 date such as 2026-12-01 or 2026-12-01T10:00:00Z")
        }
        var currency = "USD"
        if let value = object["currency"] {
            guard let text = value.stringValue, !text.isEmpty, text.count <= 16 else { throw invalid("currency", "is not a string of 1 to 16 characters") }
            currency = text
        }
        func price(_ field: String, required: Bool) throws(AgentPriceTableError) -> Decimal? {
            guard let value = object[field] else {
                if required { throw invalid(field, "is missing") }
                return nil
            }
            let text: String? = switch value {
            case .number(let number): number.canonicalText
            case .string(let string): string
            default: nil
            }
            guard let text, let price = decimal(text) else {
                throw invalid(field, "is not a non-negative decimal number (a JSON number or a string such as \"1.25\")")
            }
            return price
        }
        guard let input = try price("input", required: true), let output = try price("output", required: true) else {
            throw invalid(nil, "has no input or output price")
        }
        return AgentModelPrice(
            model: model, effectiveFrom: effectiveFrom, currency: currency, input: input, cachedInput: try price("cached_input", required: false), output: output,
            reasoningOutput: try price("reasoning_output", required: false)
        )
    }

    /// The exact value of a non-negative decimal text (`12`, `0.125`, `1.5e+3`, `2E-4`), built digit by
    /// digit: at most 30 significant digits and a decimal exponent within ±60.
    static func decimal(_ text: String) -> Decimal? {
        var significand: Decimal = 0
        var digitCount = 0
        var fractionDigits = 0
        var sawPoint = false
        var exponent = 0
        var index = text.utf8.startIndex
        let bytes = text.utf8
        var sawDigit = false
        while index < bytes.endIndex {
            let byte = bytes[index]
            if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                sawDigit = true
                if digitCount > 0 || byte != UInt8(ascii: "0") {
                    digitCount += 1
                    guard digitCount <= 30 else { return nil }
                }
                significand = significand * 10 + Decimal(Int(byte - UInt8(ascii: "0")))
                if sawPoint { fractionDigits += 1 }
            } else if byte == UInt8(ascii: "."), !sawPoint, sawDigit {
                sawPoint = true
            } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E"), sawDigit {
                let rest = text.utf8[bytes.index(after: index)...]
                guard let value = Int(Substring(rest)), (-60...60).contains(value) else { return nil }
                exponent = value
                index = bytes.endIndex
                break
            } else {
                return nil
            }
            index = bytes.index(after: index)
        }
        guard sawDigit, !sawPoint || fractionDigits > 0 else { return nil }
        guard significand != 0 else { return 0 }
        // Trailing zeros of the fraction say nothing; past them, the value must sit within 10^±60, as
        // the exponent must: a price of 0.<200 zeros>1 would otherwise round to zero and cost nothing.
        var scale = exponent - fractionDigits
        var (quotient, remainder) = Self.dividedByTen(significand)
        while scale < 0, remainder == 0 {
            significand = quotient
            scale += 1
            (quotient, remainder) = Self.dividedByTen(significand)
        }
        guard (-60...60).contains(scale) else { return nil }
        return Decimal(sign: .plus, exponent: scale, significand: significand)
    }

    /// `value` divided by ten, whole, and what is left.
    private static func dividedByTen(_ value: Decimal) -> (Decimal, Decimal) {
        var quotient = value / 10
        var whole = Decimal()
        NSDecimalRound(&whole, &quotient, 0, .down)
        return (whole, value - whole * 10)
    }

    /// A decimal's plain text (`0.125`), in the POSIX locale.
    static func text(_ value: Decimal) -> String {
        value.description
    }
}
