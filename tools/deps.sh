#!/usr/bin/env bash
# Install everything vegaskit needs on Debian 12 (bookworm). Idempotent: every step
# checks before it acts, so `make deps` is cheap the second time.
# Called only by `make deps` (and, with WITH_VM=1, by `make deps-vm`): the one place
# that installs things.
set -euo pipefail

VENV=${VENV:-.venv}
need_root() { [ "$(id -u)" -eq 0 ] || { echo "make deps: must run as root (try: sudo make deps)" >&2; exit 1; }; }
need_root
export DEBIAN_FRONTEND=noninteractive

# libbpf >= 1.2 and bpftool >= 7.3 are needed for struct_ops links (bpf_link__update_map);
# bookworm main has libbpf 1.1, bookworm-backports has 1.4.
BP=/etc/apt/sources.list.d/bookworm-backports.list
if [ ! -f "$BP" ] && ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo "deb http://deb.debian.org/debian bookworm-backports main" > "$BP"
	rm -f /var/lib/apt/periodic/vegaskit-updated
fi

pkgs_main=(clang llvm make gcc pkg-config libelf-dev zlib1g-dev iperf3 ethtool iproute2
	   iputils-ping bpftrace bpfcc-tools python3-bpfcc python3-venv
	   linux-headers-amd64 procps psmisc util-linux systemd man-db ns2)
pkgs_bp=(libbpf-dev bpftool)

missing=()
for p in "${pkgs_main[@]}" "${pkgs_bp[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
libbpf_ok() { pkg-config --atleast-version=1.2 libbpf 2>/dev/null; }
if [ ${#missing[@]} -gt 0 ] || ! libbpf_ok; then
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${pkgs_main[@]}" >/dev/null
	apt-get install -y -qq --no-install-recommends -t bookworm-backports "${pkgs_bp[@]}" >/dev/null
fi
libbpf_ok || { echo "make deps: libbpf >= 1.2 not available after install" >&2; exit 1; }

# bcc compiles tracepoint programs against kernel headers; this kernel ships none.
# A Debian 6.1 header tree is enough for tracepoint programs (never for struct layouts).
KB=/lib/modules/$(uname -r)
if [ ! -e "$KB/build" ]; then
	hdr=$(ls -d /usr/src/linux-headers-6.1*-amd64 2>/dev/null | sort -V | tail -n1)
	common=$(ls -d /usr/src/linux-headers-6.1*-common 2>/dev/null | sort -V | tail -n1)
	if [ -n "$hdr" ]; then
		mkdir -p "$KB"
		ln -sfn "$hdr" "$KB/build"
		[ -n "$common" ] && ln -sfn "$common" "$KB/source"
	fi
fi

# bpffs for pinned registrations; tracefs for tracepoint formats.
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
# A kernel without tracefs lacks the tracepoints (their tests skip, saying so); one that has
# it but cannot mount it is a host to fix, not a reason for the tests to skip.
if grep -qw tracefs /proc/filesystems && ! mountpoint -q /sys/kernel/tracing; then
	mount -t tracefs tracefs /sys/kernel/tracing ||
		{ echo "deps: cannot mount tracefs at /sys/kernel/tracing" >&2; exit 1; }
fi

# A venv that also sees Debian's python3-bpfcc (dist-packages).
if [ ! -x "$VENV/bin/python" ]; then
	/usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
# The vegaskit package (tools/pyproject.toml), editable: the checkout is what runs.
"$VENV/bin/python" -c 'import pytest, hypothesis, prometheus_client, ansible, ansiblelint, vegaskit.testbed' 2>/dev/null ||
	"$VENV/bin/pip" install -q -e "tools[test]"
# The optional sets below: install those of the named packages not installed yet.
install_missing() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	fi
}
# WITH_VM=1 (make deps-vm, for make vm-test only, so `make test` and CI stay light):
# qemu (TCG is enough), a static busybox and kmod for virtme-ng's guest init, dpkg to
# unpack kernel packages, systemd-sysv for /sbin/init (make vm-systemd boots it), and
# virtme-ng itself in the project venv.
if [ "${WITH_VM:-0}" = 1 ]; then
	install_missing qemu-system-x86 busybox-static kmod udev dpkg systemd-sysv
	[ -x "$VENV/bin/vng" ] || "$VENV/bin/pip" install -q virtme-ng
	echo "deps: vm ok ($(qemu-system-x86_64 --version | head -n1), virtme-ng $("$VENV/bin/vng" --version 2>&1 | tail -n1))"
fi
# WITH_NS2=1 (make deps-ns2, for make ns2 only): what tools/ns2agent/build.sh needs to
# build ns-2.35 with our agents: the libraries Debian's ns2 is built against, and its
# upstream source from Debian's source archive into NS2_SRC (apt verifies it against the
# signed index). The archive here serves the upstream tarball but not Debian's own patch
# tarball, so `apt-get source` fails after fetching what build.sh needs: the tarball's
# presence is the test. A deb-src entry is made from the system's own deb entries.
if [ "${WITH_NS2:-0}" = 1 ]; then
	# tclsh8.6 and tcl2c++ run during the build; libxt-dev because configure insists on
	# X's headers though ns is built without Tk
	install_missing g++ make xz-utils tcl8.6 tcl8.6-dev tclcl libtclcl1-dev libotcl1-dev \
		libx11-dev libxt-dev
	NS2_SRC=${NS2_SRC%/}
	tarball="${NS2_SRC:?}/ns2_2.35+dfsg.orig.tar.xz"
	if [ ! -s "$tarball" ]; then
		if ! apt-get source --print-uris ns2 >/dev/null 2>&1; then
			SRC=/etc/apt/sources.list.d/vegaskit-deb-src
			[ -f /etc/apt/sources.list.d/debian.sources ] &&
				sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$SRC.sources"
			grep -qs '^deb ' /etc/apt/sources.list &&
				sed -n 's/^deb /deb-src /p' /etc/apt/sources.list > "$SRC.list"
			apt-get update -qq
		fi
		mkdir -p "$NS2_SRC"
		(cd "$NS2_SRC" && apt-get source -qq --download-only ns2 >/dev/null 2>&1) || true
		[ -s "$tarball" ] || { echo "make deps-ns2: Debian's ns2 source tarball could not be fetched" >&2; exit 1; }
	fi
	echo "deps: ns2 source ok ($tarball)"
fi
echo "deps: ok (libbpf $(pkg-config --modversion libbpf), $(bpftool version 2>/dev/null | head -n1))"
