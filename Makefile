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
# go test runs two packages at a time on a 2-core machine, in the order
# given: the longest first (TEST_FIRST), so that short ones fill the end
# instead of one long package running alone. Test binaries are linked
# without DWARF (-w), which a test run does not read: a third less link CPU.
# (Measured on a 2-core machine: three packages at a time (-p 3) made the
# packages twice as long and the whole no shorter: the servers under test
# use every core the tests leave.)
TEST_FIRST := ./internal/experiment ./internal/cli ./internal/scenario ./internal/backup \
	./internal/engine/mariadb ./internal/report ./internal/server ./internal/serve \
	./internal/durability ./internal/engine/postgres
FUZZTIME ?= 3s

test:
	@scripts/setup.sh --test
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 25m -ldflags=-w $(TEST_FIRST) ./...

fuzz:
	@scripts/setup.sh --test
	@FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

run: setup build
	./$(BIN) run

clean:
	rm -rf bin
