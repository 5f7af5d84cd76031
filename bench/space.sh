#!/usr/bin/env bash
# bench/space.sh — how fast `tierbench space` scans a TPC-C data directory,
# against the lz4 and zstd command-line tools over the same bytes on the same
# cores.
#
#   bench/space.sh                 # W=10 warehouses, 3 rounds
#   W=20 ROUNDS=5 bench/space.sh
#   TB=/path/to/other/tierbench bench/space.sh
#
# Builds W warehouses on a fresh managed PostgreSQL under /var/tmp, stops it
# (a consistent copy), and then, ROUNDS times in turn, with the files in the
# page cache for all of them (a first untimed pass reads them in):
#   - tierbench space --target DATADIR: every block hashed, every unique
#     one LZ4-compressed, and zstd on a hash-chosen sample of them (the
#     default, --zstd-sample auto), on all cores;
#   - the same with --zstd-sample 1: zstd on every unique block too;
#   - lz4 -1 over every file, one lz4 per core at a time (xargs -P NPROC);
#   - zstd -1 over every file, the same way.
# Each prints its wall time, its CPU (user + system) and MB/s: bytes / wall
# for the whole, and bytes / CPU seconds per core. The target: the scan no
# slower than lz4 -1 alone over the same files.
set -euo pipefail
W=${W:-10}
ROUNDS=${ROUNDS:-3}
cd "$(dirname "$0")/.."
. bench/common.sh
if [ -z "${TB:-}" ]; then
	make -s build >/dev/null
	TB=$PWD/bin/tierbench
fi
for c in lz4 zstd /usr/bin/time; do
	command -v "$c" >/dev/null || { echo "space.sh: $c not found (apt-get install lz4 zstd time)" >&2; exit 1; }
done
bench_work space
cores=$(nproc)

echo "building $W warehouses on a managed PostgreSQL in $work/data …" >&2
dsn=$("$TB" server start --datadir "$work/data" --json | sfield dsn)
printf '%s\n' "$dsn" | "$TB" tpcc build --dsn - --warehouses "$W" >/dev/null
"$TB" server stop --datadir "$work/data" >/dev/null
bytes=$(find "$work/data" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
find "$work/data" -type f -exec cat {} + >/dev/null # into the page cache
printf 'data directory: %.0f MB in %d files; %d cores\n\n' "$(echo "$bytes / 1000000" | bc -l)" \
	"$(find "$work/data" -type f | wc -l)" "$cores"

timed() { # NAME CMD...: one timed run, its line
	local name=$1
	shift
	/usr/bin/time -f '%e %U %S' -o "$work/time" "$@" >/dev/null 2>&1
	read -r wall user sys <"$work/time"
	awk -v n="$name" -v b="$bytes" -v w="$wall" -v u="$user" -v s="$sys" \
		'BEGIN { printf "%-18s %8.2f %8.2f %10.0f %14.0f\n", n, w, u + s, b / 1e6 / w, b / 1e6 / (u + s) }'
}
# each DIR CORES TOOL LEVEL: TOOL LEVEL FILE > /dev/null for every file of
# DIR, CORES at a time (a script for sh -c, since /usr/bin/time runs
# programs, not this shell's functions).
each='find "$1" -type f -print0 | xargs -0 -P "$2" -n 8 sh -c '"'"'tool=$1; level=$2; shift 2; for f; do "$tool" "$level" -q -c "$f" >/dev/null; done'"'"' _ "$3" "$4"'

printf '%-18s %8s %8s %10s %14s\n' what wall_s cpu_s MB/s "MB/s per core"
for r in $(seq "$ROUNDS"); do
	timed "space (r$r)" "$TB" space --target "$work/data" --results "$work/results" --json
	timed "space exact (r$r)" "$TB" space --target "$work/data" --results "$work/results" --zstd-sample 1 --json
	timed "lz4 -1 (r$r)" sh -c "$each" _ "$work/data" "$cores" lz4 -1
	timed "zstd -1 (r$r)" sh -c "$each" _ "$work/data" "$cores" zstd -1
done
