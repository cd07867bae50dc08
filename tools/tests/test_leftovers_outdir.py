"""One command at a time writes a results directory (leftovers.claim_outdir): a
second is refused with one line, and the lock goes with its holder."""
from __future__ import annotations

import os

import pytest

from vegaskit.cli import results
from vegaskit.testbed import leftovers


def test_a_second_writer_of_the_same_directory_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(leftovers, "LEDGER_DIR", tmp_path / "ledger")
    fd = leftovers.claim_outdir(tmp_path / "out")
    try:
        with pytest.raises(RuntimeError, match="another run is writing .*out; wait"):
            leftovers.claim_outdir(tmp_path / "out" / ".." / "out")   # the same, spelt apart
        os.close(leftovers.claim_outdir(tmp_path / "other"))          # another directory: free
    finally:
        os.close(fd)
    os.close(leftovers.claim_outdir(tmp_path / "out"))               # given back on close


def test_execute_refuses_before_touching_anything(tmp_path, monkeypatch):
    monkeypatch.setattr(leftovers, "LEDGER_DIR", tmp_path / "ledger")
    monkeypatch.setattr(results, "_execute",
                        lambda *a, **k: pytest.fail("ran beside another writer"))
    fd = leftovers.claim_outdir(tmp_path / "out")
    try:
        with pytest.raises(RuntimeError, match="another run is writing"):
            results.execute([], "full", tmp_path / "out", None, 1, whole=True)
    finally:
        os.close(fd)
