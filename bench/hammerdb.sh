#!/usr/bin/env bash
# bench/hammerdb.sh — HammerDB's own PostgreSQL stored procedures against
# tierbench's routines, on the same server, in alternating pairs.
#
#   bench/hammerdb.sh /opt/HammerDB-5.0          # a HammerDB install or source tree
#   ROUNDS=5 ASYNC=0 bench/hammerdb.sh ~/HammerDB
#
# A throughput figure measured with HammerDB elsewhere cannot tell whether
# tierbench is ahead or behind on this host: the host's speed and the
# server's settings move NOPM more than any driver does. This measures both
# on one server, minutes apart. It reads HammerDB's procedures (NEWORD,
# PAYMENT, DELIVERY, OSTAT, SLEV and DBMS_RANDOM, the pg_storedprocs=true
# variant) out of the given tree's src/postgresql/pgoltp.tcl at run time
# (no HammerDB code is kept here), and drives them with pgbench, drawing
# inputs as HammerDB's driver script does: a home warehouse per client
# (spread evenly, where HammerDB draws it at random), the 10/10/1/1/1 mix of
# 23, uniform customer ids, 60% of Payments and Order-Status by a NURand last
# name (C = 123), 15% remote Payments, Stock-Level on the client's fixed
# district; items, quantities and remote lines are drawn inside NEWORD.
# Calls go as HammerDB sends them: CALL statements with literal values, over
# the simple query protocol.
#
# pgbench costs the host less CPU per call than HammerDB's Tcl driver, so
# this is HammerDB's procedures at their best. Their schema lets an order
# line's amount and district information be NULL, which NEWORD's 1%
# unused item and an order naming an item twice rely on; their copy of the
# database drops those two NOT NULLs.
#
# Per round, for durable and then (ASYNC=1, the default) asynchronous
# commits: HammerDB's procedures on a fresh copy of the built database
# ($RAMPUP unmeasured, then $DURATION), then tierbench's routines on another
# fresh copy (`tpcc run --rampup $RAMPUP --duration $DURATION`). NOPM and
# TPM are pgbench's own counts for HammerDB's procedures (every call is one
# transaction) and the database's for tierbench; client µs/txn is each
# client's user + system CPU per transaction.
set -euo pipefail
[ $# = 1 ] || { echo "usage: bench/hammerdb.sh HAMMERDB_DIR (a HammerDB install or source tree)" >&2; exit 2; }
tcl=$1/src/postgresql/pgoltp.tcl
[ -r "$tcl" ] || { echo "bench/hammerdb.sh: $tcl not found: give the directory HammerDB is installed or checked out in" >&2; exit 2; }
WAREHOUSES=${WAREHOUSES:-2}
VUS=${VUS:-4}
RAMPUP=${RAMPUP:-10s}
DURATION=${DURATION:-30s}
ROUNDS=${ROUNDS:-3}
cd "$(dirname "$0")/.."
make -s build >/dev/null
TB=$PWD/bin/tierbench
# shellcheck source=bench/common.sh
. bench/common.sh

bench_work hammerdb

# The brace-quoted values of `set sql(N) {...}` that create the procedures
# with a $$-quoted PL/pgSQL body, each name's first: the Oracle-compatible
# variant has no $$ body, the pg_storedprocs=false variant creates functions.
awk 'BEGIN { RS = "\001" }
{
	s = $0
	while (match(s, /set sql\([0-9]+\) *\{/)) {
		s = substr(s, RSTART + RLENGTH - 1)
		depth = 0
		for (k = 1; k <= length(s); k++) {
			c = substr(s, k, 1)
			if (c == "{") depth++
			else if (c == "}" && --depth == 0) break
		}
		body = substr(s, 2, k - 2)
		s = substr(s, k + 1)
		if (index(body, "$$") == 0) continue
		if (match(body, /CREATE OR REPLACE (PROCEDURE (NEWORD|PAYMENT|DELIVERY|OSTAT|SLEV)|FUNCTION DBMS_RANDOM) *\(/)) {
			name = substr(body, RSTART, RLENGTH)
			if (!(name in seen)) { seen[name] = 1; printf "%s;\n", body }
		}
	}
}' "$tcl" >"$work/hammerdb.sql"
found=$(grep -c '^ *CREATE OR REPLACE' "$work/hammerdb.sql" || true)
[ "$found" = 6 ] || { echo "bench/hammerdb.sh: found $found of HammerDB's 6 stored procedures in $tcl" >&2; exit 1; }

# HammerDB's client draws, as pgbench scripts.
home="\\set w :client_id % $WAREHOUSES + 1"
other=":w"
[ "$WAREHOUSES" = 1 ] || other="(:w + random(1, $((WAREHOUSES - 1))) - 1) % $WAREHOUSES + 1"
name="(string_to_array('BAR,OUGHT,ABLE,PRI,PRES,ESE,ANTI,CALLY,ATION,EING', ','))"
lastname='\set n ((random(0, 255) | random(0, 999)) + 123) % 1000
\set n1 :n / 100 + 1
\set n2 :n / 10 % 10 + 1
\set n3 :n % 10 + 1
\set byname case when random(1, 100) <= 60 then 1 else 0 end'
last="case when :byname = 1 then $name[:n1] || $name[:n2] || $name[:n3] else '' end"
printf '%s\n' "$home" '\set d random(1, 10)' '\set c random(1, 3000)' '\set ol random(5, 15)' \
	"CALL neword(:w, $WAREHOUSES, :d, :c, :ol, 0.0, '', '', 0.0, 0.0, 0, localtimestamp(0));" >"$work/no.sql"
printf '%s\n' "$home" '\set d random(1, 10)' '\set remote random(1, 100) > 85' \
	"\\set cw case when :remote then $other else :w end" '\set cd case when :remote then random(1, 10) else :d end' \
	"$lastname" '\set c random(1, 3000)' '\set amount random(1, 5000)' \
	"CALL payment(:w, :d, :cw, :cd, :byname, :amount, '0', $last, :c, $(printf "'', %.0s" $(seq 18))localtimestamp(0), 0.0, 0.0, 0.0, '', localtimestamp(0));" >"$work/p.sql"
printf '%s\n' "$home" '\set d random(1, 10)' "$lastname" '\set c random(1, 3000)' \
	"CALL ostat(:w, :d, :c, :byname, $last, '', '', 0.0, 0, localtimestamp(0), 0, '');" >"$work/os.sql"
printf '%s\n' "$home" '\set carrier random(1, 10)' 'CALL delivery(:w, :carrier, localtimestamp(0));' >"$work/d.sql"
printf '%s\n' "$home" "\\set d (:client_id / $WAREHOUSES) % 10 + 1" '\set threshold random(10, 20)' \
	'CALL slev(:w, :d, :threshold, 0);' >"$work/sl.sql"
mix=(-f "$work/no.sql@10" -f "$work/p.sql@10" -f "$work/os.sql@1" -f "$work/d.sql@1" -f "$work/sl.sql@1")
# HammerDB sends its CALLs as plain query strings.
PGBENCH_MODE=simple

export TIERBENCH_DSN
base=$("$TB" server start --datadir "$work/data" --json | sed -n 's/^ *"dsn": "\(.*\)",$/\1/p')
db() { printf '%s' "${base%/postgres?*}/$1?${base#*\?}"; }
# sql DB ARGS...: psql on database DB of the server; pgbench_setup's
# variables stay as the caller set them.
sql() {
	local d=$1 pgbench pw uri secs
	shift
	TIERBENCH_DSN=$(db "$d") pgbench_setup >/dev/null && PGOPTIONS="-c client_min_messages=warning" pgbench_psql -qAt "$@"
}
# copy NAME: a fresh copy of the built database, checkpointed.
copy() { sql postgres -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1 TEMPLATE built" -c CHECKPOINT; }
sql postgres -c 'CREATE DATABASE built'
TIERBENCH_DSN=$(db built) "$TB" tpcc build --warehouses "$WAREHOUSES" >/dev/null 2>&1

printf '%-6s %-8s %-22s %9s %9s %16s\n' round commits driver NOPM TPM "client µs/txn"
for round in $(seq "$ROUNDS"); do
	for commits in durable async; do
		[ "$commits" = durable ] || [ "${ASYNC:-1}" = 1 ] || continue
		opts=""
		[ "$commits" = durable ] || opts=$async_opts
		copy hammerdb
		TIERBENCH_DSN=$(db hammerdb)
		sql hammerdb -c 'ALTER TABLE order_line ALTER ol_amount DROP NOT NULL, ALTER ol_dist_info DROP NOT NULL' -f "$work/hammerdb.sql"
		DURATION=$RAMPUP pgbench_setup "$opts"
		pgbench_timed "$work/warmup.out" "${mix[@]}" >/dev/null
		pgbench_setup "$opts"
		cpu=$(pgbench_timed "$work/pgbench.out" "${mix[@]}")
		awk -v round="$round" -v commits="$commits" -v cpu="$cpu" -v secs="$secs" '
			/^number of transactions actually processed/ { n = $NF }
			/^SQL script 1:/ { first = 1 }
			first && /^ - [0-9]+ transactions/ { no = $2; first = 0 }
			/aborted/ { print; aborted = 1 }
			END {
				split(cpu, c, " ")
				if (n == 0 || aborted) { print "pgbench did not finish: see its output"; exit }
				printf "%-6s %-8s %-22s %9d %9d %16.1f\n", round, commits, "HammerDB procs/pgbench", no / secs * 60, n / secs * 60, (c[1] + c[2]) * 1e6 / n
			}' "$work/pgbench.out"
		sql postgres -c 'DROP DATABASE hammerdb'
		copy tierbench
		TIERBENCH_DSN=$(db tierbench)
		[ -z "$opts" ] || TIERBENCH_DSN="$TIERBENCH_DSN$(dsn_sep)$opts"
		out=$("$TB" tpcc run --json --block-trace=false --vus "$VUS" --rampup "$RAMPUP" --duration "$DURATION" \
			--results "$work/results" 2>/dev/null)
		printf '%-6s %-8s %-22s %9s %9s %16.1f\n' "$round" "$commits" "tierbench routines" \
			"$(echo "$out" | field nopm)" "$(echo "$out" | field tpm)" "$(echo "$out" | field client_cpu_us_per_txn)"
		sql postgres -c 'DROP DATABASE tierbench'
	done
done
