"""A strict OTLP/HTTP receiver for CodexKit's telemetry tests, for both encodings.

Parses every export with the official protobuf classes (`opentelemetry-proto`, PyPI), so an export the
tests see here is one a real collector accepts:
- `application/x-protobuf`: `ParseFromString`, then refused when any message holds a field the proto
  files do not define, an ID is not 16 (trace) or 8 (span) bytes or is all zeros, or the body differs
  from what protobuf's own serializer makes of the parsed message (fields out of field-number order, a
  default value written, a varint longer than it needs to be);
- `application/json`: `google.protobuf.json_format.Parse(..., ignore_unknown_fields=False)` after the
  one OTLP/JSON rewrite proto3 JSON lacks (hex trace and span IDs become base64), with OTLP/JSON's own
  rules checked first (lowerCamelCase keys, enums as integers, hex IDs).
Prints `PORT <n>` once listening on 127.0.0.1; see OTLPTestReceiver.swift for the API.

Endpoints:
  POST /v1/traces, POST /v1/metrics  exports (200 `{}`; 400 for a bad body, 415 for another content type)
  POST /control                      {"fail_next": N, "status": 503, "retry_after": "1"} | {"hold": bool}
  GET  /received                     everything accepted so far, flattened (see `snapshot`)
  POST /reset                        forgets everything received
"""

import base64
import gzip
import json
import math
import os
import re
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from google.protobuf.unknown_fields import UnknownFieldSet
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

HEX_TRACE = re.compile(r"[0-9a-f]{32}")
HEX_SPAN = re.compile(r"[0-9a-f]{16}")
SIGNALS = {"/v1/traces": ("traces", ExportTraceServiceRequest), "/v1/metrics": ("metrics", ExportMetricsServiceRequest)}


class Rejected(Exception):
    """An export body that is not valid OTLP (answered 400)."""


# --- OTLP/JSON → proto3 JSON --------------------------------------------------------------------


def convert_id(holder, key, pattern, where, required):
    """Replaces the hex ID `holder[key]` with its base64 form; rejects a malformed or all-zero one."""
    if key not in holder or holder[key] == "":
        if required:
            raise Rejected(f"{where}.{key} is missing")
        holder.pop(key, None)
        return
    value = holder[key]
    if not isinstance(value, str) or not pattern.fullmatch(value):
        digits = 32 if pattern is HEX_TRACE else 16
        raise Rejected(f"{where}.{key} is not {digits} lowercase hex digits: {value!r}")
    if set(value) == {"0"}:
        raise Rejected(f"{where}.{key} is all zeros")
    holder[key] = base64.b64encode(bytes.fromhex(value)).decode("ascii")


def objects(container, key, where):
    """The list of JSON objects at `container[key]` (empty when absent); a wrong shape is left to Parse."""
    items = container.get(key) if isinstance(container, dict) else None
    if not isinstance(items, list):
        return []
    return [(f"{where}.{key}[{i}]", item) for i, item in enumerate(items) if isinstance(item, dict)]


def require_integer_enum(holder, key, where):
    """OTLP/JSON encodes enums as integers; protobuf would also take the value's name."""
    if key in holder and (not isinstance(holder[key], int) or isinstance(holder[key], bool)):
        raise Rejected(f"{where}.{key} must be an integer enum value, got {holder[key]!r}")


