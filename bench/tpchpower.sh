#!/usr/bin/env bash
# bench/tpchpower.sh — the TPC-H power test on each engine, on this machine.
#
#   SF=1 MEMORY=2GiB bench/tpchpower.sh            # ENGINES="postgres mariadb" by default
#
# For each engine: a fresh managed server with --memory MEMORY, `tpch build
# --scale SF`, then `tpch run --validate` (one power test with the
# specification's validation parameters, every answer checked at SF 0.01,
# 0.1 and 1) and `tpch run --no-refresh --seed 1` (drawn parameters). Each
# query is cut off after TIMEOUT (default 10m) and then counts as that.
# Prints the build's seconds, each power test's geometric mean and total,
# and each query's seconds.
set -euo pipefail
SF=${SF:-1}
MEMORY=${MEMORY:-2GiB}
TIMEOUT=${TIMEOUT:-10m}
ENGINES=${ENGINES:-postgres mariadb}
cd "$(dirname "$0")/.."
make -s build >/dev/null
TB=$PWD/bin/tierbench

work=$(mktemp -d /var/tmp/tierbench-tpchpower-bench.XXXXXX)
chmod 755 "$work"
cleanup() {
	for e in $ENGINES; do "$TB" server stop --datadir "$work/$e" >/dev/null 2>&1 || true; done
	rm -rf "$work"
}
trap cleanup EXIT
json_field() { sed -n "s/^ *\"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" | head -1; }

for e in $ENGINES; do
	echo "== $e: SF $SF, --memory $MEMORY"
	dsn=$("$TB" server start --engine "$e" --datadir "$work/$e" --memory "$MEMORY" --json | json_field dsn)
	"$TB" tpch build --dsn - --scale "$SF" --json <<<"$dsn" >"$work/build-$e.json"
	printf '  build: %s s (load %s s, indexes %s s, statistics %s s), %s bytes\n' \
		"$(json_field seconds <"$work/build-$e.json")" "$(json_field load_seconds <"$work/build-$e.json")" \
		"$(json_field index_seconds <"$work/build-$e.json")" "$(json_field analyze_seconds <"$work/build-$e.json")" \
		"$(json_field bytes <"$work/build-$e.json")"
	for args in "--validate" "--no-refresh --seed 1"; do
		# shellcheck disable=SC2086 # args are two option sets
		"$TB" tpch run --dsn - $args --timeout "$TIMEOUT" --results "$work/results" --interval 0s <<<"$dsn" |
			grep -E '^(power test|answers|run )|^power +1 ' | sed "s/^/  [$args] /" || true
	done
	"$TB" server stop --datadir "$work/$e" >/dev/null
done
