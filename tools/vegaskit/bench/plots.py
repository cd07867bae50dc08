"""One figure per `make bench` stage, from bench.json alone (results/bench/*.png).

Each figure shows the stage's medians with their 95% intervals as error bars,
the same numbers as the report's tables, so a reader sees at a glance what the
tables say and how wide the intervals are.

    python -m vegaskit.bench.plots results/bench/bench.json
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from vegaskit.analysis.plots import plt, save
from vegaskit.bench import emulator
from vegaskit.bench import tracing as tracing_stage


def _med_err(xs: list[dict], scale: float = 1.0) -> tuple[list[float], list[list[float]]]:
    """Medians, and their distances to [low, high] as matplotlib's yerr wants them."""
    med = [scale * x["median"] for x in xs]
    return med, [[m - scale * x["low"] for m, x in zip(med, xs)],
                 [scale * x["high"] - m for m, x in zip(med, xs)]]


def _bars(ax, labels: list[str], xs: list[dict], color: str = "tab:blue") -> None:
    """Medians as bars with [low, high] error bars."""
    med, err = _med_err(xs)
    ax.bar(labels, med, yerr=err, capsize=4, color=color)
    ax.tick_params(axis="x", labelrotation=20)


def opcost(c: dict, out: Path) -> None:
    ccs = list(c["per_ack_ns"])
    fig, ax = plt.subplots(figsize=(7, 3.5))
    runs = [("veth", c, "tab:blue")]
    if "path" in c:
        runs.append((f"{c['path']['delay_ms']:g} ms path", c["path"], "tab:green"))
    width = 0.8 / len(runs)
    for i, (name, d, color) in enumerate(runs):
        xs = [d["per_ack_ns"][cc] for cc in ccs]
        med, err = _med_err(xs)
        ax.bar([j + (i - (len(runs) - 1) / 2) * width for j in range(len(ccs))], med,
               width=width, yerr=err, capsize=3, color=color, label=name)
    ax.set_xticks(range(len(ccs)), ccs, rotation=20)
    ax.set_ylabel("BPF ns per ACK")
    ax.set_title("Cost per ACK, all struct_ops programs (kernel BPF statistics)")
    ax.legend(fontsize=8)
    save(fig, out)


def overhead(o: dict, out: Path) -> None:
    ccs = list(o["ratio_to_reno"])
    fig, ax = plt.subplots(figsize=(7, 3.5))
    _bars(ax, ccs, [o["ratio_to_reno"][cc] for cc in ccs])
    ax.axhline(1.0, color="k", lw=1)
    ax.set_ylim(min(0.9, *(o["ratio_to_reno"][cc]["low"] for cc in ccs)) - 0.02,
                max(1.1, *(o["ratio_to_reno"][cc]["high"] for cc in ccs)) + 0.02)
    ax.set_ylabel("CPU per GB / reno's")
    ax.set_title("Sender CPU per GB against the kernel's reno, full veth speed")
    save(fig, out)


def tracing(t: dict, out: Path) -> None:
    fig, ax = plt.subplots(figsize=(7, 3.5))
    # the settings this run has: the code-only one came later
    sets = [(k, n) for k, n in tracing_stage.SETTINGS if k in t]
    labels = [f"{name}\n{mode}" for _, name in sets for mode in ("decisions", "all")]
    bars = (("cost", "tab:orange", "throughput cost"), ("cpu_cost", "tab:purple", "CPU per GB cost"),
            ("direct_cost", "tab:green", "added CPU (BPF time + tracer)"))
    for i, (what, color, label) in enumerate(bars):
        xs = [t[key].get(what, {}).get(mode) for key, _ in sets for mode in ("decisions", "all")]
        if None in xs:
            continue
        med, err = _med_err(xs, 100)
        ax.bar([j + (i - 1) * 0.27 for j in range(len(xs))], med, width=0.27, yerr=err,
               capsize=3, color=color, label=label)
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.axhline(10, ls="--", color="k", lw=1, label="10%")
    ax.axhline(2, ls=":", color="k", lw=1, label="2%")
    ax.axhline(0, color="k", lw=0.5)
    ax.set_ylabel("cost (%)")
    ax.set_title("Tracing from inside bpf_vegas")
    ax.legend(fontsize=8)
    save(fig, out)


