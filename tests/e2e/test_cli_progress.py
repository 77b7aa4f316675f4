"""pi-web's progress line: on a terminal only, erased before the answer, and never with
``--json`` (the installed script, on a pseudo-terminal and on a pipe)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import time

from tests.support import serve
from tests.support.hosts import PI_WEB


def _fetch_two_slow_pages(
    httpserver, write_config, *extra: str, tty: bool, as_json: bool = False
) -> str:
    """stderr of `pi-web fetch` of a quick page and a 1.5 s one, on a terminal or a pipe (with
    *as_json*: `pi-web call web_fetch ... --json` instead)."""

    def slow(request):
        from werkzeug import Response

        time.sleep(1.5)
        return Response("slow page", content_type="text/plain")

    httpserver.expect_request("/slow.txt").respond_with_handler(slow)
    root = serve(httpserver, {"/quick.txt": (200, "text/plain", "quick page")})
    write_config(
        {
            "providers": [
                {"name": "local", "type": "direct", "options": {"allowPrivateNetwork": True}}
            ]
        }
    )
    urls = [f"{root}/quick.txt", f"{root}/slow.txt"]
    args = [PI_WEB, "fetch", *urls, *extra]
    if as_json:
        call = {"urls": urls, "fresh": True}  # never served from the cache: the call is slow
        args = [PI_WEB, "call", "web_fetch", json.dumps(call), "--json", *extra]
    if not tty:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=60)
        return proc.stderr
    return _stderr_on_a_terminal(args)


def _stderr_on_a_terminal(args: list[str]) -> str:
    """What *args* writes to stderr when stderr is a pseudo-terminal."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    chunks = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        chunks += chunk
    proc.wait(60)
    os.close(leader)
    return chunks.decode("utf-8", "replace")


def test_pi_web_shows_progress_on_a_terminal_only(httpserver, write_config):
    on_terminal = _fetch_two_slow_pages(httpserver, write_config, tty=True)
    assert "Fetched 1/2 URLs" in on_terminal or "Fetched 2/2 URLs" in on_terminal
    assert on_terminal.endswith("\r\x1b[K")  # erased before the answer
    assert "Fetched" not in _fetch_two_slow_pages(httpserver, write_config, tty=False)


def test_pi_web_shows_no_progress_for_json_output_even_on_a_terminal(httpserver, write_config):
    on_terminal = _fetch_two_slow_pages(httpserver, write_config, "--fresh", tty=True)
    assert "Fetched" in on_terminal  # the same slow call does show progress without --json
    as_json = _fetch_two_slow_pages(httpserver, write_config, tty=True, as_json=True)
    assert "Fetched" not in as_json and "\x1b[K" not in as_json


def test_pi_web_shows_progress_for_one_slow_url(httpserver, write_config):
    """Issue 33, item 6: one URL that takes 3 s (nothing for the tool to report until it is
    read): after a second the terminal shows the tool is working and for how long, rewritten in
    place, then erased before the answer."""

    def slow(request):
        from werkzeug import Response

        time.sleep(3.0)
        return Response("slow page", content_type="text/plain")

    httpserver.expect_request("/only.txt").respond_with_handler(slow)
    write_config(
        {
            "providers": [
                {"name": "local", "type": "direct", "options": {"allowPrivateNetwork": True}}
            ]
        }
    )
    shown = _stderr_on_a_terminal([PI_WEB, "fetch", httpserver.url_for("/only.txt")])
    assert "web_fetch: working (1 s)" in shown and "web_fetch: working (2 s)" in shown, shown
    assert shown.endswith("\r\x1b[K")
