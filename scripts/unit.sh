#!/usr/bin/env bash
# Runs every package's tests once (go test -v into a log), prints the package lines, and closes
# with the skipped tests and their reasons, then one plain line counting tests and subtests: "unit: N passed, N failed, N skipped".
# On failure it prints the log without the lines of passing tests, so the failure's messages,
# build errors and panics are there to read.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
$GO test -count=1 -timeout 12m -v ./... >"$log" 2>&1
rc=$?
grep -E '^(ok|FAIL|\?) ' "$log"
if [ "$rc" -ne 0 ]; then
  echo "== what failed:"
  grep -vE '^\s*(=== (RUN|PAUSE|CONT|NAME)|--- PASS)' "$log"
fi
pass=$(grep -cE -- '^\s*--- PASS' "$log")
fail=$(grep -cE -- '^\s*--- FAIL' "$log")
skip=$(grep -cE -- '^\s*--- SKIP' "$log")
# Name what was skipped and why (go test -v prints the reason just before each SKIP line).
grep -B1 -E -- '^\s*--- SKIP' "$log" | grep -vE '^(--|=== RUN.*)$' | sed 's/^/  /'
echo "unit: $pass passed, $fail failed, $skip skipped"
exit "$rc"
