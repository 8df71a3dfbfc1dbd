import CodexCore
import CodexSchema

/// Encodes spans and metric snapshots as OTLP/HTTP JSON export requests
/// (`ExportTraceServiceRequest`, `ExportMetricsServiceRequest`): lowerCamelCase field names, trace and
/// span IDs as lowercase hex, enums as numbers, 64-bit integers as decimal strings.
enum OTLPJSONEncoder {
    /// The instrumentation scope every span and metric carries.
    static let scope: JSONValue = .object(JSONObject([("name", .string("codexkit")), ("version", .string(CodexKitVersion.current))]))

    /// One trace export request for `spans`.
    static func traces(_ spans: [AgentSpanData], resource: AgentTelemetryAttributes) -> [UInt8] {
        let encoded = spans.map(span)
        let scopeSpans = JSONValue.object(JSONObject([("scope", scope), ("spans", .array(encoded))]))
        let resourceSpans = JSONValue.object(JSONObject([("resource", resourceValue(resource)), ("scopeSpans", .array([scopeSpans]))]))
        return JSONValue.object(JSONObject([("resourceSpans", .array([resourceSpans]))])).compactBytes()
    }

    /// One metrics export request for `snapshot`.
    static func metrics(_ snapshot: AgentMetrics.Snapshot, resource: AgentTelemetryAttributes) -> [UInt8] {
        let encoded = snapshot.series.map { metric($0.instrument, $0.points, snapshot) }
        let scopeMetrics = JSONValue.object(JSONObject([("scope", scope), ("metrics", .array(encoded))]))
        let resourceMetrics = JSONValue.object(JSONObject([("resource", resourceValue(resource)), ("scopeMetrics", .array([scopeMetrics]))]))
        return JSONValue.object(JSONObject([("resourceMetrics", .array([resourceMetrics]))])).compactBytes()
    }

    private static func resourceValue(_ resource: AgentTelemetryAttributes) -> JSONValue {
        var all = resource
        if all["telemetry.sdk.name"] == nil { all["telemetry.sdk.name"] = "codexkit" }
        if all["telemetry.sdk.language"] == nil { all["telemetry.sdk.language"] = "swift" }
        if all["telemetry.sdk.version"] == nil { all["telemetry.sdk.version"] = .string(CodexKitVersion.current) }
        return .object(JSONObject([("attributes", attributes(all))]))
    }

    private static func span(_ span: AgentSpanData) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("traceId", .string(span.context.traceIDHex)),
            ("spanId", .string(span.context.spanIDHex)),
        ]
        if let parent = span.parentSpanID { members.append(("parentSpanId", .string(AgentSpanContext.hex(parent)))) }
        members += [
            ("name", .string(span.name)),
            ("kind", .number(JSONNumber(span.kind.rawValue))),
            ("startTimeUnixNano", .string(String(span.startTimeUnixNano))),
            ("endTimeUnixNano", .string(String(span.endTimeUnixNano))),
            ("attributes", attributes(span.attributes)),
        ]
        if !span.events.isEmpty {
            members.append(("events", .array(span.events.map { event in
                .object(JSONObject([
                    ("timeUnixNano", .string(String(event.timeUnixNano))), ("name", .string(event.name)), ("attributes", attributes(event.attributes)),
                ]))
            })))
        }
        switch span.status {
        case .unset: break
        case .ok: members.append(("status", .object(JSONObject([("code", .number(1))]))))
        case .error(let message): members.append(("status", .object(JSONObject([("message", .string(message)), ("code", .number(2))]))))
        }
        return .object(JSONObject(members))
    }

    private static func metric(_ instrument: AgentMetricInstrument, _ points: [AgentMetrics.Point], _ snapshot: AgentMetrics.Snapshot) -> JSONValue {
        let start = JSONValue.string(String(snapshot.startTimeUnixNano))
        let time = JSONValue.string(String(snapshot.timeUnixNano))
        var members: [(String, JSONValue)] = [("name", .string(instrument.name)), ("unit", .string(instrument.unit)), ("description", .string(instrument.description))]
        switch instrument.kind {
        case .counter:
            let dataPoints = points.map { point -> JSONValue in
                guard case .count(let sum) = point.value else { return .null }
                return .object(JSONObject([("attributes", attributes(point.attributes)), ("startTimeUnixNano", start), ("timeUnixNano", time), ("asInt", .string(String(sum)))]))
            }
            members.append(("sum", .object(JSONObject([
                ("dataPoints", .array(dataPoints.filter { !$0.isNull })), ("aggregationTemporality", .number(2)), ("isMonotonic", .bool(true)),
            ]))))
        case .histogram(let bounds):
            let dataPoints = points.map { point -> JSONValue in
                guard case .histogram(let count, let sum, let low, let high, let buckets) = point.value else { return .null }
                return .object(JSONObject([
                    ("attributes", attributes(point.attributes)), ("startTimeUnixNano", start), ("timeUnixNano", time),
                    ("count", .string(String(count))), ("sum", double(sum)),
                    ("bucketCounts", .array(buckets.map { .string(String($0)) })), ("explicitBounds", .array(bounds.map(double))),
                    ("min", double(low)), ("max", double(high)),
                ]))
            }
            members.append(("histogram", .object(JSONObject([("dataPoints", .array(dataPoints.filter { !$0.isNull })), ("aggregationTemporality", .number(2))]))))
        case .gauge, .highWater:
            let dataPoints = points.map { point -> JSONValue in
                guard case .gauge(let value) = point.value else { return .null }
                return .object(JSONObject([("attributes", attributes(point.attributes)), ("timeUnixNano", time), ("asDouble", double(value))]))
            }
            members.append(("gauge", .object(JSONObject([("dataPoints", .array(dataPoints.filter { !$0.isNull }))]))))
        }
        return .object(JSONObject(members))
    }

    private static func attributes(_ attributes: AgentTelemetryAttributes) -> JSONValue {
        .array(attributes.entries.map { entry in
            .object(JSONObject([("key", .string(entry.key)), ("value", anyValue(entry.value))]))
        })
    }

    private static func anyValue(_ value: AgentTelemetryValue) -> JSONValue {
        switch value {
        case .string(let text): return .object(JSONObject([("stringValue", .string(text))]))
        case .int(let number): return .object(JSONObject([("intValue", .string(String(number)))]))
        case .double(let number): return .object(JSONObject([("doubleValue", double(number))]))
        case .bool(let flag): return .object(JSONObject([("boolValue", .bool(flag))]))
        case .strings(let list):
            let values = list.map { JSONValue.object(JSONObject([("stringValue", .string($0))])) }
            return .object(JSONObject([("arrayValue", .object(JSONObject([("values", .array(values))])))]))
        }
    }

    private static func double(_ value: Double) -> JSONValue {
        JSONNumber(value).map(JSONValue.number) ?? .number(0)
    }
}
