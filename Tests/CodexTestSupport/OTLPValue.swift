/// An OTLP `AnyValue` as the test receiver parsed it: an attribute's value, or a metric point's value.
///
/// Literals build values, so a test can write `#expect(span.attributes["http.response.status_code"] == 503)`.
public enum OTLPValue: Sendable, Equatable, Decodable {
    /// `stringValue`.
    case string(String)
    /// `boolValue`.
    case bool(Bool)
    /// `intValue` (and a point's `asInt`).
    case int(Int64)
    /// `doubleValue` (and a point's `asDouble`).
    case double(Double)
    /// `arrayValue`.
    case array([OTLPValue])

    private enum CodingKeys: String, CodingKey {
        case string, bool, int, double, array, kvlist, bytes, empty
    }

    /// Decodes the receiver's tagged form (`{"int": 5}`, `{"double": 5.0}`, …), which keeps an integral
    /// double a double.
    /// - Throws: `DecodingError` for a kind this enum does not model (a key-value list, bytes, an empty value).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let key = container.allKeys.first, container.allKeys.count == 1 else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "a value needs exactly one kind"))
        }
        switch key {
        case .string: self = .string(try container.decode(String.self, forKey: key))
        case .bool: self = .bool(try container.decode(Bool.self, forKey: key))
        case .int: self = .int(try container.decode(Int64.self, forKey: key))
        case .double:
            if let number = try? container.decode(Double.self, forKey: key) {
                self = .double(number)
            } else {
                // NaN and the infinities come as the names protobuf's JSON mapping gives them.
                switch try container.decode(String.self, forKey: key) {
                case "NaN": self = .double(.nan)
                case "Infinity": self = .double(.infinity)
                case "-Infinity": self = .double(-.infinity)
                case let other:
                    throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [key as any CodingKey], debugDescription: "not a double: \(other)"))
                }
            }
        case .array: self = .array(try container.decode([OTLPValue].self, forKey: key))
        case .kvlist, .bytes, .empty:
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath + [key as any CodingKey], debugDescription: "the exporter sent a \(key.rawValue) AnyValue, which OTLPValue does not model")
            )
        }
    }
}

extension OTLPValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByArrayLiteral {
    /// A `.string` value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A `.bool` value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An `.int` value.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A `.double` value.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// An `.array` value.
    public init(arrayLiteral elements: OTLPValue...) { self = .array(elements) }
}
