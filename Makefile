.PHONY: run test bench fuzz build

# Runs the hub with everything embedded and the demo Source and subscriber.
run:
	go run ./examples/demo

# Runs every check and test, installing what the tests need.
test:
	./scripts/test.sh

build:
	go build ./...

bench:
	go test -run '^$$' -bench . -benchmem ./...

# Each fuzz target for FUZZTIME (default 30s).
FUZZTIME ?= 30s
fuzz:
	./scripts/fuzz.sh $(FUZZTIME)
