"""pi-web-tools benchmark: measures each performance target against loopback fakes.

Run ``python bench/run.py`` (about a minute) for the table and a non-zero exit when a target is
missed; ``--quick`` does few repetitions and never fails on timings (the test suite runs it);
``--only 4a,4b,9`` runs only the rows named (a number names all its lettered rows).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fakes import FakeAPI  # noqa: E402

sys.path.insert(0, str(HERE.parent))  # the tests' contract-faithful fakes of the real APIs

KEY = "bench-key-0123456789"


def _median_spread(values: list[float]) -> tuple[float, float]:
    values = sorted(values)
    if len(values) < 4:
        return statistics.median(values), (values[-1] - values[0]) / 2
    q = statistics.quantiles(values, n=4)
    return statistics.median(values), (q[2] - q[0]) / 2


def _configure(agent: Path, providers: list[dict], cache: bool = False) -> None:
    """Write the config; the answer cache is off unless a row measures it (a cached answer
    would skip the very requests the other rows time)."""
    path = agent / "web-search.json"
    path.write_text(json.dumps({"providers": providers, "cache": cache}))
    path.chmod(0o600)
    from pi_web_tools.runtime import config

    config.clear_cache()


def _host():
    import pi_web_tools.plugin
    from pi_hostspec import Host, get_plugin_manager

    return Host(get_plugin_manager(load_entrypoints=False, plugins=[pi_web_tools.plugin]))


def bench_overhead(agent: Path, reps: int) -> dict:
    """web_search through the host vs a bare warm requests.Session().get, 20 ms fake latency."""
    import requests

    with FakeAPI(latency=0.020) as fake:
        _configure(
            agent,
            [
                {
                    "name": "kagi",
                    "type": "kagi",
                    "apiKey": KEY,
                    "options": {"baseUrl": f"{fake.url}/api/v0", "apiVersion": "v0"},
                }
            ],
        )
        host = _host()
        session = requests.Session()
        url = f"{fake.url}/api/v0/search"
        ours, bare = [], []
        for _ in range(3):  # warm both paths
            host.call("web_search", {"queries": ["warm"]})
            session.get(
                url,
                params={"q": "warm", "limit": 10},
                headers={"Authorization": f"Bot {KEY}"},
                timeout=10,
            ).json()
        for i in range(reps):  # interleave so drift hits both equally
            start = time.perf_counter()
            session.get(
                url,
                params={"q": f"q{i}", "limit": 10},
                headers={"Authorization": f"Bot {KEY}"},
                timeout=10,
            ).json()
            bare.append(time.perf_counter() - start)
            start = time.perf_counter()
            result = host.call("web_search", {"queries": [f"q{i}"]})
            ours.append(time.perf_counter() - start)
            assert not result.is_error, result.text
    ours_m, ours_s = _median_spread(ours)
    bare_m, _ = _median_spread(bare)
    return {
        "target": "1. per-call overhead (web_search vs bare GET, 20 ms API)",
        "measured": ours_m / bare_m,
        "limit": 1.10,
        "unit": "x",
        "note": f"{ours_m * 1000:.1f} ms ± {ours_s * 1000:.1f} vs {bare_m * 1000:.1f} ms",
    }


def bench_concurrency(agent: Path, reps: int) -> list[dict]:
    """5 queries (or 5 URLs) in one call vs 1, at 200 ms fake latency."""
    rows = []
    with FakeAPI(latency=0.200) as fake:
        host = _host()
        _configure(
            agent,
            [
                {
                    "name": "kagi",
                    "type": "kagi",
                    "apiKey": KEY,
                    "options": {"baseUrl": f"{fake.url}/api/v0", "apiVersion": "v0"},
                },
                {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}},
            ],
        )
        cases = [
            (
                "2a. web_search: 5 queries vs 1 (200 ms API)",
                "web_search",
                {"queries": ["one"]},
                {"queries": ["a", "b", "c", "d", "e"]},
            ),
            (
                "2b. web_fetch: 5 URLs vs 1, direct (200 ms pages)",
                "web_fetch",
                {"urls": [f"{fake.url}/page/0"]},
                {"urls": [f"{fake.url}/page/{i}" for i in range(1, 6)]},
            ),
        ]
        for label, tool, one, five in cases:
            host.call(tool, one)
            host.call(tool, five)  # warm connections for both shapes
            singles, fives = [], []
            for _ in range(reps):
                start = time.perf_counter()
                assert not host.call(tool, one).is_error
                singles.append(time.perf_counter() - start)
                start = time.perf_counter()
                result = host.call(tool, five)
                fives.append(time.perf_counter() - start)
                assert not result.is_error and (result.details.get("fetched", 5) == 5), result.text[
                    :300
                ]
            five_m, five_s = _median_spread(fives)
            one_m, _ = _median_spread(singles)
            rows.append(
                {
                    "target": label,
                    "measured": five_m / one_m,
                    "limit": 1.5,
                    "unit": "x",
                    "note": f"{five_m * 1000:.0f} ms ± {five_s * 1000:.0f} vs {one_m * 1000:.0f} ms",
                }
            )
    return rows


def bench_connections(agent: Path, calls: int) -> list[dict]:
    """Sequential calls in one process open one TCP connection per provider host."""
    rows = []
    for label, providers, tool, args in [
        (
            "3a. warm connections: Kagi",
            lambda url: [
                {
                    "name": "kagi",
                    "type": "kagi",
                    "apiKey": KEY,
                    "options": {"baseUrl": f"{url}/api/v0", "apiVersion": "v0"},
                }
            ],
            "web_search",
            {"queries": ["x"]},
        ),
        (
            "3b. warm connections: Exa",
            lambda url: [
                {"name": "exa", "type": "exa", "apiKey": KEY, "options": {"baseUrl": url}}
            ],
            "web_search",
            {"queries": ["x"]},
        ),
        (
            "3c. warm connections: direct",
            lambda url: [
                {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}}
            ],
            "web_fetch",
            None,
        ),
    ]:
        with FakeAPI(latency=0.0) as fake:
            _configure(agent, providers(fake.url))
            host = _host()
            for i in range(calls):
                call_args = args or {"urls": [f"{fake.url}/page/{i}"]}
                result = host.call(tool, call_args)
                assert not result.is_error, result.text[:300]
            rows.append(
                {
                    "target": f"{label} ({calls} calls)",
                    "measured": fake.connections,
                    "limit": 1,
                    "unit": " conn",
                    "note": "",
                }
            )
    return rows


STARTUP_CODE = """
import time
t0 = time.perf_counter()
import pluggy, attrs
t1 = time.perf_counter()
if {plugin}:
    import pi_web_tools.plugin as plugin
    tools = []
    plugin.register_tools(register=tools.append)
    assert len(tools) == 3
