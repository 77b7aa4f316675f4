"""Extraction quality of web_fetch on the Zyte article benchmark and the WCXB dev split.

Every page is read through the tool as a user calls it: `web_fetch` of the page's own URL (made
http), paged with `offset` until its end, in a host with the direct fetcher, while a loopback
proxy (the standard ``HTTP_PROXY`` variable) answers each URL with the benchmark's HTML. The
outputs are scored by both data sets' own, unmodified ``evaluate.py``, next to trafilatura's
defaults on the same pages in the same run; the extraction time of our extractor is compared
with trafilatura's on the same pages. Exits 1 when a goal is missed.

The block model was trained on the WCXB dev split, so its pages are never read with the shipped
model: each is read with the model of the cross-validation fold that did not see its site
(``bench/train_extraction.py`` writes the five fold models; ``--folds DIR``), through the
``PI_WEB_TOOLS_BLOCK_MODEL`` variable of the extraction workers. The Zyte pages, which no model
saw, are read with the shipped model. Two WCXB tables: the validation half of the 594-page
sample (split by site, the pages and scorer of round 3), and all 1,497 pages of the split.

    python bench/train_extraction.py   # once: the fold models (needs the train extra)
    python bench/extract.py            # 181 + 1,497 pages (about 10 minutes on 2 cores)
    python bench/extract.py --quick    # 2 pages per type and 8 articles; goals not enforced
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing import Pool
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
#: The full data, beside the repository; else the small sample committed in it.
FULL_DATA = ROOT.parent / "shared" / "data"
SAMPLE_DATA = ROOT / "bench" / "sample-data"
DATA = FULL_DATA if (FULL_DATA / "zyte-article-benchmark").is_dir() else SAMPLE_DATA
TYPES = ("article", "documentation", "service", "forum", "collection", "listing", "product")
#: The goals of issue 14: Zyte F1, WCXB per-type F1 (the best published system's), time ratio.
ZYTE_GOAL = 0.96
WCXB_GOALS = {
    "article": 0.932,
    "documentation": 0.932,
    "service": 0.844,
    "forum": 0.808,
    "collection": 0.716,
    "listing": 0.710,
    "product": 0.641,
}
#: The goals of issue 32: on the whole dev split, cross-validated by site.
CV_OVERALL_GOAL = 0.855
TIME_RATIO_LIMIT = 2.5
#: The direct fetcher's default deadline (seconds): the slowest pages must stay well inside it.
WORKER_DEADLINE = 30.0
WINDOW = 100_000
#: What a section says in place of an empty text (the tool's words, not the page's).
NO_TEXT = "(no text content)"


def _pages(data: Path, quick: bool) -> list[dict]:
    """Every page: data set, id, the URL the tool is given, the HTML file, the page type, its
    site's half of the sample and fold of the dev split, and whether it is a sample page."""
    from train_extraction import site_fold

    zyte, sample, dev = data / "zyte-article-benchmark", data / "wcxb-dev-sample", data / "wcxb-dev"
    whole = dev.is_dir() and not quick
    wcxb = dev if whole else sample
    in_sample = {path.stem for path in (sample / "ground-truth").glob("*.json")}
    truth = json.loads((zyte / "ground-truth.json").read_text())
    pages = []
    for key in sorted(truth)[: 8 if quick else None]:
        pages.append({"set": "zyte", "id": key, "url": truth[key].get("url"), "type": "article"})
    per_type: dict[str, int] = {}
    for path in sorted((wcxb / "ground-truth").glob("*.json")):
        record = json.loads(path.read_text())
        kind = ((record.get("_internal") or {}).get("page_type") or {}).get("primary", "article")
        kind = "collection" if kind == "category" else kind
        if quick and (per_type.get(kind, 0) >= 2 or site_half(record.get("url")) != "validation"):
            continue
        per_type[kind] = per_type.get(kind, 0) + 1
        pages.append(
            {
                "set": "wcxb",
                "id": path.stem,
                "url": record.get("url"),
                "type": kind,
                "sample": path.stem in in_sample,
                "fold": site_fold(record.get("url")) if whole else None,
            }
        )
    for page in pages:
        page["half"] = site_half(page["url"])
        root = zyte if page["set"] == "zyte" else wcxb
        page["root"] = str(root)
        page["file"] = str(root / "html" / f"{page['id']}.html.gz")
        url = page["url"] or f"http://bench.invalid/{page['set']}/{page['id']}"
        page["url"] = re.sub(r"^https:", "http:", url)  # the proxy answers plain HTTP
        if "#" in page["url"]:
            page["url"] = page["url"].split("#", 1)[0]
    return pages


