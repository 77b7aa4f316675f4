"""Retries, Retry-After, deadlines and cancellation, observed from the server through tool calls."""

from __future__ import annotations

import threading
import time

import pytest
from pi_hostspec import ToolContext

from tests.support import assert_clean_error, assert_no_secret
from tests.support.fault_server import Hang, Reply, Trickle

from .cases import (
    BRAVE_SEARCH,
    DIRECT_FETCH,
    EXA_FETCH,
    EXA_SEARCH,
    KAGI_SEARCH,
    KAGI_SUMMARIZE,
    TAVILY_FETCH,
    TAVILY_SEARCH,
    error_reply,
)
from .cases import ok_reply as cases_ok_reply


def ok_reply(target):
    return cases_ok_reply(target.family)


def gaps(server) -> list[float]:
    """Seconds between consecutive requests."""
    times = [request["time"] for request in server.requests]
    return [later - earlier for earlier, later in zip(times, times[1:], strict=False)]


@pytest.mark.parametrize(
    "target,status",
    [
        (KAGI_SEARCH, 429),
        (KAGI_SEARCH, 502),
        (KAGI_SEARCH, 503),
        (EXA_SEARCH, 429),
        (EXA_FETCH, 504),
    ],
    ids=lambda v: str(v),
)
def test_retryable_status_is_tried_three_times_with_growing_waits(
    target, status, server, tools, write_config
):
    """A persistent 429/502/503/504 is sent three times (two retries), waits growing, all within the timeout."""
    server.script(error_reply(target.family, status))
    write_config(target.config(server, timeout=3.0))
    outcome = tools.call(target.tool, target.args(server))
    assert_clean_error(outcome, f"HTTP {status}")
    assert server.count == 3
    first, second = gaps(server)
    assert 0.45 <= first <= 0.9 and 0.95 <= second <= 1.5  # 0.5 s then 1 s, plus jitter
    assert outcome.elapsed <= 3.0 + 0.5


@pytest.mark.parametrize(
    "target", [KAGI_SEARCH, EXA_SEARCH, BRAVE_SEARCH, TAVILY_SEARCH, TAVILY_FETCH], ids=str
)
@pytest.mark.parametrize("status", [400, 401, 402, 403, 404, 500])
def test_client_errors_are_never_retried(target, status, server, tools, write_config):
    """400, 401, 402, 403 (and other non-retryable statuses) are sent exactly once."""
    server.script(error_reply(target.family, status))
    write_config(target.config(server, timeout=3.0))
    outcome = tools.call(target.tool, target.args(server))
    assert_clean_error(outcome, f"HTTP {status}")
    assert server.count == 1
    assert outcome.elapsed < 0.5


@pytest.mark.parametrize(
    "target", [KAGI_SEARCH, EXA_SEARCH, BRAVE_SEARCH, TAVILY_SEARCH, TAVILY_FETCH], ids=str
)
def test_retry_then_success_returns_the_results(target, server, tools, write_config):
    """A 503 then a 200 gives the results: the failure is invisible except in the time taken."""
    server.script(error_reply(target.family, 503), ok_reply(target))
    write_config(target.config(server, timeout=3.0))
    outcome = tools.call(target.tool, target.args(server))
    assert not outcome.result.is_error, outcome.text
    assert "https://a.example/" in outcome.text and server.count == 2


@pytest.mark.parametrize("target", [KAGI_SEARCH, EXA_SEARCH], ids=str)
def test_retry_after_is_honoured(target, server, tools, write_config):
    """Retry-After: 1 makes the retry wait a second (longer than the 0.5 s backoff)."""
    server.script(error_reply(target.family, 429, {"Retry-After": "1"}), ok_reply(target))
    write_config(target.config(server, timeout=3.0))
    outcome = tools.call(target.tool, target.args(server))
    assert not outcome.result.is_error, outcome.text
    (gap,) = gaps(server)
    assert 0.95 <= gap <= 1.5


def test_retry_after_is_capped(server, tools, write_config, monkeypatch):
    """A Retry-After of an hour is waited only up to the cap (patched to 1 s here), then retried."""
    from pi_web_tools.api import retry

    monkeypatch.setattr(retry, "DEFAULT_RETRY", retry.RetryPolicy(retry_after_cap=1.0))
    server.script(error_reply("kagi", 429, {"Retry-After": "3600"}), ok_reply(KAGI_SEARCH))
    write_config(KAGI_SEARCH.config(server, timeout=3.0))
    outcome = tools.call("web_search", {"queries": ["x"]})
    assert not outcome.result.is_error, outcome.text
    (gap,) = gaps(server)
    assert 0.95 <= gap <= 1.5


