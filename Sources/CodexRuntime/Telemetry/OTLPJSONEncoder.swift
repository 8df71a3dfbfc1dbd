import CodexCore
import CodexSchema

/// Encodes spans and metric snapshots as OTLP/HTTP JSON export requests
/// (`ExportTraceServiceRequest`, `ExportMetricsServiceRequest`): lowerCamelCase field names, trace and
/// span IDs as lowercase hex, enums as numbers, 64-bit integers as decimal strings. Written straight
/// into bytes through the canonical JSON writer's escaping (no value tree: an export is encoded on every
/// batch).
enum OTLPJSONEncoder {
    /// One trace export request for `spans`; `resource` as it is exported (``OTLPExporterConfiguration/exportedResource``).
    static func traces(_ spans: [AgentSpanData], resource: AgentTelemetryAttributes) -> [UInt8] {
        encode(capacity: 256 + spans.count * 768) { sink in
            sink.ascii(#"{"resourceSpans":[{"resource":"#)
            resourceObject(resource, &sink)
            sink.ascii(#","scopeSpans":[{"scope":"#)
            scope(&sink)
            sink.ascii(#","spans":["#)
            list(spans, &sink) { span, sink in write(span, &sink) }
            sink.ascii("]}]}]}")
        }
    }

    /// One metrics export request for `snapshot`; `resource` as it is exported.
    static func metrics(_ snapshot: AgentMetrics.Snapshot, resource: AgentTelemetryAttributes) -> [UInt8] {
        encode(capacity: 4_096) { sink in
            sink.ascii(#"{"resourceMetrics":[{"resource":"#)
            resourceObject(resource, &sink)
            sink.ascii(#","scopeMetrics":[{"scope":"#)
            scope(&sink)
            sink.ascii(#","metrics":["#)
            list(snapshot.series, &sink) { series, sink in metric(series.instrument, series.points, snapshot, &sink) }
            sink.ascii("]}]}]}")
        }
    }

    private static func encode(capacity: Int, _ body: (inout CanonicalJSONSink) -> Void) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(capacity)
        CanonicalJSONSink.write(to: { output.append(contentsOf: $0) }, body)
        return output
    }

    private static func scope(_ sink: inout CanonicalJSONSink) {
        sink.ascii(#"{"name":"codexkit","version":"#)
        string(CodexKitVersion.current, &sink)
        sink.byte(UInt8(ascii: "}"))
    }

    private static func resourceObject(_ resource: AgentTelemetryAttributes, _ sink: inout CanonicalJSONSink) {
        sink.ascii(#"{"attributes":"#)
        attributes(resource, &sink)
        sink.byte(UInt8(ascii: "}"))
    }

    private static func write(_ span: AgentSpanData, _ sink: inout CanonicalJSONSink) {
        sink.ascii(#"{"traceId":""#)
        sink.hex(span.context.traceHigh)
        sink.hex(span.context.traceLow)
        sink.ascii(#"","spanId":""#)
        sink.hex(span.context.spanValue)
        if let parent = span.parentID {
            sink.ascii(#"","parentSpanId":""#)
            sink.hex(parent)
        }
        sink.ascii(#"","name":"#)
        string(span.name, &sink)
        sink.ascii(#","kind":"#)
        sink.integer(Int64(span.kind.rawValue))
        sink.ascii(#","startTimeUnixNano":"#)
        quoted(span.startTimeUnixNano, &sink)
        sink.ascii(#","endTimeUnixNano":"#)
        quoted(span.endTimeUnixNano, &sink)
        sink.ascii(#","attributes":"#)
        attributes(span.attributes, &sink)
        if !span.events.isEmpty {
            sink.ascii(#","events":["#)
            list(span.events, &sink) { event, sink in
                sink.ascii(#"{"timeUnixNano":"#)
                quoted(event.timeUnixNano, &sink)
                sink.ascii(#","name":"#)
                string(event.name, &sink)
                sink.ascii(#","attributes":"#)
                attributes(event.attributes, &sink)
                sink.byte(UInt8(ascii: "}"))
            }
            sink.byte(UInt8(ascii: "]"))
        }
        switch span.status {
        case .unset: break
        case .ok: sink.ascii(#","status":{"code":1}"#)
        case .error(let message):
            sink.ascii(#","status":{"message":"#)
            string(message, &sink)
            sink.ascii(#","code":2}"#)
        }
        sink.byte(UInt8(ascii: "}"))
    }

    private static func metric(
        _ instrument: AgentMetricInstrument, _ points: [AgentMetrics.Point], _ snapshot: AgentMetrics.Snapshot, _ sink: inout CanonicalJSONSink
    ) {
        sink.ascii(#"{"name":"#)
        string(instrument.name, &sink)
        sink.ascii(#","unit":"#)
        string(instrument.unit, &sink)
        sink.ascii(#","description":"#)
        string(instrument.description, &sink)
        switch instrument.kind {
        case .counter: sink.ascii(#","sum":{"aggregationTemporality":2,"isMonotonic":true,"dataPoints":["#)
        case .histogram: sink.ascii(#","histogram":{"aggregationTemporality":2,"dataPoints":["#)
        case .gauge, .highWater: sink.ascii(#","gauge":{"dataPoints":["#)
        }
        list(points, &sink) { point, sink in
            sink.ascii(#"{"attributes":"#)
            attributes(point.attributes, &sink)
            if instrument.kind != .gauge, instrument.kind != .highWater {
                sink.ascii(#","startTimeUnixNano":"#)
                quoted(snapshot.startTimeUnixNano, &sink)
            }
            sink.ascii(#","timeUnixNano":"#)
            quoted(snapshot.timeUnixNano, &sink)
            switch point.value {
            case .count(let sum):
                sink.ascii(#","asInt":"#)
                quoted(sum, &sink)
            case .gauge(let value):
                sink.ascii(#","asDouble":"#)
                double(value, &sink)
            case .histogram(let count, let sum, let low, let high, let buckets):
                sink.ascii(#","count":"#)
                quoted(count, &sink)
                sink.ascii(#","sum":"#)
                double(sum, &sink)
                sink.ascii(#","bucketCounts":["#)
                list(buckets, &sink) { bucket, sink in quoted(bucket, &sink) }
                sink.ascii(#"],"explicitBounds":["#)
                if case .histogram(let bounds) = instrument.kind { list(bounds, &sink) { bound, sink in double(bound, &sink) } }
                sink.ascii(#"],"min":"#)
                double(low, &sink)
                sink.ascii(#","max":"#)
                double(high, &sink)
            }
            sink.byte(UInt8(ascii: "}"))
        }
        sink.ascii("]}}")
    }

    private static func attributes(_ attributes: AgentTelemetryAttributes, _ sink: inout CanonicalJSONSink) {
        sink.byte(UInt8(ascii: "["))
        list(attributes.entries, &sink) { entry, sink in
            sink.ascii(#"{"key":"#)
            string(entry.key, &sink)
            sink.ascii(#","value":"#)
            anyValue(entry.value, &sink)
            sink.byte(UInt8(ascii: "}"))
        }
        sink.byte(UInt8(ascii: "]"))
    }

    private static func anyValue(_ value: AgentTelemetryValue, _ sink: inout CanonicalJSONSink) {
        switch value {
        case .string(let text):
            sink.ascii(#"{"stringValue":"#)
            string(text, &sink)
        case .int(let number):
            sink.ascii(#"{"intValue":"#)
            quoted(number, &sink)
        case .double(let number):
            sink.ascii(#"{"doubleValue":"#)
            double(number, &sink)
        case .bool(let flag):
            sink.ascii(flag ? #"{"boolValue":true"# : #"{"boolValue":false"#)
        case .strings(let texts):
            sink.ascii(#"{"arrayValue":{"values":["#)
            Self.list(texts, &sink) { text, sink in
                sink.ascii(#"{"stringValue":"#)
                string(text, &sink)
                sink.byte(UInt8(ascii: "}"))
            }
            sink.ascii("]}")
        }
        sink.byte(UInt8(ascii: "}"))
    }

    /// `items` written one after another with commas between them (the brackets are the caller's).
    private static func list<Item>(_ items: some Sequence<Item>, _ sink: inout CanonicalJSONSink, _ write: (Item, inout CanonicalJSONSink) -> Void) {
        var first = true
        for item in items {
            if !first { sink.byte(UInt8(ascii: ",")) }
            first = false
            write(item, &sink)
        }
    }

    private static func string(_ text: String, _ sink: inout CanonicalJSONSink) {
        var text = text
        text.withUTF8 { sink.string($0) }
    }

    /// A 64-bit integer as a quoted decimal (OTLP/JSON's form for int64 and fixed64 fields).
    private static func quoted(_ value: some BinaryInteger, _ sink: inout CanonicalJSONSink) {
        sink.byte(UInt8(ascii: "\""))
        if let signed = Int64(exactly: value) {
            sink.integer(signed)
        } else {
            for digit in String(value).utf8 { sink.byte(digit) }
        }
        sink.byte(UInt8(ascii: "\""))
    }

    /// A double as a JSON number; NaN and the infinities, which JSON has no number for, as the strings
    /// protobuf's JSON mapping gives them (`"NaN"`, `"Infinity"`, `"-Infinity"`), so a JSON export
    /// carries the same value a protobuf one does.
    private static func double(_ value: Double, _ sink: inout CanonicalJSONSink) {
        if let number = JSONNumber(value) {
            sink.number(number)
        } else {
            string(value.isNaN ? "NaN" : value > 0 ? "Infinity" : "-Infinity", &sink)
        }
    }
}