def _same(url: str) -> str:
    """*url* as a lookup key: host lower-cased, the path and query unquoted (the HTTP library
    normalizes both before they reach the proxy)."""
    from urllib.parse import unquote

    parts = urlsplit(url)
    query = f"?{unquote(parts.query)}" if parts.query else ""
    return f"{parts.netloc.lower()}{unquote(parts.path) or '/'}{query}"


class Proxy:
    """A loopback HTTP proxy that answers each benchmark URL with its page's HTML."""

    def __init__(self, pages: list[dict]):
        by_url = {_same(page["url"]): page["file"] for page in pages}

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                path = by_url.get(_same(self.path))  # a proxy gets the absolute URL
                if path is None:
                    self.send_error(404)
                    return
                body = gzip.open(path).read()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


_host = None


def _confusion(pages: list[dict]) -> None:
    """The page-type stage's guesses against the sample's types, on the validation half."""
    guessed = sorted({r["guessed"] for r in pages} | set(TYPES))
    print("page types, validation half (rows: true type; columns: guessed)")
    print(f"{'':14}" + "".join(f"{g[:11]:>12}" for g in guessed) + f"{'right':>8}")
    total = right = 0
    for kind in TYPES:
        row = [r for r in pages if r["type"] == kind]
        if not row:
            continue
        hits = sum(1 for r in row if r["guessed"] == kind)
        total, right = total + len(row), right + hits
        cells = "".join(f"{sum(1 for r in row if r['guessed'] == g):>12}" for g in guessed)
        print(f"{kind:14}{cells}{hits / len(row):8.0%}")
    if total:
        print(f"page-type accuracy on the validation half: {right / total:.0%} of {total}")


def _start(agent: str, proxy: str, model: str | None) -> None:
    """Each worker: its own host, the shared config, requests through the loopback proxy, and
    the block model file *model* (``None``: the shipped one) in its extraction workers."""
    global _host
    os.environ.update({"PI_CODING_AGENT_DIR": agent, "HTTP_PROXY": proxy, "http_proxy": proxy})
    if model:
        os.environ["PI_WEB_TOOLS_BLOCK_MODEL"] = model
    else:
        os.environ.pop("PI_WEB_TOOLS_BLOCK_MODEL", None)
    os.environ["XDG_CACHE_HOME"] = str(Path(agent) / f"cache-{os.getpid()}")
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        os.environ.pop(name, None)
    import pi_web_tools.plugin
    from pi_hostspec import Host, get_plugin_manager

    _host = Host(get_plugin_manager(load_entrypoints=False, plugins=[pi_web_tools.plugin]))


_TAIL = re.compile(
    r"\n\n\[Showing characters (\d+)–(\d+) of \d+\+?(?:\. Next: web_fetch (.*)\]|: the end of the page\.\])$"
)


def _read_whole_page(url: str) -> str:
    """The page's text as the model reads it: windows joined until no next call is offered."""
    parts, offset = [], 0
    for _ in range(200):
        args = {"urls": [url], "text_max_characters": WINDOW}
        if offset:
            args["offset"] = offset
        result = _host.call("web_fetch", args)
        if result.is_error:
            return ""
        text = result.text.split("\n\n[Output truncated:", 1)[0]
        head_end = text.find("\n\n")
        tail = _TAIL.search(text)
        body = text[head_end + 2 : tail.start() if tail else len(text)] if head_end != -1 else ""
        parts.append("" if body == NO_TEXT else body)
        if not tail or tail.group(3) is None:
            break
        offset = json.loads(tail.group(3))["offset"]
    return "".join(parts)


