/// An exact JSON number.
///
/// JSON numbers are decimal. `JSONNumber` keeps the mathematical value of every number it parses:
/// integers beyond 64 bits and decimals with any number of significant digits are not rounded through
/// `Double`. Equality is mathematical (`1 == 1.0 == 10e-1`), and equal numbers always have the same
/// ``canonicalText``, so they serialize to the same bytes and hash alike.
///
/// ```swift
/// let a = JSONNumber(parsing: "1.0")!
/// a == 1               // true
/// a.isInteger          // true
/// JSONNumber(parsing: "123456789012345678901234567890")!.canonicalText // "123456789012345678901234567890"
/// JSONNumber(parsing: "2.50E-3")!.canonicalText // "0.0025"
/// ```
///
/// The representation is normalized on construction (no leading or trailing zeros in the significand),
/// so synthesized equality and hashing are mathematical.
public struct JSONNumber: Sendable, Hashable {
    /// The normalized storage. Exactly one case represents a given value.
    enum Storage: Sendable, Hashable {
        /// An integer that fits `Int64`.
        case int(Int64)
        /// `significand × 10^exponent` with a significand that is not a multiple of ten, or an integer
        /// whose value does not fit `Int64` although its significand does.
        case decimal(significand: Int64, exponent: Int)
        /// A significand beyond 64 bits.
        case big(BigDecimalDigits)
    }

    let storage: Storage

    init(storage: Storage) { self.storage = storage }

    /// Creates the number with the value of `value`.
    public init(_ value: Int) { storage = .int(Int64(value)) }

    /// Creates the number with the value of `value`.
    public init(_ value: Int64) { storage = .int(value) }

    /// Creates the number with the value of `value`, exactly, also above `Int64.max`.
    public init(_ value: UInt64) {
        if value <= UInt64(Int64.max) {
            storage = .int(Int64(value))
        } else {
            storage = JSONNumber.normalized(negative: false, magnitude: value, exponent: 0).storage
        }
    }

    /// Creates the number with the shortest decimal value that round-trips to `value`, or `nil` for
    /// infinities and NaN, which JSON cannot represent.
    ///
    /// `JSONNumber(0.1)` is exactly one tenth, the decimal a person reads, not the binary value of `0.1`.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        if let integer = Int64(exactly: value) {
            storage = .int(integer)
            return
        }
        guard let parsed = JSONNumber(parsing: value.description) else { return nil }
        self = parsed
    }

    /// Parses the JSON number grammar of RFC 8259 (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`)
    /// with no surrounding whitespace. Returns `nil` for anything else or an exponent beyond ±10⁹.
    public init?(parsing text: String) {
        var text = text
        let parsed: JSONNumber? = text.withUTF8 { buffer in
            var scanner = JSONNumberScanner(bytes: buffer, start: 0)
            guard let number = try? scanner.scan(), scanner.end == buffer.count else { return nil }
            return number
        }
        guard let parsed else { return nil }
        self = parsed
    }

    /// Whether the value is a mathematical integer (`1.0` and `1e3` are integers).
    public var isInteger: Bool {
        switch storage {
        case .int: return true
        case .decimal(_, let exponent): return exponent >= 0
        case .big(let big): return big.exponent >= 0
        }
    }

    /// The value as `Int64` when it is an integer within range, else `nil`.
    public var int64Value: Int64? {
        if case .int(let value) = storage { return value }
        return nil
    }

    /// The value as `UInt64` when it is a non-negative integer within range, else `nil`.
    public var uint64Value: UInt64? {
        if let value = int64Value { return UInt64(exactly: value) }
        // Beyond Int64: an integer's canonical text is its plain digits.
        return isInteger ? UInt64(canonicalText) : nil
    }

    /// The value as `Int` when it is an integer within range, else `nil`.
    public var intValue: Int? {
        guard let value = int64Value else { return nil }
        return Int(exactly: value)
    }

    /// The nearest `Double` (correctly rounded). Values beyond its range become ±infinity.
    public var doubleValue: Double {
        switch storage {
        case .int(let value):
            return Double(value)
        case .decimal(let significand, let exponent):
            // Clinger's fast path: both operands exact in binary64, one correctly rounded operation.
            if significand.magnitude <= 1 << 53, exponent >= -22, exponent <= 22 {
                let scale = JSONNumber.exactPowersOfTen[Int(exponent.magnitude)]
                return exponent < 0 ? Double(significand) / scale : Double(significand) * scale
            }
            return Double(canonicalText) ?? .nan
        case .big:
            return Double(canonicalText) ?? .nan
        }
    }

    /// Whether the value is zero.
    public var isZero: Bool { storage == .int(0) }

    /// Whether the value is below zero.
    public var isNegative: Bool {
        switch storage {
        case .int(let value): return value < 0
        case .decimal(let significand, _): return significand < 0
        case .big(let big): return big.negative
        }
    }

    static let exactPowersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }
}

extension JSONNumber: ExpressibleByIntegerLiteral {
    /// Creates a number from an integer literal.
    public init(integerLiteral value: Int64) { self.init(value) }
}

extension JSONNumber: ExpressibleByFloatLiteral {
    /// Creates a number from a floating-point literal (always finite).
    public init(floatLiteral value: Double) {
        self = JSONNumber(value) ?? JSONNumber(0)
    }
}

extension JSONNumber: CustomStringConvertible {
    /// The ``canonicalText``.
    public var description: String { canonicalText }
}

/// The significand digits of a number beyond 64 bits. Normalized: the first and last digit are not zero.
final class BigDecimalDigits: Sendable, Hashable {
    let negative: Bool
    /// ASCII digits `0`…`9`.
    let digits: [UInt8]
    let exponent: Int

    init(negative: Bool, digits: [UInt8], exponent: Int) {
        self.negative = negative
        self.digits = digits
        self.exponent = exponent
    }

    static func == (lhs: BigDecimalDigits, rhs: BigDecimalDigits) -> Bool {
        lhs.negative == rhs.negative && lhs.exponent == rhs.exponent && lhs.digits == rhs.digits
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(negative)
        hasher.combine(exponent)
        hasher.combine(digits)
    }
}
