"""web_fetch's question mode against its first window, on the fixed question set.

Each page is read through the tool as a user calls it: `web_fetch` of the page's own URL (made
http), in a host with the direct fetcher and the answer cache, while a loopback proxy (the
standard ``HTTP_PROXY`` variable) answers each URL with the benchmark's HTML. A page is
downloaded once; its first window and every question are answered from the cached copy.

A question is a hit when its answer (a literal string of the page) is in the text the call
returns for the page (its section after the title and URL lines); characters are those of that
text, labels and last line included. The first window is the default call (12,000 characters).
Questions the page does not answer count as rejected when the section says "may not answer".
Tuning used only the ``tuning`` half (split by site); the ``validation`` half and the
``fresh`` questions (pages of validation-half sites no other question uses) are held out, and
the goal is enforced on each: at least 90% hit at no more than a quarter of the characters.

    python bench/question.py            # every question (needs ../shared/data/wcxb-dev)
    python bench/question.py --quick    # the questions on the committed sample pages only
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from extract import Proxy, site_half  # noqa: E402

FULL = HERE.parent.parent / "shared" / "data" / "wcxb-dev"
SAMPLE = HERE / "sample-data" / "wcxb-dev-sample"
QUESTIONS = HERE / "questions.json"
HIT_GOAL = 0.90
CHARACTERS_GOAL = 0.25


def _pages(data: Path, ids: set[str]) -> dict[str, dict]:
    """Each page of *ids* the data holds: its URL (made http, as the proxy serves it), file
    and site half."""
    pages = {}
    for page_id in sorted(ids):
        truth = data / "ground-truth" / f"{page_id}.json"
        html = data / "html" / f"{page_id}.html.gz"
        if not (truth.is_file() and html.is_file()):
            continue
        url = json.loads(truth.read_text(encoding="utf-8")).get("url") or ""
        pages[page_id] = {
            "id": page_id,
            "url": re.sub(r"^https:", "http:", url).split("#", 1)[0],
            "file": str(html),
            "half": site_half(url),
        }
    return pages


def _returned(result) -> str:
    """What a call returned for its one page: the section after the title and URL lines."""
    text = result.text
    return text.split("\n\n", 1)[1] if "\n\n" in text else ""


def _in_code(text: str, answer: str) -> bool:
    """Whether the answer's first occurrence is inside a code block of the page."""
    from pi_web_tools.tools import passages

    at = text.find(answer)
    return any(p.code and p.start <= at < p.end for p in passages.split(text))


def _ask(host, questions: list[dict], pages: dict[str, dict]) -> list[dict]:
    rows = []
    for page_id in sorted({q["page"] for q in questions}):
        page = pages[page_id]
        whole = host.call("web_fetch", {"urls": [page["url"]], "text_max_characters": 10**6})
        if whole.is_error:
            print(f"page {page_id} could not be read: {whole.text[:200]}", file=sys.stderr)
            continue
        text = _returned(whole)
        first = _returned(host.call("web_fetch", {"urls": [page["url"]]}))
        for question in (q for q in questions if q["page"] == page_id):
            started = time.perf_counter()
            result = host.call(
                "web_fetch", {"urls": [page["url"]], "question": question["question"]}
            )
            seconds = time.perf_counter() - started
            returned = _returned(result)
            answer = question["answer"]
            facts = result.details["urls"][0]
            rows.append(
                {
                    **question,
                    "missing": answer is not None and answer not in text,
                    "hit": answer is not None and answer in returned,
                    "first_hit": answer is not None and answer in first,
                    "characters": len(returned),
                    "first_characters": len(first),
                    "rejected": bool(facts.get("mayNotAnswer")),
                    "code": answer is not None and answer in text and _in_code(text, answer),
                    "seconds": seconds,
                    "cached": bool(facts.get("cache", {}).get("hit")),
                }
            )
    return rows


