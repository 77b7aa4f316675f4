"""The benchmark script runs (quick mode) and prints a row for every target."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "run.py"


def test_benchmark_runs_in_quick_mode(tmp_path):
    """`python bench/run.py --quick` exits 0 and reports a row for each target."""
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for label in (
        "1. per-call overhead",
        "2a. web_search",
        "2b. web_fetch",
        "3a. warm connections: Kagi",
        "3b. warm connections: Exa",
        "3c. warm connections: direct",
        "4a. start-up: our modules",
        "4b. start-up inside llm",
        "5a. truncate_head",
        "5b. truncate_head",
    ):
        assert label in proc.stdout
    assert "quick mode: targets not enforced" in proc.stdout