t2 = time.perf_counter()
print(t2 - t0)
"""


def _compiled_env() -> dict:
    """The environment of a regular install: our bytecode compiled, and allowed to be written."""
    import compileall

    import pi_hostspec
    import pi_web_tools

    for package in (pi_hostspec, pi_web_tools):  # as a regular pip install does
        compileall.compile_dir(os.path.dirname(package.__file__), quiet=1)
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def bench_cached_fetch(agent: Path, reps: int) -> list[dict]:
    """A web_fetch answered from the disk cache vs the formatting of the same page alone (and
    vs a cold call that downloads it, 200 ms away)."""
    from pi_web_tools.tools import web_fetch

    with FakeAPI(latency=0.200) as fake:
        host = _host()
        _configure(
            agent,
            [{"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}}],
            cache=True,
        )
        url = f"{fake.url}/page/cached"
        args = {"urls": [url]}
        cold, cached, formatting = [], [], []
        host.call("web_fetch", args)  # warm the session and the store
        from pi_web_tools.runtime import run
        from pi_web_tools.runtime.registry import resolve_provider

        selection = resolve_provider("fetch")
        for _ in range(reps):
            start = time.perf_counter()
            result = host.call("web_fetch", {**args, "fresh": True})
            cold.append(time.perf_counter() - start)
            assert not result.is_error, result.text
            start = time.perf_counter()
            result = host.call("web_fetch", args)
            cached.append(time.perf_counter() - start)
            assert result.details["urls"][0]["cache"]["hit"], result.details
            pages, _, _ = run.fetch(selection, [url], {"text": True}, 12000, None)
            start = time.perf_counter()
            web_fetch._render(pages, 0, 12000, {})
            formatting.append(time.perf_counter() - start)
    cold_m, _ = _median_spread(cold)
    cached_m, spread = _median_spread(cached)
    format_m, _ = _median_spread(formatting)
    return [
        {
            "target": "7. web_fetch from the cache, above formatting alone",
            "measured": (cached_m - format_m) * 1000,
            "limit": 5.0,
            "unit": " ms",
            "note": f"cached {cached_m * 1000:.1f} ms ± {spread * 1000:.1f}, formatting "
            f"{format_m * 1000:.1f} ms, cold {cold_m * 1000:.0f} ms ({cached_m / cold_m:.3f}x)",
        }
    ]


#: The questions row 10 asks of its 100 KB page, in turn (a page is asked many questions).
QUESTIONS = (
    "How much does TaxAct charge an S corporation?",
    "Which night is the food truck park closed?",
    "What promo code gives the SkyMiles offer?",
    "Where should food for restricted diets go in a buffet?",
    "What start radius is typed for the pipe?",
    "How many free online courses are there?",
    "Does the discount apply to airfare?",
    "What is a good fitness routine for recovery days?",
)


def _long_page() -> str:
    """About 100 KB of real page text: the committed sample's ground-truth main contents."""
    truth = HERE / "sample-data" / "wcxb-dev-sample" / "ground-truth"
    parts = []
    for path in sorted(truth.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        parts.append((record.get("ground_truth") or {}).get("main_content") or "")
    text = "\n\n".join(part for part in parts if part)
    while len(text) < 100_000:
        text += "\n\n" + text
    return text[:100_000]


def bench_question(agent: Path, reps: int) -> list[dict]:
    """web_fetch with a question on a cached 100 KB page vs the page's cached first window,
    call for call in the same run: 10a the first question on each page (its passages indexed
    then: each rep is another page), 10b a further question on a page already asked."""
    text = _long_page()
    # each rep's page: the same text rotated, so no two pages share an index
    step = len(text) // (reps + 1)
    pages = {
        f"/docs/{rep}": (
            (text[rep * step :] + text[: rep * step]).encode(),
            "text/markdown; charset=utf-8",
        )
        for rep in range(reps + 1)
    }
    with FakeAPI(latency=0.0, pages=pages) as fake:
        host = _host()
        _configure(
            agent,
            [{"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}}],
            cache=True,
        )
        urls = [f"{fake.url}{path}" for path in pages]
        for url in urls:  # download and cache each page once
            host.call("web_fetch", {"urls": [url]})
        host.call("web_fetch", {"urls": [urls[-1]], "question": QUESTIONS[0]})  # first use
        window, first, again, first_cpu = [], [], [], []

        def timed(into: list, args: dict, cpu: list | None = None) -> None:
            start, start_cpu = time.perf_counter(), time.process_time()
            result = host.call("web_fetch", args)
            into.append(time.perf_counter() - start)
            if cpu is not None:
                cpu.append(time.process_time() - start_cpu)
            assert result.details["urls"][0]["cache"]["hit"], result.details

        for rep, url in enumerate(urls[:-1]):
            timed(window, {"urls": [url]})
            timed(first, {"urls": [url], "question": QUESTIONS[rep % len(QUESTIONS)]}, first_cpu)
            timed(again, {"urls": [url], "question": QUESTIONS[(rep + 1) % len(QUESTIONS)]})
    window_m, _ = _median_spread(window)
    first_m, first_s = _median_spread(first)
    again_m, again_s = _median_spread(again)
    size = f"{len(text):,} characters of page text, a different question each call"
    return [
        {
            "target": "10a. web_fetch question on a cached 100 KB page, above a cached window",
            "measured": (first_m - window_m) * 1000,
            "limit": 20.0,
            "unit": " ms",
            "note": f"question {first_m * 1000:.1f} ms ± {first_s * 1000:.1f} (CPU "
            f"{statistics.median(first_cpu) * 1000:.1f} ms), window {window_m * 1000:.1f} ms "
            f"({size})",
        },
        {
            "target": "10b. a further question on that page, above a cached window",
            "measured": (again_m - window_m) * 1000,
            "limit": 20.0,
            "unit": " ms",
            "note": f"question {again_m * 1000:.1f} ms ± {again_s * 1000:.1f} (its passages "
            "indexed by the first question)",
        },
    ]


def bench_startup(reps: int) -> list[dict]:
    """import pluggy, attrs + our plugin + register_tools, vs import pluggy, attrs alone, in fresh
    interpreters: what our own modules (the host contract's included) add at every host start."""
    env = _compiled_env()
    samples: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(reps):
        for with_plugin in (False, True):
            out = subprocess.run(
                [sys.executable, "-c", STARTUP_CODE.format(plugin=with_plugin)],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            ).stdout
            samples[with_plugin].append(float(out))
    base, _ = _median_spread(samples[False])
    full, spread = _median_spread(samples[True])
    return [
        {
            "target": "4a. start-up: our modules + register_tools above pluggy, attrs",
            "measured": (full - base) * 1000,
            "limit": 10.0,
            "unit": " ms",
            "note": f"{full * 1000:.1f} ms ± {spread * 1000:.1f} vs {base * 1000:.1f} ms",
        }
    ]


def bench_llm_startup(reps: int) -> list[dict]:
    """``llm --version`` with our plugin vs ``LLM_LOAD_PLUGINS`` naming every other plugin, in
    paired runs: what we cost inside the real host that loads us on every command."""
    import shutil
    from importlib.metadata import entry_points

    llm = shutil.which("llm", path=os.path.dirname(sys.executable)) or shutil.which("llm")
    target = "4b. start-up inside llm: llm --version with us vs without"
    if llm is None:
        return [
            {
                "target": target,
                "measured": 0.0,
                "limit": 1.05,
                "unit": "x",
                "note": "skipped: llm not installed",
            }
        ]
    others = sorted({ep.dist.name for ep in entry_points(group="llm")} - {"pi-web-tools"})
    env = _compiled_env()
    samples: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(reps):
        for with_us in (False, True):
            run_env = dict(env)
            if not with_us:
                run_env["LLM_LOAD_PLUGINS"] = ",".join(others)
            start = time.perf_counter()
            subprocess.run([llm, "--version"], capture_output=True, env=run_env, check=True)
            samples[with_us].append(time.perf_counter() - start)
    base, _ = _median_spread(samples[False])
    ours, spread = _median_spread(samples[True])
    # The median of paired ratios: each pair ran back to back, so machine load cancels out.
    ratio, _ = _median_spread([a / b for a, b in zip(samples[True], samples[False], strict=True)])
    return [
        {
            "target": target,
            "measured": ratio,
            "limit": 1.05,
            "unit": "x",
            "note": f"{ours * 1000:.0f} ms ± {spread * 1000:.0f} vs {base * 1000:.0f} ms (median of paired ratios)",
        }
    ]


MCP_HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def _handshake_times(command: list[str], env: dict) -> tuple[float, float]:
    """Seconds from starting *command* (an MCP stdio server) to its first answer (to
    ``initialize``) and to its ``tools/list`` answer."""
    data = "".join(json.dumps(message) + "\n" for message in MCP_HANDSHAKE).encode()
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    first = None
    try:
        proc.stdin.write(data)
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{command[0]} ended before answering tools/list")
            if first is None:
                first = time.perf_counter() - start
            if json.loads(line).get("id") == 2:
                listed = time.perf_counter() - start
                break
        proc.stdin.close()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return first, listed


def fetch_server(venv: Path) -> tuple[list[str] | None, str]:
    """The official fetch server (mcp-server-fetch) installed in *venv* (created when missing):
    (command, "") or (None, why it is not available)."""
    exe = venv / ("Scripts" if os.name == "nt" else "bin") / "mcp-server-fetch"
    if exe.exists():
        return [str(exe)], ""
    try:
        subprocess.run(
            [sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120
        )
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        subprocess.run(
            [*pip, "mcp-server-fetch"], check=True, capture_output=True, text=True, timeout=600
        )
    except subprocess.CalledProcessError as exc:
        lines = (exc.stderr or "").strip().splitlines()
        return None, f"installing mcp-server-fetch failed: {lines[-1] if lines else exc}"
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"installing mcp-server-fetch failed: {exc}"
    return ([str(exe)], "") if exe.exists() else (None, "mcp-server-fetch has no script")


def bench_mcp_startup(agent: Path, reps: int, fetch_venv: Path | None) -> list[dict]:
    """Start to first answer and to first tools/list over stdio: `pi-web mcp` vs the official
    fetch server, each in fresh processes, interleaved so load changes hit both."""
    script = Path(sys.executable).parent / "pi-web"
    ours = (
        [str(script), "mcp"]
        if script.exists()
        else [sys.executable, "-m", "pi_hostspec.cli", "mcp"]
    )
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    labels = (
        "6. MCP start to first tools/list (stdio) vs mcp-server-fetch",
        "6b. MCP start to first answer (stdio) vs mcp-server-fetch",
    )
    theirs, why = fetch_server(fetch_venv) if fetch_venv else (None, "run with --fetch to compare")
    samples: dict[str, list[tuple[float, float]]] = {"ours": [], "fetch": []}
    for command in (ours, theirs):  # warm the disk cache
        if command:
            _handshake_times(command, env)
    for _ in range(reps):
        samples["ours"].append(_handshake_times(ours, env))
        if theirs:
            samples["fetch"].append(_handshake_times(theirs, env))
    rows = []
    for index, label in ((1, labels[0]), (0, labels[1])):
        ours_m, ours_s = _median_spread([times[index] for times in samples["ours"]])
        if not theirs:
            rows.append(
                {
                    "target": label,
                    "measured": None,
                    "limit": 1.0,
                    "unit": "x",
                    "note": f"ours {ours_m * 1000:.0f} ms ± {ours_s * 1000:.0f}; fetch server "
                    f"skipped: {why}",
                }
            )
            continue
        fetch_m, fetch_s = _median_spread([times[index] for times in samples["fetch"]])
        rows.append(
            {
                "target": label,
                "measured": ours_m / fetch_m,
                "limit": 1.0,
                "unit": "x",
                "note": f"{ours_m * 1000:.0f} ms ± {ours_s * 1000:.0f} vs {fetch_m * 1000:.0f} ms "
                f"± {fetch_s * 1000:.0f}",
            }
        )
    return rows


def bench_truncation(reps: int) -> list[dict]:
    """truncate_head on 50 MB of text: time, and peak extra memory as copies of the input."""
    from pi_hostspec import truncate_head

    line = "A line of search output with some text, é and 日本 in it, to be realistic.\n"
    text = line * (50 * 1024 * 1024 // len(line.encode()))
    size = len(text.encode())
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        result = truncate_head(text)
        times.append(time.perf_counter() - start)
    assert result.truncated and result.output_bytes <= 50 * 1024
    tracemalloc.start()
    truncate_head(text)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    median, spread = _median_spread(times)
    return [
        {
            "target": f"5a. truncate_head on {size / 2**20:.0f} MB",
            "measured": median * 1000,
            "limit": 1000.0,
            "unit": " ms",
            "note": f"± {spread * 1000:.0f} ms",
        },
        {
            "target": "5b. truncate_head peak extra memory",
            "measured": peak / size,
            "limit": 3.0,
            "unit": " copies",
            "note": f"{peak / 2**20:.1f} MB peak",
        },
    ]


_SHELL = (
    "<html><head><title>App</title></head><body><div id='root'></div><script>"
    "document.getElementById('root').innerHTML = '<article><h1>Rendered</h1>' + "
    "'<p>This text was drawn by JavaScript in the page, with enough words to be the main "
    "content of an article that the extractor trusts.</p>'.repeat(6) + '</article>';"
    "</script></body></html>"
).encode()
_STATIC = (
    "<html><head><title>App</title></head><body><article><h1>Rendered</h1>"
    + "<p>This text was drawn by JavaScript in the page, with enough words to be the main "
    "content of an article that the extractor trusts.</p>" * 6 + "</article></body></html>"
).encode()


def bench_browser(reps: int) -> list[dict]:
    """The browser fetcher (9a, 9b): a cold first render and a warm one against a direct fetch
    of the same page written out statically; five shells in one call against one (goal 1.5x,
    pages render in parallel). Skipped where no browser can be driven."""
    from pi_web_tools.api.types import FetchRequest
    from pi_web_tools.providers import browser, direct

    targets = ("9a. browser: warm render vs direct fetch", "9b. browser: 5 shells vs 1")
    problem = browser.setup_problem()
    if problem is not None:
        return [
            {
                "target": t,
                "measured": None,
                "limit": 1.5,
                "unit": "x",
                "note": f"skipped: {problem}",
            }
            for t in targets
        ]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            body = _STATIC if self.path.startswith("/static") else _SHELL
            if "slow" in self.path:
                time.sleep(0.2)
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    root = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        render = browser.BrowserProvider(
            "chrome",
            browser.BrowserOptions(allow_private_network=True, max_pages=5, settle_seconds=0.5),
        )
        plain = direct.DirectProvider("direct", direct.DirectOptions(allow_private_network=True))
        browser.shutdown()
        start = time.perf_counter()
        first = render.fetch(FetchRequest(urls=(f"{root}/cold",)), None).pages[0]
        cold = time.perf_counter() - start
        assert first.ok, first.error
        warm, flat, one, five = [], [], [], []
        for i in range(reps):
            start = time.perf_counter()
            render.fetch(FetchRequest(urls=(f"{root}/w{i}",)), None)
            warm.append(time.perf_counter() - start)
            start = time.perf_counter()
            plain.fetch(FetchRequest(urls=(f"{root}/static{i}",)), None)
            flat.append(time.perf_counter() - start)
            start = time.perf_counter()
            render.fetch(FetchRequest(urls=(f"{root}/slow-one{i}",)), None)
            one.append(time.perf_counter() - start)
            start = time.perf_counter()
            pages = render.fetch(
                FetchRequest(urls=tuple(f"{root}/slow{i}-{n}" for n in range(5))), None
            ).pages
            five.append(time.perf_counter() - start)
            assert all(page.ok for page in pages), [page.error for page in pages]
        plain.close()
        render.close()
    finally:
        browser.shutdown()
        server.shutdown()
        server.server_close()
    warm_m, warm_s = _median_spread(warm)
    flat_m, _ = _median_spread(flat)
    one_m, _ = _median_spread(one)
    five_m, five_s = _median_spread(five)
    return [
        {
            "target": targets[0],
            "measured": warm_m / flat_m,
            "limit": 100.0,
            "unit": "x",
            "note": f"warm {warm_m * 1000:.0f} ms ± {warm_s * 1000:.0f}, cold first render "
            f"{cold * 1000:.0f} ms, direct {flat_m * 1000:.0f} ms (settle at most 0.5 s)",
        },
        {
            "target": targets[1],
            "measured": five_m / one_m,
            "limit": 1.5,
            "unit": "x",
            "note": f"{five_m * 1000:.0f} ms ± {five_s * 1000:.0f} vs {one_m * 1000:.0f} ms (200 ms pages)",
        },
    ]


def _search_config(agent: Path, providers: list[dict], **top) -> None:
    """Write a config of *providers* plus top-level keys *top* (the cache off)."""
    path = agent / "web-search.json"
    path.write_text(json.dumps({"providers": providers, "cache": False, **top}))
    path.chmod(0o600)
    from pi_web_tools.runtime import config

    config.clear_cache()


def _timed(host, args: dict) -> float:
    start = time.perf_counter()
    result = host.call("web_search", args)
    took = time.perf_counter() - start
    assert not result.is_error, result.text
    return took


def _check(host, args: dict, test) -> None:
    """One call of *args* whose details pass *test* (the row measures what it says)."""
    result = host.call("web_search", args)
    assert not result.is_error and test(result.details["perQuery"][0]), result.text


def _paired(host, ours: dict, theirs: dict, reps: int) -> tuple[float, float, float]:
    """Medians of *ours* and *theirs* (interleaved, after a warm-up), and ours' spread."""
    for _ in range(2):
        _timed(host, ours), _timed(host, theirs)
    mine, base = [], []
    for i in range(reps):
        mine.append(_timed(host, {**ours, "queries": [f"{ours['queries'][0]} {i}"]}))
        base.append(_timed(host, {**theirs, "queries": [f"{theirs['queries'][0]} {i}"]}))
    mine_m, mine_s = _median_spread(mine)
    base_m, _ = _median_spread(base)
    return mine_m, base_m, mine_s


def _failover_row(host, target: str, kind: str, reps: int, setup: str) -> dict:
    """A call that fails over (for *kind*) from the first provider to brave, vs brave alone."""
    _check(host, {"queries": ["check"]}, lambda q: q["failedOver"][0]["kind"] == kind)
    over, second, spread = _paired(
        host, {"queries": ["over"]}, {"queries": ["second"], "provider": "brave"}, reps
    )
    return {
        "target": target,
        "measured": over / second,
        "limit": 1.10,
        "unit": "x",
        "note": f"{over * 1000:.0f} ms ± {spread * 1000:.0f} vs {second * 1000:.0f} ms ({setup})",
    }


def bench_search_providers(agent: Path, reps: int) -> list[dict]:
    """Fusion of 3 providers vs the slowest alone; failover from a 429 (and from SearXNG's 403)
    vs the second provider alone; duplicates in a 5-query call. Against the tests' faithful
    fakes of Kagi v1, Brave and SearXNG (their real paths and bodies), on loopback."""
    from tests.support.fake_apis import FakeBrave, FakeKagi, FakeSearxng

    rows = []
    with FakeKagi(KEY) as kagi, FakeBrave(KEY) as brave, FakeSearxng() as searx:
        kagi.latency, brave.latency, searx.latency = 0.100, 0.150, 0.200
        entries = [
            {"name": "kagi", "type": "kagi", "apiKey": KEY, "options": {"baseUrl": kagi.base_url}},
            {
                "name": "brave",
                "type": "brave",
                "apiKey": KEY,
                "options": {"baseUrl": brave.base_url},
            },
            {
                "name": "searx",
                "type": "searxng",
                "options": {"baseUrl": searx.base_url, "allowPrivateNetwork": True},
            },
        ]
        _search_config(agent, entries)
        host = _host()
        _check(
            host,
            {"queries": ["check"], "provider": "all"},
            lambda q: (
                all("error" not in p for p in q["providers"].values()) and len(q["providers"]) == 3
            ),
        )
        fused, slowest, spread = _paired(
            host,
            {"queries": ["fuse"], "provider": "all"},
            {"queries": ["alone"], "provider": "searx"},
            reps,
        )
        rows.append(
            {
                "target": "12a. web_search fusion of 3 providers vs the slowest alone",
                "measured": fused / slowest,
                "limit": 1.10,
                "unit": "x",
                "note": f"{fused * 1000:.0f} ms ± {spread * 1000:.0f} vs {slowest * 1000:.0f} ms "
                "(Kagi 100 ms, Brave 150 ms, SearXNG 200 ms)",
            }
        )
        # Failover: Kagi answers 429 at once; Brave (200 ms) answers.
        kagi.latency, brave.latency = 0.0, 0.200
        kagi.fail = (429, "general.rate_limited", "Rate limited")
        _search_config(agent, entries[:2])
        rows.append(
            _failover_row(
                host,
                "12b. search failover after a 429 vs the second provider alone",
                "rate limit",
                reps,
                "Kagi 429 at once, no retry wait; Brave 200 ms",
            )
        )
        kagi.fail = None
    with FakeSearxng(formats=("html",)) as off, FakeBrave(KEY) as brave:
        brave.latency = 0.200
        _search_config(
            agent,
            [
                {
                    "name": "searx",
                    "type": "searxng",
                    "options": {"baseUrl": off.base_url, "allowPrivateNetwork": True},
                },
                {
                    "name": "brave",
                    "type": "brave",
                    "apiKey": KEY,
                    "options": {"baseUrl": brave.base_url},
                },
            ],
        )
        rows.append(
            _failover_row(
                _host(),
                "12c. search failover from SearXNG's 403 (JSON off) vs Brave alone",
                "authentication",
                reps,
                "SearXNG 403 at once; Brave 200 ms",
            )
        )
    rows.append(_duplicates(agent))
    return rows


#: Fixed result sets of a 5-query call: shared pages in the forms engines return them.
DUPLICATE_SETS = {
    "tokio runtime": [
        "https://tokio.rs/",
        "https://docs.rs/tokio",
        "https://github.com/tokio-rs/tokio",
        "https://blog.example/async-rust?utm_source=hn",
        "https://tokio.rs/tokio/tutorial",
    ],
    "tokio tutorial": [
        "http://tokio.rs",
        "https://tokio.rs/tokio/tutorial/",
        "https://www.blog.example/async-rust",
        "https://course.example/tokio",
        "https://docs.rs/tokio/latest",
    ],
    "async rust": [
        "https://rust-lang.github.io/async-book/",
        "https://blog.example/async-rust#intro",
        "https://docs.rs/tokio",
        "https://async.rs/",
        "https://tokio.rs/?ref=search",
    ],
    "rust futures": [
        "https://docs.rs/futures",
        "https://rust-lang.github.io/async-book",
        "https://www.docs.rs/futures/",
        "https://without.boats/futures",
        "https://async.rs",
    ],
    "tokio vs async-std": [
        "https://async.rs/",
        "https://tokio.rs/",
        "https://compare.example/tokio-async-std",
        "https://github.com/tokio-rs/tokio?fbclid=x1",
        "https://without.boats/futures/",
    ],
}


def _duplicates(agent: Path) -> dict:
    """A 5-query call over fixed result sets: every URL listed once (repeats counted)."""
    from pi_web_tools.tools.fusion import canonical_url

    from tests.support.fake_apis import FakeSearxng

    def results(q: str) -> list[dict]:
        return [{"url": url, "title": f"{q}: {url}", "content": "c"} for url in DUPLICATE_SETS[q]]

    returned = [url for urls in DUPLICATE_SETS.values() for url in urls]
    unique = {canonical_url(url) for url in returned}
    with FakeSearxng(results=results) as searx:
        _search_config(
            agent,
            [
                {
                    "name": "searx",
                    "type": "searxng",
                    "options": {"baseUrl": searx.base_url, "allowPrivateNetwork": True},
                }
            ],
        )
        result = _host().call("web_search", {"queries": list(DUPLICATE_SETS)})
    assert not result.is_error, result.text
    listed = [line.strip() for line in result.text.splitlines() if line.startswith("   http")]
    twice = len(listed) - len({canonical_url(url) for url in listed})
    removed = len(returned) - len(listed)
    return {
        "target": "12d. 5-query call: URLs listed more than once",
        "measured": twice,
        "limit": 0,
        "unit": "",
        "note": f"{removed} of {len(returned) - len(unique)} repeats removed: {len(returned)} "
        f"results returned, {len(listed)} listed, {len(unique)} pages",
    }


#: The rows each measurement gives (for --only).
ROW_GROUPS = {
    "overhead": ("1",),
    "concurrency": ("2a", "2b"),
    "connections": ("3a", "3b", "3c"),
    "startup": ("4a",),
    "llm_startup": ("4b",),
    "truncation": ("5a", "5b"),
    "mcp_startup": ("6", "6b"),
    "cached_fetch": ("7",),
    "question": ("10a", "10b"),
    "browser": ("9a", "9b"),
    "readers": ("11a", "11b", "11c"),
    "search_providers": ("12a", "12b", "12c", "12d"),
}


def main(argv: list[str] | None = None) -> int:
    """Run every measurement, print the table, exit 1 when a target is missed (not in --quick)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="few repetitions; report only, never fail"
    )
    parser.add_argument(
        "--fetch",
        action="store_true",
        help="install the official fetch server (mcp-server-fetch) in a temporary venv and "
        "compare MCP start-up with it",
    )
    parser.add_argument(
        "--fetch-venv",
        type=Path,
        metavar="DIR",
        help="like --fetch, with the venv kept in DIR (created when missing) for later runs",
    )
    parser.add_argument(
        "--only",
        metavar="ROWS",
        help="run only these rows, comma-separated: 4a,4b,9 (a number names all its rows)",
    )
    options = parser.parse_args(argv)
    reps = 3 if options.quick else 25
    wanted = [row.strip() for row in (options.only or "").split(",") if row.strip()]
    groups = {row for rows in ROW_GROUPS.values() for row in rows}
    unknown = [w for w in wanted if not any(row.startswith(w) for row in groups)]
    if unknown:
        parser.error(f"no row {', '.join(unknown)}; rows: {', '.join(sorted(groups))}")

    def run(group: str) -> bool:
        return not wanted or any(row.startswith(w) for row in ROW_GROUPS[group] for w in wanted)

    with tempfile.TemporaryDirectory() as agent:
        os.environ["PI_CODING_AGENT_DIR"] = agent
        os.environ["XDG_CACHE_HOME"] = str(Path(agent) / "cache")
        for name in (
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "http_proxy",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
        ):
            os.environ.pop(name, None)
        rows = []
        if run("overhead"):
            rows.append(bench_overhead(Path(agent), reps * 2))
        if run("concurrency"):
            rows += bench_concurrency(Path(agent), max(3, reps // 3))
        if run("connections"):
            rows += bench_connections(Path(agent), 10 if options.quick else 50)
        if run("startup"):
            rows += bench_startup(5 if options.quick else 31)
        if run("llm_startup"):
            rows += bench_llm_startup(1 if options.quick else 31)
        if run("truncation"):
            rows += bench_truncation(2 if options.quick else 7)
        if run("cached_fetch"):
            rows += bench_cached_fetch(Path(agent), 3 if options.quick else 25)
        if run("question"):
            rows += bench_question(Path(agent), 3 if options.quick else 41)
        if run("browser"):
            rows += bench_browser(2 if options.quick else 9)
        if run("readers"):
            import readers

            rows += readers.rows(Path(agent), 3 if options.quick else 25)
        if run("search_providers"):
            rows += bench_search_providers(Path(agent), 3 if options.quick else 15)
        if run("mcp_startup"):
            fetch_venv = options.fetch_venv or (
                Path(agent) / "fetch-venv" if options.fetch else None
            )
            rows += bench_mcp_startup(Path(agent), 3 if options.quick else 15, fetch_venv)
    width = max(len(row["target"]) for row in rows)
    print(f"{'target'.ljust(width)}  {'measured':>12}  {'limit':>12}  result  detail")
    missed = 0
    for row in rows:
        if row["measured"] is None:  # could not be measured here (the note says why)
            ok, result, measured = True, "skip", "-"
        else:
            ok = row["measured"] <= row["limit"]
            result = "ok" if ok else "MISSED"
            measured = (
                f"{row['measured']:.2f}{row['unit']}"
                if isinstance(row["measured"], float)
                else f"{row['measured']}{row['unit']}"
            )
        missed += not ok
        limit = f"{row['limit']:g}{row['unit']}"
        print(
            f"{row['target'].ljust(width)}  {measured:>12}  {'<= ' + limit:>12}  {result:6}  {row['note']}"
        )
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores{', quick mode: targets not enforced' if options.quick else ''}"
    )
    return 0 if options.quick or not missed else 1


if __name__ == "__main__":
    sys.exit(main())
