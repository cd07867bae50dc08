#!/bin/sh
# Runs inside a virtme-ng guest (as root, cwd = the checkout, host root fs shared),
# started by `python -m vegaskit.cli.vm_test`. Thin glue: set up what the kernel
# tests need, then write what the host reads into OUT (a --rwdir the host shares):
#   features.json  `vegasctl features --json`     modprobe.txt  tcp_vegas loaded?
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
# The tests compare against the kernel's own Vegas and Reno: make them available.
if modprobe tcp_vegas 2>"$out/modprobe.txt"; then echo ok >"$out/modprobe.txt"; fi

build/vegasctl features --json >"$out/features.json" 2>"$out/features.err"
echo "VK-FEATURES rc=$?"

echo "VK-PYTEST-START uptime=$(cut -d' ' -f1 /proc/uptime)"
.venv/bin/python -m pytest -p no:cacheprovider --junitxml="$out/junit.xml" "$@"
rc=$?
echo "$rc" >"$out/rc"
echo "VK-PYTEST-END rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
