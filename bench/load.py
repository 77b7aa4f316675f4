"""pi-web-tools load check: many processes, and many calls in one process, against loopback fakes.

``python bench/load.py`` runs 20 processes x 20 calls at once, then 1,000 calls in one process,
and checks that every call succeeds and that memory, threads and file descriptors do not grow
(measured after a warm-up, so warm sessions, the page cache and extraction workers are counted
once). ``--quick`` does 4 processes x 5 calls and 200 calls (the test suite runs it). Exits 1
when a check fails. Linux only (it reads /proc).

``python bench/load.py --team`` runs ``bench/team.py``: two replicas behind a loopback round
robin, with and without a shared Redis (downloads, a limit held across replicas, the latency of
a cached read).

``python bench/load.py --http-idle`` measures the HTTP MCP server instead: N concurrent
authenticated clients (``--clients``, default 20) making ``--calls`` tool calls each, first with
no other connection open, then while ``--idle`` (default 150) sockets that never send a request
are held open (each one the server closes is opened again at once, as an attacker would). It
prints the calls that failed (the goal is 0) and the latency of both runs (median, p95, max) and
the overhead; it exits 1 when a call failed. ``--quick`` makes it 5 clients x 4 calls.
``--open-files 1024 --idle 1100`` gives the server a limit of 1,024 open files and holds more
idle sockets than that.
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


# --- the HTTP MCP server with idle sockets ---------------------------------------------------

TOKEN = "bench-token-" + "5" * 24
#: How long the idle sockets are held before the measured calls (beyond the 5 s head timeout).
IDLE_WARM_SECONDS = 6.0


def _serve_http(
    agent: Path,
    open_files: int | None = None,
    env: dict | None = None,
    args: tuple[str, ...] = (),
) -> tuple[subprocess.Popen, int]:
    """``pi-web mcp --http --port 0`` with a bearer token (and *open_files* as its soft and
    hard limit of open files, *env* added to the environment, *args* to the command); its
    process and port."""
    import re

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    pi_web = str(Path(sys.executable).parent / "pi-web")
    proc = subprocess.Popen(
        [pi_web, "mcp", "--http", "--port", "0", *args],
        preexec_fn=limit if open_files else None,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={
            **os.environ,
            "PI_CODING_AGENT_DIR": str(agent),
            "PI_WEB_MCP_TOKEN": TOKEN,
            **(env or {}),
        },
    )
    port: list[int] = []
    ready = threading.Event()

    def pump() -> None:
        for line in proc.stderr:
            match = re.search(r"serving \d+ tools at http://\S+?:(\d+)/mcp", line)
            if match:
                port.append(int(match.group(1)))
                ready.set()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    ready.wait(60)
    if not port:
        proc.kill()
        raise RuntimeError("pi-web mcp --http did not start")
    return proc, port[0]


def call_tool(
    port: int, index: int, name: str, arguments: dict, token: str = TOKEN
) -> tuple[bool, float, str, dict]:
    """One authenticated ``tools/call`` on a new connection: (ok, seconds, what went wrong,
    the result)."""
    import http.client

    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": index,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
    )
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
        "Authorization": f"Bearer {token}",
    }
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("POST", "/mcp", body, headers)
        response = conn.getresponse()
        data = response.read()
    except OSError as exc:
        return False, time.perf_counter() - start, f"{type(exc).__name__}: {exc}", {}
    finally:
        conn.close()
    seconds = time.perf_counter() - start
    if response.status != 200:
        return False, seconds, f"HTTP {response.status}", {}
    try:
        result = json.loads(data)["result"]
    except (ValueError, KeyError, TypeError):
        return False, seconds, "not a JSON-RPC result", {}
    if result.get("isError"):
        return False, seconds, "tool error: " + str(result.get("content"))[:120], result
    return True, seconds, "", result


def _tool_call(port: int, index: int) -> tuple[bool, float, str]:
    """One authenticated tools/call (web_search, uncached) on a new connection: (ok, seconds,
    what went wrong)."""
    ok, seconds, why, _ = call_tool(
        port, index, "web_search", {"queries": [f"idle bench {index}"], "fresh": True}
    )
    return ok, seconds, why


class IdleSockets:
    """*count* connections that never send a byte, reopened as soon as the server closes one."""

    def __init__(self, port: int, count: int):
        self.port, self.count = port, count
        self.reopened = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._hold, daemon=True)

    def _hold(self) -> None:
        import selectors
        import socket

        selector = selectors.DefaultSelector()

        def open_one() -> None:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)

        for _ in range(self.count):
            open_one()
        self.ready.set()
        while not self.stop.is_set():
            for key, _ in selector.select(timeout=0.1):
                sock = key.fileobj
                try:
                    data = sock.recv(1024)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:  # closed by the server: an attacker opens another one
                    selector.unregister(sock)
                    sock.close()
                    self.reopened += 1
                    open_one()
        for key in list(selector.get_map().values()):
            key.fileobj.close()

    def __enter__(self) -> IdleSockets:
        self.ready = threading.Event()
        self.thread.start()
        self.ready.wait(30)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(10)


def _clients(port: int, clients: int, calls: int) -> dict:
    """*clients* threads making *calls* calls each at once: failures and latencies."""
    from concurrent.futures import ThreadPoolExecutor

    def client(number: int) -> list[tuple[bool, float, str]]:
        return [_tool_call(port, number * 1000 + i) for i in range(calls)]

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        outcomes = [o for batch in pool.map(client, range(clients)) for o in batch]
    wall = time.perf_counter() - start
    latencies = sorted(seconds for _, seconds, _ in outcomes)
    failures = [why for ok, _, why in outcomes if not ok]

    def percentile(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000

    return {
        "calls": len(outcomes),
        "failures": failures,
        "wall": wall,
        "p50": percentile(0.5),
        "p95": percentile(0.95),
        "max": latencies[-1] * 1000,
    }


def http_idle(clients: int, calls: int, idle: int, open_files: int | None = None) -> int:
    """The ``--http-idle`` measurement; prints its table, returns the exit status."""
    if open_files:  # this process holds the idle sockets: it needs room for them
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = idle + clients * 4 + 256
        if soft != resource.RLIM_INFINITY and soft < wanted:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    with tempfile.TemporaryDirectory() as agent:
        os.environ["XDG_CACHE_HOME"] = str(Path(agent, "cache"))
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
            os.environ.pop(name, None)
        with FakeAPI(latency=0.0) as fake:
            _config(Path(agent), fake.url)
            proc, port = _serve_http(Path(agent), open_files)
            try:
                _clients(port, min(clients, 4), 2)  # warm-up: imports, sessions, workers
                baseline = _clients(port, clients, calls)
                with IdleSockets(port, idle) as held:
                    # Past the server's head timeout: the first sockets were closed and reopened.
                    time.sleep(IDLE_WARM_SECONDS)
                    loaded = _clients(port, clients, calls)
                    reopened = held.reopened
            finally:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
    rows = [("no idle sockets", baseline), (f"{idle} idle sockets", loaded)]
    limit = f"; server allowed {open_files} open files" if open_files else ""
    print(
        f"pi-web mcp --http: {clients} authenticated clients x {calls} tools/call "
        f"(web_search){limit}"
    )
    print(f"{'':18}{'calls':>7}{'failed':>8}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'wall s':>8}")
    for label, row in rows:
        print(
            f"{label:18}{row['calls']:>7}{len(row['failures']):>8}{row['p50']:>9.1f}"
            f"{row['p95']:>9.1f}{row['max']:>9.1f}{row['wall']:>8.2f}"
        )
    print(
        f"overhead with {idle} idle sockets: p50 {loaded['p50'] - baseline['p50']:+.1f} ms, "
        f"p95 {loaded['p95'] - baseline['p95']:+.1f} ms; idle sockets the server closed "
        f"(and the bench reopened): {reopened}"
    )
    failures = baseline["failures"] + loaded["failures"]
    if failures:
        print("first failure:", failures[0])
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    """Run both checks, print their numbers, exit 1 when one fails."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smaller run (the test suite's)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument(
        "--http-idle",
        action="store_true",
        help="measure the HTTP MCP server: authenticated clients with and without idle sockets",
    )
    parser.add_argument("--clients", type=int, default=20, help="--http-idle: concurrent clients")
    parser.add_argument("--calls", type=int, default=10, help="--http-idle: calls per client")
    parser.add_argument("--idle", type=int, default=150, help="--http-idle: idle sockets held open")
    parser.add_argument(
        "--team",
        action="store_true",
        help="two replicas behind a round robin with and without a shared Redis (bench/team.py)",
    )
    parser.add_argument(
        "--open-files",
        type=int,
        metavar="N",
        help="--http-idle: the server's limit of open files (soft and hard), e.g. 1024",
    )
    options = parser.parse_args(argv)
    if options.team:
        import team

        return team.main(["--quick"] if options.quick else [])
    if options.child:
        _child(options.child[0], int(options.child[1]))
        return 0
    if options.http_idle:
        clients, calls = (5, 4) if options.quick else (options.clients, options.calls)
        return http_idle(clients, calls, options.idle, options.open_files)
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
