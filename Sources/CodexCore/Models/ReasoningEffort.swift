/// How much reasoning the model spends. Unknown efforts are kept and sent as they are.
///
/// The name stored and decoded is ``rawValue``; the name sent to inference is ``wireName``
/// (`.extraHigh` → `xhigh`, `.ultra` → `max`).
public enum ReasoningEffort: Sendable, Hashable, Codable, CustomStringConvertible, CaseIterable {
    /// No reasoning.
    case none
    /// Minimal reasoning.
    case minimal
    /// Low.
    case low
    /// Medium.
    case medium
    /// High.
    case high
    /// Extra high (`xhigh` on the wire).
    case extraHigh
    /// Maximum (`max`).
    case max
    /// Ultra: sent to inference as `max`; it adds no agent delegation.
    case ultra
    /// An effort this version does not know.
    case custom(String)

    /// The known efforts.
    public static let allCases: [ReasoningEffort] = [.none, .minimal, .low, .medium, .high, .extraHigh, .max, .ultra]

    /// Parses a stored or wire name (`xhigh`, `ultra`, …); unknown names become ``custom(_:)``.
    public init(rawValue: String) {
        switch rawValue {
        case "none": self = .none
        case "minimal": self = .minimal
        case "low": self = .low
        case "medium": self = .medium
        case "high": self = .high
        case "xhigh", "extraHigh", "extra_high": self = .extraHigh
        case "max": self = .max
        case "ultra": self = .ultra
        default: self = .custom(rawValue)
        }
    }

    /// The stored name: `none`, `minimal`, `low`, `medium`, `high`, `xhigh`, `max`, `ultra` or the custom text.
    public var rawValue: String {
        switch self {
        case .none: return "none"
        case .minimal: return "minimal"
        case .low: return "low"
        case .medium: return "medium"
        case .high: return "high"
        case .extraHigh: return "xhigh"
        case .max: return "max"
        case .ultra: return "ultra"
        case .custom(let name): return name
        }
    }

    /// The name sent as `reasoning.effort`.
    public var wireName: String {
        self == .ultra ? "max" : rawValue
    }

    /// The stored name.
    public var description: String { rawValue }

    /// Decodes the stored name.
    public init(from decoder: any Decoder) throws { self.init(rawValue: try decoder.singleValueContainer().decode(String.self)) }
    /// Encodes the stored name.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
