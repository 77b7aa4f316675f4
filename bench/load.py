"""pi-web-tools load check: many processes, and many calls in one process, against loopback fakes.

``python bench/load.py`` runs 20 processes x 20 calls at once, then 1,000 calls in one process,
and checks that every call succeeds and that memory, threads and file descriptors do not grow
(measured after a warm-up, so warm sessions, the page cache and extraction workers are counted
once). ``--quick`` does 4 processes x 5 calls and 200 calls (the test suite runs it). Exits 1
when a check fails. Linux only (it reads /proc).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fakes import FakeAPI  # noqa: E402

KEY = "load-key-0123456789"
#: Growth allowed between the warm-up and the end of the one-process run.
MAX_RSS_GROWTH_MB = 10.0


def _config(agent: Path, url: str) -> None:
    path = agent / "web-search.json"
    providers = [
        {
            "name": "kagi",
            "type": "kagi",
            "apiKey": KEY,
            "options": {"baseUrl": f"{url}/api/v0", "apiVersion": "v0"},
        },
        {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}},
    ]
    path.write_text(json.dumps({"defaultProvider": "kagi", "providers": providers}))
    path.chmod(0o600)


def _calls(url: str, count: int, offset: int = 0):
    """*count* tool calls: searches, text pages and HTML pages (through extraction), uncached."""
    for i in range(offset, offset + count):
        kind = i % 3
        if kind == 0:
            yield "web_search", {"queries": [f"load {i}"]}
        elif kind == 1:
            yield "web_fetch", {"urls": [f"{url}/page/{i}", f"{url}/page/{i}b"], "fresh": True}
        else:
            yield "web_fetch", {"urls": [f"{url}/html/{i}"], "fresh": True}


def _usage() -> dict:
    """This process's resident memory (MB), threads and open file descriptors."""
    status = Path("/proc/self/status").read_text()
    rss = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
    return {
        "rss_mb": rss / 1024,
        "threads": threading.active_count(),
        "fds": len(os.listdir("/proc/self/fd")),
    }


def run_calls(url: str, count: int, warmup: int) -> dict:
    """Run *count* calls in this process; usage after *warmup* calls and at the end."""
    import pi_web_tools.plugin
    from pi_hostspec import Host, get_plugin_manager

    host = Host(get_plugin_manager(load_entrypoints=False, plugins=[pi_web_tools.plugin]))
    failures = []
    before = None
    start = time.perf_counter()
    for index, (name, args) in enumerate(_calls(url, count)):
        if index == warmup:
            time.sleep(0.2)  # let finished helper threads exit before counting
            before = _usage()
        result = host.call(name, args)
        if result.is_error:
            failures.append(result.text[:200])
    elapsed = time.perf_counter() - start
    time.sleep(0.2)
    return {
        "calls": count,
        "failures": failures,
        "seconds": elapsed,
        "before": before,
        "after": _usage(),
    }


def _child(url: str, count: int) -> None:
    print(json.dumps(run_calls(url, count, warmup=min(count - 1, 2))))


def many_processes(url: str, processes: int, calls: int) -> dict:
    """*processes* processes at once, each making *calls* calls."""
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--child", url, str(calls)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    outcomes = []
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        outcomes.append(json.loads(out) if proc.returncode == 0 else {"failures": ["crashed"]})
    failures = sum(len(o["failures"]) for o in outcomes)
    peak = max((o.get("after", {}).get("rss_mb", 0) for o in outcomes), default=0)
    return {"processes": processes, "calls": calls, "failures": failures, "peak_rss_mb": peak}


def main(argv: list[str] | None = None) -> int:
    """Run both checks, print their numbers, exit 1 when one fails."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smaller run (the test suite's)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.child:
        _child(options.child[0], int(options.child[1]))
        return 0
    processes, per_process, in_one = (4, 5, 200) if options.quick else (20, 20, 1000)
    with tempfile.TemporaryDirectory() as agent:
        os.environ["PI_CODING_AGENT_DIR"] = agent
        os.environ["XDG_CACHE_HOME"] = str(Path(agent, "cache"))
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
            os.environ.pop(name, None)
        with FakeAPI(latency=0.0) as fake:
            _config(Path(agent), fake.url)
            start = time.perf_counter()
            spread = many_processes(fake.url, processes, per_process)
            spread["seconds"] = time.perf_counter() - start
            single = run_calls(fake.url, in_one, warmup=min(100, in_one // 4))
    before, after = single["before"], single["after"]
    growth = after["rss_mb"] - before["rss_mb"]
    checks = [
        (
            f"{processes} processes x {per_process} calls",
            spread["failures"] == 0,
            f"{spread['failures']} failed, {spread['seconds']:.1f} s, "
            f"peak RSS {spread['peak_rss_mb']:.0f} MB per process",
        ),
        (
            f"{in_one} calls in one process: all succeed",
            not single["failures"],
            f"{len(single['failures'])} failed, {single['seconds']:.1f} s "
            f"({single['seconds'] / in_one * 1000:.1f} ms per call)",
        ),
        (
            "  memory does not grow",
            growth <= MAX_RSS_GROWTH_MB,
            f"RSS {before['rss_mb']:.1f} -> {after['rss_mb']:.1f} MB (+{growth:.1f}; "
            f"limit +{MAX_RSS_GROWTH_MB:g})",
        ),
        (
            "  threads do not grow",
            after["threads"] <= before["threads"],
            f"{before['threads']} -> {after['threads']}",
        ),
        (
            "  file descriptors do not grow",
            after["fds"] <= before["fds"],
            f"{before['fds']} -> {after['fds']}",
        ),
    ]
    width = max(len(name) for name, _, _ in checks)
    for name, ok, note in checks:
        print(f"{name.ljust(width)}  {'ok' if ok else 'FAILED':6}  {note}")
    if single["failures"]:
        print("first failure:", single["failures"][0])
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores{', quick mode' if options.quick else ''}"
    )
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