def site_half(url: str | None) -> str:
    """``tuning`` or ``validation``: the half of the sample a page belongs to, by its site (the
    host without ``www.``), never by page, so no site is on both sides."""
    import hashlib

    host = (urlsplit(url or "").hostname or "").lower().removeprefix("www.")
    return "validation" if hashlib.sha256(host.encode()).digest()[0] % 2 else "tuning"


def _guessed_type(html: str, url: str) -> str:
    """The page type the extractor's page-type stage guesses (WCXB's seven types)."""
    from pi_web_tools.pages import extraction
    from trafilatura.utils import load_html

    tree = load_html(html)
    return "article" if tree is None else extraction.classify(tree, url)


def _resiliparse(html: str) -> str:
    try:
        from resiliparse.extract.html2text import extract_plain_text
    except ImportError:  # not on this platform
        return ""
    try:
        return extract_plain_text(html, main_content=True) or ""
    except Exception:  # noqa: BLE001 - a baseline failure scores as empty
        return ""


def _work(page: dict) -> dict:
    import trafilatura
    from pi_web_tools.pages import extraction

    html = gzip.open(page["file"]).read().decode("utf-8", "replace")
    ours = _read_whole_page(page["url"])
    start = time.perf_counter()
    extraction.extract(html, page["url"])
    ours_time = time.perf_counter() - start
    page = {**page, "guessed": _guessed_type(html, page["url"]), "resiliparse": _resiliparse(html)}
    start = time.perf_counter()
    try:
        theirs = trafilatura.extract(html, url=page["url"]) or ""
    except Exception:  # noqa: BLE001 - a baseline failure scores as empty
        theirs = ""
    return {
        **page,
        "ours": ours,
        "theirs": theirs,
        "ours_time": ours_time,
        "theirs_time": time.perf_counter() - start,
    }


def _zyte_scores(data: Path, work: Path, results: list[dict]) -> dict[str, float]:
    """F1 of each system by the Zyte benchmark's own evaluate.py."""
    folder = work / "zyte"
    (folder / "output").mkdir(parents=True)
    shutil.copy(data / "zyte-article-benchmark" / "evaluate.py", folder)
    truth = json.loads((data / "zyte-article-benchmark" / "ground-truth.json").read_text())
    mine = [r for r in results if r["set"] == "zyte"]
    (folder / "ground-truth.json").write_text(json.dumps({r["id"]: truth[r["id"]] for r in mine}))
    for system in ("ours", "theirs"):
        body = {"version": "", "output": {r["id"]: {"articleBody": r[system]} for r in mine}}
        (folder / "output" / f"{system}.json").write_text(json.dumps(body))
    subprocess.run(
        [sys.executable, "evaluate.py", "--n-bootstrap", "100", "--output", "scores.json"],
        cwd=folder,
        check=True,
        capture_output=True,
    )
    scores = json.loads((folder / "scores.json").read_text())
    return {system: scores[system]["f1"] for system in ("ours", "theirs")}


