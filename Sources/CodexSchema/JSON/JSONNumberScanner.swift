/// Scans one JSON number token from UTF-8 bytes and builds the exact, normalized ``JSONNumber``.
///
/// Used by the parser and by ``JSONNumber/init(parsing:)``. Numbers of up to 19 significant digits
/// take a fast path with no allocation; longer ones keep all their digits.
struct JSONNumberScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    /// The offset of the first byte after the token once ``scan()`` returns.
    private(set) var end: Int
    private let start: Int

    static let maximumExponentMagnitude = 1_000_000_000

    init(bytes: UnsafeBufferPointer<UInt8>, start: Int) {
        self.bytes = bytes
        self.start = start
        self.end = start
    }

    @inline(__always)
    private func byte(_ index: Int) -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    @inline(__always)
    private static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    mutating func scan() throws(CodexSchemaError) -> JSONNumber {
        var index = start
        let negative = byte(index) == UInt8(ascii: "-")
        if negative { index += 1 }

        var magnitude: UInt64 = 0
        var significantDigits = 0 // digits accumulated after leading zeros
        var fractionDigits = 0
        // Where the first significant digit stands relative to the decimal point, before the exponent:
        // 0 for `1.5`, 2 for `123`, -3 for `0.00123` (the exponent of the scientific form, minus `e`).
        var leadingDigitPosition = 0

        guard let first = byte(index) else {
            throw CodexSchemaError(code: .jsonUnexpectedEnd, message: "number ends after its sign", byteOffset: index)
        }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = byte(index), Self.isDigit(next) {
                throw CodexSchemaError(code: .jsonLeadingZero, message: "number has a leading zero", byteOffset: index - 1)
            }
        } else if Self.isDigit(first) {
            while let digit = byte(index), Self.isDigit(digit) {
                if significantDigits < 19 {
                    magnitude = magnitude &* 10 &+ UInt64(digit &- UInt8(ascii: "0"))
                }
                significantDigits += 1
                index += 1
            }
            leadingDigitPosition = significantDigits - 1
        } else {
            throw CodexSchemaError(code: .jsonInvalidNumber, message: "number has no digits", byteOffset: index)
        }

        if byte(index) == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while let digit = byte(index), Self.isDigit(digit) {
                if significantDigits == 0, digit == UInt8(ascii: "0") {
                    // Leading zeros of a fraction such as 0.000123 are not significant.
                } else {
                    if significantDigits == 0 { leadingDigitPosition = fractionStart - index - 1 }
                    if significantDigits < 19 {
                        magnitude = magnitude &* 10 &+ UInt64(digit &- UInt8(ascii: "0"))
                    }
                    significantDigits += 1
                }
                if significantDigits <= 19 { fractionDigits = index - fractionStart + 1 }
                index += 1
            }
            if index == fractionStart {
                throw CodexSchemaError(
                    code: byte(index) == nil ? .jsonUnexpectedEnd : .jsonInvalidNumber,
                    message: "number has no digits after its decimal point",
                    byteOffset: index
                )
            }
        }

        var exponent = 0
        if let marker = byte(index), marker == UInt8(ascii: "e") || marker == UInt8(ascii: "E") {
            index += 1
            var exponentNegative = false
            if let sign = byte(index), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                exponentNegative = sign == UInt8(ascii: "-")
                index += 1
            }
            let exponentStart = index
            while let digit = byte(index), Self.isDigit(digit) {
                if exponent <= Self.maximumExponentMagnitude {
                    exponent = exponent * 10 + Int(digit &- UInt8(ascii: "0"))
                }
                index += 1
            }
            if index == exponentStart {
                throw CodexSchemaError(
                    code: byte(index) == nil ? .jsonUnexpectedEnd : .jsonInvalidNumber,
                    message: "number has no digits in its exponent",
                    byteOffset: index
                )
            }
            if exponent > Self.maximumExponentMagnitude {
                throw CodexSchemaError(
                    code: .jsonNumberOutOfRange,
                    message: "number exponent is beyond ±1000000000",
                    byteOffset: exponentStart
                )
            }
            if exponentNegative { exponent = -exponent }
        }
        end = index
        // The canonical text writes a number this large or small with one leading digit and an exponent
        // (`9.999999e+1000000005` for `9999999e999999999`), and that exponent must be one this scanner
        // reads back: the bound holds for the scientific form, not only for the exponent as written.
        if significantDigits > 0, (exponent + leadingDigitPosition).magnitude > UInt(Self.maximumExponentMagnitude) {
            throw CodexSchemaError(
                code: .jsonNumberOutOfRange,
                message: "number is beyond 1e±1000000000 in scientific notation",
                byteOffset: start
            )
        }

        if significantDigits == 0 { return JSONNumber(storage: .int(0)) }
        if significantDigits <= 19 {
            return JSONNumber.normalized(negative: negative, magnitude: magnitude, exponent: exponent - fractionDigits)
        }
        return slowPath(negative: negative, tokenEnd: index, exponent: exponent)
    }

    /// Collects every digit of a long significand and normalizes it.
    private func slowPath(negative: Bool, tokenEnd: Int, exponent: Int) -> JSONNumber {
        var digits: [UInt8] = []
        var fractionDigits = 0
        var inFraction = false
        var index = negative ? start + 1 : start
        while index < tokenEnd {
            let value = bytes[index]
            if value == UInt8(ascii: ".") {
                inFraction = true
            } else if Self.isDigit(value) {
                digits.append(value)
                if inFraction { fractionDigits += 1 }
            } else {
                break // exponent marker
            }
            index += 1
        }
        return JSONNumber.normalized(negative: negative, digits: digits, exponent: exponent - fractionDigits)
    }
}