def _report(rows: list[dict], label: str) -> dict:
    asked = [r for r in rows if r["answer"] is not None and not r["missing"]]
    unanswerable = [r for r in rows if r["answer"] is None]
    if not asked:
        return {}
    hit = sum(r["hit"] for r in asked) / len(asked)
    first_hit = sum(r["first_hit"] for r in asked) / len(asked)
    chars = statistics.median(r["characters"] for r in asked)
    first_chars = statistics.median(r["first_characters"] for r in asked)
    code = [r for r in asked if r["code"]]
    rejected = sum(r["rejected"] for r in unanswerable)
    wrongly = sum(r["rejected"] for r in asked)
    print(
        f"{label:11} {len(asked):>4} {hit:>7.1%} {first_hit:>9.1%} {chars:>10,.0f} "
        f"{first_chars:>10,.0f} {chars / first_chars:>7.3f} "
        f"{rejected:>4}/{len(unanswerable):<4} {wrongly:>6} "
        f"{sum(r['hit'] for r in code):>4}/{len(code):<3}"
    )
    return {"hit": hit, "ratio": chars / first_chars}


def main(argv: list[str] | None = None) -> int:
    """Run the questions; print the table; exit 1 when a goal is missed (not with --quick)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the sample pages only")
    parser.add_argument(
        "--half",
        choices=["tuning", "validation", "fresh"],
        help="only the questions of this half (the default: both, the validation half reported)",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=FULL if (FULL / "html").is_dir() else SAMPLE,
        help=f"the WCXB pages (default: {FULL} when present, else the committed sample)",
    )
    options = parser.parse_args(argv)
    data = SAMPLE if options.quick else options.data
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    pages = _pages(data, {q["page"] for q in questions})
    questions = [q for q in questions if q["page"] in pages and options.half in (None, q["half"])]
    if not questions:
        print(f"bench/question.py: none of the question pages are in {data}", file=sys.stderr)
        return 2
    for question in questions:  # the fresh questions are on pages of the validation half
        half = {"fresh": "validation"}.get(question["half"], question["half"])
        assert pages[question["page"]]["half"] == half, question
    proxy = Proxy(list(pages.values()))
    with tempfile.TemporaryDirectory() as agent:
        os.environ.update(
            {
                "PI_CODING_AGENT_DIR": agent,
                "XDG_CACHE_HOME": str(Path(agent) / "cache"),
                "HTTP_PROXY": proxy.url,
                "http_proxy": proxy.url,
            }
        )
        for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY"):
            os.environ.pop(name, None)
        config = {  # the pages' own HTML, as the answers were written from: no site reader
            "providers": [{"name": "direct", "type": "direct", "options": {"timeoutSeconds": 60}}],
            "readers": False,
        }
        (Path(agent) / "web-search.json").write_text(json.dumps(config))
        (Path(agent) / "web-search.json").chmod(0o600)
        import pi_web_tools.plugin
        from pi_hostspec import Host, get_plugin_manager

        host = Host(get_plugin_manager(load_entrypoints=False, plugins=[pi_web_tools.plugin]))
        started = time.monotonic()
        rows = _ask(host, questions, pages)
        elapsed = time.monotonic() - started
    print(
        f"{'half':11} {'asked':>4} {'hit':>7} {'1st window':>9} {'chars':>10} {'1st chars':>10} "
        f"{'ratio':>7} {'not answered':>9} {'wrong':>6} {'code hits':>8}"
    )
    results = {
        half: _report([r for r in rows if r["half"] == half], half)
        for half in ("tuning", "validation", "fresh")
    }
    _report([r for r in rows if r["half"] != "tuning"], "held out")
    missing = sum(r["missing"] for r in rows)
    cached = sum(r["cached"] for r in rows)
    print(
        f"{len(rows)} questions on {len({r['page'] for r in rows})} pages in {elapsed:.0f} s "
        f"({cached} answered from the cached copy); {missing} answers no longer in their "
        f"page's text (left out); data: {data}"
    )
    print(
        "hit: the answer is in what the call returned; ratio: median characters returned "
        "against the first window's; not answered: questions the page does not answer that "
        "the call said it may not; wrong: answerable questions it said that of"
    )
    held_out = {half: results[half] for half in ("validation", "fresh") if results.get(half)}
    if options.quick or not held_out:
        print("quick mode: goals not enforced" if options.quick else "no held-out questions")
        return 0
    missed = 0
    for half, result in held_out.items():
        ok = result["hit"] >= HIT_GOAL and result["ratio"] <= CHARACTERS_GOAL
        missed += not ok
        print(
            f"goal on {half}: hit >= {HIT_GOAL:.0%} at ratio <= {CHARACTERS_GOAL}: "
            f"{'ok' if ok else 'MISSED'}"
        )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
