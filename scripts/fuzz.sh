#!/usr/bin/env bash
# Runs every fuzz target of the module briefly: FUZZTIME each (default 3s;
# e.g. FUZZTIME=45s scripts/fuzz.sh for a longer look). Targets are found by
# their `func FuzzXxx(` in *_test.go files; Go fuzzes one target per
# invocation. Prints one line per target and stops at the first failure,
# showing its output: a crashing input is kept under the package's
# testdata/fuzz/FuzzXxx/, where plain `go test` replays it from then on.
# FUZZMINIMIZETIME (default 2s) bounds how long Go shrinks an input: its
# default of 60s can stall a run for as long on a large new input.
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

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# fuzz DIR NAME fuzzes one target, its output in $log. Before Go 1.27 the
# coordinator can fail a clean run with a bare "context deadline exceeded"
# as -fuzztime ends (go.dev/issue/75804): no failing input is written, so
# such a run is retried once and then let pass.
fuzz() {
	"$GO" test -run='^$' -fuzz="^${2}\$" -fuzztime="$FUZZTIME" -fuzzminimizetime="$FUZZMINIMIZETIME" "./$1" >"$log" 2>&1
}
deadline_flake() {
	grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"
}

start=$SECONDS
n=0
# "path/to/file_test.go:func FuzzName(f *testing.F) {" -> "path/to FuzzName"
while read -r dir name; do
	n=$((n + 1))
	t0=$SECONDS
	status=fail note=""
	if fuzz "$dir" "$name"; then
		status=ok
	elif deadline_flake; then
		if fuzz "$dir" "$name"; then
			status=ok note=" (retried after Go's fuzztime deadline race)"
		elif deadline_flake; then
			status=ok note=" (Go's fuzztime deadline race twice; no failing input)"
		fi
	fi
	if [ "$status" = ok ]; then
		printf 'ok    %-36s %-28s %3ds%s\n' "$dir" "$name" $((SECONDS - t0)) "$note"
	else
		printf 'FAIL  %-36s %-28s %3ds\n' "$dir" "$name" $((SECONDS - t0))
		cat "$log"
		echo "fuzz: $name in ./$dir failed; replay it with: $GO test -run '$name' ./$dir" >&2
		exit 1
	fi
done < <(grep -rE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' "${dirs[@]}" |
	sed -E 's|^(\./)?(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*|\2 \3|' | sort -u)

if [ "$n" -eq 0 ]; then
	echo "fuzz: no fuzz targets found" >&2
	exit 1
fi
echo "fuzz: $n targets, ${FUZZTIME} each, all passed in $((SECONDS - start))s"
