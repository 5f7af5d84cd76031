#!/usr/bin/env bash
# bench/tpchgen.sh — how fast does tierbench write TPC-H's tables, against
# the reference generators, on this machine in the same minutes?
#
#   SF=1 bench/tpchgen.sh            # DBGEN=/path/to/dbgen adds dbgen itself
#
# Each writes all eight tables at scale factor SF into a fresh directory on
# /var/tmp, REPEAT times (default 3), and the files are compared byte for
# byte with tierbench's:
#  1. tierbench tpch generate --scale SF --workers $(nproc)
#  2. tpchgen-cli 4.0.0 (Rust, from PyPI; scripts/setup.sh --test installs
#     it), --num-threads $(nproc)
#  3. dbgen 2.14.0, when DBGEN names a built one (run in its directory for
#     dists.dss): one process, as the reference kit runs it for one stream,
#     and, when THREADS is above 1, also THREADS processes side by side,
#     each writing its share of the rows (dbgen -C THREADS -S k, files
#     TABLE.tbl.k, compared in order as one file).
# THREADS=1 compares them per core (tierbench --workers 1, tpchgen-cli
# --num-threads 1, dbgen one process). DIR=/dev/shm writes into memory, so
# that the disk's write speed does not bound them.
# Prints each run's seconds and, per generator, the minimum and median.
set -euo pipefail
SF=${SF:-1}
REPEAT=${REPEAT:-3}
THREADS=${THREADS:-$(nproc)}
cd "$(dirname "$0")/.."
make -s build >/dev/null
TB=$PWD/bin/tierbench
TPCHGEN=${TPCHGEN:-$(command -v tpchgen-cli || echo "${XDG_CACHE_HOME:-$HOME/.cache}/tierbench/tpchgen-cli/bin/tpchgen-cli")}
[ -x "$TPCHGEN" ] || { echo "bench/tpchgen.sh: no tpchgen-cli; scripts/setup.sh --test installs it" >&2; exit 1; }

work=$(mktemp -d "${DIR:-/var/tmp}/tierbench-tpchgen-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
tables="part partsupp supplier customer orders lineitem nation region"

# run NAME DIR COMMAND... times one run into DIR (made fresh) and prints it.
run() {
	local name=$1 dir=$2
	shift 2
	rm -rf "$dir" && mkdir -p "$dir"
	local t0 t1
	t0=$(now)
	"$@" >/dev/null 2>&1
	t1=$(now)
	awk -v n="$name" -v a="$t0" -v b="$t1" 'BEGIN { printf "%-10s %8.2f s\n", n, b - a }' | tee -a "$work/times"
}
pieces() { # pieces DIR TABLE: the table's file, or its pieces in order
	if [ -f "$1/$2.tbl" ]; then cat "$1/$2.tbl"; else ls -v "$1/$2.tbl".* | xargs cat; fi
}
same() { # same DIR: which of DIR's tables are tierbench's byte for byte
	local t differ=0
	for t in $tables; do
		if pieces "$1" "$t" | cmp -s "$work/tb/$t.tbl" -; then echo "  $t.tbl the same"; else echo "  $t.tbl DIFFERS from tierbench's"; differ=1; fi
	done
	[ "$differ" = 1 ] || echo "  all eight tables the same as tierbench's"
}

echo "== SF $SF, $(nproc) cores, $THREADS generator threads, $REPEAT runs each, interleaved, into $work"
for i in $(seq "$REPEAT"); do
	run tierbench "$work/tb" "$TB" tpch generate --scale "$SF" --out "$work/tb" --workers "$THREADS"
	run tpchgen "$work/rs" "$TPCHGEN" tbl -s "$SF" --num-threads "$THREADS" --output-dir "$work/rs"
	if [ -n "${DBGEN:-}" ]; then
		run dbgen "$work/c" sh -c "cd '$(dirname "$DBGEN")' && DSS_PATH='$work/c' ./$(basename "$DBGEN") -q -f -s $SF"
		if [ "$THREADS" -gt 1 ]; then
			run "dbgen-C$THREADS" "$work/cp" sh -c "cd '$(dirname "$DBGEN")' && for k in \$(seq $THREADS); do DSS_PATH='$work/cp' ./$(basename "$DBGEN") -q -f -s $SF -C $THREADS -S \$k & done; wait"
		fi
	fi
done
echo "== the files"
echo "tpchgen-cli:"; same "$work/rs"
if [ -n "${DBGEN:-}" ]; then echo "dbgen:"; same "$work/c"; fi
if [ -n "${DBGEN:-}" ] && [ "$THREADS" -gt 1 ]; then echo "dbgen, $THREADS processes:"; same "$work/cp"; fi
echo "== minimum and median seconds"
awk '{ t[$1] = t[$1] " " $2 } END { for (n in t) { k = split(t[n], v, " "); asort(v); printf "%-10s min %6.2f  median %6.2f\n", n, v[1], v[int((k + 1) / 2)] } }' "$work/times"
