#!/usr/bin/env bash
# Fails on any `import` edge in Sources/ that Docs/Architecture.md does not allow, on any dependency a
# target of Package.swift declares that none of its files imports, and on Foundation's trapping FileHandle
# I/O anywhere in Sources/. SwiftPM only checks declared target
# dependencies; this also catches transitive imports that would compile, and edges nothing uses.
#
# Usage: Scripts/check-imports.sh [ROOT]   (ROOT defaults to the repository root; it must contain Sources/
# and Package.swift)
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
cd "$root"

# Toolchain modules every target may import.
toolchain="Foundation FoundationEssentials Dispatch Synchronization Glibc Musl Darwin _Concurrency"

allowed_for() {
  case "$1" in
    CodexSchema)        echo "Foundation FoundationEssentials" ;;
    CodexCore)          echo "CodexSchema $toolchain" ;;
    CodexTransport)     echo "CodexCore CodexSchema CCurl FoundationNetworking $toolchain" ;;
    CodexRecovery)      echo "CodexCore CodexSchema CodexTransport $toolchain" ;;
    CodexStorageSQLite) echo "CodexCore CSQLite $toolchain" ;;
    CodexStoragePostgres) echo "CodexCore CLibPQ $toolchain" ;;
    CodexRuntime)       echo "CodexCore CodexSchema CodexTransport CodexRecovery Observation $toolchain" ;;
    CodexLoopback)      echo "$toolchain" ;;
    CodexKitTesting)    echo "CodexCore CodexSchema CodexTransport CodexLoopback $toolchain" ;;
    codexctl)           echo "CodexSchema CodexCore CodexTransport CodexRecovery CodexStorageSQLite CodexStoragePostgres CodexRuntime CodexLoopback CodexKitTesting FoundationNetworking $toolchain" ;;
    CSQLite)            echo "" ;;
    CLibPQ)             echo "" ;;
    CCurl)              echo "" ;;
    *)                  return 1 ;;
  esac
}

status=0
for dir in Sources/*/; do
  module=$(basename "$dir")
  if ! allowed=$(allowed_for "$module"); then
    echo "check-imports: module '$module' is not in the dependency table" >&2
    status=1
    continue
  fi
  # Every import statement, whatever its attributes or access level: `@testable import X`, `private import X.Y`.
  while IFS=: read -r file line text; do
    imported=$(sed -E 's/^[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*((public|package|internal|fileprivate|private)[[:space:]]+)?import[[:space:]]+((typealias|struct|class|enum|protocol|let|var|func)[[:space:]]+)?([A-Za-z_][A-Za-z0-9_]*).*/\6/' <<<"$text")
    if [[ " $allowed " != *" $imported "* ]]; then
      echo "check-imports: $file:$line: $module may not import $imported" >&2
      status=1
    fi
  done < <(grep -rnE '^[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*((public|package|internal|fileprivate|private)[[:space:]]+)?import[[:space:]]+' "$dir" --include='*.swift' || true)
done

# Declared but unused: every dependency of a target under Sources/ must be imported by one of its files.
# Package.swift is read as text (perl, part of every Debian system): each `.target(` / `.executableTarget(`
# chunk's `name:` and its `dependencies: [ ... ]` strings.
if [ ! -f Package.swift ]; then
  echo "check-imports: no Package.swift in $root" >&2
  exit 1
fi
while read -r module declared; do
  [ -d "Sources/$module" ] || continue
  imports=" $(grep -rhoE '^[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*((public|package|internal|fileprivate|private)[[:space:]]+)?import[[:space:]]+[A-Za-z_][A-Za-z0-9_]*' "Sources/$module" --include='*.swift' | awk '{print $NF}' | sort -u | tr '\n' ' ' || true)"
  for dependency in $declared; do
    if [[ "$imports" != *" $dependency "* ]]; then
      echo "check-imports: Package.swift: $module declares $dependency, which none of its files imports" >&2
      status=1
    fi
  done
done < <(perl -0777 -ne '
  for my $chunk (split /\.(?:target|executableTarget|testTarget|systemLibrary)\(/) {
    next unless $chunk =~ /^\s*name:\s*"([^"]+)"/;
    my $name = $1;
    my @deps = $chunk =~ /dependencies:\s*\[([^\]]*)\]/ ? ($1 =~ /"([^"]+)"/g) : ();
    print "$name @deps\n";
  }' Package.swift)

# Foundation's FileHandle traps on an I/O error in its non-throwing reads and writes (`write(_:)`,
# `readDataToEndOfFile()`, `seekToEndOfFile()`, ...): a full disk or a closed pipe would kill the process.
# Sources use read(2)/write(2) through their own throwing layers instead; any use outside a comment fails.
while IFS=: read -r file line _; do
  echo "check-imports: $file:$line: FileHandle is not used in Sources/ (its non-throwing I/O traps on an error)" >&2
  status=1
done < <(grep -rnE '\bFileHandle\b' Sources --include='*.swift' | grep -vE '^[^:]+:[0-9]+:[[:space:]]*//' || true)

if [ "$status" -eq 0 ]; then
  echo "check-imports: ok"
fi
exit "$status"
