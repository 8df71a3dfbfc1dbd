extension JSONValue: Codable {
    /// Decodes any JSON value. Numbers read through `Decoder` keep only what the decoder offers
    /// (`Int64`, `UInt64` or `Double`); parse the text with `JSONValue(parsing:)` for exactness.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? container.decode(Int64.self) {
            self = .number(JSONNumber(integer))
        } else if let unsigned = try? container.decode(UInt64.self) {
            self = .number(JSONNumber(unsigned))
        } else if let double = try? container.decode(Double.self), let number = JSONNumber(double) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let elements = try? container.decode([JSONValue].self) {
            self = .array(elements)
        } else {
            let members = try container.decode([String: JSONValue].self)
            self = .object(JSONObject(members))
        }
    }

    /// Encodes the value. Integers that fit `Int64` or `UInt64` encode as integers (so `JSONDecoder`
    /// reads them back exactly); other numbers as `Double`, unless the encoder is CodexKit's own.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .number(let number):
            if let integer = number.int64Value {
                try container.encode(integer)
            } else if let unsigned = number.uint64Value {
                try container.encode(unsigned)
            } else {
                try container.encode(number.doubleValue)
            }
        case .string(let text): try container.encode(text)
        case .array(let elements): try container.encode(elements)
        case .object(let object): try container.encode(object.dictionary)
        }
    }
}
