#!/usr/bin/env bash
# Peak memory of codexctl against hostile sizes: limits must be enforced while reading, so the peak
# follows the limit (or a small multiple of the document), never the input.
#
#   Scripts/measure-memory.sh [path/to/codexctl]     (default: builds and uses the release binary)
#
# Prints one line per case (peak RSS from /usr/bin/time -v, the bound, the exit status) and exits 1
# when a bound is exceeded or a case ends with an unexpected status. Inputs are generated in a
# temporary directory (about 200 MB) or streamed through pipes, and removed afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

codexctl=${1:-}
if [ -z "$codexctl" ]; then
  swift build -c release --product codexctl >/dev/null
  codexctl=.build/release/codexctl
fi
[ -x /usr/bin/time ] || { echo "measure-memory: /usr/bin/time is missing (Debian package 'time')" >&2; exit 2; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
python3 - "$scratch" <<'EOF'
import json, sys
d = sys.argv[1]
size = 65 * 1024 * 1024
with open(f"{d}/small-objects.json", "w") as f:
    f.write("[" + ",".join(['{"a":1}'] * (size // 8)) + "]")
record = '{"id":12345,"name":"item-12345","tags":["x","y"],"price":12.5,"ok":true}'
with open(f"{d}/records.json", "w") as f:
    f.write("[" + ",".join([record] * (size // (len(record) + 1))) + "]")
with open(f"{d}/true.json", "w") as f:
    f.write("true")
with open(f"{d}/records.schema.json", "w") as f:
    json.dump({"type": "array", "items": {"type": "object", "required": ["id", "name"], "properties": {
        "id": {"type": "integer"}, "name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
        "price": {"type": "number"}, "ok": {"type": "boolean"}}}}, f)
EOF

failed=0
# measure NAME EXPECTED_STATUS BOUND_KB COMMAND...   (the command reads stdin from $input, or /dev/null)
measure() {
  local name=$1 expected=$2 bound=$3
  shift 3
  local log="$scratch/time.log" status=0
  if [ -n "${producer:-}" ]; then
    bash -c "$producer" | /usr/bin/time -v -o "$log" "$@" >/dev/null 2>"$scratch/stderr" || status=$?
  else
    /usr/bin/time -v -o "$log" "$@" </dev/null >/dev/null 2>"$scratch/stderr" || status=$?
  fi
  local peak
  peak=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$log")
  local verdict=ok
  if [ "$status" -ne "$expected" ] || [ "$peak" -gt "$bound" ]; then verdict=FAILED; failed=1; fi
  printf '%-58s peak %7d KiB  bound %7d KiB  exit %d (expected %d)  %s\n' "$name" "$peak" "$bound" "$status" "$expected" "$verdict"
  if [ "$verdict" = FAILED ]; then sed 's/^/    /' "$scratch/stderr" | head -3; fi
}

mib=1024
doc_kb=$(( $(stat -c %s "$scratch/small-objects.json") / 1024 ))

producer="printf '['; yes '1,' | head -c 629145600"
measure "schema validate: 600 MB on stdin (limit 256 MiB)" 2 $(( 256 * mib + 64 * mib )) "$codexctl" schema validate --schema "$scratch/true.json" -
producer="printf 'data: '; head -c 524288000 /dev/zero | tr '\\0' x"
measure "responses decode: one 500 MB line (event limit 16 MiB)" 1 $(( 64 * mib )) "$codexctl" responses decode -
producer=""
measure "schema validate: 65 MB of small objects, schema true" 0 $(( 3 * doc_kb )) "$codexctl" schema validate --schema "$scratch/true.json" "$scratch/small-objects.json"
measure "schema validate: 65 MB of records, records schema" 0 $(( 3 * doc_kb )) "$codexctl" schema validate --schema "$scratch/records.schema.json" "$scratch/records.json"
measure "schema validate: 65 MB, 17 M failures (1,000 reported)" 1 $(( 3 * doc_kb )) "$codexctl" schema validate --schema "$scratch/records.schema.json" "$scratch/small-objects.json"
exit $failed
