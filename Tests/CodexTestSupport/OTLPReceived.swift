/// Everything an ``OTLPTestReceiver`` accepted since it started (or since its last `reset()`), rebuilt
/// from the protobuf messages the official `opentelemetry-proto` classes parsed, in arrival order.
public struct OTLPReceived: Sendable, Equatable, Decodable {
    /// How many exports of each signal were accepted (answered 200).
    public struct Exports: Sendable, Equatable, Decodable {
        /// Accepted `POST /v1/traces`.
        public let traces: Int
        /// Accepted `POST /v1/metrics`.
        public let metrics: Int
    }

    /// Every span of every accepted trace export.
    public let spans: [OTLPReceivedSpan]
    /// Every metric of every accepted metrics export: one entry per metric per export.
    public let metrics: [OTLPReceivedMetric]
    /// Why exports were refused (400 for a body that is not valid OTLP, 415 for a wrong content
    /// type), as `"POST /v1/traces: 400: <reason>"`; an exporter under test should leave this empty.
    public let errors: [String]
    /// Exports answered with the status ``OTLPTestReceiver/failNext(_:status:retryAfter:)`` set.
    public let rejected: Int
    /// Exports currently blocked by ``OTLPTestReceiver/hold(_:)``.
    public let held: Int
    /// The accepted-export counts.
    public let exports: Exports
    /// The request headers of each accepted export, names lowercased.
    public let headers: [[String: String]]
}

/// The instrumentation scope a span or metric was exported under.
public struct OTLPReceivedScope: Sendable, Equatable, Decodable {
    /// The scope's name.
    public let name: String
    /// The scope's version ("" when absent).
    public let version: String
}

/// One received span.
public struct OTLPReceivedSpan: Sendable, Equatable, Decodable {
    /// The span's status.
    public struct Status: Sendable, Equatable, Decodable {
        /// 0 unset, 1 ok, 2 error.
        public let code: Int
        /// The status message ("" when absent).
        public let message: String
    }

    /// One span event.
    public struct Event: Sendable, Equatable, Decodable {
        /// The event's name.
        public let name: String
        /// When it happened, in nanoseconds since the Unix epoch.
        public let timeUnixNano: UInt64
        /// Its attributes.
        public let attributes: [String: OTLPValue]
    }

    /// One link to another span.
    public struct Link: Sendable, Equatable, Decodable {
        /// The linked trace, 32 lowercase hex digits.
        public let traceID: String
        /// The linked span, 16 lowercase hex digits.
        public let spanID: String

        private enum CodingKeys: String, CodingKey {
            case traceID = "traceId", spanID = "spanId"
        }
    }

    /// The trace ID, 32 lowercase hex digits.
    public let traceID: String
    /// The span ID, 16 lowercase hex digits.
    public let spanID: String
    /// The parent's span ID, or "" for a root span.
    public let parentSpanID: String
    /// The span's name.
    public let name: String
    /// The span kind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer.
    public let kind: Int
    /// The start, in nanoseconds since the Unix epoch.
    public let startTimeUnixNano: UInt64
    /// The end, in nanoseconds since the Unix epoch.
    public let endTimeUnixNano: UInt64
    /// The status.
    public let status: Status
    /// The span's attributes.
    public let attributes: [String: OTLPValue]
    /// The span's events, in order.
    public let events: [Event]
    /// The span's links, in order.
    public let links: [Link]
    /// The attributes of the resource the span was exported with.
    public let resource: [String: OTLPValue]
    /// The instrumentation scope.
    public let scope: OTLPReceivedScope

    private enum CodingKeys: String, CodingKey {
        case traceID = "traceId", spanID = "spanId", parentSpanID = "parentSpanId"
        case name, kind, startTimeUnixNano, endTimeUnixNano, status, attributes, events, links, resource, scope
    }
}

/// One metric of one received export.
public struct OTLPReceivedMetric: Sendable, Equatable, Decodable {
    /// The metric's data kind.
    public enum Kind: String, Sendable, Equatable, Decodable {
        /// A sum (counter or up-down counter).
        case sum
        /// A gauge.
        case gauge
        /// An explicit-bucket histogram.
        case histogram
        /// An exponential histogram (points carry attributes and count only).
        case exponentialHistogram
        /// A summary (points carry attributes, count and sum only).
        case summary
        /// A metric without data.
        case empty = "none"
    }

    /// The metric's name.
    public let name: String
    /// Its unit ("" when absent).
    public let unit: String
    /// Its description ("" when absent).
    public let description: String
    /// The data kind.
    public let kind: Kind
    /// Whether a sum is monotonic; nil for other kinds.
    public let monotonic: Bool?
    /// The aggregation temporality of a sum or histogram (1 delta, 2 cumulative); nil for other kinds.
    public let temporality: Int?
    /// The attributes of the resource the metric was exported with.
    public let resource: [String: OTLPValue]
    /// The instrumentation scope.
    public let scope: OTLPReceivedScope
    /// The data points, in order.
    public let points: [OTLPReceivedPoint]

    private enum CodingKeys: String, CodingKey {
        case name, unit, description, kind = "type", monotonic, temporality, resource, scope, points
    }
}

/// One data point of a received metric; which fields are set depends on the metric's kind.
public struct OTLPReceivedPoint: Sendable, Equatable, Decodable {
    /// The point's attributes.
    public let attributes: [String: OTLPValue]
    /// The start of the point's interval, in nanoseconds since the Unix epoch (0 when absent).
    public let startTimeUnixNano: UInt64?
    /// The point's time, in nanoseconds since the Unix epoch.
    public let timeUnixNano: UInt64?
    /// A sum's or gauge's value: `.int` for `asInt`, `.double` for `asDouble`.
    public let value: OTLPValue?
    /// A histogram's (or summary's) count.
    public let count: UInt64?
    /// A histogram's (or summary's) sum, when present.
    public let sum: Double?
    /// A histogram's bucket counts.
    public let bucketCounts: [UInt64]?
    /// A histogram's explicit bucket bounds.
    public let explicitBounds: [Double]?
    /// A histogram's minimum, when present.
    public let min: Double?
    /// A histogram's maximum, when present.
    public let max: Double?
}
