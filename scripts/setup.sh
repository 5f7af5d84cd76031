#!/usr/bin/env bash
# Installs what tierbench's build, tests and main job need when it is
# missing, on Debian/Ubuntu: Go modules, the PostgreSQL server binaries and
# fio (storage profiles), plus blkid (util-linux), which the fio target guard uses.
# With --test (make test) it also installs Chromium, which the report tests
# open the HTML report in, MariaDB (mariadb-server, mariadb-backup), the
# second engine the tests run, Prometheus (prometheus, promtool), which
# scrapes the live metrics tests, and for the multi-host tests, whose hosts
# are network namespaces (internal/clustertest), iproute2 (ip netns),
# OpenSSH's server and client (sshd, ssh, ssh-keygen) and Prometheus's
# node_exporter, and for the space and tier tests lz4, zstd, btrfs-progs and
# btrfs-compsize, and tpchgen-cli, the reference TPC-H generator (from PyPI,
# with pip). The services these packages come with are not started: the
# tests start their own, on addresses of their own.
# Safe to run again: it only installs what is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

for_tests=""
for arg in "$@"; do
	case "$arg" in
	--test) for_tests=1 ;;
	*) echo "usage: scripts/setup.sh [--test]" >&2; exit 2 ;;
	esac
done

as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"
	elif command -v sudo >/dev/null 2>&1; then sudo "$@"
	else echo "setup: need root (or sudo) to run: $*" >&2; exit 1; fi
}

# have TOOL: TOOL is on PATH, or where Debian puts system tools (/usr/sbin,
# /sbin), which an ordinary user's PATH (and root's after a plain su) lacks:
# blkid, mkfs.btrfs, sshd, mariadbd… tierbench looks there too
# (internal/systool).
have() {
	command -v "$1" >/dev/null 2>&1 && return 0
	for d in /usr/local/sbin /usr/sbin /sbin; do
		[ -x "$d/$1" ] && [ ! -d "$d/$1" ] && return 0
	done
	return 1
}

# need PKG WHAT and need_no_start PKG WHAT note a package to install and the
# tools it is for, said when they cannot be installed. need_no_start is for
# packages that come with a service, installed without starting it.
pkgs=""
pkgs_no_start=""
why=""      # "util-linux (blkid), fio (fio) and …"
why_last="" # the last one, which "and" joins
n_missing=0
missing() {
	[ -n "$why_last" ] && why="${why:+$why, }$why_last"
	why_last="$1 ($2)"
	n_missing=$((n_missing + 1))
}
need() {
	pkgs="$pkgs $1"
	missing "$1" "$2"
}
need_no_start() {
	pkgs_no_start="$pkgs_no_start $1"
	missing "$1" "$2"
}

# Go: the module asks for a recent toolchain; Go 1.21 or newer fetches it by
# itself from the Go module proxy.
have go || need golang-go go

