# Hostmint. `make run` serves Corefile.example; `make test` runs every test.
GO ?= go

.PHONY: build run test test-deps vet fmt fuzz bench bench-go clean

build:
	$(GO) build -o bin/coredns ./coredns-build
	$(GO) build -o bin/hostmint ./cmd/hostmint

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

# Every Go fuzz target for FUZZTIME each (CI runs 5s; FUZZTIME=10m to dig).
# Seeds in each package's testdata/fuzz also run as tests in `make test`.
FUZZTIME ?= 10s
fuzz: test-deps
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

# The performance table (docs/performance.md): DNS q/s against CoreDNS's
# file plugin and signed, each also with fast_udp, start-up and memory on SQLite and PostgreSQL, API
# latency with 16 clients, signed DNS UPDATE beside it, propagation between
# two nodes; at 10 k, 100 k and 1 M names. Then the large account: creates into one account in bands of
# 10 k up to 200 k, and across its millionth name, on both stores, beside a band of as many
# creates spread over 16 accounts in the same run (the machine's rate then). Then, in a
# second table, the peers on the same names: Knot and PowerDNS (gpgsql)
# unsigned and signed, and the file plugin, each with Hostmint's figure over
# theirs (BENCH_FLAGS="-skip peers" leaves them out; "-skip dns,pg,update,account,pipeline"
# runs them alone). Last, the write pipeline's table: one account x 16 clients,
# 16 accounts x 1, 64 x 4 and DNS UPDATE, on both stores (BENCH_FLAGS="-pipeline"
# runs it alone). About 30 minutes and more; SIZES=10000
# BENCH_FLAGS="-skip account,pipeline" for a quick look.
SIZES ?= 10000,100000,1000000
bench: build test-deps
	$(GO) run ./bench -sizes $(SIZES) $(BENCH_FLAGS)

# Go micro-benchmarks of the answer path, key authentication and a create
# (with the statements it sends).
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./plugin/hostname/ ./app/ ./accounts/ ./apikey/ ./hostnames/

clean:
	rm -rf bin data
