"""The load check runs (quick mode) and passes: every call succeeds, and memory, threads and
file descriptors do not grow."""

from __future__ import annotations

import subprocess
import sys

from tests.support import ROOT

LOAD = ROOT / "bench" / "load.py"


def test_load_check_passes_in_quick_mode(tmp_path):
    """`python bench/load.py --quick` exits 0 with a row for each check."""
    proc = subprocess.run(
        [sys.executable, str(LOAD), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for label in ("processes x", "calls in one process", "memory", "threads", "file descriptors"):
        assert label in proc.stdout
