#!/usr/bin/env bash
# Runs every check and test of rshub. Installs what the tests need when it is
# missing: redis-server, curl, openssl, python3 and chromium from Debian's
# packages (scripts/deps.sh), staticcheck from the Go module proxy. NATS needs nothing: the tests embed
# nats-server.
# The tests' output is also written to $RSHUB_TEST_LOG, by default a file
# of a new directory of this run's own, so runs side by side do not clash;
# each step prints how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."
log="${RSHUB_TEST_LOG:-$(mktemp -d "${TMPDIR:-/tmp}/rshub-test.XXXXXX")/test.log}"
step() { echo "   $1 in $((SECONDS - t)) s"; t=$SECONDS; }
t=$SECONDS

./scripts/deps.sh
step "packages checked"

GOBIN_DIR="$(go env GOPATH)/bin"
export PATH="$GOBIN_DIR:$PATH"
if ! command -v staticcheck >/dev/null 2>&1; then
  echo "== installing staticcheck"
  GOFLAGS= go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
fi

# The trace collector integration/tracing runs (tools/jaeger, a module of its
# own), built where internal/testproc.BuildTool looks for it (keyed by the
# tool module's go.sum), so its first build, minutes on 2 cores, is not spent
# inside a test binary's timeout.
jaeger_dir="${RSHUB_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rshub-tools}/jaeger-$(sha256sum tools/jaeger/go.sum | cut -c1-12)"
if [ ! -x "$jaeger_dir/jaeger" ]; then
  echo "== building the Jaeger collector for integration/tracing (tools/jaeger)"
  mkdir -p "$jaeger_dir"
  start=$(date +%s)
  (cd tools/jaeger && go build -o "$jaeger_dir/jaeger.tmp" github.com/jaegertracing/jaeger/cmd/jaeger)
  mv "$jaeger_dir/jaeger.tmp" "$jaeger_dir/jaeger"
  echo "   built in $(($(date +%s) - start)) s"
fi
step "tools ready"

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then echo "gofmt needed: $unformatted"; exit 1; fi
# The main module and cmd/rshub-bench, a module of its own (it replaces
# github.com/rshub/rshub with ../..); tools/jaeger holds no code of ours.
modules=(. cmd/rshub-bench)
echo "== go vet"
for m in "${modules[@]}"; do (cd "$m" && go vet ./...); done
step "gofmt and vet"
echo "== staticcheck"
for m in "${modules[@]}"; do (cd "$m" && staticcheck ./...); done
step "staticcheck"
echo "== go test -race (output also in $log)"
: >"$log"
for m in "${modules[@]}"; do
  (cd "$m" && go test -race -count=1 -timeout 25m ./...) 2>&1 | tee -a "$log"
done
step "tests"
echo "== all checks passed in $SECONDS s"
