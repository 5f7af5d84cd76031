#!/usr/bin/env bash
# bench/rate.sh — the open loop's pacer: its jitter, its cost, its reach.
#
#   bench/rate.sh                         # 2 warehouses, 3 rounds of 30-second steps
#   ROUNDS=5 DURATION=60s bench/rate.sh
#
# 1. The schedule alone (BenchmarkPacer in internal/driver): Poisson arrivals
#    for a second to 8 VUs that do no work, on one scheduler thread, at
#    60,000 to 3,000,000 a minute: how late arrivals began (p99, max), the
#    share that began within 1 ms, and the client CPU per arrival, whose
#    inverse is what one core can schedule.
# 2. On a managed PostgreSQL (a fresh one, $WAREHOUSES warehouses), ROUNDS
#    pairs, alternating: a closed loop of $VUS VUs (its client TPM is the
#    throughput to match), then an open loop offering $SHARE% of that TPM
#    (Poisson arrivals) to a pool of as many VUs. Each row
#    gives TPM, client CPU per transaction (tierbench's rusage over the
#    measured interval), New-Order p99 (from the intended start in the
#    open loop, with the service time's beside it), the schedule's jitter
#    p99 and the late arrivals. The last line has each column's median.
set -euo pipefail
WAREHOUSES=${WAREHOUSES:-2}
ROUNDS=${ROUNDS:-3}
VUS=${VUS:-4}
SHARE=${SHARE:-90}
RAMPUP=${RAMPUP:-5s}
DURATION=${DURATION:-30s}
cd "$(dirname "$0")/.."
make -s build >/dev/null
TB=$PWD/bin/tierbench

# shellcheck source=bench/common.sh
. bench/common.sh
bench_work rate

echo "# the schedule alone (go test -bench Pacer ./internal/driver)"
go test -run '^$' -bench Pacer -benchtime 1x ./internal/driver | grep '^BenchmarkPacer' |
	sed -E 's/BenchmarkPacer\/tpm=([0-9]+)-[0-9]+ +1 +[0-9]+ ns\/op/\1 TPM:/'

export TIERBENCH_DSN
TIERBENCH_DSN=$("$TB" server start --datadir "$work/data" --json | sed -n 's/^ *"dsn": "\(.*\)",$/\1/p')
"$TB" tpcc build --warehouses "$WAREHOUSES" >/dev/null 2>&1

# row LABEL ARGS...: one step, as a row.
row() {
	local label=$1
	shift
	"$TB" tpcc run --json "$@" --rampup "$RAMPUP" --duration "$DURATION" --results "$work/results" 2>/dev/null |
		python3 -c '
import json, sys
s = json.load(sys.stdin)["steps"][0]
no = s["txn"]["new_order"]
svc = s.get("txn_service", {}).get("new_order", {}).get("p99_ms", float("nan"))
jit = s.get("schedule_jitter", {}).get("p99_ms", float("nan"))
print("%-8s %9d %9d %10.1f %10.2f %10.2f %10.3f %6s" % (sys.argv[1], s["tpm"], s["client_tpm"], s["client_cpu_us_per_txn"],
      no["p99_ms"], svc, jit, s.get("late", "-")))
' "$label"
}

echo
echo "# closed loop ($VUS VUs) against open loop (a pool of $VUS VUs) at $SHARE% of the closed loop's throughput, PostgreSQL, $WAREHOUSES warehouses"
printf '%-8s %9s %9s %10s %10s %10s %10s %6s\n' loop TPM client "µs/txn" "NO p99" "svc p99" "jitter p99" late
rows=$work/rows
for _ in $(seq "$ROUNDS"); do
	closed=$(row closed --vus "$VUS")
	echo "$closed" | tee -a "$rows"
	rate=$(echo "$closed" | awk -v share="$SHARE" '{printf "%d", $3 * share / 100}')
	row open --vus "$VUS" --rate "$rate" | tee -a "$rows"
done
for loop in closed open; do
	awk -v loop="$loop" '$1 == loop { for (i = 2; i <= 8; i++) v[i, ++n[i]] = $i }
		function med(i,   a, k, m) { m = n[i]; for (k = 1; k <= m; k++) a[k] = v[i, k]; asort(a); return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
		END { printf "%-8s %9d %9d %10.1f %10.2f %10.2f %10.3f %6s   (medians)\n", loop, med(2), med(3), med(4), med(5), med(6), med(7), med(8) }' "$rows"
done
