#!/usr/bin/env bash
# Runs every check and test of rshub. Installs what the tests need when it is
# missing: redis-server and chromium from Debian's packages (scripts/deps.sh),
# staticcheck from the Go module proxy. NATS needs nothing: the tests embed
# nats-server.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/deps.sh

GOBIN_DIR="$(go env GOPATH)/bin"
export PATH="$GOBIN_DIR:$PATH"
if ! command -v staticcheck >/dev/null 2>&1; then
  echo "== installing staticcheck"
  GOFLAGS= go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
fi

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then echo "gofmt needed: $unformatted"; exit 1; fi
echo "== go vet"
go vet ./...
echo "== staticcheck"
staticcheck ./...
echo "== go test -race"
go test -race -count=1 -timeout 25m ./... 2>&1 | tee /tmp/rshub-test.log
