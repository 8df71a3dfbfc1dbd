#!/usr/bin/env bash
# Regenerates the command reference at the end of Docs/CLI.md from codexctl's option tables, and the error
# reference at the end of Docs/Errors.md
# (CLIDocumentationTests fails until this is run after a help text changes).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product codexctl >/dev/null
marker='<!-- The section below is generated: codexctl help --markdown -->'
head=$(awk -v m="$marker" '{print} $0==m {exit}' Docs/CLI.md)
{ printf '%s\n\n' "$head"; .build/debug/codexctl help --markdown | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'; } > Docs/CLI.md.new
mv Docs/CLI.md.new Docs/CLI.md

# The error reference at the end of Docs/Errors.md, from the same kind of table (ErrorReferenceTests).
marker='<!-- The section below is generated: codexctl help errors -->'
head=$(awk -v m="$marker" '{print} $0==m {exit}' Docs/Errors.md)
{ printf '%s\n\n' "$head"; .build/debug/codexctl help errors | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'; } > Docs/Errors.md.new
mv Docs/Errors.md.new Docs/Errors.md
