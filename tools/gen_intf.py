"""Generate vegaskit/intf.py from bpf/vk_intf.h, the one BPF/userspace contract.

The header writes each list of names once, as an X macro with one X(...) per
line (variants, decision rules, congestion states) and the pin root; Python
gets the same names from here, never a hand-made copy.

    python tools/gen_intf.py bpf/vk_intf.h tools/vegaskit/intf.py
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ENTRY = re.compile(r'^\s*X\((\w+),\s*(\w+),\s*"([^"]*)"\)')


def x_list(header: str, macro: str) -> list[tuple[str, str, str]]:
    """The (id, name, text) entries of `#define MACRO(X)`, in order."""
    lines = header.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(f"#define {macro}(X)"))
    out = []
    for line in lines[start + 1:]:
        m = ENTRY.match(line)
        if not m:
            raise SystemExit(f"gen_intf: unexpected line in {macro}: {line!r}")
        out.append(m.groups())
        if not line.rstrip().endswith("\\"):
            return out
    raise SystemExit(f"gen_intf: {macro} runs off the end of the header")


def define(header: str, name: str) -> str:
    m = re.search(rf"^#define {name}\s+(\S+)", header, re.M)
    if not m:
        raise SystemExit(f"gen_intf: no #define {name}")
    return m.group(1)


def struct_fields(header: str, name: str) -> list[str]:
    """The field names of `struct NAME { ... };`, in order: only __u32 fields,
    which is all a layout ctypes mirrors field by field may hold."""
    m = re.search(rf"^struct {name} {{\n(.*?)^}};", header, re.M | re.S)
    if not m:
        raise SystemExit(f"gen_intf: no struct {name}")
    out = []
    for line in m.group(1).splitlines():
        f = re.match(r"\s*(\w+)\s+(\w+);", line)
        if f:
            if f.group(1) != "__u32":
                raise SystemExit(f"gen_intf: struct {name}: {f.group(2)} is not __u32")
            out.append(f.group(2))
    return out


def generate(header: str) -> str:
    variants = x_list(header, "VK_VARIANTS")
    semantics = x_list(header, "VK_SEMANTICS")
    rules = x_list(header, "VK_RULES")
    states = x_list(header, "VK_CA_STATES")
    modes = x_list(header, "VK_MODES")
    return "\n".join([
        '"""Generated from bpf/vk_intf.h by tools/gen_intf.py: do not edit."""',
        "",
        "# vegasctl's variant name -> where its rule comes from",
        f"VARIANTS = {{{', '.join(f'{n!r}: {t!r}' for _, n, t in variants)}}}",
        "# the controller each variant registers by default",
        f"CONTROLLERS = {tuple('bpf_' + n for _, n, _ in variants)!r}",
        "# decision rules by number (trace records, flows counters)",
        f"RULES = {tuple(n for _, n, _ in rules)!r}",
        "# the kernel's congestion states by number, as vegasctl prints them",
        f"CA_STATES = {tuple(n for _, n, _ in states)!r}",
        "# vegas_plus's modes by number (trace records, flows)",
        f"MODES = {tuple(n for _, n, _ in modes)!r}",
        "# how a decision reads its measurements (the semantics parameter), by number",
        f"SEMANTICS = {tuple(n for _, n, _ in semantics)!r}",
        "# struct vk_params, every field a __u32, in order",
        f"PARAMS_FIELDS = {tuple(struct_fields(header, 'vk_params'))!r}",
        f"PARAMS_MAGIC = {define(header, 'VK_PARAMS_MAGIC').rstrip('u')}",
        f"PIN_ROOT = {define(header, 'VK_PIN_ROOT')}",
        "# a controller name's buffer, with its NUL (TCP_CA_NAME_MAX)",
        f"NAME_MAX = {define(header, 'VK_NAME_MAX')}",
        f"PIN_DOT = {define(header, 'VK_PIN_DOT')}",
        "# th_tie_milli's default: Th ties within this many thousandths of a packet a round",
        f"TH_TIE_MILLI_DEFAULT = {define(header, 'VK_TH_TIE_MILLI_DEFAULT')}",
        "# vegas_plus's rate_epoch: its default and range, delay-mode rounds",
        f"PLUS_RATE_EPOCH_DEFAULT = {define(header, 'VK_PLUS_RATE_EPOCH_DEFAULT')}",
        f"PLUS_RATE_EPOCH_MIN = {define(header, 'VK_PLUS_RATE_EPOCH_MIN')}",
        f"PLUS_RATE_EPOCH_MAX = {define(header, 'VK_PLUS_RATE_EPOCH_MAX')}",
        "# vegas_plus: rounds in a row a sign of a competitor must hold",
        f"PLUS_DETECT_ROUNDS = {define(header, 'VK_PLUS_DETECT_ROUNDS')}",
        "# the decisions a socket holds back from its flows record, at most",
        f"RECORD_BATCH = {define(header, 'VK_RECORD_BATCH')}",
        "",
    ])


def main() -> int:
    src, dst = map(Path, sys.argv[1:3])
    Path(dst).write_text(generate(src.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
