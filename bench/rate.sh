#!/usr/bin/env bash
# bench/rate.sh — the open loop's pacer: its jitter, its cost, its reach.
#
#   bench/rate.sh                         # 2 warehouses, 3 rounds of 30-second steps
#   ROUNDS=5 DURATION=60s bench/rate.sh
#   VUS=same SHARE=95 bench/rate.sh       # each open loop on the closed loop's n VUs, at 95% of its TPM
#
# 1. The schedule alone (BenchmarkPacer in internal/driver): Poisson arrivals
#    for a second to 8 VUs that do no work, on one scheduler thread, at
#    60,000 to 3,000,000 a minute: how late arrivals began (p99, max), the
#    share that began within 1 ms, and the client CPU per arrival, whose
#    inverse is what one core can schedule.
# 2. On a managed server ($ENGINE: postgres or mariadb; a fresh one,
#    $WAREHOUSES warehouses), each loop at the same throughput, ROUNDS
#    rounds: for each n in LOADS, a closed loop of n VUs (its client TPM is
#    the throughput to match), then an open loop offering that TPM (Poisson
#    arrivals) to a pool of $VUS VUs (VUS=same: n VUs, the closed loop's
#    own; SHARE=P offers P% of its TPM, default 100, since n VUs cannot
#    serve all of what n VUs at saturation did). Between the two, a closed
#    loop of the pool's VUs with a think time (--think-time) that brings
#    it to about the closed loop's throughput (a first step guesses it
#    from the service time at saturation, a second corrects it by the
#    service time the first measured); the open loop is then offered what
#    that loop did. A closed loop at saturation keeps its VUs busy; the
#    thinking loop and the open loop leave them idle between transactions,
#    with the same VUs at the same throughput, and differ only in what
#    paces them: the users' think times or the arrivals. Each row gives the three loops' TPM and
#    client CPU per transaction (tierbench's rusage over the measured
#    interval, telemetry included), the mean think time, the open loop's
#    CPU against each closed loop's, and the open loop's New-Order p99
#    (from the intended start), jitter p99 and late arrivals. The last
#    lines have each load's medians.
# 3. What any client pays for an open loop: ROUNDS rounds, on the same
#    server and New-Order/Payment half each, of the same comparison as 2
#    for tierbench and for pgbench, the C client beside PostgreSQL (on one
#    thread): for each n in LOADS, n clients in a closed loop, then $VUS
#    offered its throughput (pgbench --rate). Each line gives the client
#    CPU per transaction of both loops and their ratio; the last, the
#    medians. PGBENCH=0 (or ENGINE=mariadb) skips it.
set -euo pipefail
ENGINE=${ENGINE:-postgres}
LOADS=${LOADS:-1 2 3}
WAREHOUSES=${WAREHOUSES:-2}
ROUNDS=${ROUNDS:-3}
VUS=${VUS:-4}
SHARE=${SHARE:-100}
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
TIERBENCH_DSN=$("$TB" server start --engine "$ENGINE" --datadir "$work/data" --json | sed -n 's/^ *"dsn": "\(.*\)",$/\1/p')
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
# pool N: the open loop's VUs beside a closed loop of N; offered P TPM: SHARE% of P.
pool() { if [ "$VUS" = same ]; then echo "$1"; else echo "$VUS"; fi; }
offered() { awk -v t="$1" -v s="$SHARE" 'BEGIN { printf "%d", t * s / 100 }'; }
echo "# closed loop of n VUs, closed loop of the pool's $VUS VUs thinking between transactions, and open loop (the pool) offered $SHARE% of the thinking loop's throughput, $ENGINE, $WAREHOUSES warehouses"
printf '%-3s %9s %9s %9s %9s %8s %9s %9s %7s %7s %10s %10s %6s\n' n "closed TPM" "closed µs" "think TPM" "think µs" "think" "open TPM" "open µs" "/closed" "/think" "NO p99" "jitter p99" late
rows=$work/rows
for _ in $(seq "$ROUNDS"); do
	for n in $LOADS; do
		closed=$(row closed --vus "$n")
		ctpm=$(echo "$closed" | awk '{print $3}')
		vus=$(pool "$n")
		# The pool's VUs at the closed loop's throughput: each VU's cycle is
		# pool x 60 s / TPM, and its think time that less its service
		# time. A first guess takes the service time at saturation, n x 60
		# s / TPM; the service time that loop then measured (its cycle
		# less its think time) sets the think time of the loop reported.
		if [ "$vus" -gt "$n" ]; then
			think=$(awk -v p="$vus" -v n="$n" -v t="$ctpm" 'BEGIN { printf "%d", (p - n) * 60e6 / t }')
			guess=$(row think --vus "$vus" --think-time "${think}us")
			think=$(awk -v p="$vus" -v t="$ctpm" -v z="$think" -v g="$(echo "$guess" | awk '{print $3}')" \
				'BEGIN { s = p * 60e6 / g - z; z = p * 60e6 / t - s; printf "%d", (z > 0 ? z : 0) }')us
			thinking=$(row think --vus "$vus" --think-time "$think")
		else
			thinking="think $ctpm $ctpm 0 0 0 0 -"
			think=-
		fi
		open=$(row open --vus "$vus" --rate "$(offered "$(echo "$thinking" | awk '{print $3}')")")
		echo "$n $closed $thinking $open $think" | awk '{ printf "%-3s %9d %9.1f %9d %9.1f %8s %9d %9.1f %7.3f %7.3f %10.2f %10.3f %6s\n",
			$1, $4, $5, $12, $13, $26, $20, $21, $21 / $5, ($13 > 0 ? $21 / $13 : 0), $22, $24, $25 }' | tee -a "$rows"
	done
