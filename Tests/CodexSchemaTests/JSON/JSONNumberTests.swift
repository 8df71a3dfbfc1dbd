import CodexSchema
import Foundation
import Testing

@Suite struct JSONNumberTests {
    private func number(_ text: String) throws -> JSONNumber {
        try #require(JSONNumber(parsing: text))
    }

    @Test func equalityIsMathematical() throws {
        #expect(try number("1") == number("1.0"))
        #expect(try number("1") == number("10e-1"))
        #expect(try number("100") == number("1e2"))
        #expect(try number("0.5") == number("5E-1"))
        #expect(try number("-0") == number("0"))
        #expect(try number("-0.0e7") == JSONNumber(0))
        #expect(try number("1") != number("1.000000000000000000000000000001"))
        #expect(try number("12345678901234567890") == number("1234567890123456789.0e1"))
        #expect(try Set([number("1"), number("1.0"), number("10e-1")]).count == 1)
    }

    @Test func booleansNeverEqualNumbers() {
        #expect(JSONValue.bool(true) != .number(1))
        #expect(JSONValue.bool(false) != .number(0))
    }

    @Test func integersBeyondSixtyFourBitsKeepTheirValue() throws {
        let big = try number("18446744073709551616")
        #expect(big.canonicalText == "18446744073709551616")
        #expect(big.isInteger)
        #expect(big.int64Value == nil)
        #expect(try number("-9223372036854775808").int64Value == Int64.min)
        #expect(try number("9223372036854775807").int64Value == Int64.max)
        #expect(try number("9223372036854775808").int64Value == nil)
        #expect(JSONNumber(UInt64.max).canonicalText == "18446744073709551615")
    }

    @Test func decimalsWithThirtySixDigitsKeepTheirValue() throws {
        let precise = try number("98249283749234923498293171823948729348710298301928331.0123456789012345678901234567890123456")
        #expect(precise.canonicalText == "98249283749234923498293171823948729348710298301928331.0123456789012345678901234567890123456")
        #expect(try number("0.123456789012345678901234567890123456") != number("0.123456789012345678901234567890123457"))
        #expect(try number("0.123456789012345678901234567890123456") < number("0.123456789012345678901234567890123457"))
    }

    @Test(arguments: [
        ("1.0", "1"), ("1e2", "100"), ("12.50", "12.5"), ("-0.000001", "-0.000001"), ("1e-7", "1e-7"),
        ("123e-9", "1.23e-7"), ("1.5e70", "1.5e+70"), ("1e63", "1" + String(repeating: "0", count: 63)),
        ("1e64", "1e+64"), ("0.1", "0.1"), ("-12.340e1", "-123.4"), ("5e-324", "5e-324"),
    ])
    func canonicalTextIsStableAndExact(input: String, expected: String) throws {
        let value = try number(input)
        #expect(value.canonicalText == expected)
        #expect(try number(expected) == value)
    }

    @Test func doublesBecomeTheirShortestDecimal() {
        let tenth: Double = 0.1
        #expect(JSONNumber(tenth)?.canonicalText == "0.1")
        #expect(JSONNumber(tenth)?.doubleValue == 0.1)
        #expect(JSONNumber(Double(1))?.int64Value == 1)
        #expect(JSONNumber(Double(-2.5e-8))?.canonicalText == "-2.5e-8")
        #expect(JSONNumber(Double.greatestFiniteMagnitude)?.canonicalText == "1.7976931348623157e+308")
        #expect(JSONNumber(Double.nan) == nil)
        #expect(JSONNumber(Double.infinity) == nil)
    }

    @Test func orderIsExactWhereDoublesTie() throws {
        // Both round to the same Double, yet differ.
        let a = try number("0.10000000000000000001")
        let b = try number("0.10000000000000000002")
        #expect(a.doubleValue == b.doubleValue)
        #expect(a < b)
        #expect(!(b < a))
        #expect(try number("-1e400") < number("-1e399"))
        #expect(try number("1e400") > number("1e399"))
        #expect(try number("0") < number("1e-400"))
    }

