# bench/common.sh — what bench/driver.sh and bench/hammerdb.sh share
# (sourced, not run). The pgbench helpers read TIERBENCH_DSN, DURATION and
# VUS, and PGBENCH_MODE (pgbench's -M: prepared unless set).

# bench_work NAME: a fresh directory in $work for a managed server ($work/data)
# and scratch files, removed with the server ($TB) when the script exits.
bench_work() {
	work=$(mktemp -d "/var/tmp/tierbench-$1-bench.XXXXXX")
	chmod 755 "$work"
	trap bench_cleanup EXIT
}
bench_cleanup() {
	"$TB" server stop --datadir "$work/data" >/dev/null 2>&1 || true
	rm -rf "$work"
}

# field NAME: the number of JSON field NAME in tierbench's --json on stdin.
field() { sed -n "s/^ *\"$1\": \([0-9.]*\),\{0,1\}$/\1/p" | head -1; }

# sfield NAME: the string of JSON field NAME in tierbench's --json on stdin.
sfield() { sed -n "s/^ *\"$1\": \"\([^\"]*\)\",\{0,1\}$/\1/p" | head -1; }

# async_opts, added to a DSN, turns synchronous_commit off for its connections.
async_opts='options=-c%20synchronous_commit%3Doff'

# dsn_sep is what joins one more parameter to $TIERBENCH_DSN.
dsn_sep() { case $TIERBENCH_DSN in *\?*) echo '&' ;; *) echo '?' ;; esac; }

# pgbench_setup [CONNINFO]: sets the caller's pgbench (its path), pw, uri
# (the DSN without its password, plus the URI parameter CONNINFO) and secs
# (DURATION in seconds), for pgbench_timed; fails when there is no pgbench.
# The password goes by the environment, not the command line.
pgbench_setup() {
	pgbench=$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | sort -V | tail -1)
	[ -x "$pgbench" ] || { echo "pgbench not found: skipped"; return 1; }
	pw=$(printf '%s' "$TIERBENCH_DSN" | sed -n 's|^postgres://[^:]*:\([^@]*\)@.*|\1|p')
	uri=$(printf '%s' "$TIERBENCH_DSN" | sed 's|^\(postgres://[^:]*\):[^@]*@|\1@|')
	[ -z "${1:-}" ] || uri="$uri$(dsn_sep)$1"
	case $DURATION in
	*m) secs=$(( ${DURATION%m} * 60 )) ;;
	*s) secs=${DURATION%s} ;;
	*) secs=$DURATION ;;
	esac
}

# pgbench_psql ARGS...: the psql beside pgbench, on pgbench_setup's uri.
pgbench_psql() { PGPASSWORD=$pw "$(dirname "$pgbench")/psql" "$@" "$uri"; }

# pgbench_timed OUT ARGS...: pgbench with ARGS, $VUS clients on one thread,
# for secs, its output to OUT; prints its user and system CPU seconds.
pgbench_timed() {
	local out=$1 TIMEFORMAT='%U %S'
	shift
	{ time PGPASSWORD=$pw "$pgbench" -n -M "${PGBENCH_MODE:-prepared}" -c "$VUS" -j 1 -T "$secs" "$@" "$uri" >"$out" 2>&1; } 2>&1
}

# pgbench_nop_scripts W: writes $work/no.sql and $work/pay.sql, New-Order and
# Payment on the routines tierbench installed, over W warehouses, for
# pgbench's -f no.sql@50 -f pay.sql@50.
pgbench_nop_scripts() {
	local w=$1
	{
		echo "\\set w random(1, $w)"; echo '\set d random(1, 10)'; echo '\set c random(1, 3000)'
		for i in $(seq 10); do echo "\\set i$i random(1, 100000)"; done
		echo 'SELECT * FROM tpcc_new_order(:w::int, :d::int, :c::int, 1,'
		echo '  ARRAY[:i1, :i2, :i3, :i4, :i5, :i6, :i7, :i8, :i9, :i10]::int[],'
		echo '  ARRAY[:w, :w, :w, :w, :w, :w, :w, :w, :w, :w]::int[], ARRAY[5, 5, 5, 5, 5, 5, 5, 5, 5, 5]);'
	} >"$work/no.sql"
	printf '%s\n' "\\set w random(1, $w)" '\set d random(1, 10)' '\set c random(1, 3000)' \
		"SELECT tpcc_payment(:w::int, :d::int, :w::int, :d::int, :c::int, ''::text, 1000::bigint);" >"$work/pay.sql"
}
