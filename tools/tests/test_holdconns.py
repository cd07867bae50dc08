"""holdconns, the swap stage's connection holder: a controller that is not registered
is one line naming it (the bench's swap stage reports that line), not a traceback."""
import subprocess
import sys


def test_unregistered_controller_is_one_line():
    p = subprocess.run([sys.executable, "-m", "vegaskit.testbed.holdconns", "client",
                        "--addr", "127.0.0.1", "--ports", "9", "--conns", "1",
                        "--cc", "vk_not_registered"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 1
    assert p.stderr.strip().splitlines() == [
        "holdconns: congestion control 'vk_not_registered' is not registered "
        "(net.ipv4.tcp_available_congestion_control)"]
