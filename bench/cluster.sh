#!/usr/bin/env bash
# bench/cluster.sh — what watching and driving other hosts costs the controller.
#
#   bench/cluster.sh                          # 3 rounds, 15 s per monitor case
#   ROUNDS=5 DURATION=30 HOSTS="0 1 2 4 8 16" bench/cluster.sh
#   FIO_RAMP=5 FIO_DURATION=5 bench/cluster.sh
#   TB=/path/to/other/tierbench bench/cluster.sh   # measure another build
#
# Everything runs on this machine and listens on loopback only.
#
# (a) node_exporter sampling. Starts max(HOSTS) real prometheus-node-exporter
# processes on 127.0.0.1 (free ports; --collector.disable-defaults with the
# cpu, diskstats and time collectors, which is all tierbench asks for with
# collect[]: the response it parses is the same 13.6 kB either way, the
# exporters just do less unasked work). For each N in HOSTS runs
# `tierbench monitor --interval 1s --duration DURATION` with N
# --node-exporter hN=URL, under /usr/bin/time, and reports the controller's
# CPU (user + system) as percent of one core, and the per-host increment
# (cpu_N - cpu_0) / N, paired within each round. Every case, N = 0 included,
# also has --target on a directory under /var/tmp with --block-trace=false
# (monitor needs a target or an exporter; a fixed local part keeps the
# baseline comparable), so the increment is the exporters alone. The
# exporters' own CPU (utime + stime from /proc/PID/stat, summed over the N
# scraped ones) is not the controller's cost and is reported beside it, per
# exporter. Rounds alternate the order of the cases (up, then down).
#
# (b) fio on several hosts. Starts two `fio --server`s, on 127.0.0.1 and
# 127.0.0.2, and runs one point (4k randread, iodepth 8, 4 jobs and 64MiB
# per host, FIO_RAMP + FIO_DURATION seconds) through them with
# `tierbench disk run --fio-server … --fio-server …`, against the same point
# run locally with the same jobs in total (8 jobs on one 128MiB file, so each
# job has the same 16MiB region) and the same engine (libaio, what client
# mode uses when not told), alternating. From the run's stored step
# (started_at, measure_end) and the run's finished_at it splits each run's
# wall time beyond ramp + duration into: setup (process start to the point's
# start: flag checks, for client mode the probe of the servers, for local
# mode the layout of the file), fio+ (the fio process beyond ramp +
# duration: start, layout, connect, teardown), merge+store (fio's end to the
# run's end: parsing and merging fio's json+, per-second logs, store) and
# exit (the run's end to the process's exit: for client mode the removal of
# the hosts' files). Then `go test -bench MergeHosts ./internal/fio/`: the
# parse and the merge of 4 hosts × 8 jobs from fio's client output next to
# the same 32 jobs from one local fio, and their difference as a share of a
# 60 s point.
set -euo pipefail
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-15}
HOSTS=${HOSTS:-0 1 2 4 8}
FIO_RAMP=${FIO_RAMP:-5}
FIO_DURATION=${FIO_DURATION:-5}
BENCHTIME=${BENCHTIME:-20x}
EXPORTER=${EXPORTER:-/usr/bin/prometheus-node-exporter}
cd "$(dirname "$0")/.."
if [ -z "${TB:-}" ]; then
	make -s build >/dev/null
	TB=$PWD/bin/tierbench
fi
for c in "$EXPORTER" fio /usr/bin/time curl ss; do
	command -v "$c" >/dev/null || { echo "cluster.sh: $c not found" >&2; exit 1; }
done

work=$(mktemp -d /var/tmp/tierbench-cluster-bench.XXXXXX)
pids=() # each started with setsid: its own process group, ended as a group
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$work/target" "$work/fio-hosts" "$work/fio-local"

