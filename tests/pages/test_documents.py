"""Documents that are not HTML pages: PDF, JSON, feeds; and pages that need JavaScript or are
refused to bots, retried through another configured fetcher (end to end through `pi-web`)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pi_web_tools.pages.documents import feed_to_text, is_feed, pdf_to_text, pretty_json

from tests.support import ROOT
from tests.support.documents import ATOM, RSS
from tests.support.pdfs import encrypt_pdf, make_pdf


def test_a_pdf_becomes_text_with_page_markers():
    text, notes = pdf_to_text(make_pdf(["Hello PDF world\nsecond line", "", "Third page"]))
    assert text == (
        "[Page 1 of 3]\nHello PDF world\nsecond line\n\n[Page 2 of 3]\n\n[Page 3 of 3]\nThird page"
    )
    assert notes == ["PDF, 3 pages"]


@pytest.mark.parametrize(
    "data, note",
    [
        (make_pdf(["", ""]), "has no text layer"),
        (encrypt_pdf(make_pdf(["secret text"])), "encrypted"),
        (b"%PDF-1.7 then garbage", "could not be read"),
    ],
    ids=["scanned", "encrypted", "damaged"],
)
def test_a_pdf_without_readable_text_is_a_note_not_a_failure(data, note):
    text, notes = pdf_to_text(data)
    assert text == "" and any(note in n for n in notes)


def test_json_is_pretty_printed_and_anything_else_left_as_it_is():
    assert (
        pretty_json('{"a":[1,{"b":null}]}')[0]
        == '{\n  "a": [\n    1,\n    {\n      "b": null\n    }\n  ]\n}'
    )
    assert pretty_json("not json {") == ("not json {", [])


@pytest.mark.parametrize(
    "body, why",
    [
        ('{"a": 1, "a": 2}', "duplicate keys"),
        ('{"a": Infinity}', "Infinity"),
        ('{"a": 0.10000000000000000555}', "numbers"),
        ("[" * 900 + "]" * 900, "times its size"),
    ],
    ids=["duplicate-keys", "infinity", "float-digits", "deep-nesting"],
)
def test_json_that_cannot_be_reindented_faithfully_or_small_is_shown_as_it_came(body, why):
    text, notes = pretty_json(body)
    assert text == body
    assert len(notes) == 1 and notes[0].startswith("JSON shown as it came") and why in notes[0]


def test_a_page_that_mentions_rss_in_a_script_is_not_a_feed():
    page = b'<!doctype html><html><head><script>var t = "<rss version=2.0>";</script></head>'
    assert not is_feed(page)
    assert is_feed(b'\xef\xbb\xbf<?xml version="1.0"?>\n<!-- c -->\n<rss version="2.0">')


@pytest.mark.parametrize("feed", [RSS, ATOM], ids=["rss", "atom"])
def test_feeds_become_a_list_of_entries(feed):
    assert is_feed(feed)
    title, text = feed_to_text(feed)
    if feed is RSS:
        assert title == "Release notes"
        assert text.startswith(
            "1. v2.0 released\n   https://ex.test/v2\n   Published: Mon, 02 Nov 2026 10:00:00 GMT\n   Big news"
        )
        assert "2. v1.9 released\n   https://ex.test/v19" in text
    else:
        assert title == "Blog" and text.startswith("1. Hello Atom\n   https://ex.test/a")


def test_many_pdfs_at_once_do_not_crash_the_process():
    """PDFium is not thread-safe: 20 PDFs read from 20 threads at once (as one web_fetch of 20
    URLs does) all come back whole; run in a child process, since a crash would abort it."""
    code = (
        "from concurrent.futures import ThreadPoolExecutor\n"
        "from tests.support.pdfs import make_pdf\n"
        "from pi_web_tools.pages.documents import pdf_to_text\n"
        "data = [make_pdf([f'page {i} text'] * 40) for i in range(20)]\n"
        "with ThreadPoolExecutor(20) as pool:\n"
        "    texts = [t for t, _ in pool.map(pdf_to_text, data * 5)]\n"
        "assert all(f'page {i % 20} text' in t for i, t in enumerate(texts)), texts\n"
        "print('ok')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
