"""The keyless ddgs provider against the library's misbehaviours (hangs, refusals, junk,
crashes, absence), through the public tool call. The library is mocked: it reaches search
engines' public pages, which no loopback server can stand in for."""

from __future__ import annotations

import sys
import threading

import pytest
from ddgs import ddgs as library
from ddgs import exceptions
from pi_hostspec import ToolContext

from tests.support import TIMEOUT, assert_clean_error, assert_in_time, assert_no_secret

CONFIG = {
    "providers": [
        {
            "name": "free",
            "type": "ddgs",
            "options": {"timeoutSeconds": TIMEOUT, "backends": ["duckduckgo", "mojeek"]},
        }
    ]
}


@pytest.fixture
def release():
    """An event that frees hanging fakes when the test ends."""
    event = threading.Event()
    yield event
    event.set()


def _raise(exc):
    def text(self, query, **kwargs):
        raise exc

    return text


FAULTS = {
    "rate-limited": (
        _raise(exceptions.RatelimitException("202 Ratelimit")),
        ("refused the query", "API key"),
    ),
    "captcha": (
        _raise(exceptions.DDGSException("captcha required")),
        ("rate limited or asked for a CAPTCHA",),
    ),
    "library-timeout": (
        _raise(exceptions.TimeoutException("timed out")),
        ("duckduckgo: timed out",),
    ),
    "crash": (_raise(RuntimeError('boom\n  File "x.py"\n\x1b[31mred')), ("duckduckgo: boom",)),
    "not-a-list": (
        lambda self, query, **kw: {"results": "nope"},
        ("No keyless backend returned results",),
    ),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_ddgs_fault(fault, monkeypatch, tools, write_config, debug_logs):
    """Each failure ends in time as one clean line (or an honest empty answer)."""
    fake, needles = FAULTS[fault]
    monkeypatch.setattr(library.DDGS, "text", fake)
    write_config(CONFIG)
    outcome = tools.call("web_search", {"queries": ["fault test"]})
    assert_in_time(outcome)
    assert_no_secret(outcome, debug_logs)
    if fault == "not-a-list":
        assert not outcome.result.is_error and needles[0] in outcome.text
    else:
        assert_clean_error(outcome, *needles)
        assert "\x1b" not in outcome.text and 'File "' not in outcome.text


def test_a_hanging_search_ends_at_the_timeout(monkeypatch, tools, write_config, release):
    """A library call that never returns ends at timeoutSeconds with a timeout error."""
    monkeypatch.setattr(library.DDGS, "text", lambda self, query, **kw: release.wait(30) and [])
    write_config(CONFIG)
    outcome = tools.call("web_search", {"queries": ["a", "b", "c"]})
    assert_in_time(outcome)
    assert_clean_error(outcome, "timed out after 1 s waiting for the duckduckgo backend")


def test_cancellation_ends_a_hanging_search(monkeypatch, tools, write_config, release):
    """Cancelling the call stops it within a fraction of a second."""
    monkeypatch.setattr(library.DDGS, "text", lambda self, query, **kw: release.wait(30) and [])
    config = {"providers": [{"name": "free", "type": "ddgs", "options": {"timeoutSeconds": 30}}]}
    write_config(config)
    ctx = ToolContext()
    threading.Timer(0.2, ctx.cancel.set).start()
    outcome = tools.call("web_search", {"queries": ["x"]}, ctx)
    assert outcome.elapsed < 1.0
    assert_clean_error(outcome, "cancelled")


def test_without_the_library_the_call_says_what_to_install(monkeypatch, tools, write_config):
    """ddgs not installed: a clean error with the install command that fits this install (a
    checkout's is `pip install -e '<path>[keyless]'`), no traceback."""
    from pi_hostspec.install import install_command

    monkeypatch.setitem(sys.modules, "ddgs", None)
    write_config(CONFIG)
    outcome = tools.call("web_search", {"queries": ["x"]})
    assert_clean_error(outcome, install_command("keyless"))
    assert "[keyless]" in install_command("keyless")
