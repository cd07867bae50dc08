"""A batch of runs at once (cli/results.py execute()) stopped by a SIGINT sent
to its parent alone (`kill -INT`, not a terminal's Ctrl-C to the whole group):
the runs under way are interrupted so they remove what they started, the
workers waiting for a run leave quietly, and the parent returns.

The runs are stand-ins that sleep (the pool, the signals and the flag are the
real ones); the kernel tests stop real runs."""
import signal
import subprocess
import sys
import textwrap

BATCH = textwrap.dedent(r"""
    import os, sys, time, types
    from pathlib import Path
    from vegaskit.cli import results

    def run(r, outdir, job, plots):         # a run: long, and it cleans up when told
        try:
            os.write(1, b"started\n")      # one write: the lines of two workers stay whole
            time.sleep(60)
        except KeyboardInterrupt:
            os.write(1, b"cleaned\n")
            raise

    class Scen:
        name, path = "s", Path("/nonexistent")
        def reps(self, profile): return 1
        def run(self, name, profile, rep=0): return types.SimpleNamespace(trace="x")

    results.runner.execute = run
    results.claim_slot = lambda: (1, -1)
    results.Scenario = types.SimpleNamespace(load=lambda p: Scen())
    try:
        results.execute([(Scen(), ["a", "b"])], "full", Path(sys.argv[1]), None, 3, whole=True)
    except KeyboardInterrupt:
        print("parent unwound", flush=True)
""")


def test_sigint_to_the_parent_alone_interrupts_the_runs_and_idle_workers_stay_quiet(tmp_path):
    p = subprocess.Popen([sys.executable, "-c", BATCH, str(tmp_path)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # 3 workers, 2 runs: one worker waits for a run that never comes
        assert [p.stdout.readline().strip() for _ in range(2)] == ["started"] * 2
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        p.kill()
        p.wait()
    assert out.split() == ["cleaned", "cleaned", "parent", "unwound"], (out, err)
    assert "Traceback" not in err, err
    assert p.returncode == 0
