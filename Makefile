# Hostmint. `make run` serves Corefile.example; `make test` runs every test.
GO ?= go

.PHONY: build run test test-deps vet fmt bench bench-go clean

build:
	$(GO) build -o bin/coredns ./coredns-build

run: build
	bin/coredns -conf Corefile.example

# Installs (where missing) and starts PostgreSQL and dig, then runs all tests
# with the race detector.
test: test-deps
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 30m ./...

test-deps:
	./scripts/test-deps.sh

fmt:
	gofmt -l -w .

# DNS queries/s of the hostname plugin vs CoreDNS's file plugin (same
# binary, same names) and signed vs unsigned, with dnsperf on loopback.
bench: build test-deps
	$(GO) run ./bench -names 100000 -seconds 10

# Go micro-benchmarks of the answer path and key authentication.
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./plugin/hostname/ ./accounts/ ./apikey/

clean:
	rm -rf bin data
