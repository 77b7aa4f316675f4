"""pi-web-tools team bench: two ``pi-web mcp --http`` replicas behind a loopback round robin,
with and without a shared state on a real ``redis-server`` (started on a free loopback port).

``python bench/team.py`` measures three things and prints a table for each:

1. **downloads**: N users (``--users``, default 8) read the same long page to its end, window
   by window, every call on a new connection (so the round robin alternates the replicas):
   how many times the page is downloaded (goal with the shared state: once);
2. **limits**: clients call ``web_search`` (fresh, so every call is a provider call) through the
   round robin, ``--calls`` in all, with ``"limits": {"providers": {"kagi": "<L>/minute"}}``:
   how many calls reach the provider within the minute (goal: never more than the limit plus
   one per replica in flight);
3. **latency**: a cached page read in this process, through ``web_fetch`` and through the
   cache alone, from Redis against the disk cache (goal: at most 2 ms more at p50 on loopback).

``--quick`` makes it small and leaves out the baseline rows (the test suite runs it). Exits 1 when a goal is missed (timings
never fail ``--quick``).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for path in (str(HERE), str(ROOT)):
    if path not in sys.path:
        sys.path.insert(0, path)

from fakes import FakeAPI  # noqa: E402
from load import KEY, _serve_http, call_tool  # noqa: E402

from tests.support.redis_server import MISSING, RedisServer  # noqa: E402

#: The long page every user reads to its end (about 60,000 characters).
PAGE = "\n".join(f"Line {i}: a long page that a whole team reads to its end." for i in range(1000))
WINDOW = 6000


class RoundRobin:
    """A loopback TCP proxy handing each new connection to the next of *ports* in turn."""

    def __init__(self, ports: list[int]):
        self.ports = ports
        self.turn = 0
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self.server.settimeout(0.2)
        while not self.stop.is_set():
            try:
                client, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            port = self.ports[self.turn % len(self.ports)]
            self.turn += 1
            try:
                upstream = socket.create_connection(("127.0.0.1", port))
            except OSError:
                client.close()
                continue
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.stop.set()
        self.server.close()


class Team:
    """*replicas* servers (each with a cache folder of its own, as on separate machines), the
    shared state when *redis_url* is given, and the round robin in front of them."""

    def __init__(self, agent: Path, replicas: int, redis_url: str | None):
        self.procs = []
        ports = []
        for n in range(replicas):
            env = {"XDG_CACHE_HOME": str(agent / f"cache-{n}")}
            if redis_url:
                env["PI_WEB_STATE"] = redis_url
            # Behind the balancer, clients name its address: the replicas allow it.
            proc, port = _serve_http(agent, env=env, args=("--allow-host", "127.0.0.1"))
            self.procs.append(proc)
            ports.append(port)
        self.balancer = RoundRobin(ports)

    def call(self, index: int, name: str, arguments: dict) -> tuple[bool, float, str, dict]:
        return call_tool(self.balancer.port, index, name, arguments)

    def close(self) -> None:
        self.balancer.close()
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(15)
            except Exception:  # noqa: BLE001
                proc.kill()


def _config(agent: Path, url: str, limits: dict | None = None) -> None:
    path = agent / "web-search.json"
    config: dict = {
        "defaultProvider": "kagi",
        "providers": [
            {
                "name": "kagi",
                "type": "kagi",
                "apiKey": KEY,
                "options": {"baseUrl": f"{url}/api/v0", "apiVersion": "v0"},
            },
            {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}},
        ],
    }
    if limits:
        config["limits"] = limits
    path.write_text(json.dumps(config))
    path.chmod(0o600)


def _read_to_the_end(team: Team, user: int, url: str) -> tuple[int, int, list[str]]:
    """One user reads *url* window by window: (windows read, characters, failures)."""
    call: dict | None = {"urls": [url], "text_max_characters": WINDOW}
    windows, characters, failures = 0, 0, []
    while call is not None and windows < 100:
        ok, _, why, result = team.call(user * 1000 + windows, "web_fetch", call)
        windows += 1
        if not ok:
            failures.append(why)
            break
        text = result["content"][0]["text"]
        last = text.rstrip().splitlines()[-1]
        characters = int(last.split("–", 1)[1].split(" ", 1)[0]) if "–" in last else len(text)
        call = None
        if "Next: web_fetch " in last:
            call = json.loads(last.split("Next: web_fetch ", 1)[1].rstrip("]"))
            call.setdefault("text_max_characters", WINDOW)
        if "changed since" in text:
            failures.append("a window said the page changed")
    return windows, characters, failures


def downloads(redis: RedisServer | None, users: int, replicas: int) -> dict:
    with (
        tempfile.TemporaryDirectory() as folder,
        FakeAPI(0.05, {"/long": (PAGE.encode(), "text/plain")}) as fake,
    ):
        agent = Path(folder)
        _config(agent, fake.url)
        if redis is not None:
            redis.client().flushall()
        team = Team(agent, replicas, redis.url if redis else None)
        try:
            team.call(0, "web_search", {"queries": ["warm up"]})  # imports, on both replicas
            team.call(1, "web_search", {"queries": ["warm up"]})
            start = time.perf_counter()
            with ThreadPoolExecutor(users) as pool:
                outcomes = list(
                    pool.map(lambda u: _read_to_the_end(team, u, f"{fake.url}/long"), range(users))
                )
            wall = time.perf_counter() - start
        finally:
            team.close()
        return {
            "users": users,
            "windows": sum(o[0] for o in outcomes),
            "whole": sum(1 for o in outcomes if o[1] >= len(PAGE) - 10),
            "downloads": fake.requests["/long"],
            "failures": [f for o in outcomes for f in o[2]],
            "wall": wall,
        }


def limits(
    redis: RedisServer | None,
    calls: int,
    limit: int,
    replicas: int,
    clients: int,
    setting: str = "providers",
) -> dict:
    """*calls* fresh searches through the round robin, *clients* at once, with a limit of
    *limit* a minute on the provider (``providers``) or on the one caller (``perToken``)."""
    rates = f"{limit}/minute"
    with tempfile.TemporaryDirectory() as folder, FakeAPI(0.02) as fake:
        agent = Path(folder)
        chosen = {"providers": {"kagi": rates}} if setting == "providers" else {"perToken": rates}
        _config(agent, fake.url, chosen)
        if redis is not None:
            redis.client().flushall()
        team = Team(agent, replicas, redis.url if redis else None)
        try:
            start = time.perf_counter()
            with ThreadPoolExecutor(clients) as pool:
                outcomes = list(
                    pool.map(
                        lambda i: team.call(
                            i, "web_search", {"queries": [f"limit {i}"], "fresh": True}
                        ),
                        range(calls),
                    )
                )
            wall = time.perf_counter() - start
        finally:
            team.close()
        said = ("team's limit", "Rate limit:")
        refused = [o for o in outcomes if not o[0] and any(s in o[2] for s in said)]
        other = [o[2] for o in outcomes if not o[0] and not any(s in o[2] for s in said)]
        return {
            "calls": calls,
            "reached": fake.requests["/api/v0/search"],
            "refused": len(refused),
            "other_failures": other,
            "wall": wall,
        }


def _p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def latency(redis: RedisServer | None, reads: int) -> dict:
    """p50 of a cached read in this process: the disk cache, then Redis."""
    import pi_web_tools.plugin
    from pi_hostspec import Host, get_plugin_manager
    from pi_web_tools import testing
    from pi_web_tools.runtime import cache

    big = "\n".join(f"Line {i} of a 100 KB page kept in the cache." for i in range(2300))
    found: dict = {}
    with (
        tempfile.TemporaryDirectory() as folder,
        FakeAPI(0.0, {"/big": (big.encode(), "text/plain")}) as fake,
    ):
        agent = Path(folder)
        os.environ["PI_CODING_AGENT_DIR"] = str(agent)
        os.environ["XDG_CACHE_HOME"] = str(agent / "cache")
        _config(agent, fake.url)
        for where in ("disk", "redis"):
            if where == "redis":
                if redis is None:
                    break
                redis.client().flushall()
                os.environ["PI_WEB_STATE"] = redis.url
            testing.reset()
            host = Host(get_plugin_manager(load_entrypoints=False, plugins=[pi_web_tools.plugin]))
            args = {"urls": [f"{fake.url}/big"], "text_max_characters": 2000}
            host.call("web_fetch", args)  # fetched once, then always from the cache
            settings = cache.CacheSettings()
            cache.put(settings, "web_fetch", "bench-key", {"text": big})
            tool, alone = [], []
            for _ in range(reads):
                start = time.perf_counter()
                result = host.call("web_fetch", args)
                tool.append(time.perf_counter() - start)
                assert result.details["urls"][0].get("cache"), "not a cache hit"
                start = time.perf_counter()
                cache.get(settings, "web_fetch", "bench-key")
                alone.append(time.perf_counter() - start)
            found[where] = {"tool": _p50(tool), "cache": _p50(alone)}
        os.environ.pop("PI_WEB_STATE", None)
        testing.reset()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a small run (the test suite's)")
    parser.add_argument("--users", type=int, default=8, help="users reading the long page")
    parser.add_argument("--calls", type=int, default=120, help="web_search calls for the limit")
    parser.add_argument("--limit", type=int, default=30, help="the provider's limit per minute")
    options = parser.parse_args(argv)
    if MISSING:
        print(f"bench/team.py needs a Redis server: {MISSING}")
        return 1
    users, calls, limit, reads = (
        (3, 20, 8, 30) if options.quick else (options.users, options.calls, options.limit, 300)
    )
    replicas = 2
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        os.environ.pop(name, None)
    os.environ.pop("PI_WEB_STATE", None)
    ok = True
    with RedisServer() as redis:
        modes: list[tuple[str, RedisServer | None]] = [("shared state (Redis)", redis)]
        if not options.quick:  # the baseline: each replica keeps its own state
            modes.insert(0, ("each replica its own", None))
        print(f"{replicas} replicas of pi-web mcp --http behind a loopback round robin")
        print(
            f"\n1. {users} users read one {len(PAGE):,}-character page to its end ({WINDOW:,} a window)"
        )
        print(
            f"{'':26}{'windows':>9}{'read whole':>12}{'downloads':>11}{'failures':>10}{'wall s':>8}"
        )
        for label, server in modes:
            row = downloads(server, users, replicas)
            print(
                f"{label:26}{row['windows']:>9}{row['whole']:>12}{row['downloads']:>11}"
                f"{len(row['failures']):>10}{row['wall']:>8.2f}"
            )
            if server is not None:
                ok &= row["downloads"] == 1 and not row["failures"] and row["whole"] == users
        for number, setting, named in (
            ("2a", "providers", "limits.providers.kagi"),
            ("2b", "perToken", "limits.perToken"),
        ):
            print(
                f"\n{number}. {calls} web_search calls (fresh) by one caller, 8 at once, "
                f"{named} {limit}/minute"
            )
            print(
                f"{'':26}{'calls':>7}{'reached kagi':>14}{'refused':>9}{'other':>7}{'goal':>8}"
                f"{'wall s':>8}"
            )
            for label, server in modes:
                row = limits(server, calls, limit, replicas, 8, setting)
                goal = limit + replicas
                print(
                    f"{label:26}{row['calls']:>7}{row['reached']:>14}{row['refused']:>9}"
                    f"{len(row['other_failures']):>7}{'<= ' + str(goal):>8}{row['wall']:>8.2f}"
                )
                if server is not None:
                    ok &= row["reached"] <= goal and not row["other_failures"]
        print(f"\n3. a cached read in this process, p50 of {reads} (ms)")
        found = latency(redis, reads)
        print(f"{'':26}{'web_fetch':>11}{'cache.get':>11}")
        for where in ("disk", "redis"):
            print(f"{where:26}{found[where]['tool']:>11.2f}{found[where]['cache']:>11.2f}")
        added = found["redis"]["tool"] - found["disk"]["tool"]
        print(
            f"{'added by Redis':26}{added:>+11.2f}"
            f"{found['redis']['cache'] - found['disk']['cache']:>+11.2f}   (goal: <= +2 ms)"
        )
        if not options.quick:
            ok &= added <= 2.0
    print(
        f"\npython {sys.version.split()[0]}, {os.cpu_count()} cores{', quick mode' if options.quick else ''}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
