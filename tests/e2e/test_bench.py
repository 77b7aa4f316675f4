"""The benchmark script runs (quick mode) and prints a row for every target."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import pytest

from tests.support import ROOT

BENCH = ROOT / "bench" / "run.py"


def test_benchmark_runs_in_quick_mode(tmp_path):
    """`python bench/run.py --quick` exits 0 and reports each target (the MCP start-up row without the fetch server: skipped)."""
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
        "7. web_fetch from the cache",
        "10a. web_fetch question on a cached 100 KB page",
        "10b. a further question on that page",
        "6. MCP start to first tools/list",
        "6b. MCP start to first answer",
        "11a. a GitHub file through web_fetch",
        "11b. 5 GitHub and package pages",
        "11c. a 130-comment GitHub issue",
        "12a. web_search fusion of 3 providers",
        "12b. search failover after a 429",
        "12c. search failover from SearXNG's 403",
        "12d. 5-query call: URLs listed more than once",
    ):
        assert label in proc.stdout
    assert "quick mode: targets not enforced" in proc.stdout
    assert "fetch server skipped: run with --fetch to compare" in proc.stdout


def test_mcp_startup_row_is_skipped_when_the_fetch_server_cannot_be_installed(
    tmp_path, monkeypatch
):
    """When mcp-server-fetch cannot be installed, the start-up row says so and is a skip (no
    ratio, never a failure), still timing our own server."""
    spec = importlib.util.spec_from_file_location("bench_run", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(empty))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    rows = bench.bench_mcp_startup(tmp_path, 1, tmp_path / "fetch-venv")
    assert [row["target"][:3] for row in rows] == ["6. ", "6b."]
    for row in rows:
        assert row["measured"] is None
        assert "fetch server skipped: installing mcp-server-fetch failed:" in row["note"]
        assert row["note"].startswith("ours ") and " ms" in row["note"]


EXTRACT = BENCH.parent / "extract.py"
SAMPLE = BENCH.parent / "sample-data"


def test_extraction_benchmark_runs_in_quick_mode_on_the_committed_sample(tmp_path):
    """`python bench/extract.py --quick` reads pages through web_fetch and scores them with the
    data sets' own evaluate.py, next to trafilatura, on the sample committed in the repository
    (so a fresh clone runs it with nothing beside it)."""
    proc = subprocess.run(
        [sys.executable, str(EXTRACT), "--quick", "--data", str(SAMPLE)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for label in ("Zyte articles (F1)", "WCXB forum (word F1)", "extraction time vs trafilatura"):
        assert label in proc.stdout
    assert "pages through web_fetch" in proc.stdout


def test_question_benchmark_runs_in_quick_mode_on_the_committed_sample(tmp_path):
    """`python bench/question.py --quick` asks the questions of the committed sample pages
    through web_fetch, from one download per page (a fresh clone runs it with nothing beside
    it)."""
    proc = subprocess.run(
        [sys.executable, str(BENCH.parent / "question.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "validation " in proc.stdout and "quick mode: goals not enforced" in proc.stdout
    asked, pages, cached = map(
        int,
        re.search(
            r"(\d+) questions on (\d+) pages in \d+ s \((\d+) answered", proc.stdout
        ).groups(),
    )
    assert (asked, pages, cached) == (24, 8, 24)


@pytest.mark.redis
def test_the_team_bench_runs_in_quick_mode(tmp_path, redis_server):
    """`python bench/team.py --quick`: two replicas behind a round robin download the page once
    and hold the provider's limit with the shared state (its own redis-server on loopback)."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "team.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = re.findall(r"^shared state \(Redis\)\s+(.*)$", proc.stdout, re.M)
    assert len(rows) == 3, proc.stdout
    windows, whole, downloads, failures, _ = rows[0].split()
    assert (whole, downloads, failures) == ("3", "1", "0")
    for row in rows[1:]:  # the provider's limit, the caller's limit
        calls, reached, refused, other, _, goal, _ = row.split()
        assert int(reached) <= int(goal) and other == "0" and int(refused) > 0
    assert "added by Redis" in proc.stdout
