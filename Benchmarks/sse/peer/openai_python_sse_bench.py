#!/usr/bin/env python3
"""Peer benchmark: openai-python's SSE decoding of ../text-stream.sse, for comparison with `codexctl bench sse`.

The stream (a streamed Responses answer, 20,008 events) is read into memory once and cut into 16 KiB
`bytes` chunks (as an HTTP client hands them over); each run then reads it `--passes` times in a row,
with a fresh decoder per pass (one `Stream` per response), and the median of `--runs` runs is reported:

  newline count         `chunk.count(b"\\n")` per chunk: the floor for touching every byte once.
  framing               `openai._streaming.SSEDecoder().iter_bytes(chunks)`, the call `Stream._iter_events`
                        makes on `response.iter_bytes()`; events are only counted.
  framing+json.loads    the same, plus `json.loads(sse.data)` per event.
  framing+typed-models  what `Stream.__stream__` does per event for `client.responses.create(stream=True)`
                        with default options: the `[DONE]` and top-level `error` checks, `sse.json()`, then
                        `construct_type(type_=ResponseStreamEvent, value=data)` (the non-strict branch of
                        `_process_response_data`), which validates the discriminated union with pydantic.

Run (needs `pip install openai`):
  python openai_python_sse_bench.py [--passes 16] [--runs 5] [--json]
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import openai
import pydantic
from openai._models import construct_type
from openai._streaming import SSEDecoder
from openai._utils import is_mapping
from openai.types.responses import ResponseStreamEvent

STREAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "text-stream.sse")
CHUNK_SIZE = 16384
EVENTS_PER_PASS = 20_008
NEWLINES_PER_PASS = 3 * EVENTS_PER_PASS  # event line, data line, blank line


def count_newlines(chunks, passes):
    return sum(chunk.count(b"\n") for _ in range(passes) for chunk in chunks)


def framing(chunks, passes):
    count = 0
    for _ in range(passes):
        for _sse in SSEDecoder().iter_bytes(iter(chunks)):
            count += 1
    return count


def framing_json(chunks, passes):
    count = 0
    for _ in range(passes):
        for sse in SSEDecoder().iter_bytes(iter(chunks)):
            json.loads(sse.data)
            count += 1
    return count


def framing_typed(chunks, passes, keep=None):
    count = 0
    for _ in range(passes):
        for sse in SSEDecoder().iter_bytes(iter(chunks)):
            if sse.data.startswith("[DONE]"):
                break
            data = sse.json()
            if is_mapping(data) and data.get("error"):
                raise RuntimeError(f"error event in stream: {data['error']!r}")
            event = construct_type(type_=ResponseStreamEvent, value=data)
            if keep is not None:
                keep.append(event)
            count += 1
    return count


MODES = [("newline count", count_newlines, NEWLINES_PER_PASS), ("framing", framing, EVENTS_PER_PASS),
         ("framing+json.loads", framing_json, EVENTS_PER_PASS), ("framing+typed-models", framing_typed, EVENTS_PER_PASS)]


def check_typed_models(chunks):
    """One untimed pass: every event must become the pydantic model its `type` names (also warms caches)."""
    events = []
    framing_typed(chunks, 1, keep=events)
    for event in events:
        if not isinstance(event, pydantic.BaseModel) or event.__class__.model_fields["type"].annotation.__args__ != (event.type,):
            sys.exit(f"FAIL: typed-models produced {type(event).__name__} for {getattr(event, 'type', event)!r}")
    return sorted({type(event).__name__ for event in events})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=16, help="times the stream is read per run (default 16)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per mode; the median is reported (default 5)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the summary")
    parser.add_argument("--only", choices=[mode for mode, _, _ in MODES], action="append",
                        help="run only this mode (repeatable; default: every mode)")
    args = parser.parse_args()
    if args.passes < 1 or args.runs < 1:
        parser.error("--passes and --runs must be positive")

    with open(STREAM, "rb") as f:
        stream = f.read()
    chunks = [stream[i:i + CHUNK_SIZE] for i in range(0, len(stream), CHUNK_SIZE)]
    total_bytes = len(stream) * args.passes
    model_names = check_typed_models(chunks)

    results, summary = [], []
    for mode, body, per_pass in MODES:
        if args.only and mode not in args.only:
            continue
        body(chunks, 1)  # warm-up
        expected, times = per_pass * args.passes, []
        for run in range(args.runs):
            start = time.perf_counter()
            seen = body(chunks, args.passes)
            times.append(time.perf_counter() - start)
            if seen != expected:
                sys.exit(f"FAIL: {mode} run {run + 1} counted {seen:,}, expected {expected:,}")
        seconds = statistics.median(times)
        mb_s, ev_s = total_bytes / 1e6 / seconds, EVENTS_PER_PASS * args.passes / seconds
        results += [{"name": "text-stream", "mode": mode, "metric": "megabytes_per_second", "value": mb_s},
                    {"name": "text-stream", "mode": mode, "metric": "events_per_second", "value": ev_s}]
        summary.append(f"  {mode:<22} {mb_s:10.1f} MB/s {ev_s:14,.0f} events/s   median {seconds * 1e3:8.1f} ms")

    peer = f"openai-python {openai.__version__}"
    python = f"{platform.python_implementation()} {platform.python_version()}"
    if args.json:
        print(json.dumps({"suite": "sse-peer", "peer": peer, "python": python, "results": results}, indent=2))
        return
    print(f"SSE peer benchmark: {peer}, pydantic {pydantic.VERSION}, {python} on {platform.machine()}")
    print(f"  {os.path.relpath(STREAM)}: {len(stream):,} bytes x {args.passes} passes = {total_bytes / 1e6:.1f} MB, "
          f"{EVENTS_PER_PASS * args.passes:,} events per run, {CHUNK_SIZE}-byte chunks, median of {args.runs} runs")
    print("\n".join(summary))
    print(f"  typed models: {', '.join(model_names)}")


if __name__ == "__main__":
    main()
