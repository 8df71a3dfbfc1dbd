#!/usr/bin/env bash
# The runtime soak: persistent turns through AgentRuntime, the built-in Responses backend, the real
# transport, a loopback model service and a SQLite store, with one seeded fault per turn (tool calls,
# throwing tools, refused tool arguments, 429s, 500/503s, connections dropped before and after output,
# slow consumers, interruptions, cancelled consumers, steering). Every turn is checked against what the
# host saw and what the store recorded; every thread's history is checked as a whole.
#
#   Scripts/soak.sh [TURNS] [SEED] [CLIENT]     defaults: 10000 turns, seed 1, the default HTTP client
#                                               (CLIENT: default, curl or urlsession)
#
# Builds the RuntimeFixture product in release mode, runs it with TMPDIR set to an empty directory of
# its own, and prints the report: faults drawn, outcomes, violations, `PRAGMA integrity_check`, the
# files left in TMPDIR, and the curve of RSS and open descriptors (a sample every 500 turns). Exits 1
# when anything was inconsistent, the database is not ok, or a temporary file was left behind.
set -euo pipefail
cd "$(dirname "$0")/.."
turns=${1:-10000}
seed=${2:-1}
client=${3:-default}

swift build -c release --product RuntimeFixture >/dev/null
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/tmp"
status=0
TMPDIR="$scratch/tmp" .build/release/RuntimeFixture soak --db "$scratch/soak.sqlite" --turns "$turns" --seed "$seed" \
  --sample-every 500 --client "$client" >"$scratch/report.json" || status=$?
python3 - "$scratch/report.json" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
print(f"soak: {report['turns']} turns, seed {report['seed']}, {report['requests']} model requests, "
      f"{report['connections_accepted']} connections, {report['history_items']} history items checked")
print("faults:", ", ".join(f"{k} {v}" for k, v in report["faults"].items()))
print("outcomes:", ", ".join(f"{k} {v}" for k, v in report["outcomes"].items()),
      "| failure codes:", ", ".join(f"{k} {v}" for k, v in report["failure_codes"].items()) or "none")
print(f"violations: {report['violation_count']}", *report["violations"], sep="\n  ")
print(f"integrity_check: {report['integrity']}; files left in TMPDIR: {report['temporary_files']}")
print(f"{'turn':>6} {'seconds':>8} {'rss KiB':>8} {'anon KiB':>9} {'fds':>4} {'open conns':>10}")
for s in report["samples"]:
    print(f"{s['turn']:>6} {s['seconds']:>8} {s['rss_kib']:>8} {s['anon_kib']:>9} {s['fds']:>4} {s['open_connections']:>10}")
EOF
exit "$status"
