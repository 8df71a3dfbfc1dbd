import CodexSchema

/// Estimates what a thread's next request sends: the replayed history (from the latest compaction
/// record on) plus the instructions, as UTF-8 bytes of the content sent, and tokens as bytes ÷ 4
/// rounded up (``name``). An image counts as ``imageBytes``. It is an estimate for triggering
/// compaction, not the provider's tokenizer.
///
/// ```swift
/// let estimate = AgentContextEstimator.estimate(AgentContextEstimator.replayedItems(history), instructions: persona)
/// print(estimate.estimatedTokens)
/// ```
public enum AgentContextEstimator {
    /// The estimator's name, as reported in ``AgentThreadContextUsage/estimator``.
    public static let name = "utf8_bytes_div_4"
    /// What one image counts as: 4,000 bytes (1,000 estimated tokens).
    public static let imageBytes = 4_000

    /// An estimate.
    public struct Estimate: Sendable, Hashable {
        /// Input items sent.
        public var items: Int
        /// UTF-8 bytes of their content and the instructions.
        public var bytes: Int
        /// `bytes ÷ 4`, rounded up.
        public var estimatedTokens: Int { (bytes + 3) / 4 }
    }

    /// What a request replays of `history`: with no compaction, all of it; else the latest compaction
    /// record (standing for the items it replaced), then the items stored between the end of what it
    /// replaced and the record (a turn's input stored while it was made), then everything after it.
    public static func replayedItems(_ history: [AgentHistoryItem]) -> [AgentHistoryItem] {
        guard let last = history.lastIndex(where: { if case .contextCompaction = $0 { true } else { false } }),
              case .contextCompaction(let record) = history[last] else { return history }
        let start = min(max(record.coversItemsBefore, 0), last)
        return [history[last]] + history[start..<last] + history[(last + 1)...]
    }

    /// The estimate for sending `items` with `instructions`.
    public static func estimate(_ items: some Sequence<AgentHistoryItem>, instructions: String = "") -> Estimate {
        var estimate = Estimate(items: 0, bytes: instructions.utf8.count)
        for item in items {
            let bytes = Self.bytes(of: item)
            guard let bytes else { continue }
            // A remote compaction is replayed as its provider items.
            if case .contextCompaction(let compaction) = item, compaction.summary == nil {
                estimate.items += compaction.providerItems.count
            } else {
                estimate.items += 1
            }
            estimate.bytes += bytes
        }
        return estimate
    }

    /// The bytes `item` adds to a request, or `nil` when it is not sent (turn events).
    public static func bytes(of item: AgentHistoryItem) -> Int? {
        switch item {
        case .message(let message):
            return message.text.utf8.count + message.images.count * imageBytes
        case .toolCall(let call):
            return call.toolName.utf8.count + call.arguments.utf8.count
        case .toolResult(let result):
            return result.content.reduce(result.toolName.utf8.count) { total, block in
                switch block {
                case .text(let text): total + text.utf8.count
                case .image: total + imageBytes
                }
            }
        case .reasoning(let reasoning):
            guard let encrypted = reasoning.encryptedContent, !encrypted.isEmpty else { return nil }
            return reasoning.summary.reduce(encrypted.utf8.count) { $0 + $1.utf8.count }
        case .systemEvent:
            return nil
        case .contextCompaction(let compaction):
            if let summary = compaction.summary { return AgentContextCompaction.summaryMessage(summary).utf8.count }
            return compaction.providerItems.reduce(0) { $0 + $1.compactString().utf8.count }
        }
    }
}

/// What a thread's next request would send, against the model's context window.
public struct AgentThreadContextUsage: Sendable, Hashable {
    /// The thread.
    public var threadID: AgentThreadID
    /// The model the next turn would use (the thread's, else the runtime's or backend's default).
    public var model: CodexModel
    /// Input items the next request replays.
    public var items: Int
    /// Their UTF-8 bytes plus the instructions'.
    public var bytes: Int
    /// Estimated tokens (``estimator``).
    public var estimatedTokens: Int
    /// How the tokens were estimated: ``AgentContextEstimator/name``.
    public var estimator: String
    /// The model's context window (the account's catalog, else the bundled one), or `nil` when unknown.
    public var contextWindow: Int?
    /// The automatic compaction threshold, or `nil` when compaction is off or manual.
    public var compactionThreshold: Int?
    /// Compaction records in the thread's history.
    public var compactions: Int

    /// `estimatedTokens` as a fraction of the context window, when it is known.
    public var fractionOfContextWindow: Double? {
        contextWindow.flatMap { $0 > 0 ? Double(estimatedTokens) / Double($0) : nil }
    }

    /// Creates a usage report.
    public init(
        threadID: AgentThreadID, model: CodexModel, items: Int, bytes: Int, estimatedTokens: Int, estimator: String = AgentContextEstimator.name,
        contextWindow: Int?, compactionThreshold: Int?, compactions: Int
    ) {
        self.threadID = threadID
        self.model = model
        self.items = items
        self.bytes = bytes
        self.estimatedTokens = estimatedTokens
        self.estimator = estimator
        self.contextWindow = contextWindow
        self.compactionThreshold = compactionThreshold
        self.compactions = compactions
    }
}
