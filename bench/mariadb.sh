#!/usr/bin/env bash
# bench/mariadb.sh — tierbench against its peers on the same managed MariaDB,
# in the same minutes.
#
#   bench/mariadb.sh                        # go-tpc and tierbench
#   bench/mariadb.sh ~/HammerDB             # plus HammerDB's MariaDB stored procedures
#   ROUNDS=3 DURATION=30s MEMORY=4GiB bench/mariadb.sh
#   TB=/path/to/other/tierbench bench/mariadb.sh   # measure another build
#
# HAMMERDB_DIR is a HammerDB install or source tree; only its
# src/mariadb/mariaoltp.tcl is read. From a bare clone of its repository:
#   git --git-dir=HammerDB.git archive HEAD src/mariadb | tar -x -C DIR
# About 11 minutes with the defaults (2 rounds of 4 runs of 70 s, builds
# included). Other work on the host moves every figure: the load average at
# the start and the end is printed.
#
# The peer is go-tpc (PingCAP's TPC-C driver in Go, its MySQL driver), built
# from its Go module at the version pinned below into a cache directory
# outside the repository (GOTPC_DIR). Every server is a managed MariaDB
# (`tierbench server start --engine mariadb --memory $MEMORY`, its default
# settings otherwise); both tools connect over TCP as a bench-only user
# without a password, created in that throwaway server, so no password is
# on any command line: the managed server's own password goes to the
# mariadb client in a 0600 defaults file in the bench's private work dir.
#
# 1. Build: go-tpc `tpcc prepare --no-check --warehouses $BUILD_W -T $K`
#    (wall clock) and `tierbench tpcc build --warehouses $BUILD_W
#    --build-vus $K` (its own seconds, and its wall clock), each on a fresh
#    server. go-tpc creates its tables with every index and INSERTs rows in
#    batches; tierbench loads, then builds the secondary indexes and
#    statistics.
# 2. Throughput, $ROUNDS rounds on one fresh server, $W warehouses, $VUS
#    virtual users (go-tpc threads), each run on a database freshly built by
#    its own tool, dirty pages flushed first:
#    - go-tpc `tpcc run --warehouses $W -T $VUS --ignore-error`, $RAMPUP
#      unmeasured, then $DURATION measured. Its tpmC counts New-Orders per
#      minute (comparable to NOPM), its tpmTotal all transactions; both its
#      own counts. Its mix is 45/43/4/4/4, without keying and think times.
#    - tierbench `tpcc run --rampup $RAMPUP --duration $DURATION` per mode
#      in $MODES: NOPM and TPM as the database counts them.
#    - With a HammerDB tree: HammerDB's own MariaDB stored procedures
#      (NEWORD, PAYMENT, DELIVERY, OSTAT, SLEV), read at run time from the
#      tree's src/mariadb/mariaoltp.tcl (no HammerDB code is kept here), in
#      a database built by tierbench. Their tables' columns are checked
#      against tierbench's first; types and NULLs differ (HammerDB's are
#      NULL-able), which their inserts do not need. They are driven by one
#      `mariadb` client process per virtual user, reading CALLs that a gawk
#      process draws as HammerDB's driver script does: the 10/10/1/1/1 mix
#      of 23, a home warehouse per client (spread evenly, where HammerDB
#      draws it at random), Stock-Level on the client's fixed district,
#      uniform customer ids, 60% of Payments and Order-Status by a NURand
#      last name (C = 123), 15% remote Payments; items, quantities and
#      remote lines are drawn inside NEWORD. As HammerDB sends them: CALLs
#      with literal values over the text protocol, a SET of the INOUT
#      variables before Payment and Order-Status, without HammerDB's SELECT
#      of the OUT variables after each call (one round trip less). NOPM and
#      TPM are counted as HammerDB counts them on MariaDB: sum(d_next_o_id)
#      and Com_commit + Com_rollback, over $DURATION after $RAMPUP. The
#      client here is C (the mariadb client) plus gawk, not HammerDB's Tcl,
#      so this is HammerDB's procedures at their best; its limits: a CALL
#      that fails is printed (counted as errors) and the client goes on,
#      never retried.
#
# Client µs/txn is the client's user + system CPU per transaction:
# tierbench's own (client_cpu_us_per_txn, over its measured interval),
# go-tpc's rusage over its measured run divided by its transactions, the
# gawk and mariadb processes' utime + stime (/proc) over the measured
# interval for HammerDB's procedures. Server µs/txn is mariadbd's utime +
# stime (/proc/PID/stat) over the same interval divided by the same
# transactions (for tierbench, sampled every 0.2 s and interpolated to its
# measure_start and measure_end).
#
# Knobs: W (2), VUS (4), RAMPUP (10s), DURATION (60s), ROUNDS (2), MEMORY
# (2GiB), MODES ("routines statements"), BUILD_W (4), K (4: go-tpc -T and
# --build-vus of the build), HAMMERDB (the tree, or the first argument),
# GOTPC_DIR (go-tpc's cache, default ~/.cache/tierbench-bench/go-tpc-VERSION).
set -euo pipefail
export LC_ALL=C
GOTPC_VERSION=v1.0.12 # github.com/pingcap/go-tpc, tagged 2025-07-09
W=${W:-2}
VUS=${VUS:-4}
RAMPUP=${RAMPUP:-10s}
DURATION=${DURATION:-60s}
ROUNDS=${ROUNDS:-2}
MEMORY=${MEMORY:-2GiB}
MODES=${MODES:-"routines statements"}
BUILD_W=${BUILD_W:-4}
K=${K:-4}
HAMMERDB=${1:-${HAMMERDB:-}}
GOTPC_DIR=${GOTPC_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tierbench-bench/go-tpc-$GOTPC_VERSION}