# PostgreSQL server binaries: on PATH, or Debian's /usr/lib/postgresql/*/bin.
have_pg() {
	if have postgres && have initdb; then return 0; fi
	ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1
}
have_pg || need postgresql "postgres, initdb"
# psql, for bench/ scripts and for users poking at a managed server.
if ! have psql && ! ls /usr/lib/postgresql/*/bin/psql >/dev/null 2>&1; then
	need postgresql-client psql
fi

# fio: `tierbench disk run` drives it, and its tests run it.
have fio || need fio fio
# blkid: the guard that keeps fio off formatted block devices asks it.
have blkid || need util-linux blkid

# MariaDB: the second engine's tests start managed MariaDB servers
# (mariadbd, mariadb-install-db) and back them up (mariadb-backup). Debian
# starts its own mariadb service on install, listening on 127.0.0.1 only;
# tierbench's servers use their own ports and data directories.
if [ -n "$for_tests" ]; then
	have mariadbd || need mariadb-server mariadbd
	have mariadb-backup || need mariadb-backup mariadb-backup
fi

# Services for the tests, none of them started by the install:
#  - Prometheus: the live metrics tests start their own server on 127.0.0.1
#    and lint the exposition with promtool.
#  - OpenSSH's server and client, and node_exporter: the multi-host tests
#    run an sshd (the controller logs in with ssh, keys made by ssh-keygen)
#    and a node_exporter in each namespace (internal/clustertest).
if [ -n "$for_tests" ]; then
	{ have prometheus && have promtool; } || need_no_start prometheus "prometheus, promtool"
	have sshd || need_no_start openssh-server sshd
	{ have ssh && have ssh-keygen; } || need_no_start openssh-client "ssh, ssh-keygen"
	have prometheus-node-exporter || need_no_start prometheus-node-exporter prometheus-node-exporter
fi

# The space tests and bench/space.sh compare tierbench's block compression
# with the lz4 and zstd command-line tools; the emulated-tier tests make
# btrfs images with inline compression (btrfs-progs) and read what btrfs
# stored with compsize (btrfs-compsize).
if [ -n "$for_tests" ]; then
	have lz4 || need lz4 lz4
	have zstd || need zstd zstd
	have mkfs.btrfs || need btrfs-progs mkfs.btrfs
	have compsize || need btrfs-compsize compsize
fi

# pip (python3-pip): the TPC-H generator's test compares its tables with
# those of tpchgen-cli, a reference generator from PyPI, installed below.
tpchgen_dir="${XDG_CACHE_HOME:-$HOME/.cache}/tierbench/tpchgen-cli"
if [ -n "$for_tests" ] && [ ! -x "$tpchgen_dir/bin/tpchgen-cli" ] && ! have tpchgen-cli; then
	want_tpchgen=1
	python3 -m pip --version >/dev/null 2>&1 || need python3-pip "python3 -m pip"
fi

# ip (iproute2): the multi-host tests make their hosts with ip netns.
if [ -n "$for_tests" ]; then
	have ip || need iproute2 ip
fi

# Chromium: the report tests (internal/report/reporttest) check the HTML
# report in a headless browser, and serve's console test drives it.
if [ -n "$for_tests" ] && ! have chromium && ! have chromium-browser && ! have google-chrome; then
	need chromium chromium
fi
# Firefox: serve's console test drives it too, over WebDriver BiDi.
if [ -n "$for_tests" ] && ! have firefox-esr && ! have firefox; then
	need firefox-esr firefox-esr
fi

# Install what is missing, saying what and why; without root or sudo, say
# what is missing and the command that would install it.
if [ "$n_missing" -gt 0 ]; then
	all="${pkgs# }${pkgs_no_start:+ ${pkgs_no_start# }}"
	all="${all# }"
	verb=is
	[ "$n_missing" -gt 1 ] && verb=are
	why="${why:+$why and }$why_last"
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "setup: $why $verb missing, and this is not a Debian/Ubuntu system; install them by hand" >&2
		exit 1
	fi
	if [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null 2>&1; then
		echo "setup: $why $verb missing; run as root or install sudo: apt-get install $all" >&2
		exit 1
	fi
	echo "setup: $why $verb missing; installing: apt-get install $all" >&2
	as_root apt-get update -qq
	if [ -n "$pkgs" ]; then
		# shellcheck disable=SC2086 # package names
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs >/dev/null
	fi
	if [ -n "$pkgs_no_start" ]; then
		# Packages that come with a service are installed without starting
		# it (a temporary policy-rc.d says no while they install) and
		# without their recommends: Debian's packages would start services
		# listening on every interface; the tests start their own
		# instances, bound to addresses of their own.
		policy=/usr/sbin/policy-rc.d
		made_policy=""
		if [ ! -e "$policy" ]; then
			as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy"
			made_policy=1
			trap 'as_root rm -f "$policy"' EXIT # also when the install fails
		fi
		# shellcheck disable=SC2086 # package names
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs_no_start >/dev/null
		if [ -n "$made_policy" ]; then
			as_root rm -f "$policy"
			trap - EXIT
		fi
	fi
fi

# tpchgen-cli 4.0.0, whose tables are dbgen's byte for byte, under the
# user's cache directory (where the test looks): pip's --target keeps it
# out of the system's Python.
if [ -n "${want_tpchgen:-}" ]; then
	echo "setup: installing tpchgen-cli 4.0.0 (the reference TPC-H generator the tests compare with) into $tpchgen_dir" >&2
	python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --target "$tpchgen_dir" tpchgen-cli==4.0.0
fi

go mod download
