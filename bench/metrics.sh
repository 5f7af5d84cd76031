#!/usr/bin/env bash
# bench/metrics.sh — what the live metrics endpoint costs the workload.
#
#   bench/metrics.sh                         # 4 rounds of 30 s per case
#   ROUNDS=6 DURATION=60s VUS=4 bench/metrics.sh
#   TB=/path/to/other/tierbench bench/metrics.sh   # measure another build
#
# On one managed PostgreSQL with a 4-warehouse schema, runs the same
# `tpcc run` (routines, $VUS VUs, 5 s ramp-up, $DURATION measured) without
# and with --metrics-listen 127.0.0.1:0, the latter scraped every second by
# curl as Prometheus would, in alternating rounds (off, on, off, on …) so
# that drift on the host falls on both alike. It prints each round's NOPM and
# tierbench's own CPU per transaction (client_cpu_us_per_txn: user + system
# of all its threads over the measured interval, which includes the
# exporter's and the scrapes' work), and the medians per case.
set -euo pipefail
ROUNDS=${ROUNDS:-4}
DURATION=${DURATION:-30s}
VUS=${VUS:-2}
cd "$(dirname "$0")/.."
if [ -z "${TB:-}" ]; then
	make -s build >/dev/null
	TB=$PWD/bin/tierbench
fi
. bench/common.sh
bench_work metrics
scraper=""
stop_scraper() { [ -n "$scraper" ] && kill "$scraper" 2>/dev/null || true; wait 2>/dev/null || true; scraper=""; }
trap 'stop_scraper; bench_cleanup' EXIT

TIERBENCH_DSN=$("$TB" server start --json --datadir "$work/data" --memory 4GiB | sed -n 's/^ *"dsn": "\(.*\)",$/\1/p')
export TIERBENCH_DSN
"$TB" tpcc build --warehouses 4 >/dev/null 2>&1

one() { # $1: off|on; prints "NOPM CPU-µs/txn"
	local args=() out="$work/run.json" err="$work/run.err"
	if [ "$1" = on ]; then
		args=(--metrics-listen 127.0.0.1:0 --metrics-grace 0s)
	fi
	"$TB" tpcc run --json --vus "$VUS" --rampup 5s --duration "$DURATION" --results "$work/results" \
		--interval 1s "${args[@]}" >"$out" 2>"$err" &
	local pid=$!
	if [ "$1" = on ]; then
		local url=""
		for _ in $(seq 50); do
			url=$(grep -o 'http://[^ ]*/metrics' "$err" 2>/dev/null | head -1 || true)
			[ -n "$url" ] && break
			sleep 0.1
		done
		( while kill -0 "$pid" 2>/dev/null; do curl -s -o /dev/null "$url" || true; sleep 1; done ) &
		scraper=$!
	fi
	wait "$pid"
	stop_scraper
	printf '%s %s\n' "$(field nopm <"$out")" "$(field client_cpu_us_per_txn <"$out")"
}

printf '%-6s %-8s %10s %16s\n' round metrics NOPM "CPU µs/txn"
: >"$work/off"
: >"$work/on"
for r in $(seq "$ROUNDS"); do
	for m in off on; do
		read -r nopm cpu < <(one $m)
		printf '%-6s %-8s %10s %16s\n' "$r" "$m" "$nopm" "$cpu"
		echo "$nopm $cpu" >>"$work/$m"
	done
done
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
for m in off on; do
	printf 'median %-8s %10s %16s\n' "$m" "$(cut -d' ' -f1 "$work/$m" | median)" "$(cut -d' ' -f2 "$work/$m" | median)"
done