@pytest.mark.parametrize("target", [KAGI_SEARCH, EXA_SEARCH], ids=str)
def test_retry_after_past_the_deadline_fails_at_once(target, server, tools, write_config):
    """A Retry-After that would outlast the timeout is not waited for: the 429 is reported at once."""
    server.script(error_reply(target.family, 429, {"Retry-After": "5"}))
    write_config(target.config(server, timeout=1.0))
    outcome = tools.call(target.tool, target.args(server))
    assert_clean_error(outcome, "HTTP 429", "retry after 5 s")
    assert server.count == 1 and outcome.elapsed < 0.5


def cancel_after(seconds: float) -> ToolContext:
    """A context whose cancel event a timer thread sets after *seconds*."""
    ctx = ToolContext()
    timer = threading.Timer(seconds, ctx.cancel.set)
    timer.daemon = True
    timer.start()
    return ctx


@pytest.mark.parametrize("target", [KAGI_SEARCH, KAGI_SUMMARIZE, EXA_SEARCH, EXA_FETCH], ids=str)
def test_cancel_during_a_retry_wait_stops_promptly(target, server, tools, write_config, debug_logs):
    """Cancelling while waiting 5 s to retry a 503 ends the call at once, saying it was cancelled."""
    server.script(error_reply(target.family, 503, {"Retry-After": "5"}))
    write_config(target.config(server, timeout=8.0))
    outcome = tools.call(target.tool, target.args(server), cancel_after(0.3))
    assert_clean_error(outcome, "cancelled")
    assert outcome.elapsed < 0.3 + 0.4
    assert server.count == 1
    assert_no_secret(outcome, debug_logs)


@pytest.mark.parametrize("target", [KAGI_SEARCH, EXA_FETCH, DIRECT_FETCH], ids=str)
def test_cancel_while_a_body_trickles_in_stops_promptly(target, server, tools, write_config):
    """Cancelling while a body trickles in ends the call at once, saying it was cancelled."""
    server.script(Trickle())
    write_config(target.config(server, timeout=8.0))
    outcome = tools.call(target.tool, target.args(server), cancel_after(0.3))
    assert_clean_error(outcome, "cancelled")
    assert outcome.elapsed < 0.3 + 0.4


@pytest.mark.parametrize("target", [KAGI_SEARCH, EXA_FETCH, DIRECT_FETCH], ids=str)
def test_a_trickling_body_ends_at_the_timeout(target, server, tools, write_config):
    """A body that never finishes arriving is cut off at the configured timeout with an error."""
    server.script(Trickle())
    write_config(target.config(server, timeout=1.0))
    outcome = tools.call(target.tool, target.args(server))
    assert_clean_error(outcome, "timed out")
    assert outcome.elapsed < 1.0 + 0.5


@pytest.mark.parametrize("target", [KAGI_SEARCH, EXA_FETCH, DIRECT_FETCH], ids=str)
def test_cancelled_before_the_call_sends_nothing(target, server, tools, write_config):
    """A call whose context is already cancelled sends no request and says it was cancelled."""
    server.script(Reply(200, "{}"))
    write_config(target.config(server))
    ctx = ToolContext()
    ctx.cancel.set()
    outcome = tools.call(target.tool, target.args(server), ctx)
    assert_clean_error(outcome, "cancelled")
    assert server.count == 0


def test_cancel_reaches_every_url_of_a_direct_fetch(server, tools, write_config):
    """Cancelling a three-URL direct fetch reports every URL as cancelled, promptly."""
    server.script(Trickle())
    write_config(DIRECT_FETCH.config(server, timeout=8.0))
    urls = [server.url(f"/p{i}") for i in range(3)]
    start = time.monotonic()
    outcome = tools.call("web_fetch", {"urls": urls}, cancel_after(0.3))
    assert time.monotonic() - start < 0.8
    assert outcome.result.is_error and outcome.text.count("cancelled") == 3


@pytest.mark.parametrize("target", [KAGI_SEARCH, KAGI_SUMMARIZE, EXA_FETCH, DIRECT_FETCH], ids=str)
def test_cancel_while_waiting_for_headers_stops_promptly(target, server, tools, write_config):
    """Cancelling while the server sits on the request (no headers yet) ends the call at once."""
    server.script(Hang())
    write_config(target.config(server, timeout=8.0))
    outcome = tools.call(target.tool, target.args(server), cancel_after(0.3))
    assert_clean_error(outcome, "cancelled")
    assert outcome.elapsed < 0.3 + 0.4
