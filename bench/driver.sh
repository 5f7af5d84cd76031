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
# Rows mix/pgbench and mix/pgb/async run the spec's mix on the same routines
# through pgbench (see pgbench_mix), with durable and asynchronous commits:
# if pgbench, a different client, reaches no more than tierbench, the
# throughput is the server's on this configuration, not the driver's.
#
# The rows above run with the block tracer off and the rest of the
# telemetry on. Row routines/notel runs the routines with no telemetry
# (--interval 0), row routines/trace with the block tracer on too, as
# `tpcc run` does by default: what tierbench's own sampling costs per
# transaction. TELEMETRY=0 skips them.
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

# shellcheck source=bench/common.sh
. bench/common.sh
bench_work driver

# pgbench_run W: New-Order and Payment, half each, through pgbench on the
# routines tierbench installed, for as long as a tierbench step measures.
pgbench_run() {
	local w=$1 pgbench pw uri secs cpu
	pgbench_setup || return 0
	pgbench_nop_scripts "$w"
	cpu=$(pgbench_timed "$work/pgbench.out" -f "$work/no.sql@50" -f "$work/pay.sql@50")
	awk -v w="$w" -v vus="$VUS" -v cpu="$cpu" -v secs="$secs" '
		/^number of transactions actually processed/ { n = $NF }
		END {
			split(cpu, c, " ")
			if (n == 0) { print "pgbench ran no transactions: see its output"; exit }
			printf "%-10s %-14s %4s %9d %9s %10s %16.1f\n", w, "no+p/pgbench", vus, n / 2 / secs * 60, "-", "-", (c[1] + c[2]) * 1e6 / n
		}' "$work/pgbench.out"
}

