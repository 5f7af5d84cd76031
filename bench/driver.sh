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
#
# As a yardstick for the client's cost, each warehouse count also runs a
# New-Order/Payment half-and-half mix twice on the same routines: through
# tierbench (`--mix no=50,p=50 --mix-unchecked`) and through pgbench, the C
# client on libpq that ships with PostgreSQL, with $VUS clients on one thread.
# pgbench's CPU is its user + system time over the whole run (connections
# included). PGBENCH=0 skips it.
#
# Row routines/async runs the routines with synchronous_commit=off, set by
# the DSN for tierbench's connections only: commits then return before
# their WAL is flushed. It is not a durable configuration; it shows how
# much of the throughput is bound by the server's commit wait rather than
# by the driver. It is also the commit setting of HammerDB's own guide for
# PostgreSQL (its example postgresql.conf; see docs/tpcc.md), so it is the
# row to hold against a HammerDB figure measured that way. ASYNC=0 skips it.
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

# pgbench_run W: New-Order and Payment, half each, through pgbench on the
# routines tierbench installed, for as long as a tierbench step measures.
pgbench_run() {
	local w=$1 pgbench
	pgbench=$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | sort -V | tail -1)
	[ -x "$pgbench" ] || { echo "pgbench not found: skipped"; return; }
	{
		echo "\\set w random(1, $w)"; echo '\set d random(1, 10)'; echo '\set c random(1, 3000)'
		for i in $(seq 10); do echo "\\set i$i random(1, 100000)"; done
		echo 'SELECT * FROM tpcc_new_order(:w::int, :d::int, :c::int, 1,'
		echo '  ARRAY[:i1, :i2, :i3, :i4, :i5, :i6, :i7, :i8, :i9, :i10]::int[],'
		echo '  ARRAY[:w, :w, :w, :w, :w, :w, :w, :w, :w, :w]::int[], ARRAY[5, 5, 5, 5, 5, 5, 5, 5, 5, 5]);'
	} >"$work/no.sql"
	printf '%s\n' "\\set w random(1, $w)" '\set d random(1, 10)' '\set c random(1, 3000)' \
		"SELECT tpcc_payment(:w::int, :d::int, :w::int, :d::int, :c::int, ''::text, 1000::bigint);" >"$work/pay.sql"
	# The password goes by the environment, not the command line.
	local pw uri secs
	pw=$(printf '%s' "$TIERBENCH_DSN" | sed -n 's|^postgres://[^:]*:\([^@]*\)@.*|\1|p')
	uri=$(printf '%s' "$TIERBENCH_DSN" | sed 's|^\(postgres://[^:]*\):[^@]*@|\1@|')
	case $DURATION in
	*m) secs=$(( ${DURATION%m} * 60 )) ;;
	*s) secs=${DURATION%s} ;;
	*) secs=$DURATION ;;
	esac
	local TIMEFORMAT='%U %S' cpu
	cpu=$( { time PGPASSWORD=$pw "$pgbench" -n -M prepared -c "$VUS" -j 1 -T "$secs" \
		-f "$work/no.sql@50" -f "$work/pay.sql@50" "$uri" >"$work/pgbench.out" 2>&1; } 2>&1 )
	awk -v w="$w" -v vus="$VUS" -v cpu="$cpu" -v secs="$secs" '
		/^number of transactions actually processed/ { n = $NF }
		END {
			split(cpu, c, " ")
			if (n == 0) { print "pgbench ran no transactions: see its output"; exit }
			printf "%-10s %-14s %4s %9d %9s %10s %16.1f\n", w, "no+p/pgbench", vus, n / 2 / secs * 60, "-", "-", (c[1] + c[2]) * 1e6 / n
		}' "$work/pgbench.out"
}

# tb_row W LABEL ARGS...: one tierbench step with ARGS, as a row of the table.
tb_row() {
	local w=$1 label=$2 out
	shift 2
	out=$("$TB" tpcc run --json --block-trace=false "$@" --vus "$VUS" --rampup "$RAMPUP" --duration "$DURATION" \
		--results "$work/results" 2>/dev/null)
	printf '%-10s %-14s %4s %9s %9s %10s %16.1f\n' "$w" "$label" "$VUS" \
		"$(echo "$out" | field nopm)" "$(echo "$out" | field tpm)" "$(echo "$out" | field client_nopm)" \
		"$(echo "$out" | field client_cpu_us_per_txn)"
}
# dsn_sep is what joins one more parameter to $TIERBENCH_DSN.
dsn_sep() { case $TIERBENCH_DSN in *\?*) echo '&' ;; *) echo '?' ;; esac; }

printf '%-10s %-14s %4s %9s %9s %10s %16s\n' warehouses mode VUs NOPM TPM client_NOPM "client µs/txn"
for w in $WAREHOUSES; do
	"$TB" server stop --datadir "$work/data" >/dev/null 2>&1 || true
	rm -rf "$work/data"
	export TIERBENCH_DSN
	TIERBENCH_DSN=$("$TB" server start --datadir "$work/data" --json | sed -n 's/^ *"dsn": "\(.*\)",$/\1/p')
	"$TB" tpcc build --warehouses "$w" >/dev/null 2>&1
	for mode in $MODES; do
		tb_row "$w" "$mode" --mode "$mode"
	done
	# The same routines with commits that do not wait for the WAL flush:
	# how much of the gap to a throughput target is the server's commit
	# wait rather than the driver (ASYNC=0 skips it).
	[ "${ASYNC:-1}" = 0 ] || TIERBENCH_DSN="$TIERBENCH_DSN$(dsn_sep)options=-c%20synchronous_commit%3Doff" \
		tb_row "$w" "routines/async" --mode routines
	[ "${PGBENCH:-1}" = 0 ] && continue
	tb_row "$w" "no+p/tb" --mix no=50,p=50 --mix-unchecked
	pgbench_run "$w"
done