# median [FORMAT]: the median of the numbers on stdin, printed with FORMAT (%.3f)
median() {
	sort -g | awk -v f="${1:-%.3f}" '{ a[NR] = $1 } END { printf f "\n", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
listening() { [ -n "$(ss -Htln "src $1:$2")" ]; }
# start_listener ADDR LOG CMD…: runs CMD, with PORT in its arguments replaced,
# on a free port of ADDR until it listens there; sets sl_pid and sl_port.
start_listener() {
	local addr=$1 log=$2 try
	shift 2
	for try in $(seq 20); do
		sl_port=$((20000 + RANDOM % 30000))
		listening "$addr" "$sl_port" && continue
		setsid "${@//PORT/$sl_port}" >"$log" 2>&1 &
		sl_pid=$!
		pids+=("$sl_pid")
		for _ in $(seq 50); do
			listening "$addr" "$sl_port" && return 0
			kill -0 "$sl_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -- "-$sl_pid" 2>/dev/null || true
		wait "$sl_pid" 2>/dev/null || true
	done
	echo "cluster.sh: could not start $1 on $addr: $(tail -3 "$log")" >&2
	return 1
}
ticks() { # PID…: utime + stime of the processes, in clock ticks
	local p t=0 s
	for p in "$@"; do
		s=$(cut -d')' -f2- "/proc/$p/stat")
		t=$((t + $(echo "$s" | awk '{ print $12 + $13 }')))
	done
	echo "$t"
}
hz=$(getconf CLK_TCK)

# ---- (a) node_exporter sampling --------------------------------------------
max=0
for n in $HOSTS; do if [ "$n" -gt "$max" ]; then max=$n; fi; done
ne_pid=() ne_url=()
for i in $(seq "$max"); do
	start_listener 127.0.0.1 "$work/exporter$i.log" "$EXPORTER" \
		--web.listen-address=127.0.0.1:PORT --collector.disable-defaults \
		--collector.cpu --collector.diskstats --collector.time
	ne_pid+=("$sl_pid")
	ne_url+=("h$i=http://127.0.0.1:$sl_port/metrics")
done
[ "$max" -eq 0 ] || curl -sf -o /dev/null "${ne_url[0]#h1=}" || { echo "cluster.sh: exporter h1 does not answer" >&2; exit 1; }

monitor_cost() { # N: prints "controller-% exporters-%-per-host"
	local n=$1 args=() ps=() before after
	for ((i = 0; i < n; i++)); do
		args+=(--node-exporter "${ne_url[i]}")
		ps+=("${ne_pid[i]}")
	done
	before=$(ticks "${ps[@]}")
	if ! /usr/bin/time -f "%U %S" -o "$work/time" "$TB" monitor --target "$work/target" --block-trace=false \
		--interval 1s --duration "${DURATION}s" --results "$work/results" "${args[@]}" >/dev/null 2>"$work/monitor.err"; then
		echo "cluster.sh: tierbench monitor with $n exporters failed:" >&2
		cat "$work/monitor.err" >&2
		exit 1
	fi
	after=$(ticks "${ps[@]}")
	awk -v d="$DURATION" -v n="$n" -v dt=$((after - before)) -v hz="$hz" \
		'{ printf "%.3f %.3f\n", ($1 + $2) / d * 100, n ? dt / hz / d * 100 / n : 0 }' "$work/time"
}

echo "(a) tierbench monitor, 1 s interval, ${DURATION} s per case, N node_exporters on 127.0.0.1"
printf '%-6s %6s %16s %22s\n' round hosts "ctrl CPU % core" "exporter CPU %/host"
up=$(echo $HOSTS | tr ' ' '\n')
down=$(echo "$up" | tac)
declare -A got
for r in $(seq "$ROUNDS"); do
	order=$up
	[ $((r % 2)) -eq 0 ] && order=$down
	got=()
	for n in $order; do
		cost=$(monitor_cost "$n")
		read -r ctrl exp <<<"$cost"
		printf '%-6s %6s %16s %22s\n' "$r" "$n" "$ctrl" "$exp"
		echo "$ctrl" >>"$work/ctrl.$n"
		echo "$exp" >>"$work/exp.$n"
		got[$n]=$ctrl
	done
	if [ -n "${got[0]:-}" ]; then
		for n in $HOSTS; do
			if [ "$n" -gt 0 ]; then
				awk -v a="${got[$n]}" -v b="${got[0]}" -v n="$n" 'BEGIN { printf "%.3f\n", (a - b) / n }' >>"$work/inc.$n"
			fi
		done
	fi
done
echo
printf '%-6s %6s %16s %22s %22s\n' median hosts "ctrl CPU % core" "per-host Δ % core" "exporter CPU %/host"
for n in $HOSTS; do
	inc=-
	[ -s "$work/inc.$n" ] && inc=$(median <"$work/inc.$n")
	printf '%-6s %6s %16s %22s %22s\n' "" "$n" "$(median <"$work/ctrl.$n")" "$inc" "$(median <"$work/exp.$n")"
done
for p in "${ne_pid[@]}"; do kill -- "-$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
pids=() # the exporters were all

# ---- (b) fio on several hosts -----------------------------------------------
echo
start_listener 127.0.0.1 "$work/fio1.log" fio --server=ip:127.0.0.1,PORT
p1=$sl_port
start_listener 127.0.0.2 "$work/fio2.log" fio --server=ip:127.0.0.2,PORT
p2=$sl_port
span() { awk -v a="$(date -d "$1" +%s.%N)" -v b="$(date -d "$2" +%s.%N)" 'BEGIN { printf "%.3f", b - a }'; }
disk_point() { # hosts|local: prints "wall over setup fio+ merge+store exit"
	local args t0 t1 id
	if [ "$1" = hosts ]; then
		args=(--target "$work/fio-hosts" --fio-server "127.0.0.1:$p1" --fio-server "127.0.0.2:$p2" --size 64MiB --jobs 4)
	else
		args=(--target "$work/fio-local" --size 128MiB --jobs 8)
	fi
	t0=$(date +%s.%N)
	if ! "$TB" disk run "${args[@]}" --bs 4k --rw randread --iodepth 8 --engine libaio \
		--ramp "${FIO_RAMP}s" --duration "${FIO_DURATION}s" --results "$work/results" --json >"$work/disk.json" 2>"$work/disk.err"; then
		echo "cluster.sh: tierbench disk run ($1) failed:" >&2
		cat "$work/disk.err" >&2
		exit 1
	fi
	t1=$(date +%s.%N)
	id=$(sed -n 's/^  "run_id": "\(.*\)",$/\1/p' "$work/disk.json")
	"$TB" results show "$id" --results "$work/results" --json >"$work/show.json"
	# the run's started_at/finished_at come before "steps", the step's after
	awk -v t0="$t0" -v t1="$t1" -v rd="$((FIO_RAMP + FIO_DURATION))" '
		function ts(s, c) { gsub(/[",]/, "", s); c = "date -d " s " +%s.%N"; c | getline s; close(c); return s }
		/^  "steps":/ { steps = 1 }
		!steps && $1 == "\"finished_at\":" && !fin { fin = ts($2) }
		steps && $1 == "\"started_at\":" && !st { st = ts($2) }
		steps && $1 == "\"measure_end\":" && !me { me = ts($2) }
		END { printf "%.3f %.3f %.3f %.3f %.3f %.3f\n", t1 - t0, t1 - t0 - rd, st - t0, me - st - rd, fin - me, t1 - fin }
	' "$work/show.json"
}
echo "(b) one point, 4k randread qd8, ${FIO_RAMP} s ramp + ${FIO_DURATION} s: 2 fio servers × 4 jobs (hosts) vs 8 jobs locally (local); seconds"
cols='%-6s %-6s %8s %8s %8s %8s %12s %8s\n'
printf "$cols" round mode wall over setup fio+ merge+store exit
for r in $(seq "$ROUNDS"); do
	order="hosts local"
	[ $((r % 2)) -eq 0 ] && order="local hosts"
	for m in $order; do
		row=$(disk_point "$m")
		read -r -a v <<<"$row"
		printf "$cols" "$r" "$m" "${v[@]}"
		echo "${v[*]}" >>"$work/disk.$m"
	done
done
echo
printf "$cols" median mode wall over setup fio+ merge+store exit
declare -A med=()
for m in hosts local; do
	row=()
	for c in 1 2 3 4 5 6; do
		med[$m.$c]=$(cut -d' ' -f"$c" "$work/disk.$m" | median)
		row+=("${med[$m.$c]}")
	done
	printf "$cols" "" "$m" "${row[@]}"
done
row=()
for c in 1 2 3 4 5 6; do row+=("$(awk -v a="${med[hosts.$c]}" -v b="${med[local.$c]}" 'BEGIN { printf "%+.3f", a - b }')"); done
printf "$cols" "" "Δ" "${row[@]}"
awk -v hf="${med[hosts.4]}" -v hm="${med[hosts.5]}" -v lf="${med[local.4]}" -v lm="${med[local.5]}" \
	-v hs="${med[hosts.3]}" -v he="${med[hosts.6]}" -v ls="${med[local.3]}" -v le="${med[local.6]}" 'BEGIN {
	printf "per point (fio+ + merge+store): hosts %.3f s, local %.3f s, Δ %+.3f s\n", hf + hm, lf + lm, hf + hm - lf - lm
	printf "per run (setup + exit):         hosts %.3f s, local %.3f s, Δ %+.3f s\n", hs + he, ls + le, hs + he - ls - le
}'

echo
echo "(b) go test -bench MergeHosts -benchtime $BENCHTIME -count $ROUNDS ./internal/fio/ (4 hosts × 8 jobs vs 32 local jobs)"
if go test -run '^$' -bench MergeHosts -benchtime "$BENCHTIME" -count "$ROUNDS" ./internal/fio/ >"$work/gobench" 2>&1; then
	printf '%-20s %14s\n' benchmark "ns/op (median)"
	for b in parse/client-4x8 parse/local-32 merge/client-4x8 merge/local-32; do
		grep "^BenchmarkMergeHosts/$b" "$work/gobench" | awk '{ for (i = 1; i < NF; i++) if ($(i + 1) == "ns/op") print $i }' | median %.0f >"$work/ns.${b//\//-}"
		printf '%-20s %14s\n' "$b" "$(cat "$work/ns.${b//\//-}")"
	done
	for k in parse merge; do
		awk -v c="$(cat "$work/ns.$k-client-4x8")" -v l="$(cat "$work/ns.$k-local-32")" -v k="$k" \
			'BEGIN { d = c - l; printf "%s: client - local = %.0f ns = %.4f ms = %.6f%% of a 60 s point\n", k, d, d / 1e6, d / 60e9 * 100 }'
	done
else
	echo "go test failed (others may be mid-edit):"
	tail -20 "$work/gobench"
fi
