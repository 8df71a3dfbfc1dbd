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
        if case .int(let value) = storage { return String(value) }
        let (negative, digits, exponent) = decimalComponents
        let count = digits.count
        let pointPosition = count + exponent // digits before the decimal point
        var text: [UInt8] = []
        text.reserveCapacity(count + 8)
        if negative { text.append(UInt8(ascii: "-")) }
        if exponent >= 0, pointPosition <= 64 {
            text.append(contentsOf: digits)
            text.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: exponent))
        } else if exponent < 0, pointPosition > 0 {
            text.append(contentsOf: digits[..<pointPosition])
            text.append(UInt8(ascii: "."))
            text.append(contentsOf: digits[pointPosition...])
        } else if exponent < 0, pointPosition > -6 {
            text.append(contentsOf: "0.".utf8)
            text.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: -pointPosition))
            text.append(contentsOf: digits)
        } else {
            text.append(digits[0])
            if count > 1 {
                text.append(UInt8(ascii: "."))
                text.append(contentsOf: digits[1...])
            }
            let scientific = pointPosition - 1
            text.append(contentsOf: (scientific < 0 ? "e-" : "e+").utf8)
            text.append(contentsOf: String(scientific.magnitude).utf8)
        }
        return String(decoding: text, as: UTF8.self)
    }
}