done
for n in $LOADS; do
	awk -v n="$n" '$1 == n { for (i = 2; i <= 13; i++) v[i, ++c[i]] = $i }
		function med(i,   a, k, m) { m = c[i]; for (k = 1; k <= m; k++) a[k] = v[i, k]; asort(a); return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
		END { printf "%-3s %9d %9.1f %9d %9.1f %8s %9d %9.1f %7.3f %7.3f %10.2f %10.3f %6s   (medians)\n",
			n, med(2), med(3), med(4), med(5), "", med(7), med(8), med(9), med(10), med(11), med(12), med(13) }' "$rows"
done

[ "$ENGINE" = postgres ] || exit 0
[ "${PGBENCH:-1}" = 0 ] && exit 0
pgbench_setup || exit 0
pgbench_nop_scripts "$WAREHOUSES"
# pgbench_cpu ARGS...: one pgbench run of the New-Order/Payment mix; prints
# its transactions a second and CPU µs per transaction.
pgbench_cpu() {
	local cpu
	cpu=$(pgbench_timed "$work/pgbench.out" "$@" -f "$work/no.sql@50" -f "$work/pay.sql@50")
	awk -v cpu="$cpu" -v secs="$secs" '/^number of transactions actually processed/ { n = $NF }
		END { split(cpu, c, " "); if (n == 0) { print "0 0"; exit }; printf "%.1f %.1f\n", n / secs, (c[1] + c[2]) * 1e6 / n }' "$work/pgbench.out"
}
echo
echo "# the open loop's cost per transaction, New-Order/Payment half each, at the closed loop's throughput: tierbench and pgbench"
printf '%-10s %-3s %12s %12s %7s\n' client n "closed µs" "open µs" ratio
nop=(--mix no=50,p=50 --mix-unchecked)
pairs=$work/pairs
for _ in $(seq "$ROUNDS"); do
	for n in $LOADS; do
		closed=$(row closed --vus "$n" "${nop[@]}")
		open=$(row open --vus "$(pool "$n")" --rate "$(offered "$(echo "$closed" | awk '{print $3}')")" "${nop[@]}")
		echo "tierbench $n $(echo "$closed" | awk '{print $4}') $(echo "$open" | awk '{print $4}')" |
			awk '{printf "%-10s %-3s %12.1f %12.1f %7.3f\n", $1, $2, $3, $4, $4 / $3}' | tee -a "$pairs"
		read -r tps c_closed < <(VUS=$n pgbench_cpu)
		read -r _ c_open < <(VUS=$(pool "$n") pgbench_cpu --rate "$(offered "$tps")")
		printf '%-10s %-3s %12.1f %12.1f %7.3f\n' pgbench "$n" "$c_closed" "$c_open" "$(awk -v a="$c_closed" -v b="$c_open" 'BEGIN { print (a > 0 ? b / a : 0) }')" | tee -a "$pairs"
	done
done
for client in tierbench pgbench; do
	for n in $LOADS; do
		awk -v c="$client" -v n="$n" '$1 == c && $2 == n { for (i = 3; i <= 5; i++) v[i, ++k[i]] = $i }
			function med(i,   a, j, m) { m = k[i]; for (j = 1; j <= m; j++) a[j] = v[i, j]; asort(a); return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
			END { printf "%-10s %-3s %12.1f %12.1f %7.3f   (medians)\n", c, n, med(3), med(4), med(5) }' "$pairs"
	done
done
