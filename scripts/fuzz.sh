#!/usr/bin/env bash
# Runs every fuzz target of the repository for FUZZTIME each (default 30s),
# one target at a time: go test -fuzz accepts one target per package run.
# New failing inputs are written under the package's testdata/fuzz/<Target>/.
#
#   scripts/fuzz.sh 1m
#   FUZZ_PARALLEL=1 scripts/fuzz.sh 30s   # limit fuzzing workers
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZTIME="${1:-30s}"
PARALLEL=()
if [ -n "${FUZZ_PARALLEL:-}" ]; then PARALLEL=(-parallel "$FUZZ_PARALLEL"); fi

status=0
for pkg in $(go list ./...); do
  targets=$(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true)
  for target in $targets; do
    echo "== $pkg $target ($FUZZTIME)"
    if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "${PARALLEL[@]}" "$pkg"; then
      echo "!! $pkg $target failed"
      status=1
    fi
  done
done
exit $status
