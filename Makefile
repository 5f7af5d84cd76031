# tierbench — the two commands a newcomer needs:
#   make run    the main job: `tierbench run` (installs what is missing first)
#   make test   every test, against a real PostgreSQL (installs what is missing first)
GO       ?= go
BIN      := bin/tierbench
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X github.com/tierbench/tierbench/internal/version.Version=$(VERSION)

.PHONY: all setup build test fuzz run vet clean

all: build

# Installs what the build and the tests need when it is missing: Go modules,
# the PostgreSQL server binaries (apt-get install postgresql), fio.
setup:
	@scripts/setup.sh

build:
	@$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/tierbench

vet:
	$(GO) vet ./...

# Installs like setup, plus Chromium for the browser check of the HTML report;
# then vet and every test. The seed corpora of the fuzz targets run as tests;
# `make fuzz` runs every fuzz target on random inputs (FUZZTIME each, 3s by
# default; e.g. `make fuzz FUZZTIME=30s`).
#
# Test binaries are linked without DWARF (-w), which a test run does not
# read: a third less link CPU. (Measured on a 2-core machine: three packages
# at a time (-p 3), or the longest packages first, made the packages up to
# twice as long and the whole no shorter, and the tests that find a knee or
# count samples failed: with the longest packages side by side, the servers
# under test had no core to spare.)
FUZZTIME ?= 3s

# Vet: go test vets each package it tests with every check (-vet=all), in
# its own build graph; go vet itself takes the packages without tests, which
# go test does not vet. One type-check of the tree instead of two.
UNTESTED = $(GO) list -f '{{if not (or .TestGoFiles .XTestGoFiles)}}{{.ImportPath}}{{end}}' ./...

test:
	@scripts/setup.sh --test
	$(GO) vet $$($(UNTESTED))
	$(GO) test -count=1 -timeout 25m -vet=all -ldflags=-w ./...

fuzz:
	@scripts/setup.sh --test
	@FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

run: setup build
	./$(BIN) run

clean:
	rm -rf bin
