public import Foundation

/// One rate-limit window (primary or secondary) of a limit family.
public struct AgentRateLimitWindow: Sendable, Hashable, Codable {
    /// The share used, 0…100.
    public var usedPercent: Double
    /// The window length in minutes, when reported.
    public var windowDurationMinutes: Int?
    /// When the window resets, when reported.
    public var resetsAt: Date?

    /// Creates a window.
    public init(usedPercent: Double, windowDurationMinutes: Int? = nil, resetsAt: Date? = nil) {
        self.usedPercent = usedPercent
        self.windowDurationMinutes = windowDurationMinutes
        self.resetsAt = resetsAt
    }

    /// The share left, 0…100 (0 when the used share is not a number).
    public var remainingPercent: Double { usedPercent.isNaN ? 0 : Swift.max(0, Swift.min(100, 100 - usedPercent)) }
}

/// Credit information of an account.
public struct AgentCreditsSnapshot: Sendable, Hashable, Codable {
    /// Whether the account has credits.
    public var hasCredits: Bool?
    /// Whether credits are unlimited.
    public var unlimited: Bool?
    /// The balance as reported (a decimal string).
    public var balance: String?

    /// Creates a credits snapshot.
    public init(hasCredits: Bool? = nil, unlimited: Bool? = nil, balance: String? = nil) {
        self.hasCredits = hasCredits
        self.unlimited = unlimited
        self.balance = balance
    }
}

/// The latest observed limits of one metered family (e.g. `codex`) for the signed-in account. Missing
/// values mean unavailable, never zero.
public struct AgentRateLimitSnapshot: Sendable, Hashable, Codable {
    /// The family ID, lowercased with `-` replaced by `_` (default `codex`).
    public var limitID: String
    /// A display name, when reported.
    public var limitName: String?
    /// The primary window.
    public var primary: AgentRateLimitWindow?
    /// The secondary window.
    public var secondary: AgentRateLimitWindow?
    /// Credits.
    public var credits: AgentCreditsSnapshot?

    /// Creates a snapshot; the ID is normalized.
    public init(
        limitID: String = "codex",
        limitName: String? = nil,
        primary: AgentRateLimitWindow? = nil,
        secondary: AgentRateLimitWindow? = nil,
        credits: AgentCreditsSnapshot? = nil
    ) {
        self.limitID = Self.normalizedID(limitID)
        self.limitName = limitName
        self.primary = primary
        self.secondary = secondary
        self.credits = credits
    }

    /// `current` updated by `updates`: a family `updates` names replaces the one in `current`, every
    /// other family is kept; the result is sorted by family ID. A `codex.rate_limits` event or a
    /// response usually names one family, and must not erase the others.
    public static func merging(_ current: [AgentRateLimitSnapshot], with updates: [AgentRateLimitSnapshot]) -> [AgentRateLimitSnapshot] {
        var byID: [String: AgentRateLimitSnapshot] = [:]
        for snapshot in current + updates { byID[snapshot.limitID] = snapshot }
        return byID.values.sorted { $0.limitID < $1.limitID }
    }

    /// `Codex-Other` → `codex_other`.
    public static func normalizedID(_ id: String) -> String {
        id.lowercased().replacingOccurrences(of: "-", with: "_")
    }
}

/// Token usage of a response or turn. Every count is optional: an unknown value is never treated as zero,
/// and totals are never made up.
public struct AgentUsage: Sendable, Hashable, Codable {
    /// Input tokens.
    public var inputTokens: Int?
    /// Input tokens served from cache.
    public var cachedInputTokens: Int?
    /// Input tokens written to cache.
    public var cacheWriteInputTokens: Int?
    /// Output tokens.
    public var outputTokens: Int?
    /// Output tokens spent on reasoning.
    public var reasoningOutputTokens: Int?
    /// The total the provider reported.
    public var totalTokens: Int?

    /// Creates usage.
    public init(
        inputTokens: Int? = nil, cachedInputTokens: Int? = nil, cacheWriteInputTokens: Int? = nil,
        outputTokens: Int? = nil, reasoningOutputTokens: Int? = nil, totalTokens: Int? = nil
    ) {
        self.inputTokens = inputTokens
        self.cachedInputTokens = cachedInputTokens
        self.cacheWriteInputTokens = cacheWriteInputTokens
        self.outputTokens = outputTokens
        self.reasoningOutputTokens = reasoningOutputTokens
        self.totalTokens = totalTokens
    }

    /// Whether a count is negative: no provider reports one, so a stored one is damage.
    package var hasNegativeCount: Bool {
        [inputTokens, cachedInputTokens, cacheWriteInputTokens, outputTokens, reasoningOutputTokens, totalTokens].contains { ($0 ?? 0) < 0 }
    }

    /// The reported total, else input + output when both are known (and their sum fits), else `nil`.
    public var derivedTotalTokens: Int? {
        if let totalTokens { return totalTokens }
        guard let inputTokens, let outputTokens else { return nil }
        let (sum, overflow) = inputTokens.addingReportingOverflow(outputTokens)
        return overflow ? nil : sum
    }

    /// The sum of two observations, field by field; a field stays `nil` unless both are known.
    public static func + (lhs: AgentUsage, rhs: AgentUsage) -> AgentUsage {
        func add(_ a: Int?, _ b: Int?) -> Int? {
            guard let a, let b else { return nil }
            return a + b
        }
        return AgentUsage(
            inputTokens: add(lhs.inputTokens, rhs.inputTokens),
            cachedInputTokens: add(lhs.cachedInputTokens, rhs.cachedInputTokens),
            cacheWriteInputTokens: add(lhs.cacheWriteInputTokens, rhs.cacheWriteInputTokens),
            outputTokens: add(lhs.outputTokens, rhs.outputTokens),
            reasoningOutputTokens: add(lhs.reasoningOutputTokens, rhs.reasoningOutputTokens),
            totalTokens: add(lhs.totalTokens, rhs.totalTokens)
        )
    }
}
