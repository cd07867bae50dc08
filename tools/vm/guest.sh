#!/bin/sh
# Runs inside a virtme-ng guest (as root, cwd = the checkout, host root fs shared),
# started by `python -m vegaskit.cli.vm_test`. Thin glue: set up what the kernel
# tests need, then write what the host reads into OUT (a --rwdir the host shares):
#   features.json  `vegasctl features --json`     modprobe.txt  modules that failed
#   junit.xml      pytest's counts                 rc            pytest's exit code
# Usage: guest.sh OUT [pytest args...]
set -u
out=$1
shift
echo "VK-GUEST-UP uptime=$(cut -d' ' -f1 /proc/uptime) kernel=$(uname -r)" \
	"modules=$(readlink -f "/lib/modules/$(uname -r)")"

mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mkdir -p /run/netns
# Modules the tests need that nothing loads on demand: the kernel's own Vegas (compared
# against), tun (/dev/net/tun appears only once it is loaded: linkemu), veth, htb.
: >"$out/modprobe.txt"
for m in tcp_vegas tun veth sch_htb; do
	modprobe "$m" 2>>"$out/modprobe.txt" || echo "modprobe $m failed" >>"$out/modprobe.txt"
done

build/vegasctl features --json >"$out/features.json" 2>"$out/features.err"
echo "VK-FEATURES rc=$?"

echo "VK-PYTEST-START uptime=$(cut -d' ' -f1 /proc/uptime)"
.venv/bin/python -m pytest -p no:cacheprovider --junitxml="$out/junit.xml" "$@"
rc=$?
echo "$rc" >"$out/rc"
echo "VK-PYTEST-END rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
