#!/usr/bin/env bash
# bench/serve.sh — what `tierbench serve` costs: listing stored runs, event
# streams, and the runs it drives.
#
#   bench/serve.sh                                   # 1000 runs listed 200 times; 3 rounds of 30 s runs
#   RUNS=5000 REQUESTS=500 ROUNDS=5 DURATION=60s FOLLOWERS=20 bench/serve.sh
#   PARTS=list bench/serve.sh                        # only the listing (PARTS=runs: only the runs)
#
# 1. Listing. A results store filled with $RUNS finished TPC-C runs of three
#    steps each (bench/servefill) is listed $REQUESTS times through
#    GET /api/v1/runs (a page of 100, and all of them at once), timed by curl
#    from connect to last byte; and, as the reference, `tierbench results
#    list --json` as a process, 20 times.
# 2. The runs. On one managed PostgreSQL with a 4-warehouse schema, the same
#    TPC-C run ($VUS VUs, 5 s ramp-up, $DURATION measured) in alternating
#    rounds: from the command line (`tpcc run`), posted to serve and followed
#    by nobody (its end polled once a second), and posted to serve and
#    followed by $FOLLOWERS event streams (curl -N). For each it prints NOPM,
#    tierbench's CPU per transaction over the measured interval
#    (client_cpu_us_per_txn: all of the process's threads, serve's HTTP work
#    included), and for serve the process's CPU over the whole run in
#    percent of one core, from /proc/PID/stat.
set -euo pipefail
RUNS=${RUNS:-1000}
REQUESTS=${REQUESTS:-200}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-30s}
VUS=${VUS:-2}
FOLLOWERS=${FOLLOWERS:-20}
PARTS=${PARTS:-"list runs"}
cd "$(dirname "$0")/.."
make -s build >/dev/null
TB=$PWD/bin/tierbench
. bench/common.sh
bench_work serve
serve_pid=""
followers=()
stop_all() {
	[ "${#followers[@]}" -eq 0 ] || kill "${followers[@]}" 2>/dev/null || true
	followers=()
	[ -z "$serve_pid" ] || { kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; }
	serve_pid=""
}
trap 'stop_all; bench_cleanup' EXIT
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
pct() { sort -n | awk -v p="$1" '{ a[NR] = $1 } END { i = int(NR * p / 100 + 0.999); if (i < 1) i = 1; print a[i] }'; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_serve DIR: serve on a free port, $url set once it answers.
start_serve() {
	local port
	port=$(free_port)
	"$TB" serve --listen "127.0.0.1:$port" --results "$1" 2>>"$work/serve.log" &
	serve_pid=$!
	url="http://127.0.0.1:$port"
	for _ in $(seq 100); do curl -sf -o /dev/null "$url/api/v1/version" && return; sleep 0.1; done
	echo "serve did not start:"; cat "$work/serve.log"; exit 1
}

listing() {
echo "== listing $RUNS stored runs"
go run ./bench/servefill -dir "$work/list" -runs "$RUNS"
start_serve "$work/list"
for q in "limit=100" "limit=$RUNS"; do
	: >"$work/times"
	for _ in $(seq "$REQUESTS"); do
		curl -s -o /dev/null -w '%{time_total}\n' "$url/api/v1/runs?$q" >>"$work/times"
	done
	printf 'GET /api/v1/runs?%-12s p50 %6.1f ms  p95 %6.1f ms  max %6.1f ms  (%d requests)\n' "$q" \
		"$(awk '{ print $1 * 1000 }' "$work/times" | pct 50)" "$(awk '{ print $1 * 1000 }' "$work/times" | pct 95)" \
		"$(awk '{ print $1 * 1000 }' "$work/times" | pct 100)" "$REQUESTS"
done
stop_all
: >"$work/times"
for _ in $(seq 20); do
	s=$(date +%s%N)
	"$TB" results list --json --results "$work/list" >/dev/null
	echo $(( ($(date +%s%N) - s) / 1000 )) >>"$work/times"
done
printf 'tierbench results list --json (a process)  p50 %6.1f ms  p95 %6.1f ms  (20 runs)\n' \
	"$(awk '{ print $1 / 1000 }' "$work/times" | pct 50)" "$(awk '{ print $1 / 1000 }' "$work/times" | pct 95)"
}
case " $PARTS " in *" list "*) listing ;; esac
case " $PARTS " in *" runs "*) ;; *) exit 0 ;; esac

