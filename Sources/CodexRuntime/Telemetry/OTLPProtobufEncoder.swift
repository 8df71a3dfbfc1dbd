import CodexCore

/// Encodes spans and metric snapshots as binary protobuf OTLP/HTTP export requests
/// (`ExportTraceServiceRequest`, `ExportMetricsServiceRequest` of `opentelemetry-proto`), in the form
/// protobuf's own serializers produce: fields in field-number order, default values left out. The
/// numbers in the comments are the proto files' field numbers.
enum OTLPProtobufEncoder {
    /// One trace export request for `spans`; `resource` as it is exported (``OTLPExporterConfiguration/exportedResource``).
    static func traces(_ spans: [AgentSpanData], resource: AgentTelemetryAttributes) -> [UInt8] {
        var writer = ProtobufWriter(capacity: 256 + spans.count * 512)
        writer.messageField(1) { resourceSpans in  // ExportTraceServiceRequest.resource_spans
            resourceSpans.messageField(1) { attributes(resource, field: 1, &$0) }  // ResourceSpans.resource; Resource.attributes
            resourceSpans.messageField(2) { scopeSpans in  // ResourceSpans.scope_spans
                scopeSpans.messageField(1, scope)  // ScopeSpans.scope
                for span in spans { scopeSpans.messageField(2) { write(span, &$0) } }  // ScopeSpans.spans
            }
        }
        return writer.bytes
    }

    /// One metrics export request for `snapshot`; `resource` as it is exported.
    static func metrics(_ snapshot: AgentMetrics.Snapshot, resource: AgentTelemetryAttributes) -> [UInt8] {
        var writer = ProtobufWriter(capacity: 4_096)
        writer.messageField(1) { resourceMetrics in  // ExportMetricsServiceRequest.resource_metrics
            resourceMetrics.messageField(1) { attributes(resource, field: 1, &$0) }  // ResourceMetrics.resource
            resourceMetrics.messageField(2) { scopeMetrics in  // ResourceMetrics.scope_metrics
                scopeMetrics.messageField(1, scope)  // ScopeMetrics.scope
                for series in snapshot.series {  // ScopeMetrics.metrics
                    scopeMetrics.messageField(2) { metric(series.instrument, series.points, snapshot, &$0) }
                }
            }
        }
        return writer.bytes
    }

    /// InstrumentationScope: name (1), version (2).
    private static func scope(_ writer: inout ProtobufWriter) {
        writer.stringField(1, "codexkit")
        writer.stringField(2, CodexKitVersion.current)
    }

    /// Span: trace_id (1), span_id (2), parent_span_id (4), name (5), kind (6), start_time_unix_nano (7),
    /// end_time_unix_nano (8), attributes (9), events (11), status (15).
    private static func write(_ span: AgentSpanData, _ writer: inout ProtobufWriter) {
        writer.bigEndianField(1, span.context.traceHigh, span.context.traceLow)
        writer.bigEndianField(2, span.context.spanValue)
        if let parent = span.parentID { writer.bigEndianField(4, parent) }
        string(5, span.name, &writer)
        if span.kind.rawValue != 0 { writer.varintField(6, UInt64(span.kind.rawValue)) }
        fixed64(7, span.startTimeUnixNano, &writer)
        fixed64(8, span.endTimeUnixNano, &writer)
        attributes(span.attributes, field: 9, &writer)
        for event in span.events {
            // Span.Event: time_unix_nano (1), name (2), attributes (3).
            writer.messageField(11) { writer in
                fixed64(1, event.timeUnixNano, &writer)
                string(2, event.name, &writer)
                attributes(event.attributes, field: 3, &writer)
            }
        }
        // Status: message (2), code (3); an unset status is no status.
        switch span.status {
        case .unset: break
        case .ok: writer.messageField(15) { $0.varintField(3, 1) }
        case .error(let message):
            writer.messageField(15) { writer in
                string(2, message, &writer)
                writer.varintField(3, 2)
            }
        }
    }

