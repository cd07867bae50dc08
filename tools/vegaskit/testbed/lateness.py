"""How late the link emulator released packets, as a run records it (docs/DESIGN.md
§7.1): a stalled emulator adds delay that no controller caused, and a delay-based
one reads it as queue. linkemu counts it per direction (late_max_us, late_1ms) and
logs each release 1 ms or more late with its time (the qlog's late events)."""
from __future__ import annotations

from .linkemu import QEvent

# A flow's first seconds: its handshake and slow start, where it usually takes its
# smallest RTT sample, the base a Vegas then keeps for the whole run.
EARLY_S = 5.0


def emulator_lateness(links: list[dict]) -> dict:
    """The latest release and the releases 1 ms or more late, over every direction of
    every link's final counters. None where the emulator did not count them."""
    dirs = [ln[d] for ln in links for d in ("ab", "ba") if "late_max_us" in ln.get(d, {})]
    if not dirs:
        return {"late_max_ms": None, "late_1ms": None}
    return {"late_max_ms": round(max(d["late_max_us"] for d in dirs) / 1000, 3),
            "late_1ms": sum(d["late_1ms"] for d in dirs)}


def release_late_means(links: dict[str, dict]) -> dict[str, dict[str, float]]:
    """Each link's mean release lateness (us), per direction, from its final counters:
    delay the emulator adds to every packet, which a delay-based sender reads as queue
    above the least it saw. Links whose emulator did not count it are left out."""
    return {name: {d: st[d]["late_mean_us"] for d in ("ab", "ba") if "late_mean_us" in st.get(d, {})}
            for name, st in links.items() if any("late_mean_us" in st.get(d, {}) for d in ("ab", "ba"))}


def late_releases(events: dict[str, list[QEvent]], t0_us: float) -> list[tuple]:
    """(t_s since t0, link, dir, late_ms) of every logged late release, in time order."""
    return sorted((round((e.t_us - t0_us) / 1e6, 6), name, e.dir, e.late_us / 1000)
                  for name, evs in events.items() for e in evs if e.event == "late")


def early_max(late: list[tuple], starts) -> float:
    """The latest release (ms) in the EARLY_S seconds after any flow's start (seconds
    since t0), of those late_releases() gives: a stall there is no transient. 0 when
    none was 1 ms late then."""
    return max((ms for t, _, _, ms in late if any(s <= t < s + EARLY_S for s in starts)),
               default=0.0)