    @Test(arguments: [
        ("10", "2", true), ("7", "2", false), ("4.5", "1.5", true), ("0.0075", "0.0001", true), ("0.00751", "0.0001", false),
        ("1e308", "0.123456789", false), ("1e308", "1e-9", true), ("12391239123", "0.5", true),
        ("18446744073709551616", "2", true), ("18446744073709551617", "2", false),
        ("36893488147419103232", "18446744073709551616", true), ("36893488147419103233", "18446744073709551616", false),
        ("1", "10", false), ("0", "0.3", true), ("-9", "3", true), ("1e1000000", "7", false), ("7e1000000", "7", true),
    ])
    func multipleOfIsExact(value: String, divisor: String, expected: Bool) throws {
        #expect(try number(value).isMultiple(of: number(divisor)) == expected)
    }

    @Test(arguments: ["", "01", "1.", ".1", "-", "+1", "1e", "0x10", "1 ", " 1", "NaN", "Infinity", "1e1000000001"])
    func invalidTextIsRefused(text: String) {
        #expect(JSONNumber(parsing: text) == nil)
    }

    /// Found by the `json` fuzz target: `9999999e999999999` was accepted (its written exponent is within
    /// the bound) but its canonical text, `9.999999e+1000000005`, was not. The bound now holds for the
    /// scientific form, so whatever is accepted reads back from its canonical text.
    @Test(arguments: [
        "9999999e999999999", "10e1000000000", "0.1e-1000000000", "-0.00012e-999999997",
        "123456789012345678901234e999999990", "0.0000000000000000000001234567890123456789e-999999979",
    ])
    func aNumberBeyondTheScientificBoundIsRefused(text: String) throws {
        #expect(JSONNumber(parsing: text) == nil)
        let error = #expect(throws: CodexSchemaError.self) { try JSONValue(parsing: Array("[\(text)]".utf8)) }
        #expect(error?.code == .jsonNumberOutOfRange)
    }

    @Test(arguments: [
        "1e1000000000", "9.99e1000000000", "99.9e999999999", "1e-1000000000", "0.1e-999999999", "-0.00012e-999999996",
        "123456789012345678901234e999999977", "0.0000000000000000000001234567890123456789e-999999978",
    ])
    func aNumberAtTheScientificBoundReadsBackFromItsCanonicalText(text: String) throws {
        let value = try number(text)
        let again = try number(value.canonicalText)
        #expect(again == value)
        #expect(again.canonicalText == value.canonicalText)
    }

    @Test func unsignedValuesAreExactUpToUInt64Max() throws {
        #expect(try number("0").uint64Value == 0)
        #expect(try number("9223372036854775807").uint64Value == UInt64(Int64.max))
        #expect(try number("9223372036854775808").uint64Value == UInt64(Int64.max) + 1)
        #expect(try number("16285016252571724528").uint64Value == 16_285_016_252_571_724_528)
        #expect(try number("1.8446744073709551615e19").uint64Value == UInt64.max)
        #expect(try number("18446744073709551616").uint64Value == nil)
        #expect(try number("-1").uint64Value == nil)
        #expect(try number("1.5").uint64Value == nil)
        #expect(try number("1e3").uint64Value == 1_000)
    }

    /// Through Foundation's coders (how nested history values are stored), integers up to UInt64.max
    /// come back exactly; found by the storage fuzz target, which lost 16285016252571724528 to a Double.
    @Test func foundationCodersKeepIntegersUpToUInt64Max() throws {
        for text in ["9223372036854775808", "16285016252571724528", "18446744073709551615", "-9223372036854775808"] {
            let value = JSONValue.number(try number(text))
            let data = try JSONEncoder().encode(["n": value])
            #expect(String(decoding: data, as: UTF8.self) == #"{"n":\#(text)}"#)
            #expect(try JSONDecoder().decode([String: JSONValue].self, from: data)["n"] == value)
        }
    }
}
