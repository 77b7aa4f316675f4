"""Bounded extraction (workers): extract_html in warm worker processes, killed at the deadline or on
cancellation, with a fallback to the whole page text."""

from __future__ import annotations

import threading
import time

import pytest
from pi_web_tools.pages import workers
from pi_web_tools.pages.content import extract_html

PAGE = (
    "<html><head><title>Worker page</title></head><body><nav>menu</nav><article><h1>Hello</h1>"
    + "<p>A paragraph of an ordinary article, long enough to be the main content. </p>" * 20
    + "</article></body></html>"
)
HOSTILE = "<p>x" * 1_000_000


@pytest.fixture
def fresh_pool(monkeypatch):
    """A pool of this test's own, shut down afterwards."""
    monkeypatch.setattr(workers, "_pool", None)
    yield
    workers.shutdown()


def test_a_worker_gives_what_extract_html_gives(fresh_pool):
    """Title, text and notes from the worker equal an in-process extraction's."""
    found = workers.extract_html(PAGE, "https://example.com/a", deadline=time.monotonic() + 20)
    assert found == tuple(extract_html(PAGE, "https://example.com/a"))


def test_workers_are_kept_warm_and_reused(fresh_pool):
    """Sequential pages reuse one worker process, and a warm extraction is fast."""
    workers.extract_html(PAGE, deadline=time.monotonic() + 20)
    pool = workers._get_pool()
    pid = pool.idle[0].process.pid
    start = time.monotonic()
    for _ in range(5):
        workers.extract_html(PAGE, deadline=time.monotonic() + 20)
    assert (time.monotonic() - start) / 5 < 0.1
    assert [worker.process.pid for worker in pool.idle] == [pid]


def test_past_the_deadline_the_page_falls_back_to_its_whole_text(fresh_pool):
    """A page still extracting at the deadline gets its whole text and a note; the worker dies."""
    start = time.monotonic()
    found = workers.extract_html(HOSTILE, deadline=start + 1.5)
    assert time.monotonic() - start < 3.0  # the deadline, the fallback, a loaded machine's slack
    title, text, notes, _links = found
    assert "main-content extraction stopped after" in notes[0]
    assert text.startswith("x\nx")
    assert workers._get_pool().busy == 0


def test_cancellation_kills_the_worker_at_once(fresh_pool):
    """Setting the cancel event ends the wait within a poll interval and kills the worker."""
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    start = time.monotonic()
    with pytest.raises(InterruptedError):
        workers.extract_html(HOSTILE, deadline=start + 30, cancel=cancel)
    assert time.monotonic() - start < 1.0
    pool = workers._get_pool()
    assert pool.busy == 0 and pool.idle == []


def test_a_worker_is_retired_after_its_share_of_pages(fresh_pool, monkeypatch):
    """After TASKS_PER_WORKER pages a worker exits and a fresh one takes over."""
    monkeypatch.setattr(workers, "TASKS_PER_WORKER", 2)
    workers.extract_html(PAGE, deadline=time.monotonic() + 20)
    first = workers._get_pool().idle[0].process
    workers.extract_html(PAGE, deadline=time.monotonic() + 20)
    assert first.poll() is not None
    assert workers._get_pool().idle == []


def test_a_worker_that_cannot_start_means_in_process_extraction(fresh_pool, monkeypatch):
    """An interpreter that cannot run workers still extracts pages (in the calling thread)."""
    monkeypatch.setattr(workers.sys, "executable", "/nonexistent/python")
    found = workers.extract_html(PAGE, deadline=time.monotonic() + 5)
    assert found[0] == "Worker page" and "ordinary article" in found[1]


def test_shutdown_stops_idle_workers(fresh_pool):
    """shutdown() kills the warm workers (as the process's exit does)."""
    workers.extract_html(PAGE, deadline=time.monotonic() + 20)
    process = workers._get_pool().idle[0].process
    workers.shutdown()
    assert process.poll() is not None
