# Hostmint. `make run` serves Corefile.example; `make test` runs every test.
GO ?= go

.PHONY: build run test test-deps vet fmt bench clean

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

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./plugin/hostname/ ./accounts/ ./apikey/

clean:
	rm -rf bin data
