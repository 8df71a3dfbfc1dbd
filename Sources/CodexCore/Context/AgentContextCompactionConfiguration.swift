/// When and how a runtime compacts a thread's context. Disabled by default.
///
/// ```swift
/// var compaction = AgentContextCompactionConfiguration(isEnabled: true)   // automatic, hidden, remote then local
/// compaction.trigger = .fractionOfContextWindow(0.8)
/// ```
public struct AgentContextCompactionConfiguration: Sendable, Hashable {
    /// Automatic compaction, or only when the host calls `compactThreadContext(id:)`.
    public enum Mode: String, Sendable, Hashable {
        /// Before a turn whose context passes the trigger, and once after `context_length_exceeded`.
        case automatic
        /// Only on request.
        case manual
    }

    /// Whether a compaction also leaves a visible marker.
    public enum Visibility: String, Sendable, Hashable {
        /// Only the hidden record (not a message) is stored.
        case hidden
        /// A system message `Earlier context was compacted.` is stored after the record as well.
        case visible
    }

    /// Which way compaction is done.
    public enum Strategy: String, Sendable, Hashable {
        /// The provider's endpoint, falling back to a local summary when it fails (not for
        /// authentication failures, which are thrown).
        case remoteThenLocal
        /// The provider's endpoint only.
        case remoteOnly
        /// A local summary turn only.
        case localOnly
    }

    /// When automatic compaction runs.
    public enum Trigger: Sendable, Hashable {
        /// When the next request's estimate passes this many tokens.
        case estimatedTokens(Int)
        /// When it passes this fraction (0…1) of the model's context window (the catalog's, else the
        /// bundled one's; with neither known, 16,000 tokens).
        case fractionOfContextWindow(Double)
    }

    /// Whether compaction is on at all. Default `false`.
    public var isEnabled: Bool
    /// Default `.automatic`.
    public var mode: Mode
    /// Default `.hidden`.
    public var visibility: Visibility
    /// Default `.remoteThenLocal`.
    public var strategy: Strategy
    /// Default `.estimatedTokens(16_000)`.
    public var trigger: Trigger
    /// Whether a turn whose first request fails with `context_length_exceeded` before any output is
    /// compacted and retried once (never more). Default `true`.
    public var retriesAfterContextLengthExceeded: Bool

    /// The default threshold: 16,000 estimated tokens.
    public static let defaultThreshold = 16_000

    /// Creates a configuration.
    public init(
        isEnabled: Bool = false, mode: Mode = .automatic, visibility: Visibility = .hidden, strategy: Strategy = .remoteThenLocal,
        trigger: Trigger = .estimatedTokens(AgentContextCompactionConfiguration.defaultThreshold), retriesAfterContextLengthExceeded: Bool = true
    ) {
        self.isEnabled = isEnabled
        self.mode = mode
        self.visibility = visibility
        self.strategy = strategy
        self.trigger = trigger
        self.retriesAfterContextLengthExceeded = retriesAfterContextLengthExceeded
    }

    /// The token threshold for a model whose context window is `contextWindow` (`nil` when unknown).
    public func threshold(contextWindow: Int?) -> Int {
        switch trigger {
        case .estimatedTokens(let tokens): return max(1, tokens)
        case .fractionOfContextWindow(let fraction):
            guard let contextWindow, fraction.isFinite else { return Self.defaultThreshold }
            return max(1, Int((Double(contextWindow) * min(max(fraction, 0), 1)).rounded(.down)))
        }
    }
}
