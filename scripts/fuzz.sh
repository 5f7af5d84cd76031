#!/usr/bin/env bash
# Runs every fuzz target of the module briefly: FUZZTIME each (default 3s;
# e.g. FUZZTIME=45s scripts/fuzz.sh for a longer look). Targets are found by
# their `func FuzzXxx(` in *_test.go files. Each package's test binary is
# built once, instrumented for fuzzing (`go test -c -fuzz=.`), and then runs
# its targets one after another: `go test -fuzz` would build and link the
# package again for every target, which took longer than the fuzzing.
# Packages run JOBS at a time (default: one per core), so that one package's
# build overlaps another's fuzzing. Prints one line per target and starts no
# new package after a failure, showing its output: a crashing input is kept
# under the package's testdata/fuzz/FuzzXxx/, where plain `go test` replays it
# from then on. FUZZMINIMIZETIME (default 2s) bounds how long Go shrinks an
# input: its default of 60s can stall a run for as long on a large new input.
# Usage: scripts/fuzz.sh [PACKAGE_DIR...]   (default: the whole module)
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-3s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-2s}
dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
	dirs=(.)
fi

JOBS=${JOBS:-$(nproc 2>/dev/null || echo 1)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# go test keeps a package's generated corpus here; so does this script, so
# that either one's findings serve the other.
cache=$("$GO" env GOCACHE)/fuzz
module=$("$GO" list -m)

# fuzz BIN DIR NAME LOG fuzzes one target of the package in DIR, whose test
# binary is BIN, from that directory (where its testdata is), output in LOG.
# Before Go 1.27 the coordinator can fail a clean run with a bare "context
# deadline exceeded" as -fuzztime ends (go.dev/issue/75804): no failing input
# is written, so such a run is retried once and then let pass.
fuzz() {
	(cd "$2" && "$1" -test.run='^$' -test.fuzz="^${3}\$" -test.fuzztime="$FUZZTIME" \
		-test.fuzzminimizetime="$FUZZMINIMIZETIME" -test.parallel=1 \
		-test.fuzzcachedir="$cache/$module/$2") >"$4" 2>&1
}
deadline_flake() {
	grep -q 'context deadline exceeded' "$1" && ! grep -q 'Failing input written' "$1"
}

# target BIN DIR NAME I fuzzes target number I and writes its line, "ok …"
# or "FAIL …", to $work/I.status; its output stays in $work/I.log.
target() {
	local bin=$1 dir=$2 name=$3 i=$4 t0=$SECONDS status=fail note=""
	local log="$work/$i.log"
	if fuzz "$bin" "$dir" "$name" "$log"; then
		status=ok
	elif deadline_flake "$log"; then
		if fuzz "$bin" "$dir" "$name" "$log"; then
			status=ok note=" (retried after Go's fuzztime deadline race)"
		elif deadline_flake "$log"; then
			status=ok note=" (Go's fuzztime deadline race twice; no failing input)"
		fi
	fi
	if [ "$status" = ok ]; then
		printf 'ok    %-36s %-28s %3ds%s\n' "$dir" "$name" $((SECONDS - t0)) "$note" >"$work/$i.status"
		return 0
	fi
	printf 'FAIL  %-36s %-28s %3ds\n' "$dir" "$name" $((SECONDS - t0)) >"$work/$i.status"
	return 1
}

# package DIR FIRST NAME... builds the package in DIR for fuzzing and fuzzes
# its targets, numbered from FIRST, stopping at the first failure.
package() {
	local dir=$1 i=$2 bin="$work/pkg$2.test"
	shift 2
	if ! "$GO" test -c -fuzz=. -o "$bin" "./$dir" >"$work/$i.log" 2>&1; then
		printf 'FAIL  %-36s %-28s build\n' "$dir" "$1" >"$work/$i.status"
		return
	fi
	for name in "$@"; do
		target "$bin" "$dir" "$name" "$i" || return 0
		i=$((i + 1))
	done
}

# failed says whether target I failed.
failed() { grep -q '^FAIL' "$work/$1.status" 2>/dev/null; }
# anyfailed says whether any of targets 1..N failed so far.
anyfailed() {
	local i
	for ((i = 1; i <= $1; i++)); do
		if failed "$i"; then return 0; fi
	done
	return 1
}

start=$SECONDS
n=0
# "path/to/file_test.go:func FuzzName(f *testing.F) {" -> "path/to FuzzName",
# then one line per package: "path/to FuzzA FuzzB".
while read -r dir names; do
	# No new package once a target has failed: the running ones finish.
	if anyfailed "$n"; then break; fi
	# shellcheck disable=SC2086 # names is a list of identifiers
	package "$dir" $((n + 1)) $names &
	n=$((n + $(wc -w <<<"$names")))
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n || true
	done
done < <(grep -rE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' "${dirs[@]}" |
	sed -E 's|^(\./)?(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*|\2 \3|' | sort -u |
	awk '$1 != d { if (d != "") print line; d = $1; line = $1 } { line = line " " $2 } END { if (d != "") print line }')
wait

if [ "$n" -eq 0 ]; then
	echo "fuzz: no fuzz targets found" >&2
	exit 1
fi
bad=""
for ((i = 1; i <= n; i++)); do
	[ -f "$work/$i.status" ] || continue # not reached: its package stopped earlier
	cat "$work/$i.status"
	if failed "$i"; then
		cat "$work/$i.log"
		name=$(awk '{print $3}' "$work/$i.status")
		dir=$(awk '{print $2}' "$work/$i.status")
		echo "fuzz: $name in ./$dir failed; replay it with: $GO test -run '$name' ./$dir" >&2
		bad=$i
	fi
done
if [ -n "$bad" ]; then
	exit 1
fi
echo "fuzz: $n targets, ${FUZZTIME} each, $JOBS packages at a time, all passed in $((SECONDS - start))s"