echo "== TPC-C runs: $VUS VUs, $DURATION measured, $ROUNDS rounds"
TIERBENCH_DSN=$("$TB" server start --json --datadir "$work/data" --memory 4GiB | sed -n 's/^ *"dsn": "\(.*\)",$/\1/p')
export TIERBENCH_DSN
"$TB" tpcc build --warehouses 4 >/dev/null 2>&1
start_serve "$work/results"
hz=$(getconf CLK_TCK)
ticks() { awk '{ print $14 + $15 }' "/proc/$serve_pid/stat"; }

# one_serve N: posts the run, with N followers; prints "NOPM CPU-µs/txn core%".
one_serve() {
	local id t0 c0 t1 c1 status doc
	id=$(jq -n --arg dsn "$TIERBENCH_DSN" --argjson vus "$VUS" --arg d "$DURATION" \
		'{kind: "tpcc", dsn: $dsn, vus: [$vus], rampup: "5s", duration: $d}' |
		curl -sf -X POST --data-binary @- "$url/api/v1/runs" | jq -r .id)
	for _ in $(seq "$1"); do
		curl -sN -o /dev/null "$url/api/v1/runs/$id/events" &
		followers+=($!)
	done
	t0=$(date +%s%N) c0=$(ticks)
	while :; do
		status=$(curl -sf "$url/api/v1/runs/$id" | jq -r .run.status)
		case $status in queued | running) sleep 1 ;; *) break ;; esac
	done
	t1=$(date +%s%N) c1=$(ticks)
	[ "${#followers[@]}" -eq 0 ] || { wait "${followers[@]}" 2>/dev/null || true; followers=(); }
	doc=$(curl -sf "$url/api/v1/runs/$id")
	printf '%s %s %s\n' "$(jq '.steps[0].metrics.nopm' <<<"$doc")" "$(jq '.steps[0].metrics.client_cpu_us_per_txn' <<<"$doc")" \
		"$(awk -v c=$((c1 - c0)) -v hz="$hz" -v ns=$((t1 - t0)) 'BEGIN { printf "%.2f", 100 * c / hz / (ns / 1e9) }')"
}

# one_cli: the same run from the command line; prints "NOPM CPU-µs/txn -".
one_cli() {
	"$TB" tpcc run --json --vus "$VUS" --rampup 5s --duration "$DURATION" --results "$work/cli" >"$work/run.json" 2>/dev/null
	printf '%s %s -\n' "$(field nopm <"$work/run.json")" "$(field client_cpu_us_per_txn <"$work/run.json")"
}

printf '%-6s %-14s %8s %12s %16s\n' round case NOPM "CPU µs/txn" "serve % of core"
for c in cli serve0 "serve$FOLLOWERS"; do : >"$work/case-$c"; done
for r in $(seq "$ROUNDS"); do
	for c in cli serve0 "serve$FOLLOWERS"; do
		case $c in
		cli) read -r nopm cpu core < <(one_cli) ;;
		*) read -r nopm cpu core < <(one_serve "${c#serve}") ;;
		esac
		printf '%-6s %-14s %8s %12s %16s\n' "$r" "$c" "$nopm" "$cpu" "$core"
		echo "$nopm $cpu $core" >>"$work/case-$c"
	done
done
for c in cli serve0 "serve$FOLLOWERS"; do
	printf 'median %-14s %8s %12s %16s\n' "$c" "$(cut -d' ' -f1 "$work/case-$c" | median)" \
		"$(cut -d' ' -f2 "$work/case-$c" | median)" "$(case $c in cli) echo - ;; *) cut -d' ' -f3 "$work/case-$c" | median ;; esac)"
done
