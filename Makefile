.PHONY: run run-edge test bench fuzz build

# Runs the hub with everything embedded and the demo Source and subscriber.
# Built, then run: `go run` exits 1 after a Ctrl-C whatever the demo's own
# status, which make reported as an error after a clean stop.
DEMO_BIN ?= bin/demo
run:
	go build -o $(DEMO_BIN) ./examples/demo
	$(DEMO_BIN)

# Runs an edge hub of `make run`'s hub on 127.0.0.1:8081 (docs/edge.md): its
# log mirrors the origin's over a NATS leaf node link, publishes go to the
# origin. EDGE_DATA is its data folder.
EDGE_DATA ?= ./data-edge
run-edge:
	go run ./cmd/hub --demo --listen 127.0.0.1:8081 --data-dir $(EDGE_DATA) --nats-listen off \
		--upstream http://127.0.0.1:8080/ --upstream-leaf nats-leaf://127.0.0.1:7422 --leaf-password-file examples/demo/leaf-password

# Runs every check and test, installing what the tests need.
test:
	./scripts/test.sh

# Builds bin/hub and bin/subscriber as a release is built: no paths of the
# build machine, no symbol table or DWARF, and without grpc's request
# tracing (golang.org/x/net/trace, pulled in by the OTLP exporter), whose
# html/template makes the linker keep every exported method of every type
# stored in an interface: 28 MB instead of 55 (internal/layout checks it).
RELEASE_TAGS = grpcnotrace
build:
	go build -trimpath -tags $(RELEASE_TAGS) -ldflags='-s -w' -o bin/ ./cmd/hub ./cmd/subscriber

bench:
	go test -run '^$$' -bench . -benchmem ./...

# Each fuzz target for FUZZTIME (default 30s).
FUZZTIME ?= 30s
fuzz:
	./scripts/fuzz.sh $(FUZZTIME)
