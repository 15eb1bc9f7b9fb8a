# sonde's build and test entry points. `make test` is what CI runs (.ci/run).
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: all build test tools fmt-check vet race bench fuzz peers clean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o sonde .

## test: formatting, vet, the real peer servers, and every test with the race detector.
test: tools fmt-check vet peers race

## tools: what the tests need besides Go and npm: tmux, for the real-terminal UI tests
## (tui_tmux_test.go). CI runs as root on Debian.
tools:
	command -v tmux >/dev/null || (apt-get update && apt-get install -y tmux)

## peers: the real MCP servers of the interop tests (interop/package.json, pinned by its lock),
## and the official Go SDK's example server, a modern-era peer, built outside sonde's go.mod.
peers: interop/node_modules/.installed interop/bin/everything

GOSDK_VERSION := v1.8.0

interop/bin/everything:
	GOBIN=$(CURDIR)/interop/bin GOFLAGS=-buildvcs=false $(GO) install github.com/modelcontextprotocol/go-sdk/examples/server/everything@$(GOSDK_VERSION)

interop/node_modules/.installed: interop/package.json interop/package-lock.json
	cd interop && npm ci --no-audit --no-fund --loglevel=error
	touch $@

fmt-check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi

vet:
	$(GO) vet ./...

race:
	$(GO) test -race -count=1 -timeout 20m ./...

## bench: the benchmarks behind docs/performance.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./client/ ./transport/ ./jsonrpc/

## fuzz: a short run of each fuzz target (the seed corpora already run in `make test`).
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 30s ./jsonrpc/
	$(GO) test -run '^$$' -fuzz FuzzLineReader -fuzztime 30s ./transport/

clean:
	rm -rf sonde interop/node_modules interop/bin