extension JSONNumber {
    /// The normalized number `±magnitude × 10^exponent`.
    static func normalized(negative: Bool, magnitude: UInt64, exponent: Int) -> JSONNumber {
        var magnitude = magnitude
        var exponent = exponent
        if magnitude == 0 { return JSONNumber(storage: .int(0)) }
        while magnitude % 10 == 0 {
            magnitude /= 10
            exponent += 1
        }
        let limit: UInt64 = negative ? UInt64(Int64.max) + 1 : UInt64(Int64.max)
        if exponent >= 0, exponent <= 19 {
            var scaled = magnitude
            var fits = true
            for _ in 0..<exponent {
                let (product, overflow) = scaled.multipliedReportingOverflow(by: 10)
                if overflow || product > limit {
                    fits = false
                    break
                }
                scaled = product
            }
            if fits, scaled <= limit {
                return JSONNumber(storage: .int(signed(negative: negative, magnitude: scaled)))
            }
        }
        if magnitude <= limit {
            return JSONNumber(storage: .decimal(significand: signed(negative: negative, magnitude: magnitude), exponent: exponent))
        }
        let digits = Array(String(magnitude).utf8)
        return JSONNumber(storage: .big(BigDecimalDigits(negative: negative, digits: digits, exponent: exponent)))
    }

    /// The normalized number `±digits × 10^exponent` for ASCII `digits` of any length.
    static func normalized(negative: Bool, digits: [UInt8], exponent: Int) -> JSONNumber {
        guard let first = digits.firstIndex(where: { $0 != UInt8(ascii: "0") }) else {
            return JSONNumber(storage: .int(0))
        }
        var last = digits.count - 1
        while digits[last] == UInt8(ascii: "0") { last -= 1 }
        let exponent = exponent + (digits.count - 1 - last)
        let significant = digits[first...last]
        if significant.count <= 19 {
            var magnitude: UInt64 = 0
            for digit in significant { magnitude = magnitude * 10 + UInt64(digit - UInt8(ascii: "0")) }
            return normalized(negative: negative, magnitude: magnitude, exponent: exponent)
        }
        return JSONNumber(storage: .big(BigDecimalDigits(negative: negative, digits: Array(significant), exponent: exponent)))
    }

    private static func signed(negative: Bool, magnitude: UInt64) -> Int64 {
        negative ? Int64(truncatingIfNeeded: 0 &- magnitude) : Int64(magnitude)
    }
}
