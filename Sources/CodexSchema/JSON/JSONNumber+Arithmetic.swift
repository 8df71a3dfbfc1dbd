extension JSONNumber: Comparable {
    /// Mathematical order: exact for every pair of values.
    public static func < (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        compare(lhs, rhs) < 0
    }

    /// Returns -1, 0 or 1 as `lhs` is below, equal to or above `rhs`, exactly.
    static func compare(_ lhs: JSONNumber, _ rhs: JSONNumber) -> Int {
        if case .int(let left) = lhs.storage, case .int(let right) = rhs.storage {
            return left < right ? -1 : (left == right ? 0 : 1)
        }
        // Correct rounding is monotonic: unequal doubles order their exact values the same way.
        let left = lhs.doubleValue
        let right = rhs.doubleValue
        if left < right { return -1 }
        if left > right { return 1 }
        return exactCompare(lhs, rhs)
    }

    private static func exactCompare(_ lhs: JSONNumber, _ rhs: JSONNumber) -> Int {
        if lhs == rhs { return 0 }
        let left = lhs.decimalComponents
        let right = rhs.decimalComponents
        let leftSign = left.digits.isEmpty ? 0 : (left.negative ? -1 : 1)
        let rightSign = right.digits.isEmpty ? 0 : (right.negative ? -1 : 1)
        if leftSign != rightSign { return leftSign < rightSign ? -1 : 1 }
        let magnitudeOrder = compareMagnitudes(left.digits, left.exponent, right.digits, right.exponent)
        return leftSign < 0 ? -magnitudeOrder : magnitudeOrder
    }

    private static func compareMagnitudes(_ a: [UInt8], _ aExponent: Int, _ b: [UInt8], _ bExponent: Int) -> Int {
        let aOrder = a.count + aExponent
        let bOrder = b.count + bExponent
        if aOrder != bOrder { return aOrder < bOrder ? -1 : 1 }
        for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// Whether `self ÷ divisor` is an integer, computed exactly (`0.0075` is a multiple of `0.0001`;
    /// `1e308` is not a multiple of `0.123456789`).
    ///
    /// - Parameters:
    ///   - divisor: A number above zero.
    ///   - maximumDigits: A bound on the work for very long significands.
    /// - Returns: The answer, or `nil` when the significands together have more than `maximumDigits`
    ///   digits (rather than running for long), or when `divisor` is not above zero.
    public func isMultiple(of divisor: JSONNumber, maximumDigits: Int = 100_000) -> Bool? {
        if divisor.isZero || divisor.isNegative { return nil }
        if case .int(let value) = storage, case .int(let step) = divisor.storage, step > 0 {
            return value % step == 0
        }
        if isZero { return true }
        let value = decimalComponents
        let step = divisor.decimalComponents
        // value = X·10^ex, step = D·10^ed with X and D free of trailing zeros.
        // If ed > ex, X would need the factor 10^(ed-ex), which it lacks.
        if step.exponent > value.exponent { return false }
        let shift = value.exponent - step.exponent
        guard value.digits.count + step.digits.count <= maximumDigits else { return nil }
        if step.digits.count <= 19, let modulus = UInt64(String(decoding: step.digits, as: UTF8.self)) {
            var remainder: UInt64 = 0
            for digit in value.digits {
                remainder = Self.mulMod(remainder, 10, modulus)
                remainder = Self.addMod(remainder, UInt64(digit - UInt8(ascii: "0")), modulus)
            }
            let scale = Self.powMod(10, UInt64(shift), modulus)
            return Self.mulMod(remainder, scale, modulus) == 0
        }
        // A divisor beyond 64 bits: reduce digit by digit in a small bignum.
        guard shift <= maximumDigits else { return nil }
        let modulus = BigUInt(decimalDigits: step.digits)
        var remainder = BigUInt()
        for digit in value.digits {
            remainder.multiplyAdd(10, UInt32(digit - UInt8(ascii: "0")))
            remainder.reduce(modulo: modulus)
        }
        for _ in 0..<shift {
            remainder.multiplyAdd(10, 0)
            remainder.reduce(modulo: modulus)
        }
        return remainder.isZero
    }

    private static func mulMod(_ a: UInt64, _ b: UInt64, _ m: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return m.dividingFullWidth((high: product.high, low: product.low)).remainder
    }

    private static func addMod(_ a: UInt64, _ b: UInt64, _ m: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b % m)
        if overflow || sum >= m { return sum &- m }
        return sum
    }

    private static func powMod(_ base: UInt64, _ exponent: UInt64, _ m: UInt64) -> UInt64 {
        if m == 1 { return 0 }
        var result: UInt64 = 1
        var base = base % m
        var exponent = exponent
        while exponent > 0 {
            if exponent & 1 == 1 { result = mulMod(result, base, m) }
            base = mulMod(base, base, m)
            exponent >>= 1
        }
        return result
    }
}

/// A minimal unsigned big integer (little-endian 32-bit limbs) for exact `multipleOf` with divisors
/// beyond 64 bits. Only what that needs: multiply-add by a small value, compare, subtract.
struct BigUInt {
    private(set) var limbs: [UInt32] = []

    init() {}

    init(decimalDigits: [UInt8]) {
        for digit in decimalDigits { multiplyAdd(10, UInt32(digit - UInt8(ascii: "0"))) }
    }

    var isZero: Bool { limbs.isEmpty }

    mutating func multiplyAdd(_ factor: UInt32, _ addend: UInt32) {
        var carry = UInt64(addend)
        for index in limbs.indices {
            let product = UInt64(limbs[index]) * UInt64(factor) + carry
            limbs[index] = UInt32(truncatingIfNeeded: product)
            carry = product >> 32
        }
        if carry != 0 { limbs.append(UInt32(carry)) }
        trim()
    }

    /// Reduces `self` below `modulus`, assuming `self < 10 · modulus` (at most nine subtractions).
    mutating func reduce(modulo modulus: BigUInt) {
        while compare(to: modulus) >= 0 { subtract(modulus) }
    }

    private func compare(to other: BigUInt) -> Int {
        if limbs.count != other.limbs.count { return limbs.count < other.limbs.count ? -1 : 1 }
        for index in limbs.indices.reversed() where limbs[index] != other.limbs[index] {
            return limbs[index] < other.limbs[index] ? -1 : 1
        }
        return 0
    }

    private mutating func subtract(_ other: BigUInt) {
        var borrow: Int64 = 0
        for index in limbs.indices {
            let right = index < other.limbs.count ? Int64(other.limbs[index]) : 0
            var difference = Int64(limbs[index]) - right - borrow
            borrow = 0
            if difference < 0 {
                difference += 1 << 32
                borrow = 1
            }
            limbs[index] = UInt32(difference)
        }
        trim()
    }

    private mutating func trim() {
        while let last = limbs.last, last == 0 { limbs.removeLast() }
    }
}
