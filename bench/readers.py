"""The site readers measured: what a GitHub file costs through web_fetch against one GET of the
raw file, the characters web_fetch returns for five GitHub and package pages with the readers
and without them (today's answer: the page's HTML through the direct fetcher), and what a
130-comment issue costs.

The sites are the tests' faithful fakes (``tests/support/sites.py``): on a loopback server for
the timed rows (each answer 20 ms away), and behind an HTTPS proxy on loopback at the real host
names for the comparison, so both answers come from the same URLs. The fakes' HTML pages are
shaped like the real ones (menus, scripts, the content inside a JSON payload or a bot wall),
not copies of them.

``python bench/readers.py`` prints the detail table; ``bench/run.py`` reports rows 11a-11c.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.site_proxy import SiteProxy  # noqa: E402
from tests.support.sites import FILES, OWNER, REPO, Sites  # noqa: E402

LATENCY = 0.020
HELLO = f"https://github.com/{OWNER}/{REPO}"
BIG_FILE = "src/hello/big.py"
#: The five pages compared, and a piece of their content an answer must hold to count.
PAGES = (
    (f"{HELLO}/blob/main/{BIG_FILE}", "value_1499 = 1499  # line 1499"),
    (HELLO, "pip install hello"),
    (f"{HELLO}/issues/7", "Comment number 130:"),
    ("https://pypi.org/project/pi-demo/", "idna>=3.4"),
    ("https://www.npmjs.com/package/tiny-lib", "left-pad"),
)


def _host():
    import pi_web_tools.plugin
    from pi_hostspec import Host, get_plugin_manager

    return Host(get_plugin_manager(load_entrypoints=False, plugins=[pi_web_tools.plugin]))


def _configure(agent: Path, **extra) -> None:
    path = agent / "web-search.json"
    config = {"providers": [{"name": "direct", "type": "direct"}], "cache": False, **extra}
    path.write_text(json.dumps(config))
    path.chmod(0o600)
    from pi_web_tools.runtime import config as config_module

    config_module.clear_cache()


def _median(values: list[float]) -> tuple[float, float]:
    values = sorted(values)
    if len(values) < 4:
        return statistics.median(values), (values[-1] - values[0]) / 2
    q = statistics.quantiles(values, n=4)
    return statistics.median(values), (q[2] - q[0]) / 2


def _full_text(host, url: str, **args) -> tuple[str, dict]:
    """The whole page text web_fetch holds for *url* (every window), and the first details."""
    result = host.call("web_fetch", {"urls": [url], "text_max_characters": 1_000_000, **args})
    return result.text, result.details


def bench_file(agent: Path, reps: int) -> dict:
    """11a: a GitHub file through web_fetch vs one warm GET of the raw file, same fake."""
    import requests

    sites = Sites(latency=LATENCY)
    with sites.serve() as server:
        _configure(agent, readers={"github": {"baseUrl": server.base_url}})
        host = _host()
        url = f"{HELLO}/blob/main/{BIG_FILE}"
        raw = f"{server.base_url}/raw.githubusercontent.com/{OWNER}/{REPO}/main/{BIG_FILE}"
        session = requests.Session()
        for _ in range(2):  # warm both paths
            host.call("web_fetch", {"urls": [url]})
            _ = session.get(raw).content
        ours, bare = [], []
        for _ in range(reps):
            start = time.perf_counter()
            _ = session.get(raw).content
            bare.append(time.perf_counter() - start)
            del sites.log[:]
            start = time.perf_counter()
            text, details = _full_text(host, url)
            ours.append(time.perf_counter() - start)
        requests_made = len(sites.log)
    body = FILES[BIG_FILE].decode()
    whole = body.strip() in text
    chrome = "Skip to content" in text or "Navigation Menu" in text
    ours_m, spread = _median(ours)
    bare_m, _ = _median(bare)
    return {
        "target": "11a. a GitHub file through web_fetch, above one GET of the raw file",
        "measured": ours_m / bare_m,
        "limit": 1.1,
        "unit": "x",
        "note": f"{ours_m * 1000:.1f} ms ± {spread * 1000:.1f} vs {bare_m * 1000:.1f} ms "
        f"({LATENCY * 1000:.0f} ms away); {requests_made} request; "
        f"{'100%' if whole else 'NOT all'} of its {len(body):,} characters, "
        f"{'with' if chrome else 'no'} page chrome",
        "whole": whole and not chrome,
    }


def compare_pages(agent: Path) -> list[dict]:
    """Each of :data:`PAGES` through web_fetch with the readers and with ``readers: false``
    (the page's HTML through the direct fetcher), at the real URLs through the HTTPS proxy."""
    sites = Sites()
    saved = {
        name: os.environ.get(name) for name in ("HTTPS_PROXY", "HTTP_PROXY", "REQUESTS_CA_BUNDLE")
    }
    rows = []
    with tempfile.TemporaryDirectory() as folder, SiteProxy(sites, Path(folder)) as proxy:
        os.environ.update(proxy.environment())
        try:
            host = _host()
            for url, needle in PAGES:
                row = {"url": url}
                for label, extra in (("today", {"readers": False}), ("readers", {})):
                    _configure(agent, **extra)
                    text, details = _full_text(host, url)
                    facts = details.get("urls", [{}])[0] if details else {}
                    row[label] = {
                        "characters": facts.get("characters", 0),
                        "ok": facts.get("status") == "ok",
                        "error": facts.get("error"),
                        "has_content": needle in text,
                    }
                rows.append(row)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    return rows


def bench_pages(agent: Path) -> dict:
    """11b: pages whose content the readers' answer misses (and today's, in the note)."""
    try:
        import trustme  # noqa: F401 - the proxy's test CA
    except ImportError:
        return {
            "target": "11b. 5 GitHub and package pages whose content web_fetch misses",
            "measured": None,
            "limit": 0,
            "unit": "",
            "note": "skipped: the comparison's HTTPS proxy needs trustme (pip install -e '.[test]')",
            "rows": [],
        }
    rows = compare_pages(agent)
    missed = sum(1 for row in rows if not row["readers"]["has_content"])
    today_missed = sum(1 for row in rows if not row["today"]["has_content"])
    listing = "; ".join(
        f"{_short(row['url'])} {row['readers']['characters']:,} vs "
        + (f"{row['today']['characters']:,}" if row["today"]["ok"] else "error")
        for row in rows
    )
    return {
        "target": "11b. 5 GitHub and package pages whose content web_fetch misses",
        "measured": missed,
        "limit": 0,
        "unit": "",
        "note": f"without the readers {today_missed}; characters with vs without: {listing}",
        "rows": rows,
    }


def _short(url: str) -> str:
    return url.removeprefix("https://").removeprefix("www.")[:40]


def bench_issue(agent: Path, reps: int) -> dict:
    """11c: the 130-comment issue, read whole: time and requests."""
    sites = Sites(latency=LATENCY)
    with sites.serve() as server:
        _configure(agent, readers={"github": {"baseUrl": server.base_url}})
        host = _host()
        url = f"{HELLO}/issues/7"
        times, counts, text = [], [], ""
        for _ in range(reps):
            del sites.log[:]
            start = time.perf_counter()
            text, _ = _full_text(host, url)
            times.append(time.perf_counter() - start)
            counts.append(len(sites.log))
    median, spread = _median(times)
    whole = all(f"Comment number {n}:" in text for n in range(1, 131))
    return {
        "target": "11c. a 130-comment GitHub issue read to its end: requests",
        "measured": max(counts),
        "limit": 3,
        "unit": "",
        "note": f"{median * 1000:.0f} ms ± {spread * 1000:.0f} ({LATENCY * 1000:.0f} ms per "
        f"answer); {'every' if whole else 'NOT every'} comment, in order",
    }


def rows(agent: Path, reps: int) -> list[dict]:
    """Rows 11a-11c for bench/run.py."""
    return [bench_file(agent, reps), bench_pages(agent), bench_issue(agent, max(3, reps // 3))]


def main() -> int:
    """The detail table of the comparison and the three rows."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="few repetitions")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as agent:
        os.environ["PI_CODING_AGENT_DIR"] = agent
        os.environ["XDG_CACHE_HOME"] = str(Path(agent) / "cache")
        found = rows(Path(agent), 3 if options.quick else 25)
    print("| page | with the readers | without (the page's HTML) |")
    print("|---|---|---|")
    for row in found[1]["rows"]:
        today = row["today"]
        before = (
            f"{today['characters']:,} characters, content {'in' if today['has_content'] else 'missing'}"
            if today["ok"]
            else f"error: {today['error']}"
        )
        after = row["readers"]
        print(
            f"| {row['url']} | {after['characters']:,} characters, content "
            f"{'in' if after['has_content'] else 'missing'} | {before} |"
        )
    print()
    for row in found:
        print(
            f"{row['target']}: {row['measured']}{row['unit']} (limit {row['limit']}{row['unit']}): {row['note']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
