"""tcpprobe.available() is a kernel feature probe: False only when tracefs is there and
the kernel has no tcp:tcp_probe; tracefs not mounted is an error (make deps mounts it),
so the tests that skip on False never skip for the host's own setup."""
import pytest

from vegaskit.testbed import tcpprobe


def test_tracefs_not_mounted_is_an_error_not_a_missing_tracepoint(tmp_path, monkeypatch):
    monkeypatch.setattr(tcpprobe, "TRACEFS", tmp_path)
    fs = tmp_path / "filesystems"
    monkeypatch.setattr(tcpprobe, "FILESYSTEMS", fs)
    fs.write_text("nodev\tsysfs\nnodev\ttracefs\n")
    with pytest.raises(RuntimeError, match="not mounted"):
        tcpprobe.available()
    fs.write_text("nodev\tsysfs\n")           # a kernel built without tracefs lacks it
    assert tcpprobe.available() is False
    (tmp_path / "events" / "tcp").mkdir(parents=True)
    assert tcpprobe.available() is False
    (tmp_path / "events" / "tcp" / "tcp_probe").mkdir()
    assert tcpprobe.available() is True
