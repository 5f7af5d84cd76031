#!/usr/bin/env bash
# bench/telemetry.sh — what telemetry itself costs.
#
#   bench/telemetry.sh                  # 30 s per case
#   DURATION=60 bench/telemetry.sh
#
#   TB=/path/to/other/tierbench bench/telemetry.sh   # measure another build
#
# Runs `tierbench monitor` (the samplers alone, 1 s interval, on a directory
# under /var/tmp) for DURATION seconds per case and reports its own CPU time
# (user + system, from /usr/bin/time) as percent of one core: with the block
# tracer off and on, on an idle device, while fio drives 4k random reads at
# queue depth 8 (tens of thousands of requests per second here), which is
# where the tracer costs most, and while fio writes 4k blocks with an
# fdatasync after each, as a database's WAL does at every commit: each
# fdatasync adds a cache flush request, which carries no sectors.
set -euo pipefail
DURATION=${DURATION:-30}
cd "$(dirname "$0")/.."
if [ -z "${TB:-}" ]; then
	make -s build >/dev/null
	TB=$PWD/bin/tierbench
fi
work=$(mktemp -d /var/tmp/tierbench-telemetry-bench.XXXXXX)
fio_pid=""
cleanup() {
	[ -n "$fio_pid" ] && kill "$fio_pid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/target"

cost() { # $1: extra monitor flags; prints the monitor's CPU as % of one core
	/usr/bin/time -f "%U %S" -o "$work/time" "$TB" monitor --target "$work/target" --duration "${DURATION}s" \
		--results "$work/results" $1 >/dev/null 2>&1
	awk -v d="$DURATION" '{ printf "%.2f", ($1 + $2) / d * 100 }' "$work/time"
}

printf '%-22s %-12s %14s\n' load tracer "CPU % of core"
for load in idle fio-4k-randread-qd8 fio-4k-write-fdatasync; do
	case $load in
	idle) ;;
	fio-4k-randread-qd8) fio_args=(--rw=randread --iodepth=8 --ioengine=libaio --direct=1) ;;
	fio-4k-write-fdatasync) fio_args=(--rw=write --fdatasync=1 --ioengine=psync) ;;
	esac
	if [ "$load" != idle ]; then
		fio --name=load --filename="$work/target/load.dat" --size=256m --bs=4k "${fio_args[@]}" \
			--time_based --runtime=$((DURATION * 3)) >/dev/null 2>&1 &
		fio_pid=$!
		sleep 3 # laid out and running
	fi
	for tracer in off on; do
		flag="--block-trace=false"
		[ "$tracer" = on ] && flag="--block-trace=true"
		printf '%-22s %-12s %14s\n' "$load" "$tracer" "$(cost "$flag")"
	done
	if [ -n "$fio_pid" ]; then kill "$fio_pid" 2>/dev/null || true; wait "$fio_pid" 2>/dev/null || true; fio_pid=""; fi
done
