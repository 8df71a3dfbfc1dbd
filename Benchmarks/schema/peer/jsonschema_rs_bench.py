"""Peer benchmark: jsonschema-rs (Rust JSON Schema validator, driven from Python).

Measures boolean-verdict throughput (``is_valid``) of ``jsonschema_rs.Draft202012Validator``
on the shared workloads in ``Benchmarks/schema`` (see ``../README.md`` and
``../workloads.json``), so the numbers can be set beside CodexSchema's:

- The validator is compiled once per workload, outside the timed region, and its verdict is
  checked against ``expected_valid`` before any timing.
- Mode "parsed": validate an instance parsed once with ``json.loads`` before timing.
- Mode "parse+validate": ``json.loads(text)`` then ``is_valid`` inside the timed loop, where
  ``text`` is the instance file's contents already in memory (read as ``str``).
- ``json.loads`` alone is also timed on big_payload and reported in MB/s (MB = 1e6 bytes).
- A run is a batch of N calls, N calibrated so one run takes at least --run-seconds
  (default 0.5 s); --runs runs (default 5); the median per-second rate is reported.

Numbers include CPython call overhead and, in parse+validate, CPython's ``json`` parser.

Run from the repository root:

    python3 -m venv /tmp/peer-venv && /tmp/peer-venv/bin/pip install jsonschema-rs \
        && /tmp/peer-venv/bin/python Benchmarks/schema/peer/jsonschema_rs_bench.py [--json]
"""

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import jsonschema_rs

WORKLOAD_DIR = Path(__file__).resolve().parent.parent


def time_batch(fn, n):
    """Call fn() n times; return elapsed seconds."""
    loop = range(n)
    start = time.perf_counter()
    for _ in loop:
        fn()
    return time.perf_counter() - start


def calibrate(fn, run_seconds):
    """Smallest tried N such that one batch of N calls takes at least run_seconds."""
    n = 1
    while True:
        elapsed = time_batch(fn, n)
        if elapsed >= run_seconds:
            return n
        # Aim 10% past the target, growing at least 2x and at most 100x per step.
        guess = int(n * 1.1 * run_seconds / elapsed) + 1 if elapsed > 0 else n * 100
        n = min(max(guess, n * 2), n * 100)


def measure(fn, runs, run_seconds):
    """Median calls per second over `runs` batches of a calibrated size."""
    n = calibrate(fn, run_seconds)
    return statistics.median(n / time_batch(fn, n) for _ in range(runs))


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per figure (default 5)")
    parser.add_argument("--run-seconds", type=float, default=0.5,
                        help="minimum duration of one run in seconds (default 0.5)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = parser.parse_args()

    peer = "jsonschema-rs " + importlib.metadata.version("jsonschema-rs")
    manifest = json.loads((WORKLOAD_DIR / "workloads.json").read_text(encoding="utf-8"))
    results = []

    def record(name, mode, metric, value, unit, size):
        results.append({"name": name, "mode": mode, "metric": metric,
                        "value": value, "unit": unit, "bytes": size})
        if not args.json:
            extra = f"  ({value * size / 1e6:8.1f} MB/s)" if unit == "1/s" else ""
            print(f"{name:<15} {mode:<15} {value:14,.1f} {unit}{extra}", flush=True)

    if not args.json:
        print(f"{peer} | Python {platform.python_version()} | {cpu_model()}, "
              f"{os.cpu_count()} cores | {datetime.datetime.now().isoformat(timespec='seconds')}")
        print(f"runs={args.runs} run-seconds={args.run_seconds}; median validations per second")

    for w in manifest:
        name, expected = w["name"], w["expected_valid"]
        schema = json.loads((WORKLOAD_DIR / w["schema"]).read_text(encoding="utf-8"))
        text = (WORKLOAD_DIR / w["instance"]).read_text(encoding="utf-8")
        size = len(text.encode("utf-8"))
        if size != w["instance_bytes"]:
            sys.exit(f"{name}: instance is {size} bytes, manifest says {w['instance_bytes']}")

        validator = jsonschema_rs.Draft202012Validator(schema)  # compiled outside timing
        is_valid, loads = validator.is_valid, json.loads
        instance = loads(text)
        for mode, verdict in (("parsed", is_valid(instance)), ("parse+validate", is_valid(loads(text)))):
            if verdict is not expected:
                sys.exit(f"{name} ({mode}): verdict {verdict}, expected {expected}")

        rate = measure(lambda: is_valid(instance), args.runs, args.run_seconds)
        record(name, "parsed", "validations_per_second", rate, "1/s", size)
        rate = measure(lambda: is_valid(loads(text)), args.runs, args.run_seconds)
        record(name, "parse+validate", "validations_per_second", rate, "1/s", size)

        if name == "big_payload":
            rate = measure(lambda: loads(text), args.runs, args.run_seconds)
            record(name, "json.loads", "megabytes_per_second", rate * size / 1e6, "MB/s", size)

    if args.json:
        print(json.dumps({"suite": "schema-peer", "peer": peer,
                          "python": platform.python_version(), "results": results}))


if __name__ == "__main__":
    main()
