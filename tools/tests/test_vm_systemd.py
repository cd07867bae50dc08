"""The verdicts of `make vm-systemd` from what a guest printed (the boots themselves
need qemu and minutes of TCG: `make vm-systemd`, never `make test`)."""
from vegaskit.cli.vm_systemd import expectations
from vegaskit.vm.systemd_boot import Boot

GOOD_1 = {
    "pid1": "systemd", "boot.active": "active", "boot.available": "reno,cubic,vegas_a,vegas_lowq",
    "boot.default": "vegas_a", "conn.cc_at_boot": "vegas_a", "conn.carries_at_boot": "True",
    "reload_bad.rc": "1", "reload_bad.active": "active",
    "reload_bad.available": "reno,cubic,vegas_a,vegas_lowq", "reload_bad.default": "vegas_a",
    "reload.rc": "0", "reload.default": "vegas_a", "reload.lowq": "2,4",
    "stop.rc": "0", "stop.active": "inactive", "stop.available": "reno,cubic",
    "stop.default": "cubic", "conn.cc_after_stop": "cubic", "conn.carries_after_stop": "True",
    "start.rc": "0", "start.available": "reno,cubic,vegas_a,vegas_lowq",
    "start.default": "vegas_a", "start.lowq": "2,4", "conn.carries_after_start": "True",
    "done": "1",
}
GOOD_2 = {"pid1": "systemd", "boot.active": "active",
          "boot.available": "reno,cubic,vegas_a,vegas_lowq", "boot.default": "vegas_a",
          "done": "2"}


def verdicts(b1: dict, b2: dict | None) -> dict[str, bool]:
    boots = [Boot(1, 0, 1.0, b1)] + ([Boot(2, 0, 1.0, b2)] if b2 is not None else [])
    return dict(expectations(boots))


def test_two_good_boots_hold_every_claim():
    assert all(verdicts(GOOD_1, GOOD_2).values())


def test_each_missing_or_wrong_line_fails_its_claim():
    for key in GOOD_1:
        v = verdicts({k: x for k, x in GOOD_1.items() if k != key}, GOOD_2)
        assert not all(v.values()), f"dropping {key} went unnoticed"
    for key, bad in [("stop.available", "reno,cubic,vegas_lowq"), ("conn.cc_after_stop", "vegas_a"),
                     ("reload_bad.rc", "0"), ("reload_bad.default", "vegas_lowq"),
                     ("reload.lowq", "1,3"),
                     ("conn.carries_after_stop", "False"), ("boot.default", "cubic")]:
        assert not all(verdicts({**GOOD_1, key: bad}, GOOD_2).values()), key


def test_a_second_boot_that_never_came_fails():
    v = verdicts(GOOD_1, None)
    assert not v["boot 2: the controllers came back, with the file's default"]
    v = verdicts(GOOD_1, {**GOOD_2, "boot.available": "reno,cubic"})
    assert not v["boot 2: the controllers came back, with the file's default"]


def test_an_error_in_the_guest_fails():
    assert not all(verdicts({**GOOD_1, "error": "OSError: x"}, GOOD_2).values())
