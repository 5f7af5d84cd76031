#!/usr/bin/env bash
# bench/pairs.sh — the client CPU per transaction of two tierbench builds, in
# alternating whole-process pairs on one managed server.
#
#   bench/pairs.sh OLD NEW                       # PostgreSQL, routines, 4 VUs
#   ENGINE=mariadb PAIRS=8 bench/pairs.sh OLD NEW
#   EXTRA="--rate 40000" bench/pairs.sh OLD NEW  # the open loop
#   REINSTALL=1 bench/pairs.sh OLD NEW           # builds whose routines differ
#
# OLD and NEW are tierbench binaries, e.g. one built from an earlier commit:
#   git worktree add /tmp/old HEAD~3 && (cd /tmp/old && go build -o /tmp/tb.old ./cmd/tierbench)
#
# NEW starts a managed server ($ENGINE) and builds $WAREHOUSES warehouses
# once; then each pair runs `tpcc run --vus $VUS --rampup $RAMPUP --duration
# $DURATION $EXTRA` with OLD and with NEW, one after the other, the first of
# the two alternating from pair to pair; with REINSTALL=1, each run first
# installs its own binary's routines (`tpcc build --routines-only`), for
# two builds whose routines differ. A pair's two runs share their
# minute, so the host's drift from hour to hour (a third on the reference
# machine) falls mostly outside the ratio. Prints each run's client CPU per
# transaction (tierbench's user + system time over the measured interval,
# its telemetry included), TPM and New-Order p99 (in an open loop, from
# the intended start), each pair's NEW/OLD ratio of the CPU, and the
# medians. About PAIRS × 2 × (RAMPUP + DURATION + 3 s).
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,9p' "$0" >&2; exit 2; }
OLD=$(realpath "$1")
NEW=$(realpath "$2")
ENGINE=${ENGINE:-postgres}
PAIRS=${PAIRS:-6}
VUS=${VUS:-4}
WAREHOUSES=${WAREHOUSES:-2}
RAMPUP=${RAMPUP:-3s}
DURATION=${DURATION:-20s}
EXTRA=${EXTRA:-}
TB=$NEW
. "$(dirname "$0")/common.sh"
bench_work pairs

"$NEW" server start --engine "$ENGINE" --datadir "$work/data" --json >"$work/server.json"
dsn=$(sfield dsn <"$work/server.json")
TIERBENCH_DSN=$dsn "$NEW" tpcc build --warehouses "$WAREHOUSES" >/dev/null 2>"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
export TIERBENCH_DSN=$dsn # the DSN (and its password) stays off the command lines

run() { # run BINARY: "cpu tpm p99"
	[ "${REINSTALL:-0}" != 1 ] || "$1" tpcc build --routines-only >/dev/null 2>&1
	# shellcheck disable=SC2086 # EXTRA is a list of flags
	"$1" tpcc run --vus "$VUS" --rampup "$RAMPUP" --duration "$DURATION" $EXTRA --json --results "$work/results" 2>/dev/null |
		python3 -c 'import json, sys; s = json.load(sys.stdin)["steps"][0]
print(s["client_cpu_us_per_txn"], s["tpm"], s["txn"]["new_order"]["p99_ms"])'
}

echo "engine=$ENGINE vus=$VUS warehouses=$WAREHOUSES duration=$DURATION extra='$EXTRA' load=$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %12s %8s %8s %12s %8s %8s %7s\n' pair old_us old_tpm old_p99 new_us new_tpm new_p99 ratio
: >"$work/pairs"
for i in $(seq "$PAIRS"); do
	if [ $((i % 2)) -eq 1 ]; then
		read -r ou ot op < <(run "$OLD")
		read -r nu nt np < <(run "$NEW")
	else
		read -r nu nt np < <(run "$NEW")
		read -r ou ot op < <(run "$OLD")
	fi
	ratio=$(awk -v o="$ou" -v n="$nu" 'BEGIN { printf "%.3f", n / o }')
	printf '%-5s %12.1f %8s %8.2f %12.1f %8s %8.2f %7s\n' "$i" "$ou" "$ot" "$op" "$nu" "$nt" "$np" "$ratio"
	echo "$ou $nu $ratio $ot $nt $op $np" >>"$work/pairs"
done
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf 'median: old %.1f µs, new %.1f µs, ratio %.3f; TPM old %s, new %s; New-Order p99 old %s ms, new %s ms; load=%s\n' \
	"$(cut -d' ' -f1 "$work/pairs" | median)" "$(cut -d' ' -f2 "$work/pairs" | median)" \
	"$(cut -d' ' -f3 "$work/pairs" | median)" "$(cut -d' ' -f4 "$work/pairs" | median)" \
	"$(cut -d' ' -f5 "$work/pairs" | median)" "$(cut -d' ' -f6 "$work/pairs" | median)" \
	"$(cut -d' ' -f7 "$work/pairs" | median)" "$(cut -d' ' -f1-3 /proc/loadavg)"