tcl=""
if [ -n "$HAMMERDB" ]; then
	tcl=$HAMMERDB/src/mariadb/mariaoltp.tcl
	[ -r "$tcl" ] || { echo "bench/mariadb.sh: $tcl not found: give the directory HammerDB is installed or checked out in" >&2; exit 2; }
	command -v gawk >/dev/null || { echo "bench/mariadb.sh: HammerDB's driver here needs gawk" >&2; exit 2; }
fi
command -v mariadb >/dev/null || { echo "bench/mariadb.sh: needs the mariadb client" >&2; exit 2; }
secs() { case $1 in *m) echo $(( ${1%m} * 60 )) ;; *s) echo "${1%s}" ;; *) echo "$1" ;; esac; }
rampup_s=$(secs "$RAMPUP")
duration_s=$(secs "$DURATION")

cd "$(dirname "$0")/.."
if [ -z "${TB:-}" ]; then
	make -s build >/dev/null
	TB=$PWD/bin/tierbench
fi
# shellcheck source=bench/common.sh
. bench/common.sh

gotpc=$GOTPC_DIR/bin/go-tpc
if [ ! -x "$gotpc" ]; then
	echo "== building go-tpc $GOTPC_VERSION into $GOTPC_DIR"
	(cd / && GOBIN=$GOTPC_DIR/bin GOFLAGS='' go install "github.com/pingcap/go-tpc/cmd/go-tpc@$GOTPC_VERSION")
fi

bench_work mariadb
bg_pids=()
cleanup() {
	local p
	for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	bench_cleanup
}
trap cleanup EXIT

calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }

