#!/usr/bin/env bash
# Where the test suite's CPU goes: runs `go test` on the given packages
# (default ./...) with every test binary in a cgroup of its own, and prints
# each package's CPU seconds (the test binary and everything it started:
# servers, browsers, fio, ssh) beside its wall time, most first.
#
#   sudo scripts/test-cpu.sh                     # every package, as CI runs them
#   sudo scripts/test-cpu.sh -run 'TestSecrets$' ./internal/cli
#
# Arguments are passed to go test. With CI=true, as CI runs, integration
# tests fail instead of skipping. Needs root (it makes cgroups) and a
# cpuacct (cgroup v1) or cpu (cgroup v2) controller. The suite is CPU-bound
# on a 2-core host, so CPU seconds, not a package's wall time, say what a
# cut saves.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
	echo "test-cpu.sh: run as root (it makes a cgroup for each test binary)" >&2
	exit 2
fi
if [ -d /sys/fs/cgroup/cpuacct ]; then
	root=/sys/fs/cgroup/cpuacct/tierbench-test-cpu
elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	root=/sys/fs/cgroup/tierbench-test-cpu
else
	echo "test-cpu.sh: no cpuacct (v1) or cpu (v2) cgroup controller under /sys/fs/cgroup" >&2
	exit 2
fi
mkdir -p "$root"
log=$(mktemp)
wrapper=$(mktemp)
trap 'rm -f "$log" "$wrapper"' EXIT

# go test runs the wrapper in the package's directory with the test binary
# and its arguments.
cat > "$wrapper" <<EOF
#!/usr/bin/env bash
pkg=\$(pwd | sed 's|^$PWD/||')
cg=$root/\$(echo "\$pkg" | tr / _)-\$\$
mkdir -p "\$cg"
start=\$(date +%s.%N)
bash -c 'echo \$\$ > "\$1/cgroup.procs" && shift && exec "\$@"' sh "\$cg" "\$@"
rc=\$?
end=\$(date +%s.%N)
sleep 0.5 # what the binary started and left to exit
if [ -f "\$cg/cpuacct.usage" ]; then
	ns=\$(cat "\$cg/cpuacct.usage")
else
	ns=\$((\$(awk '/^usage_usec/ {print \$2}' "\$cg/cpu.stat") * 1000))
fi
echo "\$pkg \$ns \$start \$end" >> "$log"
rmdir "\$cg" 2>/dev/null || true
exit \$rc
EOF
chmod +x "$wrapper"

[ $# -eq 0 ] && set -- ./...
rc=0
go test -count=1 -ldflags=-w -exec "$wrapper" "$@" || rc=$?
echo
awk '{ printf "%-40s %8.1f CPU-s %8.1f s\n", $1, $2 / 1e9, $4 - $3 }' "$log" | sort -k2 -rn
awk '{ cpu += $2 / 1e9 } END { printf "%-40s %8.1f CPU-s\n", "all", cpu }' "$log"
exit $rc
