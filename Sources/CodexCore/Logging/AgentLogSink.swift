public import Foundation

/// Severity of a log event.
public enum AgentLogLevel: Int, Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// Every detail (e.g. each SSE event).
    case trace
    /// Diagnostic detail.
    case debug
    /// Normal operation.
    case info
    /// Noteworthy operation.
    case notice
    /// Something unexpected that was handled.
    case warning
    /// A failure.
    case error

    /// Orders by severity.
    public static func < (lhs: AgentLogLevel, rhs: AgentLogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The lowercase name.
    public var description: String {
        switch self {
        case .trace: return "trace"
        case .debug: return "debug"
        case .info: return "info"
        case .notice: return "notice"
        case .warning: return "warning"
        case .error: return "error"
        }
    }
}

/// The area an event comes from. Open: hosts may add their own.
public struct AgentLogCategory: OpenVocabulary {
    /// The name.
    public let rawValue: String
    /// Creates a category.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Sign-in, tokens, sessions.
    public static let auth = AgentLogCategory(rawValue: "auth")
    /// Threads and turns.
    public static let runtime = AgentLogCategory(rawValue: "runtime")
    /// State stores.
    public static let persistence = AgentLogCategory(rawValue: "persistence")
    /// HTTP and streaming.
    public static let network = AgentLogCategory(rawValue: "network")
    /// Retries and backoff.
    public static let retry = AgentLogCategory(rawValue: "retry")
    /// Tool execution.
    public static let tools = AgentLogCategory(rawValue: "tools")
    /// Approvals.
    public static let approvals = AgentLogCategory(rawValue: "approvals")
    /// Structured output.
    public static let structuredOutput = AgentLogCategory(rawValue: "structured_output")
    /// Structured request recovery.
    public static let recovery = AgentLogCategory(rawValue: "recovery")
    /// Context compaction.
    public static let compaction = AgentLogCategory(rawValue: "compaction")
    /// Memory retrieval and capture.
    public static let memory = AgentLogCategory(rawValue: "memory")
    /// MCP servers: connections, protocol problems and the servers' own standard error.
    public static let mcp = AgentLogCategory(rawValue: "mcp")
    /// Telemetry export: a collector that refused or could not be reached.
    public static let telemetry = AgentLogCategory(rawValue: "telemetry")
}

/// One log or telemetry event. A struct, so fields can be added without breaking sinks.
///
/// - Important: Producers never put credentials, prompts or model output in events.
public struct AgentLogEvent: Sendable, Hashable {
    /// When it happened.
    public var timestamp: Date
    /// Severity.
    public var level: AgentLogLevel
    /// Area.
    public var category: AgentLogCategory
    /// A stable dotted name, e.g. `recovery.receipt.saved`.
    public var name: String
    /// A short human-readable message.
    public var message: String
    /// Structured, log-safe fields.
    public var metadata: [String: String]

    /// Creates an event.
    public init(
        timestamp: Date = Date(), level: AgentLogLevel, category: AgentLogCategory, name: String, message: String = "",
        metadata: [String: String] = [:]
    ) {
        self.timestamp = timestamp
        self.level = level
        self.category = category
        self.name = name
        self.message = message
        self.metadata = metadata
    }
}

/// Receives log and telemetry events. Libraries accept a sink; they never install a global one.
///
/// Implementation requirements: ``record(_:)`` is called inline on the producer's thread, so it must
/// be fast and must not block; it may be called from many threads at once.
public protocol AgentLogSink: Sendable {
    /// Records one event.
    func record(_ event: AgentLogEvent)
}

/// Drops every event. The default.
public struct NoOpAgentLogSink: AgentLogSink {
    /// Creates the sink.
    public init() {}
    /// Drops the event.
    public func record(_ event: AgentLogEvent) {}
}

/// Forwards every event to several sinks, in order.
public struct MultiplexAgentLogSink: AgentLogSink {
    /// The sinks.
    public let sinks: [any AgentLogSink]
    /// Creates the sink.
    public init(_ sinks: [any AgentLogSink]) { self.sinks = sinks }
    /// Forwards the event.
    public func record(_ event: AgentLogEvent) {
        for sink in sinks { sink.record(event) }
    }
}

/// Forwards events at or above a level to another sink.
public struct LevelFilteringAgentLogSink: AgentLogSink {
    /// The lowest level forwarded.
    public let minimumLevel: AgentLogLevel
    /// The destination.
    public let destination: any AgentLogSink
    /// Creates the sink.
    public init(minimumLevel: AgentLogLevel, destination: any AgentLogSink) {
        self.minimumLevel = minimumLevel
        self.destination = destination
    }
    /// Forwards the event if its level is high enough.
    public func record(_ event: AgentLogEvent) {
        if event.level >= minimumLevel { destination.record(event) }
    }
}
