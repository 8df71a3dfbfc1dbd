extension JSONNumber {
    /// The sign, significant digits (ASCII, no leading or trailing zeros; empty for zero) and exponent.
    var decimalComponents: (negative: Bool, digits: [UInt8], exponent: Int) {
        switch storage {
        case .int(let value):
            if value == 0 { return (false, [], 0) }
            var magnitude = value.magnitude
            var exponent = 0
            while magnitude % 10 == 0 {
                magnitude /= 10
                exponent += 1
            }
            return (value < 0, Array(String(magnitude).utf8), exponent)
        case .decimal(let significand, let exponent):
            return (significand < 0, Array(String(significand.magnitude).utf8), exponent)
        case .big(let big):
            return (big.negative, big.digits, big.exponent)
        }
    }

    /// The canonical decimal text of the value: the same for all equal numbers, exact, and valid JSON.
    ///
    /// Integers are written in full up to 64 digits (`100`, not `1e2`); fractions are written positionally
    /// when the first significant digit is at most six places after the point (`0.000001`); other values
    /// use one leading digit and an exponent with an explicit sign (`1e-7`, `1.5e+70`).
    public var canonicalText: String {
        withCanonicalText { String(decoding: $0, as: UTF8.self) }
    }

    /// Runs `body` with the UTF-8 bytes of ``canonicalText``, built on the stack for integers and
    /// 64-bit significands (no allocation), so writers of canonical JSON copy them without a `String`.
    func withCanonicalText<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        switch storage {
        case .int(let value):
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
                let start = Self.writeDecimal(value.magnitude, negative: value < 0, endingAt: buffer.count, in: buffer)
                return body(UnsafeBufferPointer(rebasing: buffer[start...]))
            }
        case .decimal(let significand, let exponent):
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
                let start = Self.writeDecimal(significand.magnitude, negative: false, endingAt: digits.count, in: digits)
                return Self.withLayout(negative: significand < 0, digits: UnsafeBufferPointer(rebasing: digits[start...]), exponent: exponent, body)
            }
        case .big(let big):
            return big.digits.withUnsafeBufferPointer { Self.withLayout(negative: big.negative, digits: $0, exponent: big.exponent, body) }
        }
    }

    /// Writes the decimal digits of `magnitude` (with a leading `-` when `negative`) so that they end at
    /// `end`; returns where they start. `buffer` has room for 20 bytes before `end`.
    @inline(__always)
    static func writeDecimal(_ magnitude: UInt64, negative: Bool, endingAt end: Int, in buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var rest = magnitude
        var position = end
        repeat {
            position -= 1
            buffer[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        } while rest != 0
        if negative {
            position -= 1
            buffer[position] = UInt8(ascii: "-")
        }
        return position
    }

    /// Lays out `digits × 10^exponent` in the canonical form (see ``canonicalText``) and runs `body` with it.
    private static func withLayout<Result>(
        negative: Bool, digits: UnsafeBufferPointer<UInt8>, exponent: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        let count = digits.count
        let pointPosition = count + exponent // digits before the decimal point
        // Sign, digits, up to 64 padding zeros or "0." and six zeros, or a point and "e+" with 20 digits.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count + 72) { text in
            var length = 0
            func append(_ byte: UInt8) {
                text[length] = byte
                length += 1
            }
            func append(_ bytes: UnsafeBufferPointer<UInt8>.SubSequence) {
                for byte in bytes { append(byte) }
            }
            func appendZeros(_ zeros: Int) {
                for _ in 0..<zeros { append(UInt8(ascii: "0")) }
            }
            if negative { append(UInt8(ascii: "-")) }
            if exponent >= 0, pointPosition <= 64 {
                append(digits[...])
                appendZeros(exponent)
            } else if exponent < 0, pointPosition > 0 {
                append(digits[..<pointPosition])
                append(UInt8(ascii: "."))
                append(digits[pointPosition...])
            } else if exponent < 0, pointPosition > -6 {
                append(UInt8(ascii: "0"))
                append(UInt8(ascii: "."))
                appendZeros(-pointPosition)
                append(digits[...])
            } else {
                append(digits[0])
                if count > 1 {
                    append(UInt8(ascii: "."))
                    append(digits[1...])
                }
                let scientific = pointPosition - 1
                append(UInt8(ascii: "e"))
                append(UInt8(ascii: scientific < 0 ? "-" : "+"))
                // Written right-aligned in the 20 free bytes, then moved to follow the sign.
                let start = writeDecimal(UInt64(scientific.magnitude), negative: false, endingAt: length + 20, in: text)
                for offset in start..<(length + 20) { append(text[offset]) }
            }
            return body(UnsafeBufferPointer(rebasing: text[..<length]))
        }
    }
}
