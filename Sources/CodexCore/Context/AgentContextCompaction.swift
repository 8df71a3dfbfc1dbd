public import CodexSchema
public import Foundation

/// A compaction of a thread's context, stored in its history: later requests send the compaction's
/// replacement in place of every item before it. The visible history is untouched (the record is not
/// a message); exporting and paging a thread still shows everything.
public struct AgentContextCompaction: Sendable, Hashable, Codable {
    /// How the replacement was made.
    public enum Strategy: String, Sendable, Hashable, Codable {
        /// The provider's compaction endpoint (`POST {base}/responses/compact`).
        case remote
        /// A summary turn run by the runtime with a fixed instruction.
        case local
    }

    /// The record's ID.
    public var id: String
    /// When it was made.
    public var createdAt: Date
    /// How it was made.
    public var strategy: Strategy
    /// How many history items it replaces (those a request replayed when it was made).
    public var replacedItemCount: Int
    /// The history position the replaced items end at: items from there up to the record (a turn's
    /// input stored while it was made) are still replayed, after the replacement.
    public var coversItemsBefore: Int
    /// The summary text of a local compaction (replayed as a developer message).
    public var summary: String?
    /// The provider's items of a remote compaction (Responses input items, replayed as they are; they may
    /// include `compaction` items with `encrypted_content`).
    public var providerItems: [JSONValue]
    /// The estimate of what a request carried before, and carries after, this compaction.
    public var estimatedTokensBefore: Int
    /// See ``estimatedTokensBefore``.
    public var estimatedTokensAfter: Int

    /// Creates a record.
    public init(
        id: String = UUID().uuidString.lowercased(), createdAt: Date, strategy: Strategy, replacedItemCount: Int, coversItemsBefore: Int,
        summary: String? = nil,
        providerItems: [JSONValue] = [], estimatedTokensBefore: Int, estimatedTokensAfter: Int
    ) {
        self.id = id
        self.createdAt = createdAt
        self.strategy = strategy
        self.replacedItemCount = replacedItemCount
        self.coversItemsBefore = coversItemsBefore
        self.summary = summary
        self.providerItems = providerItems
        self.estimatedTokensBefore = estimatedTokensBefore
        self.estimatedTokensAfter = estimatedTokensAfter
    }
}

extension AgentContextCompaction {
    /// The developer message a local summary is replayed as.
    public static func summaryMessage(_ summary: String) -> String {
        "Summary of the earlier conversation (it replaces the messages before it):\n\(summary)"
    }

    /// The fixed instruction of a local compaction's summary turn.
    public static let summaryInstruction = """
        Summarise the conversation so far for your own later use: the user's goals and constraints, the \
        decisions made, facts learned from tools, open questions, and where the work stands. Be complete but \
        concise; write plain text, no preamble.
        """
}
