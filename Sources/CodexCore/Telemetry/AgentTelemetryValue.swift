/// The value of a span or metric attribute: the types OpenTelemetry attributes allow.
public enum AgentTelemetryValue: Sendable, Hashable, CustomStringConvertible {
    /// Text.
    case string(String)
    /// A whole number.
    case int(Int64)
    /// A floating-point number.
    case double(Double)
    /// A flag.
    case bool(Bool)
    /// A list of strings (for example finish reasons).
    case strings([String])

    /// An `Int` as ``int(_:)``.
    public static func integer(_ value: Int) -> AgentTelemetryValue { .int(Int64(value)) }

    /// The value as text, for logs and tests.
    public var description: String {
        switch self {
        case .string(let text): return text
        case .int(let number): return String(number)
        case .double(let number): return String(number)
        case .bool(let flag): return String(flag)
        case .strings(let list): return list.joined(separator: ",")
        }
    }
}

extension AgentTelemetryValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral, ExpressibleByFloatLiteral {
    /// A string literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer literal.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A Boolean literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A floating-point literal.
    public init(floatLiteral value: Double) { self = .double(value) }
}

/// Attributes in the order they were set; setting a key again replaces its value in place.
public struct AgentTelemetryAttributes: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// The attributes, in order.
    public private(set) var entries: [(key: String, value: AgentTelemetryValue)] = []

    /// No attributes.
    public init() {}

    /// Attributes from a literal, in its order. Like a dictionary literal's, the keys are expected to be
    /// distinct; they are taken as written (no search), which keeps building a span's attributes cheap.
    public init(dictionaryLiteral elements: (String, AgentTelemetryValue)...) {
        entries.reserveCapacity(elements.count)
        for (key, value) in elements { entries.append((key, value)) }
    }

    /// The value of `key`, or `nil`; assigning `nil` removes it.
    public subscript(key: String) -> AgentTelemetryValue? {
        get { index(of: key).map { entries[$0].value } }
        set {
            if let index = index(of: key) {
                if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append((key, newValue))
            }
        }
    }

    /// Where `key` is. Lengths are compared first (a native string knows its UTF-8 length), so most
    /// other keys are passed over without comparing their text.
    private func index(of key: String) -> Int? {
        let length = key.utf8.count
        return entries.firstIndex { $0.key.utf8.count == length && $0.key == key }
    }

    /// Sets `key` to `count` when the count is known; nothing otherwise.
    public mutating func set(_ key: String, count: Int?) {
        guard let count else { return }
        self[key] = .int(Int64(count))
    }

    /// Makes room for `capacity` attributes in all, so that setting that many allocates once.
    public mutating func reserveCapacity(_ capacity: Int) {
        entries.reserveCapacity(capacity)
    }

    /// How many attributes there are.
    public var count: Int { entries.count }

    /// Iterates in order.
    public func makeIterator() -> IndexingIterator<[(key: String, value: AgentTelemetryValue)]> { entries.makeIterator() }

    /// Equal when the same keys have the same values, in the same order.
    public static func == (lhs: AgentTelemetryAttributes, rhs: AgentTelemetryAttributes) -> Bool {
        lhs.entries.count == rhs.entries.count && zip(lhs.entries, rhs.entries).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    /// Hashes keys and values in order.
    public func hash(into hasher: inout Hasher) {
        for entry in entries {
            hasher.combine(entry.key)
            hasher.combine(entry.value)
        }
    }
}

extension AgentTelemetryAttributes {
    /// Adds the GenAI convention's usage attributes for the counts that are known
    /// (`gen_ai.usage.input_tokens`, `…output_tokens`, `…cache_read.input_tokens`,
    /// `…cache_creation.input_tokens`, `…reasoning.output_tokens`).
    public static func addUsage(_ usage: AgentUsage?, to attributes: inout AgentTelemetryAttributes) {
        guard let usage else { return }
        attributes.set("gen_ai.usage.input_tokens", count: usage.inputTokens)
        attributes.set("gen_ai.usage.output_tokens", count: usage.outputTokens)
        attributes.set("gen_ai.usage.cache_read.input_tokens", count: usage.cachedInputTokens)
        attributes.set("gen_ai.usage.cache_creation.input_tokens", count: usage.cacheWriteInputTokens)
        attributes.set("gen_ai.usage.reasoning.output_tokens", count: usage.reasoningOutputTokens)
    }
}
