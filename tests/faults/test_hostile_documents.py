"""Hostile documents of every content type cost their URL a note, never the process: PDFs that
expand to gigabytes, JSON that re-indents to hundreds of MB, a feed that takes feedparser
quadratic time. Each runs through `pi-web fetch` in a child process capped at 3 GB of address
space, beside a good page that must arrive whole, within the timeout plus a small margin."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.support import hits, serve
from tests.support.pdfs import make_flate_text_bomb, make_pdf, make_slow_pdf, make_xobject_bomb

BIN = Path(sys.executable).parent
TIMEOUT = 5
MARGIN = 4.0
CAP = 3 * 1024**3


def _feed_with_many_attributes(count: int = 30_000) -> bytes:
    attributes = " ".join(f'a{i}="v"' for i in range(count))
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
        f"<item><title {attributes}>x</title></item></channel></rss>"
    ).encode()


HOSTILE = {
    "/xobjects.pdf": ("application/pdf", make_xobject_bomb(8, 10), "the PDF could not be read"),
    "/flate.pdf": (
        "application/pdf",
        make_flate_text_bomb(10_000_000),
        "the PDF could not be read",
    ),
    "/deep.json": (  # 450 KB
        "application/json",
        "[" + ",".join(["[" * 900 + "]" * 900] * 250) + "]",
        "JSON shown as it came",
    ),
    "/deep-2mb.json": (  # 1.98 MB: just under MAX_JSON_PRETTY, so re-indenting is tried
        "application/json",
        "[" + ",".join(["[" * 900 + "]" * 900] * 1100) + "]",
        "JSON shown as it came",
    ),
    "/attributes.xml": (
        "application/rss+xml",
        _feed_with_many_attributes(),
        "the feed could not be read as a feed",
    ),
}
GOOD = make_pdf(["A good report", "Second page"])


@pytest.fixture
def site(httpserver):
    routes = {path: (200, kind, body) for path, (kind, body, _) in HOSTILE.items()}
    routes["/good.pdf"] = (200, "application/pdf", GOOD)
    return SimpleNamespace(url=serve(httpserver, routes))


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


@pytest.mark.parametrize("path", sorted(HOSTILE))
def test_a_hostile_document_costs_its_url_a_note_and_nothing_else(path, site, write_config):
    write_config(
        {
            "providers": [
                {
                    "name": "direct",
                    "type": "direct",
                    "options": {"allowPrivateNetwork": True, "timeoutSeconds": TIMEOUT},
                }
            ]
        }
    )
    started = time.monotonic()
    proc = subprocess.run(
        [
            str(BIN / "pi-web"),
            "call",
            "web_fetch",
            json.dumps({"urls": [site.url + path, site.url + "/good.pdf"]}),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
        preexec_fn=_capped,
    )
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert elapsed < TIMEOUT + MARGIN, f"{path} took {elapsed:.1f} s"
    answer = json.loads(proc.stdout)
    text = "".join(part["text"] for part in answer["content"])
    first, second = text.split("\n\n---\n\n")
    assert HOSTILE[path][2] in first, first[:2000]
    assert "A good report" in second and "Second page" in second
    assert answer["details"]["fetched"] == 2


def test_a_slow_pdf_does_not_hold_up_another_calls_pdf(host, httpserver, write_config):
    """PDFs are no longer read one at a time per process: while one call's PDF takes all of its
    timeout to read, another call's small PDF (as from another MCP client) comes back at once."""
    seconds = 10
    write_config(
        {
            "providers": [
                {
                    "name": "direct",
                    "type": "direct",
                    "options": {"allowPrivateNetwork": True, "timeoutSeconds": seconds},
                }
            ]
        }
    )
    url = serve(
        httpserver,
        {
            "/slow.pdf": (200, "application/pdf", make_slow_pdf(pages=120)),  # ~40 s to read
            "/fast.pdf": (200, "application/pdf", GOOD),
        },
    )
    slow: dict = {}

    def read_slow() -> None:
        started = time.monotonic()
        slow["result"] = host.call("web_fetch", {"urls": [url + "/slow.pdf"]})
        slow["elapsed"] = time.monotonic() - started

    thread = threading.Thread(target=read_slow)
    thread.start()
    try:
        while hits(httpserver, "/slow.pdf") == 0 and thread.is_alive():
            time.sleep(0.05)
        time.sleep(1.0)  # the slow PDF is being read now
        started = time.monotonic()
        fast = host.call("web_fetch", {"urls": [url + "/fast.pdf"]})
        fast_elapsed = time.monotonic() - started
        slow_still_reading = thread.is_alive()
    finally:
        thread.join(seconds + 20)
    assert "A good report" in fast.text and "Second page" in fast.text, fast.text
    assert slow_still_reading, f"the slow PDF was read in {slow['elapsed']:.1f} s: not slow"
    assert fast_elapsed < seconds / 2, f"the small PDF waited {fast_elapsed:.1f} s"
    assert "the PDF could not be read: reading it stopped after" in slow["result"].text
    assert slow["elapsed"] < seconds + MARGIN, f"the slow PDF took {slow['elapsed']:.1f} s"
