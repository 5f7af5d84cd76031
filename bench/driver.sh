#!/usr/bin/env bash
# bench/driver.sh — TPC-C throughput and the driver's own cost.
#
#   bench/driver.sh                      # 4 VUs on 2 and on 4 warehouses, 1 minute each, routines mode
#   WAREHOUSES="2" MODES="routines statements" DURATION=30s bench/driver.sh
#
# For each warehouse count: a fresh managed PostgreSQL, `tpcc build`, then
# `tpcc run --vus $VUS --rampup $RAMPUP --duration $DURATION` per mode. Prints
# NOPM and TPM (from the database) and tierbench's own CPU (user + system,
# from its rusage over the measured interval) per completed transaction.
set -euo pipefail
WAREHOUSES=${WAREHOUSES:-"2 4"}
MODES=${MODES:-routines}
VUS=${VUS:-4}
RAMPUP=${RAMPUP:-10s}
DURATION=${DURATION:-60s}
cd "$(dirname "$0")/.."
make -s build >/dev/null
TB=$PWD/bin/tierbench

work=$(mktemp -d /var/tmp/tierbench-driver-bench.XXXXXX)
chmod 755 "$work"
cleanup() {
	"$TB" server stop --datadir "$work/data" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
field() { sed -n "s/^ *\"$1\": \([0-9.]*\),\{0,1\}$/\1/p" | head -1; }

printf '%-10s %-11s %4s %9s %9s %10s %16s\n' warehouses mode VUs NOPM TPM client_NOPM "client µs/txn"
for w in $WAREHOUSES; do
	"$TB" server stop --datadir "$work/data" >/dev/null 2>&1 || true
	rm -rf "$work/data"
	export TIERBENCH_DSN
	TIERBENCH_DSN=$("$TB" server start --datadir "$work/data" --json | sed -n 's/^ *"dsn": "\(.*\)",$/\1/p')
	"$TB" tpcc build --warehouses "$w" >/dev/null 2>&1
	for mode in $MODES; do
		out=$("$TB" tpcc run --json --block-trace=false --mode "$mode" --vus "$VUS" --rampup "$RAMPUP" --duration "$DURATION" \
			--results "$work/results" 2>/dev/null)
		printf '%-10s %-11s %4s %9s %9s %10s %16.1f\n' "$w" "$mode" "$VUS" \
			"$(echo "$out" | field nopm)" "$(echo "$out" | field tpm)" "$(echo "$out" | field client_nopm)" \
			"$(echo "$out" | field client_cpu_us_per_txn)"
	done
done
