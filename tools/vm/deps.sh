#!/usr/bin/env bash
# What `make vm-test` needs on top of `make deps`: qemu (TCG is enough), a static
# busybox and kmod for virtme-ng's guest init, and virtme-ng itself in the project
# venv. Kept out of tools/deps.sh so `make test` (and CI) stays light.
# Idempotent: each step checks before it acts.
set -euo pipefail

VENV=${VENV:-.venv}
[ "$(id -u)" -eq 0 ] || { echo "vm-test deps: must run as root" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive

pkgs=(qemu-system-x86 busybox-static kmod udev dpkg)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[ -x "$VENV/bin/python" ] || { echo "vm-test deps: no $VENV (run make deps first)" >&2; exit 1; }
[ -x "$VENV/bin/vng" ] || "$VENV/bin/pip" install -q virtme-ng
echo "vm-test deps: ok ($(qemu-system-x86_64 --version | head -n1), virtme-ng $("$VENV/bin/vng" --version 2>&1 | tail -n1))"
