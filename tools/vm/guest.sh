#!/bin/sh
# Runs inside a virtme-ng guest (as root, cwd = the checkout, host root fs shared),
# started by vegaskit.vm.guest.boot(). Thin glue: set up what the kernel tests and
# experiments need, then run the command given, writing into OUT (a --rwdir the
# host shares):
#   features.json  `vegasctl features --json`     modprobe.txt  modules that failed
#   rc             the command's exit code
# Usage: guest.sh OUT COMMAND [ARGS...]
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

echo "VK-RUN-START uptime=$(cut -d' ' -f1 /proc/uptime)"
"$@"
rc=$?
echo "$rc" >"$out/rc"
echo "VK-RUN-END rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
