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
# The fuzz targets run beside the tests, one at a time and at the lowest
# CPU priority: most tests wait on servers and clocks, and the fuzzing takes
# what they leave. Its lines come after the tests'. (Running more tests at
# once than go test's one per core made CI no faster: the servers under
# test use the cores the tests leave.)
FUZZTIME ?= 1s

test:
	@scripts/setup.sh --test
	$(GO) vet ./...
	@log=$$(mktemp); \
	(FUZZTIME=$(FUZZTIME) JOBS=1 nice -n 19 scripts/fuzz.sh >"$$log" 2>&1; echo "$$?" >"$$log.rc") & \
	echo "$(GO) test -count=1 -timeout 25m ./...   (scripts/fuzz.sh beside it)"; \
	$(GO) test -count=1 -timeout 25m ./...; tests=$$?; \
	wait; cat "$$log"; fuzz=$$(cat "$$log.rc"); rm -f "$$log" "$$log.rc"; \
	test "$$tests" -eq 0 && test "$$fuzz" -eq 0

run: setup build
	./$(BIN) run

clean:
	rm -rf bin
