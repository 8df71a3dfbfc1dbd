#!/usr/bin/env bash
# Regenerates the command reference at the end of Docs/CLI.md from codexctl's option tables
# (CLIDocumentationTests fails until this is run after a help text changes).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product codexctl >/dev/null
marker='<!-- The section below is generated: codexctl help --markdown -->'
head=$(awk -v m="$marker" '{print} $0==m {exit}' Docs/CLI.md)
{ printf '%s\n\n' "$head"; .build/debug/codexctl help --markdown | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'; } > Docs/CLI.md.new
mv Docs/CLI.md.new Docs/CLI.md
