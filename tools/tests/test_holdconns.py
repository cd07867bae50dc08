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


def test_more_sockets_than_the_file_limit_allows_is_one_line():
    """fs.nr_open bounds every process's limit, CAP_SYS_RESOURCE or not."""
    nr_open = int(open("/proc/sys/fs/nr_open").read())
    p = subprocess.run([sys.executable, "-c",
                        f"from vegaskit.testbed import holdconns\n"
                        f"holdconns.raise_nofile({nr_open})\n"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 1
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"holdconns: {nr_open} sockets need {nr_open + 64} files, more than this process may open")
