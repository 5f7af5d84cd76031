#!/usr/bin/env bash
# bench/tpchload.sh — does `tpch build` keep up with COPY from files?
#
#   SF=1 K=2 bench/tpchload.sh
#   ENGINE=mariadb SF=1 K=2 bench/tpchload.sh
#
# 1. tierbench: `tpch build --scale SF --build-vus K` on a fresh managed
#    PostgreSQL: the generator streams into K COPYs, then the keys and
#    indexes, then VACUUM ANALYZE.
# 2. COPY from files: the same tables written beforehand by
#    `tpch generate` (dbgen's bytes; each line's last '|' cut, untimed),
#    every table cut into K pieces, loaded by the server itself with COPY
#    FROM 'file' K at a time (no client at all), then the same key, index
#    and VACUUM ANALYZE statements K at a time, on a second fresh managed
#    server with the same settings.
# With ENGINE=mariadb the same on managed MariaDB servers: LOAD DATA LOCAL
# INFILE streamed by tierbench against the server's own LOAD DATA INFILE of
# the pieces, K at a time, then the same indexes and ANALYZE TABLE; the
# tables are created with their primary keys first, as the build creates
# them. Needs the mariadb client.
# Prints each side's load time and total, and their ratios. Needs psql.
set -euo pipefail
SF=${SF:-1}
K=${K:-$(nproc)}
ENGINE=${ENGINE:-postgres}
cd "$(dirname "$0")/.."
make -s build >/dev/null
TB=$PWD/bin/tierbench
PSQL=$(command -v psql || ls /usr/lib/postgresql/*/bin/psql | sort -V | tail -1)
SQL=$PWD/internal/engine/$ENGINE

work=$(mktemp -d /var/tmp/tierbench-tpchload-bench.XXXXXX)
chmod 755 "$work" # the server runs as an unprivileged user that must read the files
cleanup() {
	"$TB" server stop --datadir "$work/a" >/dev/null 2>&1 || true
	"$TB" server stop --datadir "$work/b" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

json_field() { sed -n "s/^ *\"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" | head -1; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }

echo "== tierbench tpch build on $ENGINE: SF $SF, $K loader connections"
dsn_a=$("$TB" server start --engine "$ENGINE" --datadir "$work/a" --json | json_field dsn)
out=$("$TB" tpch build --dsn "$dsn_a" --scale "$SF" --build-vus "$K" --json 2>/dev/null)
t_tb=$(echo "$out" | json_field seconds)
l_tb=$(echo "$out" | json_field load_seconds)
echo "$out" | grep -E '"(seconds|load_seconds|index_seconds|analyze_seconds|bytes|copy_bytes)"' | sed 's/^ */  /'
"$TB" server stop --datadir "$work/a" >/dev/null

echo "== COPY from files, then the same keys, indexes and statistics"
"$TB" tpch generate --scale "$SF" --out "$work/data" --workers "$K" >/dev/null
for f in "$work"/data/*.tbl; do
	t=$(basename "$f" .tbl)
	sed -i 's/|$//' "$f"
	split -n "l/$K" -d "$f" "$work/data/$t.part."
	rm "$f"
done
chmod -R a+rX "$work/data"
dsn_b=$("$TB" server start --engine "$ENGINE" --datadir "$work/b" --json | json_field dsn)
if [ "$ENGINE" = mariadb ]; then
	# mariadb://USER:PASSWORD@HOST:PORT/DB: the password goes in MYSQL_PWD,
	# never on a command line.
	rest=${dsn_b#*://}
	userpass=${rest%%@*}
	hostport=${rest#*@}
	hostport=${hostport%%/*}
	db=${rest#*/}
	db=${db%%\?*}
	export MYSQL_PWD=${userpass#*:}
	MARIADB=$(command -v mariadb || command -v mysql)
	export MARIADB MUSER=${userpass%%:*} MHOST=${hostport%:*} MPORT=${hostport##*:} MDB=$db
	msql() { "$MARIADB" --protocol=tcp -h "$MHOST" -P "$MPORT" -u "$MUSER" "$MDB" "$@"; }
	export -f msql
	msql <"$SQL/tpch_schema.sql"
	copy_file() { msql -e "LOAD DATA INFILE '$1' INTO TABLE $(basename "$1" | cut -d. -f1) FIELDS TERMINATED BY '|'" >/dev/null; }
	run_sql() { msql -e "$1" >/dev/null; }
	stats() { echo "ANALYZE TABLE $1"; }
else
	"$PSQL" -q "$dsn_b" -f "$SQL/tpch_schema.sql"
	copy_file() { "$PSQL" -q "$dsn_b" -c "COPY $(basename "$1" | cut -d. -f1) FROM '$1' (DELIMITER '|')" >/dev/null; }
	run_sql() { "$PSQL" -q "$dsn_b" -c "SET maintenance_work_mem = '256MB'" -c "$1" >/dev/null; }
	stats() { echo "VACUUM (ANALYZE) $1"; }
fi
export -f copy_file run_sql
export PSQL dsn_b
t0=$(now)
# Each table's pieces in order, largest tables first: InnoDB appends a
# table's runs in key order, as the build does.
ls -S "$work"/data/*.part.* | xargs -P "$K" -I{} bash -c 'copy_file "$@"' _ {}
t1=$(now)
grep -v '^--' "$SQL/tpch_indexes.sql" | xargs -P "$K" -I{} bash -c 'run_sql "$@"' _ {}
for t in lineitem orders partsupp customer part supplier nation region; do stats "$t"; done |
	xargs -P "$K" -I{} bash -c 'run_sql "$@"' _ {}
t2=$(now)
l_copy=$(calc "$t1 - $t0")
t_copy=$(calc "$t2 - $t0")
printf '  copy %.2f s, keys+indexes+vacuum+analyze %.2f s\n' "$l_copy" "$(calc "$t2 - $t1")"

echo "== result (SF $SF, $K connections)"
printf 'load:  tierbench %6.2f s, COPY from files %6.2f s, ratio %.2f x\n' "$l_tb" "$l_copy" "$(calc "$l_tb / $l_copy")"
printf 'total: tierbench %6.2f s, COPY from files %6.2f s, ratio %.2f x\n' "$t_tb" "$t_copy" "$(calc "$t_tb / $t_copy")"
