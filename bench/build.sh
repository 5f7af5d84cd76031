#!/usr/bin/env bash
# bench/build.sh — how fast does tierbench load TPC-C, against what the
# database itself can ingest?
#
#   W=10 K=2 bench/build.sh
#
# 1. tierbench: `tpcc build --warehouses W --build-vus K` on a fresh managed
#    PostgreSQL (load, keys and indexes, statistics).
# 2. The limit: the same rows, pre-generated into files by `tpcc generate`,
#    loaded by the server itself with COPY FROM 'file' (no client at all), K
#    at a time, followed by the same key/index statements and the same
#    ANALYZE, K at a time, on a second fresh managed server with the same
#    settings.
# Prints both times and their ratio. Needs psql (PostgreSQL's client).
set -euo pipefail
W=${W:-10}
K=${K:-$(nproc)}
cd "$(dirname "$0")/.."
make -s build >/dev/null
TB=$PWD/bin/tierbench
PSQL=$(command -v psql || ls /usr/lib/postgresql/*/bin/psql | sort -V | tail -1)

work=$(mktemp -d /var/tmp/tierbench-build-bench.XXXXXX)
chmod 755 "$work" # the server may run as an unprivileged user that must read the files
cleanup() {
	"$TB" server stop --datadir "$work/a" >/dev/null 2>&1 || true
	"$TB" server stop --datadir "$work/b" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

json_field() { sed -n "s/^ *\"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" | head -1; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }

echo "== tierbench tpcc build: $W warehouses, $K loader connections"
dsn_a=$("$TB" server start --datadir "$work/a" --json | json_field dsn)
out=$("$TB" tpcc build --dsn "$dsn_a" --warehouses "$W" --build-vus "$K" --json 2>/dev/null)
t_tb=$(echo "$out" | json_field seconds)
echo "$out" | grep -E '"(seconds|load_seconds|index_seconds|bytes|copy_bytes)"' | sed 's/^ */  /'
"$TB" server stop --datadir "$work/a" >/dev/null

echo "== limit: server-side COPY from pre-generated files + the same index builds"
"$TB" tpcc generate --warehouses "$W" --out "$work/data" --workers "$K" 2>/dev/null | sed 's/^/  /'
chmod -R a+rX "$work/data"
dsn_b=$("$TB" server start --datadir "$work/b" --json | json_field dsn)
"$PSQL" -q "$dsn_b" -f "$work/data/postgres-schema.sql"
copy_task() { # one load task: its files, COPYed one after another in one session
	local sql=""
	for pair in $1; do sql+="COPY ${pair%%=*} FROM '$work/data/${pair#*=}';"; done
	"$PSQL" -q "$dsn_b" -c "$sql" >/dev/null
}
export -f copy_task; export PSQL dsn_b work
t0=$(now)
xargs -P "$K" -I{} bash -c 'copy_task "$@"' _ {} < "$work/data/tasks.txt"
t1=$(now)
# Two -c: each is its own query, so VACUUM does not run in a transaction block.
run_sql() { "$PSQL" -q "$dsn_b" -c "SET maintenance_work_mem = '256MB'" -c "$1" >/dev/null; }
export -f run_sql
tr -d ';' < "$work/data/postgres-indexes.sql" | xargs -P "$K" -I{} bash -c 'run_sql "$@"' _ {}
tr -d ';' < "$work/data/postgres-analyze.sql" | xargs -P "$K" -I{} bash -c 'run_sql "$@"' _ {}
t2=$(now)
t_copy=$(calc "$t1 - $t0")
t_limit=$(calc "$t2 - $t0")
printf '  copy %.2f s, keys+indexes+vacuum+analyze %.2f s\n' "$t_copy" "$(calc "$t2 - $t1")"

echo "== result ($W warehouses, $K connections)"
printf 'tierbench build: %6.2f s\n' "$t_tb"
printf 'COPY limit:      %6.2f s\n' "$t_limit"
printf 'ratio:           %6.2f x\n' "$(calc "$t_tb / $t_limit")"
