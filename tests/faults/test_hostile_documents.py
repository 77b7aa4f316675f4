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
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from ..conftest import serve
from ..pdfs import make_flate_text_bomb, make_pdf, make_xobject_bomb

pytestmark = pytest.mark.slow

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
    "/deep.json": (
        "application/json",
        "[" + ",".join(["[" * 900 + "]" * 900] * 250) + "]",
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
