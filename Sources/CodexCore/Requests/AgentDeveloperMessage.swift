/// A developer-role message CodexKit adds to a turn: host context or turn policy. Kept apart from the
/// user's prompt so the model sees it without it pretending to be user-authored text.
public struct AgentDeveloperMessage: Sendable, Hashable, Codable {
    /// What the message carries.
    public struct Kind: OpenVocabulary {
        /// The stable name.
        public let rawValue: String
        /// Creates a kind from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Authoritative machine context for the turn (``Request/context``).
        public static let context = Kind(rawValue: "context")
        /// Fulfilment policy for the turn (``Request/options``).
        public static let turnPolicy = Kind(rawValue: "turn_policy")
    }

    /// What the message carries.
    public var kind: Kind
    /// The message text sent to the model.
    public var text: String

    /// Creates a developer message.
    public init(kind: Kind, text: String) {
        self.kind = kind
        self.text = text
    }
}
