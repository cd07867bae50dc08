"""Debian kernels for the VM tools: resolve a name with apt, download and unpack it.

A kernel is asked for as an alias (`bookworm`: the newest linux-image-6.1.0-N-amd64
of bookworm; `backports`: the newest linux-image-6.12*-amd64 of bookworm-backports;
`host`: the running kernel) or a package name. `unpacked()` `apt-get download`s the
image and its headers and `dpkg -x`es them into build/vm/<uname -r>/root, once (a
stamp file names the version unpacked). Nothing is installed on the host: the
guest sees the unpacked tree's lib/modules through virtme-ng (vegaskit.vm.guest).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from vegaskit import paths
from vegaskit.proc import sh

CACHE = paths.BUILD / "vm"


# ---------------------------------------------------------------- resolution

@dataclass
class Kernel:
    spec: str            # what was asked for: alias or package name
    package: str = ""    # linux-image-...
    version: str = ""    # the Debian version downloaded
    origin: str = ""     # the archive it comes from
    release: str = ""    # uname -r in the guest

    @property
    def host(self) -> bool:
        return self.spec == "host"


def _release(package: str) -> str:
    return package.removeprefix("linux-image-")


def _numbers(s: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", s))


def _madison(*packages: str) -> list[tuple[str, str, str]]:
    """(package, version, archive line) for every version apt knows."""
    rows = []
    for line in sh(["apt-cache", "madison", *packages], check=False, timeout=120).splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) >= 3:
            rows.append((parts[0], parts[1], parts[2]))
    return rows


def _pkgnames(prefix: str, pattern: str) -> list[str]:
    rx = re.compile(pattern)
    return [n for n in sh(["apt-cache", "pkgnames", prefix], timeout=120).split() if rx.fullmatch(n)]


def _resolve_once(spec: str) -> Kernel:
    k = Kernel(spec)
    if spec == "host":
        k.package, k.release, k.origin = "(running kernel)", os.uname().release, "host"
        return k
    if spec == "bookworm":
        names = _pkgnames("linux-image-6.1.0-", r"linux-image-6\.1\.0-\d+-amd64")
        rows = [r for r in _madison(*names) if "bookworm-backports" not in r[2]]
    elif spec == "backports":
        names = _pkgnames("linux-image-6.12", r"linux-image-6\.12\.\d+\+deb12(\.\d+)?-amd64")
        rows = [r for r in _madison(*names) if "bookworm-backports" in r[2]]
    elif spec.startswith("linux-image-"):
        rows = _madison(spec)
    else:
        raise ValueError(f"unknown kernel {spec!r}: give bookworm, backports, host "
                         "or a package name such as linux-image-6.1.0-41-amd64")
    if not rows:
        raise LookupError(f"apt knows no package for {spec!r}")
    # Newest: by the numbers in the package name (its ABI), then in the version.
    pkg, ver, line = max(rows, key=lambda r: (_numbers(_release(r[0])), _numbers(r[1])))
    k.package, k.version, k.release = pkg, ver, _release(pkg)
    k.origin = line.split()[1] if len(line.split()) > 1 else line
    return k


def resolve(spec: str) -> Kernel:
    """Resolve with apt-cache; if apt knows nothing of it, apt-get update once and retry."""
    try:
        return _resolve_once(spec)
    except LookupError:
        print(f"vm: {spec}: not in apt's lists, running apt-get update", flush=True)
        sh(["apt-get", "update", "-qq"], timeout=600)
        return _resolve_once(spec)


# ------------------------------------------------------------ fetch and unpack

def headers_of(k: Kernel) -> list[str]:
    """The kernel's header packages, same version: linux-headers-<rel> and its -common.
    bcc (the trace tools' tests) compiles against <modules>/build."""
    hdr = f"linux-headers-{k.release}"
    deps = sh(["apt-cache", "show", f"{hdr}={k.version}"], timeout=120)
    common = re.search(r"(linux-headers-\S+-common) \(= ", deps)
    return [f"{hdr}={k.version}"] + ([f"{common.group(1)}={k.version}"] if common else [])


def unpacked(k: Kernel) -> Path:
    """build/vm/<release>/root: the image's boot/ and lib/modules/, and its headers with
    lib/modules/<rel>/build pointing at them, unpacked once per version."""
    base = CACHE / k.release
    root = base / "root"
    stamp = base / "unpacked"
    pkgs = [f"{k.package}={k.version}", *headers_of(k)]
    want = "\n".join(pkgs) + "\n"
    if stamp.exists() and stamp.read_text() == want and vmlinuz(k).exists():
        return root
    shutil.rmtree(base, ignore_errors=True)
    deb = base / "deb"
    deb.mkdir(parents=True)
    print(f"vm: apt-get download {' '.join(pkgs)}", flush=True)
    subprocess.run(["apt-get", "download", "-q", "-o", "APT::Sandbox::User=root", *pkgs],
                   cwd=deb, check=True, timeout=900, stdout=subprocess.DEVNULL)
    for debfile in sorted(deb.glob("*.deb")):
        subprocess.run(["dpkg", "-x", str(debfile), str(root)], check=True, timeout=600)
    shutil.rmtree(deb)              # the unpacked tree is the cache
    # The headers package links /lib/modules/<rel>/build to /usr/src/linux-headers-<rel>,
    # absolute: point it into the tree (the guest sees the host's paths).
    mods = root / "lib" / "modules" / k.release
    src = root / "usr" / "src" / f"linux-headers-{k.release}"
    if src.is_dir():
        link = mods / "build"
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(src.resolve())
    stamp.write_text(want)
    return root


def vmlinuz(k: Kernel) -> Path:
    return CACHE / k.release / "root" / "boot" / f"vmlinuz-{k.release}"