def linkemu(e: dict, out: Path) -> None:
    rates = list(e["error_us"])
    fig, ax = plt.subplots(figsize=(7, 3.5))
    # the testbed's policy filled, the others (decision 42) hollow beside it
    looks = [("o", "full"), ("s", "none"), ("^", "none"), ("D", "none")]
    sets = [(x, *looks[k % len(looks)], 0.06 * k) for k, x in enumerate(emulator.measured(e))]
    for x, marker, fill, shift in sets:
        name = emulator.policy_name(x)
        for i, (q, color) in enumerate((("p50", "tab:blue"), ("p99", "tab:orange"),
                                        ("max", "tab:red"))):
            med, err = _med_err([x["error_us"][r][q] for r in rates])
            ax.errorbar([j + (i - 1) * 0.2 + shift for j in range(len(rates))], med, yerr=err,
                        fmt=marker, fillstyle=fill, capsize=3, color=color,
                        label=f"error {q}, {name}")
    ax.set_xticks(range(len(rates)), [f"{int(r) / 1e6:g} Mbit/s" for r in rates])
    ax.axhline(200, ls="--", color="k", lw=1, label="200 us")
    ax.set_yscale("symlog", linthresh=10)    # a max of milliseconds beside a p50 of tens of us
    ax.set_ylabel("delay error (us)")
    ax.set_title(f"linkemu per-packet delay error; highest rate "
                 f"{e['max_gbit_s']['median']:.2f} Gbit/s")
    ax.legend(fontsize=7, ncol=2)
    save(fig, out)


def swap(w: dict, out: Path) -> None:
    sizes = w["sizes"]
    n = [z["connections"] for z in sizes]
    med, err = _med_err([z["move_ms"] for z in sizes])
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.errorbar(n, med, yerr=err, fmt="o-", capsize=4)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("established connections moved")
    ax.set_ylabel("move (ms)")
    ax.set_title(f"vegasctl swap, {w['pair'][0]} <-> {w['pair'][1]}")
    save(fig, out)


def flows(f: dict, out: Path) -> None:
    counts = f["counts"]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for cc, color in (("bpf_vegas", "tab:blue"), ("reno", "tab:gray")):
        xs = [f["cpu_s_per_gb"][cc][str(k) if str(k) in f["cpu_s_per_gb"][cc] else k]
              for k in counts]
        med, err = _med_err(xs)
        ax.errorbar(counts, med, yerr=err, fmt="o-", capsize=4, color=color, label=cc)
    ax.set_xscale("log")
    ax.set_xlabel("flows at once")
    ax.set_ylabel("host CPU s per GB")
    ax.set_title("Cost against the number of flows")
    ax.legend(fontsize=8)
    save(fig, out)


STAGE_PLOTS = {"opcost": opcost, "overhead": overhead, "tracing": tracing, "linkemu": linkemu,
               "swap": swap, "flows": flows}


def write(r: dict, outdir: Path) -> list[Path]:
    """A PNG per stage that has figures; the paths written."""
    done = []
    for name, fn in STAGE_PLOTS.items():
        if r.get(name):
            fn(r[name], outdir / f"{name}.png")
            done.append(outdir / f"{name}.png")
    return done


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m vegaskit.bench.plots BENCH.json", file=sys.stderr)
        return 2
    try:
        r = json.loads(Path(argv[0]).read_text())
        for p in write(r, Path(argv[0]).parent):
            print(p)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"bench plots: {argv[0]}: not a bench.json ({e!r})", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