# pgbench_mix W LABEL [CONNINFO]: the spec's mix on the same routines through
# pgbench, PostgreSQL's own C client, with $VUS clients: what the server
# reaches on this configuration with another driver, to tell the driver's
# limits from the server's. pgbench interprets the ~50 \set lines of a
# New-Order script, so its CPU per transaction is not smaller than
# tierbench's. CONNINFO (a URI parameter) is added to the connection.
#
# As tierbench draws them: the 23-card deck's weights (10/10/1/1/1), a home
# warehouse per client, Stock-Level on the client's fixed district, NURand
# for customer and item ids with C-Run values (C_LAST's against the stored
# C-Load, 2.1.6.1), 60% of Payments and Order-Status by last name, 1% remote
# order lines and 15% remote Payments, 5..15 lines. Not as tierbench does:
# no 1% rolled-back New-Order (pgbench would stop the client on the
# routine's error), and the last name is spelt from its number in SQL.
# NOPM is pgbench's count of New-Orders per minute, TPM its count of
# transactions: pgbench has no ramp-up, so the whole run is measured.
pgbench_mix() {
	# remote P: another warehouse than :w with probability P%, when there is one.
	remote() {
		if [ "$w" -gt 1 ]; then
			echo "case when random(1, 100) <= $1 then (:w + random(1, $((w - 1))) - 1) % $w + 1 else :w end"
		else
			echo ":w"
		fi
	}
	local w=$1 label=$2 pgbench pw uri secs cpu cload crun k
	pgbench_setup "${3:-}" || return 0
	cload=$(pgbench_psql -Atc 'SELECT c_load_last FROM tpcc_meta')
	# |C-Run - C-Load| = 100 is in 65..119 and is neither 96 nor 112.
	if [ "$cload" -ge 100 ]; then crun=$((cload - 100)); else crun=$((cload + 100)); fi
	local cid=$((RANDOM % 1024)) citem=$((RANDOM % 8192))
	local home="\\set w :client_id % $w + 1" pick="\\set d random(1, 10)"
	local nucid="((random(0, 1023) | random(1, 3000)) + $cid) % 3000 + 1"
	local name="(string_to_array('BAR,OUGHT,ABLE,PRI,PRES,ESE,ANTI,CALLY,ATION,EING', ','))"
	# lastname: the syllables of NURand(255, 0, 999) with C-Run, and a
	# customer id that is 0 (by name) 60% of the time.
	local lastname="\\set n ((random(0, 255) | random(0, 999)) + $crun) % 1000
\\set n1 :n / 100 + 1
\\set n2 :n / 10 % 10 + 1
\\set n3 :n % 10 + 1
\\set c case when random(1, 100) <= 60 then 0 else $nucid end"
	local lastsql="$name[:n1::int] || $name[:n2::int] || $name[:n3::int]"
	{
		echo "$home"; echo "$pick"; echo "\\set c $nucid"; echo '\set n random(5, 15)'
		local items= supply= qty= local=
		for k in $(seq 15); do
			echo "\\set i$k ((random(0, 8191) | random(1, 100000)) + $citem) % 100000 + 1"
			echo "\\set s$k $(remote 1)"
			echo "\\set q$k random(1, 10)"
			items+="${items:+, }:i$k"; supply+="${supply:+, }:s$k"; qty+="${qty:+, }:q$k"
			local+="${local:+ and }(:s$k = :w or $k > :n)"
		done
		echo "\\set local case when $local then 1 else 0 end"
		echo "SELECT * FROM tpcc_new_order(:w::int, :d::int, :c::int, :local::int,"
		echo "  (ARRAY[$items]::int[])[1:(:n)::int], (ARRAY[$supply]::int[])[1:(:n)::int],"
		echo "  (ARRAY[$qty]::int[])[1:(:n)::int]);"
	} >"$work/mix-no.sql"
	{
		echo "$home"; echo "$pick"; echo "$lastname"
		echo "\\set cw $(remote 15)"
		echo '\set cd case when :cw = :w then :d else random(1, 10) end'
		echo '\set cents random(100, 500000)'
		echo "SELECT tpcc_payment(:w::int, :d::int, :cw::int, :cd::int, :c::int, $lastsql, :cents::bigint);"
	} >"$work/mix-p.sql"
	{
		echo "$home"; echo "$pick"; echo "$lastname"
		echo "SELECT * FROM tpcc_order_status(:w::int, :d::int, :c::int, $lastsql);"
	} >"$work/mix-os.sql"
	printf '%s\n' "$home" '\set carrier random(1, 10)' "SELECT tpcc_delivery(:w::int, :carrier::int);" >"$work/mix-d.sql"
	printf '%s\n' "$home" "\\set d (:client_id / $w) % 10 + 1" '\set threshold random(10, 20)' \
		"SELECT tpcc_stock_level(:w::int, :d::int, :threshold::int);" >"$work/mix-sl.sql"
	cpu=$(pgbench_timed "$work/pgbench-mix.out" --max-tries 10 -f "$work/mix-no.sql@10" -f "$work/mix-p.sql@10" \
		-f "$work/mix-os.sql@1" -f "$work/mix-d.sql@1" -f "$work/mix-sl.sql@1")
	awk -v w="$w" -v label="$label" -v vus="$VUS" -v cpu="$cpu" -v secs="$secs" '
		/^number of transactions actually processed/ { n = $NF }
		/^SQL script 1:/ { first = 1 }
		first && /^ - [0-9]+ transactions/ { no = $2; first = 0 }
		/^number of failed transactions/ { failed = $5 }
		END {
			split(cpu, c, " ")
			if (n == 0) { print "pgbench ran no transactions: see its output"; exit }
			printf "%-10s %-14s %4s %9d %9d %10s %16.1f\n", w, label, vus, no / secs * 60, n / secs * 60, "-", (c[1] + c[2]) * 1e6 / n
			if (failed > 0) printf "%-10s %-14s failed transactions: %d\n", w, label, failed
		}' "$work/pgbench-mix.out"
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
	# What telemetry costs the driver: the routines with none at all, and
	# with the block tracer on as well, which is tpcc run's default
	# (TELEMETRY=0 skips both).
	if [ "${TELEMETRY:-1}" != 0 ]; then
		tb_row "$w" "routines/notel" --mode routines --interval 0
		tb_row "$w" "routines/trace" --mode routines --block-trace=true
	fi
	# The same routines with commits that do not wait for the WAL flush:
	# how much of the gap to a throughput target is the server's commit
	# wait rather than the driver (ASYNC=0 skips it).
	[ "${ASYNC:-1}" = 0 ] || TIERBENCH_DSN="$TIERBENCH_DSN$(dsn_sep)$async_opts" \
		tb_row "$w" "routines/async" --mode routines
	[ "${PGBENCH:-1}" = 0 ] && continue
	pgbench_mix "$w" "mix/pgbench"
	[ "${ASYNC:-1}" = 0 ] || pgbench_mix "$w" "mix/pgb/async" "$async_opts"
	tb_row "$w" "no+p/tb" --mix no=50,p=50 --mix-unchecked
	pgbench_run "$w"
done
