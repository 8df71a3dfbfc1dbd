public import Foundation

/// Which turn budget ran out.
public enum AgentExecutionLimit: String, Sendable, Hashable, Codable {
    /// Requested tool calls (counted even when denied or answered from stored results).
    case toolCalls = "tool_calls"
    /// Wall-clock time from producer launch to accepted completion.
    case duration
    /// Model requests within the turn (backend budget).
    case modelPasses = "model_passes"
    /// Response bytes including SSE framing (backend budget).
    case responseBytes = "response_bytes"
    /// Output items (backend budget).
    case responseItems = "response_items"
}

/// Runtime budgets for every turn (plain, structured and ephemeral).
///
/// ```swift
/// let limits = AgentTurnLimits(maximumToolCalls: 128, maximumDuration: 300) // the default
/// let none = AgentTurnLimits.unlimited
/// try limits.validate()
/// ```
///
/// A tool batch must fit the remaining tool-call budget before any of its executors starts.
public struct AgentTurnLimits: Sendable, Hashable, Codable {
    /// The longest duration accepted: one year, in seconds.
    public static let maximumAllowedDuration: TimeInterval = 31_536_000

    /// The most tool calls one turn may request; `nil` for no limit.
    public var maximumToolCalls: Int?
    /// The longest a turn may run, in seconds; `nil` for no limit.
    public var maximumDuration: TimeInterval?

    /// Creates limits. Defaults: 128 tool calls, 300 seconds. Check them with ``validate()``.
    public init(maximumToolCalls: Int? = 128, maximumDuration: TimeInterval? = 300) {
        self.maximumToolCalls = maximumToolCalls
        self.maximumDuration = maximumDuration
    }

    /// No runtime budgets (the backend's own limits still apply).
    public static let unlimited = AgentTurnLimits(maximumToolCalls: nil, maximumDuration: nil)

    /// The defaults: 128 tool calls and 300 seconds.
    public static let `default` = AgentTurnLimits()

    /// Checks the rules: tool calls ≥ 0; duration finite, above zero and at most one year.
    ///
    /// - Throws: ``AgentRuntimeError`` with code `invalid_turn_limits`.
    public func validate() throws {
        if let maximumToolCalls, maximumToolCalls < 0 {
            throw AgentRuntimeError(code: .invalidTurnLimits, message: "maximumToolCalls must be zero or more")
        }
        if let maximumDuration {
            guard maximumDuration.isFinite, maximumDuration > 0 else {
                throw AgentRuntimeError(code: .invalidTurnLimits, message: "maximumDuration must be finite and above zero")
            }
            guard maximumDuration <= Self.maximumAllowedDuration else {
                throw AgentRuntimeError(code: .invalidTurnLimits, message: "maximumDuration must be at most one year")
            }
        }
    }

    /// Whether a batch of `batchSize` calls fits after `used` calls.
    public func allowsToolBatch(of batchSize: Int, afterUsing used: Int) -> Bool {
        guard let maximumToolCalls else { return true }
        return used + batchSize <= maximumToolCalls
    }
}
