#!/usr/bin/env bash
# Runs every fuzz target of the module briefly: FUZZTIME each (default 3s;
# e.g. FUZZTIME=45s scripts/fuzz.sh for a longer look). Targets are found by
# their `func FuzzXxx(` in *_test.go files; Go fuzzes one target per
# invocation. Prints one line per target and starts no new one after a
# failure, showing its output: a crashing input is kept under the package's
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

# Targets run JOBS at a time (default: one per core), each fuzzing with one
# worker, so that one target's build overlaps another's fuzzing.
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 1)}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# fuzz DIR NAME LOG fuzzes one target, its output in LOG. Before Go 1.27 the
# coordinator can fail a clean run with a bare "context deadline exceeded"
# as -fuzztime ends (go.dev/issue/75804): no failing input is written, so
# such a run is retried once and then let pass.
fuzz() {
	"$GO" test -run='^$' -fuzz="^${2}\$" -fuzztime="$FUZZTIME" -fuzzminimizetime="$FUZZMINIMIZETIME" -parallel=1 "./$1" >"$3" 2>&1
}
deadline_flake() {
	grep -q 'context deadline exceeded' "$1" && ! grep -q 'Failing input written' "$1"
}

# target I DIR NAME fuzzes target number I and writes its line, "ok …" or
# "FAIL …", to $logs/I.status; its output stays in $logs/I.log.
target() {
	local i=$1 dir=$2 name=$3 t0=$SECONDS status=fail note=""
	local log="$logs/$i.log"
	if fuzz "$dir" "$name" "$log"; then
		status=ok
	elif deadline_flake "$log"; then
		if fuzz "$dir" "$name" "$log"; then
			status=ok note=" (retried after Go's fuzztime deadline race)"
		elif deadline_flake "$log"; then
			status=ok note=" (Go's fuzztime deadline race twice; no failing input)"
		fi
	fi
	if [ "$status" = ok ]; then
		printf 'ok    %-36s %-28s %3ds%s\n' "$dir" "$name" $((SECONDS - t0)) "$note" >"$logs/$i.status"
	else
		printf 'FAIL  %-36s %-28s %3ds\n' "$dir" "$name" $((SECONDS - t0)) >"$logs/$i.status"
	fi
}

# failed says whether a finished target failed (its number in $1).
failed() { grep -q '^FAIL' "$logs/$1.status" 2>/dev/null; }

start=$SECONDS
n=0
bad=""
# "path/to/file_test.go:func FuzzName(f *testing.F) {" -> "path/to FuzzName"
while read -r dir name; do
	# No new target once one has failed: the running ones finish.
	for ((i = 1; i <= n; i++)); do
		if [ -z "$bad" ] && failed "$i"; then bad=$i; fi
	done
	[ -n "$bad" ] && break
	n=$((n + 1))
	target "$n" "$dir" "$name" &
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n || true
	done
done < <(grep -rE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' "${dirs[@]}" |
	sed -E 's|^(\./)?(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*|\2 \3|' | sort -u)
wait

if [ "$n" -eq 0 ]; then
	echo "fuzz: no fuzz targets found" >&2
	exit 1
fi
for ((i = 1; i <= n; i++)); do
	cat "$logs/$i.status"
	if failed "$i"; then
		cat "$logs/$i.log"
		name=$(awk '{print $3}' "$logs/$i.status")
		dir=$(awk '{print $2}' "$logs/$i.status")
		echo "fuzz: $name in ./$dir failed; replay it with: $GO test -run '$name' ./$dir" >&2
		bad=$i
	fi
done
if [ -n "$bad" ]; then
	exit 1
fi
echo "fuzz: $n targets, ${FUZZTIME} each, $JOBS at a time, all passed in $((SECONDS - start))s"
