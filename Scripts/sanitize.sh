#!/usr/bin/env bash
# The whole suite (or part of it) under a sanitizer:
#   Scripts/sanitize.sh address|thread [swift test options, e.g. --filter HostileServerTests]
# A debug build with a build directory of its own (.build-address, .build-thread), child processes and
# fixtures built with the same sanitizer. The suite detects the sanitizer at run time (`Sanitizer` in
# Tests/CodexLoopback) and scales its time limits, its waits for expected events and its memory measure;
# CODEXKIT_EXPECT_SANITIZER makes `SanitizerTests` check that detection.
#   address: ASAN_OPTIONS=detect_leaks=0 (the Swift runtime's caches read as leaks at exit).
#   thread:  the suppressions in Scripts/tsan/suppressions.txt (Synchronization.Mutex false positives,
#            reproduced by Scripts/tsan/mutex-repro.swift); a child process that reports exits 66.
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:?usage: Scripts/sanitize.sh address|thread [swift test options]}"
shift
case "$kind" in
  address) export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" ;;
  thread) export TSAN_OPTIONS="suppressions=$PWD/Scripts/tsan/suppressions.txt${TSAN_OPTIONS:+:$TSAN_OPTIONS}" ;;
  *) echo "sanitize.sh: unknown sanitizer '$kind' (address or thread)" >&2; exit 2 ;;
esac
export CODEXKIT_EXPECT_SANITIZER="$kind"
build=".build-$kind"
swift build --build-tests --sanitize="$kind" --build-path "$build"
swift test --skip-build --sanitize="$kind" --build-path "$build" "$@"
