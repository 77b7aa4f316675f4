"""Reading a long page on: the continuation line carries a short hash of the text read so far,
checked when the next window is read, so a page whose copy was replaced by a changed one is said
to have changed instead of silently mixing two texts; on every replica sharing the state, a
continuation reads the very copy the first window came from."""

from __future__ import annotations

import json
import re

import pytest
from pi_web_tools import testing

from tests.support import LOOPBACK_DIRECT

FIRST = "".join(f"Line {n} of the first copy.\n" for n in range(600))
SECOND = "A banner was added.\n" + FIRST  # the same page, shifted by 20 characters
NEXT = re.compile(r"Next: web_fetch (\{.*\})\]$", re.M)


@pytest.fixture
def page(httpserver, write_config):
    """A long plain-text page on loopback; set ``page.text`` to change what it serves."""
    write_config(LOOPBACK_DIRECT)

    class Page:
        text = FIRST
        downloads = 0
        url = httpserver.url_for("/doc")

    def handler(request):
        from werkzeug import Response

        Page.downloads += 1
        return Response(Page.text, content_type="text/plain")

    httpserver.expect_request("/doc").respond_with_handler(handler)
    return Page


def _next_call(result) -> dict:
    return json.loads(NEXT.search(result.text).group(1))


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """Call it to go on as another machine would: a cache of its own (the first copy is gone)."""
    counter = iter(range(1, 100))

    def move() -> None:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / f"cache-{next(counter)}"))
        testing.reset()

    return move


def test_the_continuation_carries_the_hash_of_the_text_before_its_offset(host, page):
    first = host.call("web_fetch", {"urls": [page.url], "text_max_characters": 5000})
    call = _next_call(first)
    assert 4900 < call["offset"] <= 5000 and re.fullmatch(r"[0-9a-f]{8}", call["content_hash"])
    later = host.call("web_fetch", call)
    assert "changed" not in later.text and "changed" not in later.details["urls"][0]
    assert page.downloads == 1  # read on from the cache


def test_a_changed_copy_is_said_to_have_changed_not_mixed_silently(host, page, elsewhere):
    call = _next_call(host.call("web_fetch", {"urls": [page.url], "text_max_characters": 5000}))
    page.text = SECOND
    elsewhere()  # the stored copy is gone (expired, or another machine's)
    later = host.call("web_fetch", call)
    assert page.downloads == 2
    assert later.details["urls"][0]["changed"] is True
    note = next(line for line in later.text.splitlines() if "changed since" in line)
    assert f'content_hash "{call["content_hash"]}"' in note
    assert f"before offset {call['offset']}" in note
    restart = {"urls": [page.url], "text_max_characters": 5000}
    assert note.endswith(f"to read the new copy from its start: web_fetch {json.dumps(restart)}")
    # the window itself is the new copy's, and its own continuation carries the new hash
    assert _next_call(later)["content_hash"] != call["content_hash"]


def test_a_copy_fetched_again_unchanged_reads_on_without_a_note(host, page, elsewhere):
    call = _next_call(host.call("web_fetch", {"urls": [page.url], "text_max_characters": 5000}))
    elsewhere()
    later = host.call("web_fetch", call)
    assert page.downloads == 2 and "changed" not in later.details["urls"][0]


def test_a_page_that_became_shorter_than_the_offset_has_changed(host, page, elsewhere):
    call = _next_call(host.call("web_fetch", {"urls": [page.url], "text_max_characters": 5000}))
    page.text = FIRST[:3000]
    elsewhere()
    later = host.call("web_fetch", call)
    assert later.details["urls"][0]["changed"] is True


def test_a_change_after_the_offset_is_no_mix(host, page, elsewhere):
    """Only the text the earlier windows read must be the same: a page that changed further on
    is one consistent text from here."""
    call = _next_call(host.call("web_fetch", {"urls": [page.url], "text_max_characters": 5000}))
    page.text = FIRST[:9000] + "An edit near the end.\n" + FIRST[9000:]
    elsewhere()
    later = host.call("web_fetch", call)
    assert "changed" not in later.details["urls"][0]


def test_a_question_or_find_from_an_offset_is_checked_too(host, page, elsewhere):
    call = _next_call(host.call("web_fetch", {"urls": [page.url], "text_max_characters": 5000}))
    page.text = SECOND
    elsewhere()
    found = host.call("web_fetch", {**call, "find": ["Line 300 "]})
    assert found.details["urls"][0]["changed"] is True


@pytest.mark.redis
def test_every_replica_reads_the_copy_the_first_window_came_from(
    host, page, shared_state, elsewhere
):
    first = host.call("web_fetch", {"urls": [page.url], "text_max_characters": 5000})
    page.text = SECOND  # the page changes on the site
    elsewhere()  # another replica: nothing of this process is left, the state is shared
    later = host.call("web_fetch", _next_call(first))
    assert page.downloads == 1
    assert "changed" not in later.details["urls"][0]
    assert later.text.count("Line ") > 100 and "banner" not in later.text
