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
# btrfs-compsize. The services these packages come with are not started: the
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

apt_updated=""
apt_install() {
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "setup: $* is missing and this is not a Debian/Ubuntu system; install it by hand" >&2
		exit 1
	fi
	if [ -z "$apt_updated" ]; then
		as_root apt-get update -qq
		apt_updated=1
	fi
	echo "setup: installing $*" >&2
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# Go: the module asks for a recent toolchain; Go 1.21 or newer fetches it by
# itself from the Go module proxy.
if ! command -v go >/dev/null 2>&1; then
	apt_install golang-go
fi

# PostgreSQL server binaries: on PATH, or Debian's /usr/lib/postgresql/*/bin.
have_pg() {
	if command -v postgres >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1; then return 0; fi
	ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1
}
if ! have_pg; then
	apt_install postgresql
fi
# psql, for bench/ scripts and for users poking at a managed server.
if ! command -v psql >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/psql >/dev/null 2>&1; then
	apt_install postgresql-client
fi

# fio: `tierbench disk run` drives it, and its tests run it.
if ! command -v fio >/dev/null 2>&1; then
	apt_install fio
fi
# blkid: the guard that keeps fio off formatted block devices asks it.
if ! command -v blkid >/dev/null 2>&1; then
	apt_install util-linux
fi

# MariaDB: the second engine's tests start managed MariaDB servers
# (mariadbd, mariadb-install-db) and back them up (mariadb-backup). Debian
# starts its own mariadb service on install, listening on 127.0.0.1 only;
# tierbench's servers use their own ports and data directories.
if [ -n "$for_tests" ]; then
	missing=""
	if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then missing="mariadb-server"; fi
	if ! command -v mariadb-backup >/dev/null 2>&1; then missing="$missing mariadb-backup"; fi
	if [ -n "$missing" ]; then
		# shellcheck disable=SC2086 # two package names
		apt_install $missing
	fi
fi

# apt_install_no_start PKG... installs packages that come with a service
# without starting it (a temporary policy-rc.d says no while they install)
# and without their recommends. Debian's packages would start services
# listening on every interface; the tests start their own instances, bound
# to addresses of their own.
apt_install_no_start() {
	policy=/usr/sbin/policy-rc.d
	made_policy=""
	if [ ! -e "$policy" ] && command -v apt-get >/dev/null 2>&1; then
		as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy"
		made_policy=1
		trap 'as_root rm -f "$policy"' EXIT # also when the install fails
	fi
	apt_install --no-install-recommends "$@"
	if [ -n "$made_policy" ]; then
		as_root rm -f "$policy"
		trap - EXIT
	fi
}

# Services for the tests, none of them started by the install:
#  - Prometheus: the live metrics tests start their own server on 127.0.0.1
#    and lint the exposition with promtool.
#  - OpenSSH's server and client, and node_exporter: the multi-host tests
#    run an sshd (the controller logs in with ssh, keys made by ssh-keygen)
#    and a node_exporter in each namespace (internal/clustertest).
if [ -n "$for_tests" ]; then
	missing=""
	if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
		missing="prometheus"
	fi
	if [ ! -x /usr/sbin/sshd ] && ! command -v sshd >/dev/null 2>&1; then
		missing="$missing openssh-server"
	fi
	if ! command -v ssh >/dev/null 2>&1 || ! command -v ssh-keygen >/dev/null 2>&1; then
		missing="$missing openssh-client"
	fi
	if ! command -v prometheus-node-exporter >/dev/null 2>&1 && [ ! -x /usr/bin/prometheus-node-exporter ]; then
		missing="$missing prometheus-node-exporter"
	fi
	if [ -n "$missing" ]; then
		# shellcheck disable=SC2086 # package names
		apt_install_no_start $missing
	fi
fi

# The space tests and bench/space.sh compare tierbench's block compression
# with the lz4 and zstd command-line tools; the emulated-tier tests make
# btrfs images with inline compression (btrfs-progs) and read what btrfs
# stored with compsize (btrfs-compsize).
if [ -n "$for_tests" ]; then
	missing=""
	command -v lz4 >/dev/null 2>&1 || missing="lz4"
	command -v zstd >/dev/null 2>&1 || missing="$missing zstd"
	if ! command -v mkfs.btrfs >/dev/null 2>&1 && [ ! -x /usr/sbin/mkfs.btrfs ] && [ ! -x /sbin/mkfs.btrfs ]; then
		missing="$missing btrfs-progs"
	fi
	if ! command -v compsize >/dev/null 2>&1 && [ ! -x /usr/sbin/compsize ]; then
		missing="$missing btrfs-compsize"
	fi
	if [ -n "$missing" ]; then
		# shellcheck disable=SC2086 # package names
		apt_install $missing
	fi
fi

# ip (iproute2): the multi-host tests make their hosts with ip netns.
if [ -n "$for_tests" ] && ! command -v ip >/dev/null 2>&1 && [ ! -x /usr/sbin/ip ] && [ ! -x /sbin/ip ]; then
	apt_install iproute2
fi

# Chromium: the report tests (internal/report/reporttest) check the HTML
# report in a headless browser.
if [ -n "$for_tests" ] && ! command -v chromium >/dev/null 2>&1 \
	&& ! command -v chromium-browser >/dev/null 2>&1 \
	&& ! command -v google-chrome >/dev/null 2>&1; then
	apt_install chromium
fi

go mod download