# fresh_server: a new managed MariaDB in $work/data (the previous one stopped
# and removed); sets port and spid (mariadbd's pid), writes the 0600
# admin.cnf with the server's own user and password, and creates the bench's
# passwordless user bench@127.0.0.1, which everything else uses.
fresh_server() {
	local out dsn user pw
	"$TB" server stop --datadir "$work/data" >/dev/null 2>&1 || true
	rm -rf "$work/data"
	out=$("$TB" server start --engine mariadb --datadir "$work/data" --memory "$MEMORY" --json 2>"$work/server.err") ||
		{ cat "$work/server.err" >&2; return 1; }
	dsn=$(printf '%s\n' "$out" | sfield dsn)
	port=$(printf '%s\n' "$out" | field port)
	spid=$("$TB" server status --datadir "$work/data" --json | field pid)
	user=${dsn#*://}; user=${user%%:*}
	pw=${dsn#*://*:}; pw=${pw%%@*}; pw=$(printf '%b' "${pw//%/\\x}") # URL-decoded
	(umask 077; printf '[client]\nuser=%s\npassword=%s\nhost=127.0.0.1\nport=%s\n' "$user" "$pw" "$port" >"$work/admin.cnf")
	mariadb --defaults-extra-file="$work/admin.cnf" \
		-e "CREATE USER 'bench'@'127.0.0.1'; GRANT ALL ON *.* TO 'bench'@'127.0.0.1'"
	printf '[client]\nuser=bench\nhost=127.0.0.1\nport=%s\n' "$port" >"$work/bench.cnf"
}
# sql ARGS...: the mariadb client as bench, tab-separated, no headers.
sql() { mariadb --defaults-extra-file="$work/bench.cnf" -N -B "$@"; }
# fresh_db NAME: an empty database NAME.
fresh_db() { sql -e "DROP DATABASE IF EXISTS $1; CREATE DATABASE $1"; }
tb_dsn() { echo "mariadb://bench@127.0.0.1:$port/$1"; }
gotpc_conn=(-H 127.0.0.1 -U bench) # -P "$port" -D NAME follow
# ticks PID...: the processes' utime + stime, in clock ticks.
ticks() {
	local p line f t=0
	for p in "$@"; do
		{ read -r line <"/proc/$p/stat"; } 2>/dev/null || continue
		read -ra f <<<"${line##*) }"
		t=$((t + f[11] + f[12]))
	done
	echo "$t"
}
hz=$(getconf CLK_TCK)

# checkpoint: flush every dirty page (as fast as the device goes), so that
# each measured run starts without its build's write-back behind it.
checkpoint() {
	local io iomax pct dirty i
	read -r io iomax pct < <(sql -e 'SELECT @@innodb_io_capacity, @@innodb_io_capacity_max, @@innodb_max_dirty_pages_pct')
	sql -e "SET GLOBAL innodb_io_capacity_max = 1000000, innodb_io_capacity = 1000000, innodb_max_dirty_pages_pct = 0"
	for i in $(seq 240); do
		dirty=$(sql -e "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'" | cut -f2)
		[ "$dirty" -lt 100 ] && break
		sleep 0.25
	done
	sql -e "SET GLOBAL innodb_io_capacity = $io, innodb_io_capacity_max = $iomax, innodb_max_dirty_pages_pct = $pct"
}

# Other work on the host moves every figure here: say how busy it was.
echo "host load average at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"

# ---------------------------------------------------------------- 1. build
echo "== build: $BUILD_W warehouses, $K connections, a fresh server (--memory $MEMORY) each"
fresh_server
fresh_db gotpc
t0=$EPOCHREALTIME
"$gotpc" tpcc prepare --no-check --warehouses "$BUILD_W" -T "$K" "${gotpc_conn[@]}" -P "$port" -D gotpc \
	>"$work/gotpc-prepare.out" 2>&1 || { tail -20 "$work/gotpc-prepare.out" >&2; exit 1; }
t1=$EPOCHREALTIME
t_gotpc=$(calc "$t1 - $t0")
fresh_server
t0=$EPOCHREALTIME
out=$(TIERBENCH_DSN=$(tb_dsn tierbench) "$TB" tpcc build --warehouses "$BUILD_W" --build-vus "$K" --json 2>"$work/tb-build.err") ||
	{ tail -20 "$work/tb-build.err" >&2; exit 1; }
t1=$EPOCHREALTIME
t_tb=$(printf '%s\n' "$out" | field seconds)
t_tb_wall=$(calc "$t1 - $t0")
printf 'go-tpc prepare:  %7.2f s\n' "$t_gotpc"
printf 'tierbench build: %7.2f s (%.2f s wall clock, process start included)\n' "$t_tb" "$t_tb_wall"
printf 'ratio tierbench/go-tpc: %.2f (target <= 0.50)\n' "$(calc "$t_tb / $t_gotpc")"

# ----------------------------------------------------------- 2. throughput
# gotpc_row ROUND: go-tpc on a fresh go-tpc database, as a row.
gotpc_row() {
	local s0 s1 cpu TIMEFORMAT='%U %S'
	fresh_db gotpc
	"$gotpc" tpcc prepare --no-check --warehouses "$W" -T "$K" "${gotpc_conn[@]}" -P "$port" -D gotpc >"$work/gotpc-prep.out" 2>&1
	checkpoint
	"$gotpc" tpcc run --warehouses "$W" -T "$VUS" --time "$RAMPUP" --ignore-error "${gotpc_conn[@]}" -P "$port" -D gotpc \
		>"$work/gotpc-warmup.out" 2>&1
	s0=$(ticks "$spid")
	cpu=$({ time "$gotpc" tpcc run --warehouses "$W" -T "$VUS" --time "$DURATION" --ignore-error "${gotpc_conn[@]}" \
		-P "$port" -D gotpc >"$work/gotpc-run.out" 2>&1; } 2>&1)
	s1=$(ticks "$spid")
	awk -v round="$1" -v vus="$VUS" -v cpu="$cpu" -v srv=$((s1 - s0)) -v hz="$hz" '
		/^\[Summary\]/ {
			op = $2; n = $0; sub(/.*Count: /, "", n); sub(/,.*/, "", n)
			if (op ~ /_ERR$/) errs += n; else txns += n
		}
		/^tpmC:/ { tpmc = $2; tpm = $4; sub(/,/, "", tpmc); sub(/,/, "", tpm) }
		/failed, err/ && !shown++ { err = $0 }
		END {
			split(cpu, c, " ")
			if (txns == 0) { print "go-tpc ran no transactions: see its output"; exit }
			printf "%-5s %-24s %4s %9d %9d %13.1f %13.1f %6d\n", round, "go-tpc", vus, tpmc, tpm,
				(c[1] + c[2]) * 1e6 / txns, srv / hz * 1e6 / txns, errs
			if (err != "") print "      first error: " err
		}' "$work/gotpc-run.out" | tee -a "$work/rows.txt"
}

# sampler PID OUT: "time ticks" of PID every 0.2 s into OUT, in the background.
sampler() {
	(while line=$(ticks "$1"); do echo "$EPOCHREALTIME $line"; sleep 0.2; done) >"$2" &
	sampler_pid=$!
	bg_pids+=("$sampler_pid")
}
# ticks_at T FILE: the ticks at time T, interpolated between samples.
ticks_at() {
	awk -v t="$1" '{ ts[NR] = $1; v[NR] = $2 }
		END {
			for (i = 2; i <= NR; i++) if (ts[i] >= t) { printf "%.2f", v[i-1] + (v[i] - v[i-1]) * (t - ts[i-1]) / (ts[i] - ts[i-1]); exit }
			printf "%s", v[NR]
		}' "$2"
}

# tb_row ROUND MODE: tierbench on a fresh tierbench-built database, as a row.
tb_row() {
	local out t0 t1 s0 s1 tpm secs
	fresh_db tb
	TIERBENCH_DSN=$(tb_dsn tb) "$TB" tpcc build --warehouses "$W" --build-vus "$K" >/dev/null 2>"$work/tb-build.err" ||
		{ tail -5 "$work/tb-build.err"; return 0; }
	checkpoint
	sampler "$spid" "$work/server-cpu.txt"
	out=$(TIERBENCH_DSN=$(tb_dsn tb) "$TB" tpcc run --json --block-trace=false --mode "$2" --vus "$VUS" \
		--rampup "$RAMPUP" --duration "$DURATION" --results "$work/results" 2>"$work/tb-run.err") ||
		{ kill "$sampler_pid"; tail -5 "$work/tb-run.err"; return 0; }
	sleep 0.3
	kill "$sampler_pid" 2>/dev/null || true
	t0=$(date -d "$(printf '%s\n' "$out" | sfield measure_start)" +%s.%N)
	t1=$(date -d "$(printf '%s\n' "$out" | sfield measure_end)" +%s.%N)
	s0=$(ticks_at "$t0" "$work/server-cpu.txt")
	s1=$(ticks_at "$t1" "$work/server-cpu.txt")
	tpm=$(printf '%s\n' "$out" | field tpm)
	secs=$(printf '%s\n' "$out" | field measured_seconds)
	printf '%-5s %-24s %4s %9s %9s %13.1f %13.1f %6s\n' "$1" "tierbench $2" "$VUS" \
		"$(printf '%s\n' "$out" | field nopm)" "$tpm" "$(printf '%s\n' "$out" | field client_cpu_us_per_txn)" \
		"$(calc "($s1 - $s0) / $hz * 1e6 / ($tpm * $secs / 60)")" "$(printf '%s\n' "$out" | field errors)" |
		tee -a "$work/rows.txt"
}

# HammerDB's procedures: the brace-quoted values of `set sql(N) {...}` that
# create NEWORD, DELIVERY, PAYMENT, OSTAT and SLEV, each name's first.
if [ -n "$tcl" ]; then
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
			if (match(body, /CREATE PROCEDURE `?(NEWORD|DELIVERY|PAYMENT|OSTAT|SLEV)`?/)) {
				name = toupper(substr(body, RSTART, RLENGTH))
				if (!(name in seen)) { seen[name] = 1; printf "DELIMITER //\n%s\n//\nDELIMITER ;\n", body }
			}
		}
	}' "$tcl" >"$work/hammerdb.sql"
	found=$(grep -c 'CREATE PROCEDURE' "$work/hammerdb.sql" || true)
	[ "$found" = 5 ] || { echo "bench/mariadb.sh: found $found of HammerDB's 5 MariaDB stored procedures in $tcl" >&2; exit 1; }
	# The columns of HammerDB's CreateTables, as "table column" lines (its
	# history table's optional invisible key left out).
	awk '/^proc CreateTables/ { on = 1 } on && /^}/ { on = 0 }
		on && match($0, /CREATE TABLE `[a-z_]+`/) { t = substr($0, RSTART + 14, RLENGTH - 15) }
		on && /^`[a-z_0-9]+` / && !/INVISIBLE/ { c = $1; gsub(/`/, "", c); print t, c }' "$tcl" | sort -u >"$work/hammerdb-columns.txt"
	[ -s "$work/hammerdb-columns.txt" ] || { echo "bench/mariadb.sh: no CreateTables columns found in $tcl" >&2; exit 1; }
fi

# hammerdb.awk: HammerDB's driver's draws for client vu (0-based) of wn
# warehouses, as statements for the mariadb client, without end.
cat >"$work/hammerdb.awk" <<'EOF'
		function rnd(m, M) { return int(m + rand() * (M + 1 - m)) }
		function lastname(n) { return syl[int(n / 100) % 10] syl[int(n / 10) % 10] syl[n % 10] }
		BEGIN {
			srand(seed)
			split("BAR OUGHT ABLE PRI PRES ESE ANTI CALLY ATION EING", s, " ")
			for (i = 0; i < 10; i++) syl[i] = s[i + 1]
			w = vu % wn + 1; sld = int(vu / wn) % 10 + 1
			for (;;) {
				x = rnd(1, 23)
				if (x <= 10) {
					printf "CALL NEWORD(%d,%d,%d,%d,%d,@disc,@last,@credit,@dtax,@wtax,@next_o_id,NOW());\n", w, wn, rnd(1, 10), rnd(1, 3000), rnd(5, 15)
				} else if (x <= 20) {
					d = rnd(1, 10); cw = w; cd = d
					if (rnd(1, 100) > 85) { cd = rnd(1, 10); cw = rnd(1, wn); while (cw == w && wn != 1) cw = rnd(1, wn) }
					name = lastname((or(rnd(0, 255), rnd(0, 999)) + 123) % 1000); c = rnd(1, 3000)
					byname = rnd(1, 100) <= 60; if (!byname) name = ""
					printf "SET @p_c_id=%d,@p_c_last=\047%s\047,@p_c_credit=0,@p_c_balance=0;\n", c, name
					printf "CALL PAYMENT(%d,%d,%d,%d,@p_c_id,%d,%d,@p_c_last,@p_w_street_1,@p_w_street_2,@p_w_city,@p_w_state,@p_w_zip,@p_d_street_1,@p_d_street_2,@p_d_city,@p_d_state,@p_d_zip,@p_c_first,@p_c_middle,@p_c_street_1,@p_c_street_2,@p_c_city,@p_c_state,@p_c_zip,@p_c_phone,@p_c_since,@p_c_credit,@p_c_credit_lim,@p_c_discount,@p_c_balance,@p_c_data,NOW());\n", w, d, cw, cd, byname, rnd(1, 5000)
				} else if (x <= 21) {
					printf "CALL DELIVERY(%d,%d,NOW());\n", w, rnd(1, 10)
				} else if (x <= 22) {
					printf "CALL SLEV(%d,%d,%d,@stock_count);\n", w, sld, rnd(10, 20)
				} else {
					d = rnd(1, 10); name = lastname((or(rnd(0, 255), rnd(0, 999)) + 123) % 1000); c = rnd(1, 3000)
					byname = rnd(1, 100) <= 60; if (!byname) name = ""
					printf "SET @os_c_id=%d,@os_c_last=\047%s\047;\n", c, name
					printf "CALL OSTAT(%d,%d,@os_c_id,%d,@os_c_last,@os_c_first,@os_c_middle,@os_c_balance,@os_o_id,@os_entdate,@os_o_carrier_id);\n", w, d, byname
				}
			}
		}
EOF

# counters: Com_commit + Com_rollback, and sum(d_next_o_id) of database hammerdb.
counters() {
	sql -e "SELECT (SELECT SUM(variable_value) FROM information_schema.global_status
		WHERE variable_name IN ('COM_COMMIT', 'COM_ROLLBACK')), (SELECT SUM(d_next_o_id) FROM hammerdb.district)"
}

# hammerdb_row ROUND: HammerDB's procedures on a fresh tierbench-built database, as a row.
hammerdb_row() {
	local i missing clients=() t0 t1 s0 s1 c0 c1 tx0 no0 tx1 no1 errs
	fresh_db hammerdb
	TIERBENCH_DSN=$(tb_dsn hammerdb) "$TB" tpcc build --warehouses "$W" --build-vus "$K" >/dev/null 2>"$work/tb-build.err" ||
		{ tail -5 "$work/tb-build.err"; return 0; }
	sql -e "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'hammerdb'" |
		tr '\t' ' ' | sort -u >"$work/tierbench-columns.txt"
	missing=$(comm -23 "$work/hammerdb-columns.txt" "$work/tierbench-columns.txt" | tr '\n' ' ')
	[ -z "$missing" ] || { echo "      HammerDB's tables have columns tierbench's have not: $missing"; return 0; }
	sql hammerdb <"$work/hammerdb.sql"
	checkpoint
	for i in $(seq 0 $((VUS - 1))); do
		rm -f "$work/vu$i"; mkfifo "$work/vu$i"
		# Each a process of its own (not a subshell), for its CPU time.
		gawk -v vu="$i" -v wn="$W" -v seed="$((RANDOM * 32768 + RANDOM + i))" -f "$work/hammerdb.awk" >"$work/vu$i" 2>/dev/null &
		clients+=($!); bg_pids+=($!)
		mariadb --defaults-extra-file="$work/bench.cnf" -N -B --force hammerdb <"$work/vu$i" >/dev/null 2>"$work/vu$i.err" &
		clients+=($!); bg_pids+=($!)
	done
	sleep "$rampup_s"
	read -r tx0 no0 < <(counters)
	t0=$EPOCHREALTIME; s0=$(ticks "$spid"); c0=$(ticks "${clients[@]}")
	sleep "$duration_s"
	read -r tx1 no1 < <(counters)
	t1=$EPOCHREALTIME; s1=$(ticks "$spid"); c1=$(ticks "${clients[@]}")
	kill "${clients[@]}" 2>/dev/null || true
	wait "${clients[@]}" 2>/dev/null || true
	errs=$(cat "$work"/vu*.err | grep -c '^ERROR' || true)
	awk -v round="$1" -v vus="$VUS" -v secs="$(calc "$t1 - $t0")" -v tx=$((tx1 - tx0)) -v no=$((no1 - no0)) \
		-v c=$((c1 - c0)) -v s=$((s1 - s0)) -v hz="$hz" -v errs="$errs" 'BEGIN {
		if (tx == 0) { print "HammerDB procedures ran no transactions"; exit }
		printf "%-5s %-24s %4s %9d %9d %13.1f %13.1f %6d\n", round, "HammerDB procs/mariadb", vus, no / secs * 60, tx / secs * 60,
			c / hz * 1e6 / tx, s / hz * 1e6 / tx, errs
	}' | tee -a "$work/rows.txt"
	[ "$errs" = 0 ] || echo "      first error: $(cat "$work"/vu*.err | grep -m1 '^ERROR')"
}

echo "== throughput: $W warehouses, $VUS VUs/threads, $RAMPUP unmeasured + $DURATION measured, $ROUNDS rounds, one fresh server (--memory $MEMORY)"
[ -n "$tcl" ] || echo "(no HammerDB tree given: HammerDB's procedures skipped)"
fresh_server
printf '%-5s %-24s %4s %9s %9s %13s %13s %6s\n' round driver VUs NOPM TPM "client µs/txn" "server µs/txn" errors
for round in $(seq "$ROUNDS"); do
	gotpc_row "$round"
	for mode in $MODES; do
		tb_row "$round" "$mode"
	done
	[ -z "$tcl" ] || hammerdb_row "$round"
done
echo "== means over $ROUNDS rounds (NOPM: go-tpc's tpmC; target: tierbench NOPM >= 2x go-tpc tpmC, tierbench client <= 45 µs/txn)"
awk '$1 ~ /^[0-9]+$/ && NF >= 8 {
		d = $2; for (i = 3; i <= NF - 6; i++) d = d " " $i
		if (!(d in n)) order[++k] = d
		n[d]++; no[d] += $(NF-4); tpm[d] += $(NF-3); cl[d] += $(NF-2); sv[d] += $(NF-1)
	}
	END {
		for (i = 1; i <= k; i++) { d = order[i]
			printf "%-5s %-24s %4s %9d %9d %13.1f %13.1f\n", "mean", d, "", no[d] / n[d], tpm[d] / n[d], cl[d] / n[d], sv[d] / n[d] }
		if ("go-tpc" in no) for (i = 1; i <= k; i++) if (order[i] ~ /^tierbench/)
			printf "%s NOPM / go-tpc tpmC: %.2f\n", order[i], no[order[i]] / no["go-tpc"]
	}' "$work/rows.txt"
echo "host load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
