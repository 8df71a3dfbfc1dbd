#!/usr/bin/env bash
# Coverage-guided fuzzing with libFuzzer (the Swift toolchain ships it: `swiftc -sanitize=fuzzer`).
#
#   Scripts/fuzz.sh list              the targets, one a line
#   Scripts/fuzz.sh TARGET SECONDS    build TARGET (cached) and fuzz it for SECONDS on its working corpus
#   Scripts/fuzz.sh all SECONDS       every target in turn, SECONDS each
#   Scripts/fuzz.sh build [TARGET]    build only (every target without TARGET)
#   Scripts/fuzz.sh module MODULE     build one library archive only
#
# Each library module a target needs is compiled once into a static archive under .build/fuzz/lib with
# AddressSanitizer and libFuzzer's coverage instrumentation; a harness under Fuzz/<Target>/ is compiled
# either as its own module against those archives (public or package API) or together with the sources
# of the module it exercises (so that module's internal types are visible without @testable). Builds are
# keyed by a hash of their inputs and skipped when nothing changed. The working corpus is
# .build/fuzz/corpus/<target>, seeded from Fuzz/corpus/<target>; libFuzzer adds what it finds there.
# A crash or oracle failure makes the script exit non-zero and print the crasher file path. Runs use
# libFuzzer's -timeout=10 (a slow input is a finding), -rss_limit_mb=2048 and -max_len=65536.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out="$root/.build/fuzz"
lib="$out/lib"
mkdir -p "$lib" "$out/bin" "$out/corpus" "$out/crashers" "$out/logs"

swift_flags=(
  -swift-version 6
  -enable-upcoming-feature ExistentialAny
  -enable-upcoming-feature MemberImportVisibility
  -enable-upcoming-feature InternalImportsByDefault
  -package-name codexkit
  -sanitize=fuzzer,address
  -O -wmo
  -I "$lib" -I "$root/Sources/CCurl" -I "$root/Sources/CSQLite"
)

targets=(json sse events schema structured recovery storage mcp)

# The library modules, in dependency order, each with the modules it imports.
module_deps() {
  case "$1" in
    CodexSchema) echo "" ;;
    CodexCore) echo "CodexSchema" ;;
    CodexTransport) echo "CodexSchema CodexCore" ;;
    CodexRecovery) echo "CodexSchema CodexCore CodexTransport" ;;
    CodexRuntime) echo "CodexSchema CodexCore CodexTransport CodexRecovery" ;;
    *) echo "fuzz.sh: unknown module $1" >&2; exit 2 ;;
  esac
}

# For each target: the harness directory, the module its harness is compiled into ("own" = a module of
# its own named Fuzz<Dir>, otherwise the library module whose sources are compiled with it), and the
# prebuilt library modules it links.
target_spec() {
  case "$1" in
    json) echo "JSON own CodexSchema" ;;
    sse) echo "SSE own CodexSchema CodexCore CodexTransport" ;;
    events) echo "Events own CodexSchema CodexCore CodexTransport" ;;
    schema) echo "Schema CodexSchema" ;;
    structured) echo "Structured CodexRuntime CodexSchema CodexCore CodexTransport CodexRecovery" ;;
    recovery) echo "Recovery CodexRecovery CodexSchema CodexCore CodexTransport" ;;
    storage) echo "Storage own CodexSchema CodexCore" ;;
    mcp) echo "MCP CodexRuntime CodexSchema CodexCore CodexTransport CodexRecovery" ;;
    *) echo "fuzz.sh: unknown target '$1' (Scripts/fuzz.sh list)" >&2; exit 2 ;;
  esac
}

sources_of() { find "$1" -name '*.swift' | LC_ALL=C sort; }

# A hash of the files and flags that go into one build step.
input_hash() {
  { printf '%s\n' "${swift_flags[@]}" "$@"; for f in "$@"; do [ -f "$f" ] && sha256sum "$f"; done; } | sha256sum | cut -c1-16
}

link_flags() {
  local module
  for module in "$@"; do
    printf '%s\n' "$lib/lib$module.a"
  done
  printf '%s\n' -lcurl -lsqlite3 -lm
}