def _wcxb_scores(
    data: Path, work: Path, results: list[dict], name: str = "wcxb"
) -> dict[str, dict[str, float]]:
    """Per-type word F1 of each system by WCXB's own evaluate.py (of *results* only)."""
    folder = work / name
    truth = folder / "dev" / "ground-truth"
    truth.mkdir(parents=True)
    mine = [r for r in results if r["set"] == "wcxb"]
    shutil.copy(Path(mine[0]["root"]) / "evaluate.py", folder)
    for r in mine:
        shutil.copy(Path(r["root"]) / "ground-truth" / f"{r['id']}.json", truth)
    scores = {}
    for system in ("ours", "theirs", "resiliparse"):
        (folder / f"{system}.json").write_text(json.dumps({r["id"]: r[system] for r in mine}))
        out = subprocess.run(
            [
                sys.executable,
                "evaluate.py",
                "--split",
                "dev",
                "--results",
                f"{system}.json",
                "--per-type",
            ],
            cwd=folder,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        scores[system] = {
            m.group(1): float(m.group(2))
            for m in re.finditer(r"^\s+(\w+)\s+\d+\s+([\d.]+)\s", out, re.M)
        }
    return scores


def _groups(pages: list[dict], folds: Path) -> list[tuple[str | None, list[dict]]]:
    """The pages by the model file they are read with: the shipped model (``None``) for pages
    no model was trained on, each fold's model for the dev split's pages of that fold."""
    shipped = [p for p in pages if p.get("fold") is None]
    groups: list[tuple[str | None, list[dict]]] = [(None, shipped)] if shipped else []
    for fold in sorted({p["fold"] for p in pages if p.get("fold") is not None}):
        groups.append((str(folds / f"fold-{fold}.json"), [p for p in pages if p.get("fold") == fold]))
    return groups


def _overall(scores: dict[str, float], counts: dict[str, int]) -> float:
    """The mean over pages, from per-type means and page counts."""
    total = sum(counts.get(kind, 0) for kind in scores)
    return sum(scores[k] * counts.get(k, 0) for k in scores) / total if total else 0.0


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else 0.0


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the tables; exit 1 when a goal is missed (not with --quick)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few pages; goals not enforced")
    parser.add_argument(
        "--data",
        type=Path,
        default=DATA,
        help=f"the benchmark data folder (default: {FULL_DATA} when present, else the "
        "small sample in bench/sample-data)",
    )
    parser.add_argument(
        "--folds",
        type=Path,
        default=None,
        help="the fold models bench/train_extraction.py wrote (default: its cache's folds/)",
    )
    options = parser.parse_args(argv)
    if not (options.data / "zyte-article-benchmark").is_dir():
        print(
            f"bench/extract.py: no benchmark data in {options.data} (see --data)", file=sys.stderr
        )
        return 2
    pages = _pages(options.data, options.quick)
    cv = any(p.get("fold") is not None for p in pages)
    if cv:
        from train_extraction import default_cache

        folds = options.folds or default_cache() / "folds"
        absent = [f for f in range(5) if not (folds / f"fold-{f}.json").exists()]
        if absent:
            print(
                f"bench/extract.py: no fold models in {folds} (run bench/train_extraction.py "
                "first, or name them with --folds)",
                file=sys.stderr,
            )
            return 2
    else:
        folds = Path()
    proxy = Proxy(pages)
    with tempfile.TemporaryDirectory() as agent:
        config = {
            "providers": [{"name": "direct", "type": "direct", "options": {"timeoutSeconds": 60}}],
            # The pages' own HTML, not a site's API (GitHub, Wikipedia, ... readers): this
            # measures extraction.
            "readers": False,
        }
        (Path(agent) / "web-search.json").write_text(json.dumps(config))
        (Path(agent) / "web-search.json").chmod(0o600)
        started = time.monotonic()
        results = []
        for model, group in _groups(pages, folds):
            with Pool(2, initializer=_start, initargs=(agent, proxy.url, model)) as pool:
                results += list(pool.imap_unordered(_work, group, chunksize=2))
        elapsed = time.monotonic() - started
        zyte = _zyte_scores(options.data, Path(agent), results)
        validation = [
            r for r in results
            if r["set"] == "wcxb" and r["half"] == "validation" and (r["sample"] or not cv)
        ]
        wcxb = _wcxb_scores(options.data, Path(agent), validation, "validation")
        everything = [r for r in results if r["set"] == "wcxb"]
        whole = _wcxb_scores(options.data, Path(agent), everything, "whole") if cv else None
    ours_time = sum(r["ours_time"] for r in results)
    theirs_time = sum(r["theirs_time"] for r in results)
    ratio = ours_time / theirs_time if theirs_time else 0.0
    counts = {kind: sum(1 for r in validation if r["type"] == kind) for kind in TYPES}
    model_note = (
        "each WCXB page read with the model of the fold that did not see its site"
        if cv
        else "the shipped model, which was trained on these WCXB pages: in-sample numbers"
    )
    print(
        f"WCXB sample: {sum(counts.values())} validation pages of the 594-page sample, split "
        f"by site (round 3's table; {model_note})"
    )
    print(f"{'':30} {'web_fetch':>10} {'trafilatura':>12} {'resiliparse':>12} {'goal':>7}  result")
    missed = 0
    zyte_ok = zyte["ours"] >= ZYTE_GOAL
    missed += not zyte_ok
    print(
        f"{'Zyte articles (F1)':30} {zyte['ours']:10.4f} {zyte['theirs']:12.4f} {'':>12} "
        f"{ZYTE_GOAL:7.3f}  {'ok' if zyte_ok else 'MISSED'}"
    )
    for kind, goal in WCXB_GOALS.items():
        ours, theirs = wcxb["ours"].get(kind, 0.0), wcxb["theirs"].get(kind, 0.0)
        resili = wcxb["resiliparse"].get(kind, 0.0)
        label = f"WCXB {kind} (word F1)"
        print(
            f"{label:30} {ours:10.3f} {theirs:12.3f} {resili:12.3f} {goal:7.3f}  "
            f"{'above' if ours >= goal else 'below'}  ({counts[kind]} pages)"
        )
    print("  (goal column: the best published system's score per type, for reference)")
    if whole is not None:
        all_counts = {kind: sum(1 for r in everything if r["type"] == kind) for kind in TYPES}
        print(
            f"WCXB dev split, all {len(everything)} pages, cross-validated by site "
            "(each page read with the fold model that did not see its site)"
        )
        print(f"{'':30} {'web_fetch':>10} {'trafilatura':>12} {'resiliparse':>12} {'goal':>7}  result")
        for kind in TYPES:
            ours, theirs = whole["ours"].get(kind, 0.0), whole["theirs"].get(kind, 0.0)
            ok = ours > theirs
            missed += not ok
            print(
                f"{'WCXB ' + kind:30} {ours:10.3f} {theirs:12.3f} "
                f"{whole['resiliparse'].get(kind, 0.0):12.3f} {'> traf':>7}  "
                f"{'ok' if ok else 'MISSED'}  ({all_counts[kind]} pages)"
            )
        overall = {s: _overall(whole[s], all_counts) for s in ("ours", "theirs", "resiliparse")}
        ok = overall["ours"] >= CV_OVERALL_GOAL and overall["ours"] > overall["theirs"]
        missed += not ok
        print(
            f"{'WCXB overall':30} {overall['ours']:10.3f} {overall['theirs']:12.3f} "
            f"{overall['resiliparse']:12.3f} {CV_OVERALL_GOAL:7.3f}  {'ok' if ok else 'MISSED'}"
        )
    ok = ratio <= TIME_RATIO_LIMIT
    missed += not ok
    print(
        f"{'extraction time vs trafilatura':30} {ratio:9.2f}x {'1.00x':>12} {'':>12} "
        f"{TIME_RATIO_LIMIT:6.2f}x  {'ok' if ok else 'MISSED'}  ({ours_time:.1f} s vs "
        f"{theirs_time:.1f} s)"
    )
    times = [r["ours_time"] for r in results]
    slowest = max(times, default=0.0)
    ok = slowest < WORKER_DEADLINE / 2
    missed += not ok
    print(
        f"{'slowest page (p95, max)':30} {_p95(times):9.2f}s {'':>12} {'':>12} "
        f"{WORKER_DEADLINE / 2:6.1f}s  {'ok' if ok else 'MISSED'}  (max {slowest:.2f} s; "
        f"p95 trafilatura {_p95([r['theirs_time'] for r in results]):.2f} s; the deadline "
        f"is {WORKER_DEADLINE:.0f} s)"
    )
    _confusion(validation)
    print(
        f"{len(pages)} pages through web_fetch in {elapsed:.0f} s (2 workers), data: {options.data}"
    )
    if options.quick:
        print("quick mode: goals not enforced")
        return 0
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
