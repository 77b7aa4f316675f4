"""runtime/run.py's single-flight: calls that want the same page at once make one download,
in this process and (with a shared state) across replicas; a leader that fails or a fresh call
does not hold the others."""

from __future__ import annotations

import threading
import time

import pytest
from werkzeug import Response

pytestmark = pytest.mark.redis

TEXT = "Single flight. " * 400


@pytest.fixture(params=["local", "redis"])
def where(request):
    if request.param == "redis":
        request.getfixturevalue("shared_state")
    return request.param


@pytest.fixture
def slow_page(httpserver, write_config):
    """``/long``: a plain-text page that takes 0.4 s (``/slower``: 1.5 s); the list of their
    downloads."""
    write_config(
        {
            "providers": [
                {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}}
            ]
        }
    )
    downloads: list[float] = []

    def handler(request):
        downloads.append(time.monotonic())
        time.sleep(1.5 if request.path == "/slower" else 0.4)
        return Response(TEXT, content_type="text/plain")

    httpserver.expect_request("/long").respond_with_handler(handler)
    httpserver.expect_request("/slower").respond_with_handler(handler)
    return httpserver.url_for("/long"), downloads


def _at_once(host, count: int, args: dict) -> list:
    results: list = [None] * count

    def call(index: int) -> None:
        results[index] = host.call("web_fetch", args)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def test_five_calls_for_one_page_at_once_download_it_once(host, slow_page, where):
    url, downloads = slow_page
    results = _at_once(host, 5, {"urls": [url], "text_max_characters": 1000})
    assert len(downloads) == 1
    assert all(not r.is_error and "Single flight." in r.text for r in results)
    # four of them read the leader's page from the cache
    assert sum(1 for r in results if r.details["urls"][0].get("cache")) == 4


def test_fresh_calls_do_not_wait_for_each_other(host, slow_page):
    url, downloads = slow_page
    _at_once(host, 3, {"urls": [url], "fresh": True})
    assert len(downloads) == 3


def test_a_leader_whose_fetch_fails_leaves_the_others_to_fetch(host, httpserver, write_config):
    write_config(
        {
            "providers": [
                {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}}
            ]
        }
    )
    answers = iter([Response("no", status=500), Response(TEXT, content_type="text/plain")])
    seen: list[int] = []

    def handler(request):
        seen.append(1)
        time.sleep(0.2)
        return next(answers, Response(TEXT, content_type="text/plain"))

    httpserver.expect_request("/flaky").respond_with_handler(handler)
    results = _at_once(host, 2, {"urls": [httpserver.url_for("/flaky")]})
    assert sorted(r.is_error for r in results) == [False, True]  # nothing silently lost
    assert len(seen) == 2


def test_two_replicas_sharing_redis_download_a_page_once(slow_page, shared_state, tmp_path):
    """Two processes (replicas), one Redis: the second waits for the first's download (which
    takes longer than the two processes' start-up may differ)."""
    import os
    import subprocess
    import sys

    url, downloads = slow_page
    url = url.replace("/long", "/slower")
    code = (
        "import json, sys; from pi_hostspec import Host, get_plugin_manager;"
        "import pi_web_tools.plugin as p;"
        "h = Host(get_plugin_manager(load_entrypoints=False, plugins=[p]));"
        "print('ready', flush=True); sys.stdin.readline();"
        f"r = h.call('web_fetch', {{'urls': [{url!r}]}});"
        "print(json.dumps([r.is_error, bool(r.details['urls'][0].get('cache'))]))"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "own-cache")}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    for proc in procs:  # both loaded: then both call at once
        assert proc.stdout.readline() == "ready\n"
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    outs = [proc.communicate(timeout=60)[0] for proc in procs]
    assert len(downloads) == 1, (outs, downloads)
    assert sorted(outs) == ["[false, false]\n", "[false, true]\n"]
