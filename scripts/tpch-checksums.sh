#!/usr/bin/env bash
# Derives the expected values of internal/tpch/counts_test.go from the
# reference generator, dbgen 2.14.0: builds it, runs `dbgen -s SF -f` at
# SF 0.01 and 0.1, each in a directory of its own, and prints every table's
# row count (`wc -l`) and SHA-256 (`sha256sum`) of its TABLE.tbl file.
#
# dbgen's sources are taken from a Git repository holding the TPC's release
# as a commit: github.com/electrum/tpch-dbgen, whose commit 5eab24a
# ("Import 2.14.0") is dbgen 2.14.0 as the TPC ships it (release.h: VERSION 2,
# RELEASE 14, PATCH 0); the commits after it only port it to Mac OS X. Give
# another clone (a path or URL) as the first argument, or another commit as
# DBGEN_COMMIT. It is built with the TPC's makefile.suite:
#   make -f makefile.suite CC=gcc DATABASE=ORACLE MACHINE=LINUX WORKLOAD=TPCH dbgen
# Nothing here touches the working tree: all is done under a temporary
# directory, removed at the end (KEEP=1 keeps it and says where).
# Usage: scripts/tpch-checksums.sh [DBGEN_GIT_REPO]
set -euo pipefail

repo=${1:-https://github.com/electrum/tpch-dbgen.git}
commit=${DBGEN_COMMIT:-5eab24a}
work=$(mktemp -d)
if [ "${KEEP:-}" = 1 ]; then
	echo "working in $work" >&2
else
	trap 'rm -rf "$work"' EXIT
fi

git clone --quiet --bare "$repo" "$work/repo"
mkdir "$work/src"
git --git-dir="$work/repo" archive "$commit" | tar -x -C "$work/src"
grep -q '#define RELEASE 14' "$work/src/release.h" || {
	echo "$repo at $commit is not dbgen 2.14 (release.h)" >&2
	exit 1
}
make -s -C "$work/src" -f makefile.suite CC=gcc DATABASE=ORACLE MACHINE=LINUX WORKLOAD=TPCH dbgen >&2

for sf in 0.01 0.1; do
	dir=$work/sf$sf
	mkdir "$dir"
	(cd "$dir" && DSS_CONFIG="$work/src" "$work/src/dbgen" -s "$sf" -f >/dev/null 2>&1)
	echo "# SF $sf: table rows sha256"
	for table in part partsupp supplier customer orders lineitem nation region; do
		printf '%s %s %s\n' "$table" "$(wc -l <"$dir/$table.tbl")" "$(sha256sum "$dir/$table.tbl" | cut -d' ' -f1)"
	done
done