    /// Metric: name (1), description (2), unit (3), then one of gauge (5), sum (7), histogram (9), each
    /// with data_points (1) and, for sums and histograms, aggregation_temporality (2, cumulative) and
    /// for sums is_monotonic (3).
    private static func metric(
        _ instrument: AgentMetricInstrument, _ points: [AgentMetrics.Point], _ snapshot: AgentMetrics.Snapshot, _ writer: inout ProtobufWriter
    ) {
        string(1, instrument.name, &writer)
        string(2, instrument.description, &writer)
        string(3, instrument.unit, &writer)
        switch instrument.kind {
        case .gauge, .highWater:
            writer.messageField(5) { gauge in
                for point in points { gauge.messageField(1) { numberPoint(point, start: nil, snapshot.timeUnixNano, &$0) } }
            }
        case .counter:
            writer.messageField(7) { sum in
                for point in points { sum.messageField(1) { numberPoint(point, start: snapshot.startTimeUnixNano, snapshot.timeUnixNano, &$0) } }
                sum.varintField(2, 2)
                sum.varintField(3, 1)
            }
        case .histogram(let bounds):
            writer.messageField(9) { histogram in
                for point in points {
                    histogram.messageField(1) { histogramPoint(point, bounds: bounds, snapshot, &$0) }
                }
                histogram.varintField(2, 2)
            }
        }
    }

    /// NumberDataPoint: start_time_unix_nano (2), time_unix_nano (3), as_double (4), as_int (6),
    /// attributes (7).
    private static func numberPoint(_ point: AgentMetrics.Point, start: UInt64?, _ time: UInt64, _ writer: inout ProtobufWriter) {
        if let start { fixed64(2, start, &writer) }
        fixed64(3, time, &writer)
        switch point.value {
        case .gauge(let value): writer.fixed64Field(4, value.bitPattern)
        case .count(let sum): writer.fixed64Field(6, UInt64(bitPattern: sum))
        case .histogram: break
        }
        attributes(point.attributes, field: 7, &writer)
    }

    /// HistogramDataPoint: start_time_unix_nano (2), time_unix_nano (3), count (4), sum (5),
    /// bucket_counts (6, packed), explicit_bounds (7, packed), attributes (9), min (11), max (12).
    private static func histogramPoint(_ point: AgentMetrics.Point, bounds: [Double], _ snapshot: AgentMetrics.Snapshot, _ writer: inout ProtobufWriter) {
        guard case .histogram(let count, let sum, let low, let high, let buckets) = point.value else { return }
        fixed64(2, snapshot.startTimeUnixNano, &writer)
        fixed64(3, snapshot.timeUnixNano, &writer)
        fixed64(4, count, &writer)
        writer.fixed64Field(5, sum.bitPattern)
        writer.packedFixed64Field(6, buckets)
        writer.packedFixed64Field(7, bounds.lazy.map(\.bitPattern))
        attributes(point.attributes, field: 9, &writer)
        writer.fixed64Field(11, low.bitPattern)
        writer.fixed64Field(12, high.bitPattern)
    }

    /// Each attribute as a KeyValue field: key (1), value (2, an AnyValue).
    private static func attributes(_ attributes: AgentTelemetryAttributes, field: UInt64, _ writer: inout ProtobufWriter) {
        for entry in attributes.entries {
            writer.messageField(field) { pair in
                string(1, entry.key, &pair)
                pair.messageField(2) { anyValue(entry.value, &$0) }
            }
        }
    }

    /// AnyValue, a oneof (so even a zero or empty value is written): string_value (1), bool_value (2),
    /// int_value (3), double_value (4), array_value (5, an ArrayValue of values (1)).
    private static func anyValue(_ value: AgentTelemetryValue, _ writer: inout ProtobufWriter) {
        switch value {
        case .string(let text): writer.stringField(1, text)
        case .bool(let flag): writer.varintField(2, flag ? 1 : 0)
        case .int(let number): writer.varintField(3, UInt64(bitPattern: number))
        case .double(let number): writer.fixed64Field(4, number.bitPattern)
        case .strings(let texts):
            writer.messageField(5) { array in
                for text in texts { array.messageField(1) { $0.stringField(1, text) } }
            }
        }
    }

    /// A string field unless it is empty (proto3's default).
    private static func string(_ field: UInt64, _ text: String, _ writer: inout ProtobufWriter) {
        if !text.isEmpty { writer.stringField(field, text) }
    }

    /// A `fixed64` field unless it is zero (proto3's default).
    private static func fixed64(_ field: UInt64, _ value: UInt64, _ writer: inout ProtobufWriter) {
        if value != 0 { writer.fixed64Field(field, value) }
    }
}
