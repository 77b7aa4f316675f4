"""Dispatch to site readers: which reader claims a URL, and what comes of every way it can end."""

from __future__ import annotations

import threading
import time

from pi_web_tools.api.readers import Reader, ReaderError, Reading
from pi_web_tools.runtime import readers
from pi_web_tools.runtime.reader_config import ReadersConfig


class Config:
    """Just what the dispatch reads of a config."""

    def __init__(self, settings: ReadersConfig | None = None):
        self.readers = settings or ReadersConfig()


def reader(read, hosts=("docs.demo.example",), name="demo") -> Reader:
    return Reader(name=name, label="Demo", hosts=hosts, read=read, source="the Demo API")


def run(
    found: Reader, url: str = "https://docs.demo.example/a", settings=None, seconds=5.0, cancel=None
):
    from pi_web_tools import testing

    class Ctx:
        pass

    ctx = Ctx()
    ctx.cancel = cancel
    with testing.provider_types(found):
        return readers.read([url], Config(settings), ctx, time.monotonic() + seconds)


def test_a_reading_becomes_the_page_and_says_where_it_came_from():
    outcome = run(reader(lambda url, web: Reading(title="A", text="text of a")))[
        "https://docs.demo.example/a"
    ]
    assert outcome.page.ok and outcome.page.text == "text of a"
    assert outcome.page.notes[0] == "read via the Demo API" and outcome.reader == "demo"


def test_urls_of_other_hosts_and_readers_switched_off_are_not_claimed():
    found = reader(lambda url, web: Reading(text="x"))
    assert run(found, "https://other.example/a") == {}
    assert run(found, settings=ReadersConfig(off=frozenset({"demo"}))) == {}
    assert run(found, settings=ReadersConfig(enabled=False)) == {}


def test_a_wildcard_host_claims_subdomains_only():
    found = reader(lambda url, web: Reading(text="x"), hosts=("*.demo.example",))
    assert run(found, "https://a.demo.example/") and not run(found, "https://demo.example/")


def test_a_reader_that_declines_leaves_the_url_to_the_usual_fetch():
    outcome = run(reader(lambda url, web: None))["https://docs.demo.example/a"]
    assert outcome.page is None and outcome.note is None


def test_a_failure_with_fall_back_is_a_note_and_one_without_is_the_urls_error():
    def fails(fall_back):
        def read(url, web):
            raise ReaderError("the Demo API is down", status=503, fall_back=fall_back)

        return read

    fallen = run(reader(fails(True)))["https://docs.demo.example/a"]
    assert fallen.page is None and fallen.note == "Demo: the Demo API is down"
    failed = run(reader(fails(False)))["https://docs.demo.example/a"]
    assert (
        not failed.page.ok
        and failed.page.error == "the Demo API is down"
        and failed.page.status == 503
    )


def test_a_broken_reader_costs_nothing_but_a_note():
    def broken(url, web):
        raise KeyError("boom")

    outcome = run(reader(broken))["https://docs.demo.example/a"]
    assert outcome.page is None and "reader failed (KeyError)" in outcome.note
    odd = run(reader(lambda url, web: {"text": "x"}))["https://docs.demo.example/a"]
    assert odd.page is None and "returned dict, not a Reading" in odd.note


def test_a_reader_that_ignores_the_deadline_does_not_hold_the_call():
    release = threading.Event()

    def hangs(url, web):
        release.wait(30)
        return Reading(text="late")

    started = time.monotonic()
    outcome = run(reader(hangs), seconds=0.5)["https://docs.demo.example/a"]
    release.set()
    assert time.monotonic() - started < 0.5 + readers.GRACE_SECONDS + 1
    assert not outcome.page.ok and "timed out" in outcome.page.error


def test_a_cancelled_call_stops_waiting_for_a_reader():
    release = threading.Event()
    cancel = threading.Event()

    def hangs(url, web):
        release.wait(30)

    threading.Timer(0.2, cancel.set).start()
    started = time.monotonic()
    outcome = run(reader(hangs), seconds=10, cancel=cancel)["https://docs.demo.example/a"]
    release.set()
    assert time.monotonic() - started < 2 and outcome.page.error == "cancelled"