def require_camel_case(value, where):
    """OTLP/JSON keys are lowerCamelCase field names; protobuf would also take the proto names."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if "_" in key:
                raise Rejected(f"{where}: key {key!r} is not a lowerCamelCase OTLP/JSON field name")
            require_camel_case(inner, f"{where}.{key}")
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            require_camel_case(inner, f"{where}[{i}]")


def rewrite_traces(body):
    for where, resource in objects(body, "resourceSpans", "$"):
        for where, scope in objects(resource, "scopeSpans", where):
            for where, span in objects(scope, "spans", where):
                convert_id(span, "traceId", HEX_TRACE, where, required=True)
                convert_id(span, "spanId", HEX_SPAN, where, required=True)
                convert_id(span, "parentSpanId", HEX_SPAN, where, required=False)
                require_integer_enum(span, "kind", where)
                if isinstance(span.get("status"), dict):
                    require_integer_enum(span["status"], "code", where + ".status")
                for link_where, link in objects(span, "links", where):
                    convert_id(link, "traceId", HEX_TRACE, link_where, required=True)
                    convert_id(link, "spanId", HEX_SPAN, link_where, required=True)


def rewrite_metrics(body):
    for where, resource in objects(body, "resourceMetrics", "$"):
        for where, scope in objects(resource, "scopeMetrics", where):
            for where, metric in objects(scope, "metrics", where):
                for kind in ("sum", "gauge", "histogram", "exponentialHistogram", "summary"):
                    data = metric.get(kind)
                    if not isinstance(data, dict):
                        continue
                    require_integer_enum(data, "aggregationTemporality", f"{where}.{kind}")
                    for point_where, point in objects(data, "dataPoints", f"{where}.{kind}"):
                        for exemplar_where, exemplar in objects(point, "exemplars", point_where):
                            convert_id(exemplar, "traceId", HEX_TRACE, exemplar_where, required=False)
                            convert_id(exemplar, "spanId", HEX_SPAN, exemplar_where, required=False)


# --- binary protobuf ------------------------------------------------------------------------------


def unknown_fields(message, where):
    """Where `message` or a message inside it holds fields its proto file does not define."""
    found = [where] if len(UnknownFieldSet(message)) else []
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        items = value if field.is_repeated else [value]
        for index, item in enumerate(items):
            found += unknown_fields(item, f"{where}.{field.name}[{index}]" if field.is_repeated else f"{where}.{field.name}")
    return found


def check_id(value, size, where, required):
    if not value:
        if required:
            raise Rejected(f"{where} is missing")
        return
    if len(value) != size:
        raise Rejected(f"{where} is {len(value)} bytes, not {size}")
    if value == bytes(size):
        raise Rejected(f"{where} is all zeros")


def parse_protobuf(signal_name, message_type, raw):
    message = message_type()
    try:
        message.ParseFromString(raw)
    except DecodeError as error:
        raise Rejected(f"protobuf could not parse the {signal_name} export: {error}") from error
    unknown = unknown_fields(message, "$")
    if unknown:
        raise Rejected(f"fields the proto files do not define at {', '.join(unknown[:5])}")
    if signal_name == "traces":
        for resource_spans in message.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    check_id(span.trace_id, 16, f"span {span.name!r} trace_id", required=True)
                    check_id(span.span_id, 8, f"span {span.name!r} span_id", required=True)
                    check_id(span.parent_span_id, 8, f"span {span.name!r} parent_span_id", required=False)
    canonical = message.SerializeToString(deterministic=True)
    if canonical != raw:
        at = next((i for i, (a, b) in enumerate(zip(canonical, raw)) if a != b), min(len(canonical), len(raw)))
        raise Rejected(
            f"the {signal_name} export is not in protobuf's own form ({len(raw)} bytes against {len(canonical)}, first difference at byte {at})"
        )
    return message


def parse_export(signal_name, message_type, raw, media_type):
    """The parsed request message, or `Rejected` with the reason."""
    if media_type == "application/x-protobuf":
        return parse_protobuf(signal_name, message_type, raw)
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise Rejected(f"not JSON: {error}") from error
    if not isinstance(body, dict):
        raise Rejected("the body is not a JSON object")
    require_camel_case(body, "$")
    (rewrite_traces if signal_name == "traces" else rewrite_metrics)(body)
    message = message_type()
    try:
        json_format.Parse(json.dumps(body), message, ignore_unknown_fields=False)
    except json_format.ParseError as error:
        raise Rejected(f"protobuf rejected the {signal_name} export: {error}") from error
    return message


# --- parsed protobuf → flat JSON for the tests ----------------------------------------------------


def any_value(value):
    """An AnyValue as a tagged JSON object, so integral doubles stay doubles on the Swift side."""
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return {"string": value.string_value}
    if kind == "bool_value":
        return {"bool": value.bool_value}
    if kind == "int_value":
        return {"int": value.int_value}
    if kind == "double_value":
        number = value.double_value
        if math.isfinite(number):
            return {"double": number}
        # JSON has no number for these: the name protobuf's JSON mapping gives them.
        return {"double": "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")}
    if kind == "array_value":
        return {"array": [any_value(inner) for inner in value.array_value.values]}
    if kind == "kvlist_value":
        return {"kvlist": attributes(value.kvlist_value.values)}
    if kind == "bytes_value":
        return {"bytes": base64.b64encode(value.bytes_value).decode("ascii")}
    return {"empty": True}


def attributes(pairs):
    return {pair.key: any_value(pair.value) for pair in pairs}


def flatten_spans(request):
    spans = []
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            scope = {"name": scope_spans.scope.name, "version": scope_spans.scope.version}
            for span in scope_spans.spans:
                spans.append({
                    "traceId": span.trace_id.hex(),
                    "spanId": span.span_id.hex(),
                    "parentSpanId": span.parent_span_id.hex(),
                    "name": span.name,
                    "kind": span.kind,
                    "startTimeUnixNano": span.start_time_unix_nano,
                    "endTimeUnixNano": span.end_time_unix_nano,
                    "status": {"code": span.status.code, "message": span.status.message},
                    "attributes": attributes(span.attributes),
                    "events": [
                        {"name": event.name, "timeUnixNano": event.time_unix_nano, "attributes": attributes(event.attributes)}
                        for event in span.events
                    ],
                    "links": [{"traceId": link.trace_id.hex(), "spanId": link.span_id.hex()} for link in span.links],
                    "resource": resource,
                    "scope": scope,
                })
    return spans


def number_point(point):
    flat = {"attributes": attributes(point.attributes), "startTimeUnixNano": point.start_time_unix_nano, "timeUnixNano": point.time_unix_nano}
    kind = point.WhichOneof("value")
    if kind == "as_int":
        flat["value"] = {"int": point.as_int}
    elif kind == "as_double":
        flat["value"] = {"double": point.as_double}
    return flat


def histogram_point(point):
    flat = {
        "attributes": attributes(point.attributes),
        "startTimeUnixNano": point.start_time_unix_nano,
        "timeUnixNano": point.time_unix_nano,
        "count": point.count,
        "bucketCounts": list(point.bucket_counts),
        "explicitBounds": [float(bound) for bound in point.explicit_bounds],
    }
    for field in ("sum", "min", "max"):
        if point.HasField(field):
            flat[field] = float(getattr(point, field))
    return flat


def flatten_metrics(request):
    metrics = []
    for resource_metrics in request.resource_metrics:
        resource = attributes(resource_metrics.resource.attributes)
        for scope_metrics in resource_metrics.scope_metrics:
            scope = {"name": scope_metrics.scope.name, "version": scope_metrics.scope.version}
            for metric in scope_metrics.metrics:
                kind = metric.WhichOneof("data")
                flat = {"name": metric.name, "unit": metric.unit, "description": metric.description, "resource": resource, "scope": scope}
                if kind == "sum":
                    flat.update(type="sum", monotonic=metric.sum.is_monotonic, temporality=metric.sum.aggregation_temporality,
                                points=[number_point(point) for point in metric.sum.data_points])
                elif kind == "gauge":
                    flat.update(type="gauge", points=[number_point(point) for point in metric.gauge.data_points])
                elif kind == "histogram":
                    flat.update(type="histogram", temporality=metric.histogram.aggregation_temporality,
                                points=[histogram_point(point) for point in metric.histogram.data_points])
                elif kind == "exponential_histogram":
                    data = metric.exponential_histogram
                    flat.update(type="exponentialHistogram", temporality=data.aggregation_temporality,
                                points=[{"attributes": attributes(p.attributes), "count": p.count} for p in data.data_points])
                elif kind == "summary":
                    flat.update(type="summary", points=[{"attributes": attributes(p.attributes), "count": p.count, "sum": p.sum}
                                                        for p in metric.summary.data_points])
                else:
                    flat.update(type="none", points=[])
                metrics.append(flat)
    return metrics


# --- state and HTTP ---------------------------------------------------------------------------------


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.released = threading.Event()
        self.released.set()
        self.fail_next = 0
        self.fail_status = 503
        self.retry_after = None
        self.held = 0
        self.clear()

    def clear(self):
        self.spans, self.metrics, self.errors, self.headers = [], [], [], []
        self.exports = {"traces": 0, "metrics": 0}
        self.rejected = 0

    def snapshot(self):
        """`/received`'s body, serialized under the lock (handlers append to these lists concurrently)."""
        with self.lock:
            return json.dumps({"spans": self.spans, "metrics": self.metrics, "errors": self.errors, "rejected": self.rejected,
                               "held": self.held, "exports": self.exports, "headers": self.headers}).encode()


