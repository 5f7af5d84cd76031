# tierbench — the two commands a newcomer needs:
#   make run    the main job: `tierbench run` (installs what is missing first)
#   make test   every test, against a real PostgreSQL (installs what is missing first)
GO       ?= go
BIN      := bin/tierbench
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X github.com/tierbench/tierbench/internal/version.Version=$(VERSION)

.PHONY: all setup build test run vet clean

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
# then vet, every test, and a brief run of every fuzz target (FUZZTIME each,
# 1s here: a smoke run, as the seed corpora already run with the tests; e.g.
# `make test FUZZTIME=30s` or scripts/fuzz.sh for a longer look).
#
# (Measured on a 2-core machine: running fuzzing or more tests at once
# beside the tests, three packages at a time (-p 3), or the slowest packages
# first, made CI no faster: the servers under test use every core the tests
# leave.)
FUZZTIME ?= 1s

test:
	@scripts/setup.sh --test
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 25m ./...
	@FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

run: setup build
	./$(BIN) run

clean:
	rm -rf bin
