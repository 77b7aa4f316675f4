"""Keys are removed once, where provider text enters, before anything can window, budget,
cache, title or log it: paging through a page that holds the key with windows shorter than the
key, and fitting many such pages into one answer, shows no 8-character piece of it anywhere."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.support import SECRET, kagi_config, log_text, serve, temp_files_text

PIECE = 8


def _pieces(secret: str = SECRET) -> list[str]:
    return [secret[i : i + PIECE] for i in range(len(secret) - PIECE + 1)]


def _leaks(text: str) -> list[str]:
    return [piece for piece in _pieces() if piece in text]


def _cache_text(root: Path) -> str:
    parts = []
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            parts.append(Path(dirpath, name).read_bytes().decode("latin-1"))
    return "\n".join(parts)


PAGE = "\n".join(
    f"line {n}: the session key is {SECRET} and the title of the page repeats it" for n in range(40)
)


@pytest.fixture(params=[True, False], ids=["cache-on", "cache-off"])
def cache_on(request):
    return request.param


@pytest.fixture
def site(httpserver):
    routes = {
        "/keyed.txt": (200, "text/plain; charset=utf-8", PAGE),
        "/titled.html": (
            200,
            "text/html; charset=utf-8",
            f"<html><head><title>{SECRET} {SECRET}</title></head><body><article>"
            + "".join(f"<p>Paragraph {n} quotes {SECRET} in running text.</p>" for n in range(60))
            + "</article></body></html>",
        ),
    }
    return SimpleNamespace(url=serve(httpserver, routes))


def test_small_windows_over_a_page_that_holds_the_key_show_no_piece_of_it(
    site, host, write_config, tmp_path, caplog, cache_on
):
    caplog.set_level(logging.DEBUG)
    config = kagi_config("http://127.0.0.1:9")  # the key is configured, so it is known
    config["providers"].append(
        {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}}
    )
    config["defaultProvider"] = "direct"
    config["cache"] = cache_on
    write_config(config)
    seen = []
    for url in (site.url + "/keyed.txt", site.url + "/titled.html"):
        offset = 0
        for _ in range(400):
            result = host.call(
                "web_fetch", {"urls": [url], "offset": offset, "text_max_characters": 12}
            )
            assert not result.is_error, result.text
            seen.append(result.text + json.dumps(result.details))
            if "Next: web_fetch" not in result.text:
                break
            offset = json.loads(result.text.rsplit("Next: web_fetch ", 1)[1].rstrip("]"))["offset"]
        else:
            pytest.fail("the page never ended")
    # Many pages in one answer: the fair budget cuts every section.
    many = host.call("web_fetch", {"urls": [site.url + f"/keyed.txt?n={n}" for n in range(20)]})
    seen.append(many.text + json.dumps(many.details))
    places = {
        "answers": "\n".join(seen),
        "spill and temp files": temp_files_text(),
        "the cache": _cache_text(tmp_path / "cache"),
        "logs": log_text(caplog),
    }
    leaked = {where: _leaks(text) for where, text in places.items() if _leaks(text)}
    assert not leaked, f"pieces of the key leaked: {leaked}"
    assert "***" in places["answers"]