STATE = State()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a collector offers it

    def log_message(self, format, *args):  # noqa: A002 - quiet; errors are in /received
        pass

    def reply(self, status, body=b"{}", extra=None):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            raw = b"".join(chunks)
        else:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding", "").lower() == "gzip":
            raw = gzip.decompress(raw)
        return raw

    def record_error(self, status, text):
        with STATE.lock:
            STATE.errors.append(f"{self.command} {self.path}: {status}: {text}")
        self.reply(status, json.dumps({"error": text}).encode())

    def do_GET(self):
        if self.path == "/received":
            self.reply(200, STATE.snapshot())
        else:
            self.record_error(404, "no such endpoint")

    def do_POST(self):
        try:
            raw = self.read_body()
        except (ValueError, OSError, EOFError) as error:
            self.close_connection = True
            return self.record_error(400, f"unreadable body: {error}")
        if self.path in SIGNALS:
            return self.export(raw, *SIGNALS[self.path])
        if self.path == "/control":
            return self.control(raw)
        if self.path == "/reset":
            with STATE.lock:
                STATE.clear()
            return self.reply(200)
        self.record_error(404, "no such endpoint")

    def control(self, raw):
        try:
            command = json.loads(raw or b"{}")
        except ValueError as error:
            return self.record_error(400, f"control body is not JSON: {error}")
        with STATE.lock:
            if "fail_next" in command:
                STATE.fail_next = int(command["fail_next"])
                STATE.fail_status = int(command.get("status", 503))
                STATE.retry_after = command.get("retry_after")
        if "hold" in command:
            (STATE.released.clear if command["hold"] else STATE.released.set)()
        self.reply(200)

    def export(self, raw, signal_name, message_type):
        media_type = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if media_type not in ("application/json", "application/x-protobuf"):
            return self.record_error(415, f"content type {self.headers.get('Content-Type')!r} is neither application/json nor application/x-protobuf")
        if not STATE.released.is_set():
            with STATE.lock:
                STATE.held += 1
            STATE.released.wait()
            with STATE.lock:
                STATE.held -= 1
        with STATE.lock:
            failing = STATE.fail_next > 0
            if failing:
                STATE.fail_next -= 1
                STATE.rejected += 1
                status, retry_after = STATE.fail_status, STATE.retry_after
        if failing:
            return self.reply(status, b"{}", {"Retry-After": retry_after} if retry_after is not None else None)
        try:
            message = parse_export(signal_name, message_type, raw, media_type)
        except Rejected as error:
            return self.record_error(400, str(error))
        flat = flatten_spans(message) if signal_name == "traces" else flatten_metrics(message)
        with STATE.lock:
            (STATE.spans if signal_name == "traces" else STATE.metrics).extend(flat)
            STATE.exports[signal_name] += 1
            STATE.headers.append({name.lower(): value for name, value in self.headers.items()})
        self.reply(200)


def exit_when_orphaned(parent):
    """Ends this process once the test process that started it is gone (a crashed test run)."""
    while os.getppid() == parent:
        threading.Event().wait(0.5)
    os._exit(0)


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=exit_when_orphaned, args=(os.getppid(),), daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