build_module() {
  local module=$1 dep stamp hash
  local deps
  deps=$(module_deps "$module")
  for dep in $deps; do build_module "$dep"; done
  local files=()
  mapfile -t files < <(sources_of "Sources/$module")
  local dep_hashes=()
  for dep in $deps; do dep_hashes+=("$lib/$dep.stamp"); done
  hash=$(input_hash "${files[@]}" "${dep_hashes[@]}")
  stamp="$lib/$module.stamp"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] && [ -f "$lib/lib$module.a" ]; then return 0; fi
  echo "fuzz.sh: compiling $module (${#files[@]} files)" >&2
  (cd "$lib" && swiftc "${swift_flags[@]}" -parse-as-library -module-name "$module" -emit-module -emit-library -static \
    -o "lib$module.a" "${files[@]/#/$root/}")
  echo "$hash" >"$stamp"
}

build_target() {
  local target=$1 spec dir home deps
  spec=$(target_spec "$target")
  read -r dir home deps <<<"$spec"
  local module
  for module in $deps; do build_module "$module"; done
  local files=() module_name
  mapfile -t files < <(sources_of "Fuzz/$dir")
  if [ "$home" = own ]; then
    module_name="Fuzz$dir"
  else
    module_name=$home
    local more=()
    mapfile -t more < <(sources_of "Sources/$home")
    files+=("${more[@]}")
  fi
  local stamps=()
  for module in $deps; do stamps+=("$lib/$module.stamp"); done
  local hash binary="$out/bin/$target"
  hash=$(input_hash "${files[@]}" "${stamps[@]}")
  if [ -f "$binary.stamp" ] && [ "$(cat "$binary.stamp")" = "$hash" ] && [ -x "$binary" ]; then return 0; fi
  echo "fuzz.sh: linking target $target ($module_name, ${#files[@]} files)" >&2
  local objdir="$out/obj/$target"
  mkdir -p "$objdir"
  local links=()
  mapfile -t links < <(link_flags $deps)
  # lld (shipped with the toolchain) links the sanitizer runtimes without gold's export warnings.
  (cd "$objdir" && swiftc "${swift_flags[@]}" -use-ld=lld -parse-as-library -module-name "$module_name" \
    -o "$binary" "${files[@]/#/$root/}" "${links[@]}")
  echo "$hash" >"$binary.stamp"
}

run_target() {
  local target=$1 seconds=$2
  build_target "$target"
  local corpus="$out/corpus/$target" artifacts="$out/crashers/$target/"
  mkdir -p "$corpus" "$artifacts"
  if [ -d "Fuzz/corpus/$target" ]; then cp -n "Fuzz/corpus/$target"/* "$corpus"/ 2>/dev/null || true; fi
  local dict=()
  [ -f "Fuzz/dict/$target.dict" ] && dict=(-dict="Fuzz/dict/$target.dict")
  echo "fuzz.sh: fuzzing $target for ${seconds}s (corpus $corpus)" >&2
  local status=0
  # The Swift runtime's own backtracer would race AddressSanitizer's report; libFuzzer prints the stack.
  # Leak detection is off: the targets check memory safety and their oracles, not process-lifetime caches.
  SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}" \
    "$out/bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$artifacts" "${dict[@]}" "$corpus" || status=$?
  if [ "$status" -ne 0 ]; then
    echo "fuzz.sh: $target FAILED (libFuzzer exit $status); crasher files:" >&2
    ls -t "$artifacts" | head -5 | sed "s|^|  $artifacts|" >&2
    return "$status"
  fi
}

case "${1:-}" in
  list) printf '%s\n' "${targets[@]}" ;;
  module) build_module "${2:?usage: Scripts/fuzz.sh module MODULE}" ;;
  build)
    if [ -n "${2:-}" ]; then build_target "$2"; else for t in "${targets[@]}"; do build_target "$t"; done; fi ;;
  all)
    seconds=${2:?usage: Scripts/fuzz.sh all SECONDS}
    failed=()
    for t in "${targets[@]}"; do run_target "$t" "$seconds" || failed+=("$t"); done
    if [ "${#failed[@]}" -gt 0 ]; then echo "fuzz.sh: failed targets: ${failed[*]}" >&2; exit 1; fi ;;
  "" | -h | --help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  *) run_target "$1" "${2:?usage: Scripts/fuzz.sh TARGET SECONDS}" ;;
esac
