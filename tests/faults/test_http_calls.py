"""`pi-web mcp --http` and the life of a call (issue 28, item 12 and Lows): a call the client
abandons (it hangs up, its SDK cancels, it sends `notifications/cancelled`) or that a shutdown
interrupts is stopped at once: the tool is told to stop, its `--max-calls` slot is freed, the log says `cancelled`, and a client still listening gets a
clean JSON-RPC error, never a bare 500 or a traceback."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import threading
import time
from typing import Any

import anyio
import pytest
from mcp.client.client import Client

from tests.support.fault_server import Reply
from tests.support.hosts import mcp_http_serving as serving
from tests.support.hosts import mcp_http_session as _session
from tests.support.hosts import start_mcp_http as _start

pytestmark = pytest.mark.slow

#: The configured timeout of the fetches in this file: far longer than any test waits.
CALL_TIMEOUT = 60
#: How long a stopped call may take to show it (log line, page let go, slot free).
PROMPT = 5.0
PAGE = (
    "<html><head><title>Quick</title></head><body><article><p>A quick page served on loopback "
    "for the cancellation tests, with words enough to be its main content.</p></article>"
    "</body></html>"
)


class Slow:
    """The quick page, after *seconds*."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def perform(self, handler, stop) -> None:
        stop.wait(self.seconds)
        Reply(200, PAGE, content_type="text/html; charset=utf-8").perform(handler, stop)


class StallUntilHangUp:
    """Send nothing; wait until the client (the fetcher) closes its connection, and record it."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.closed = threading.Event()

    def perform(self, handler, stop) -> None:
        self.arrived.set()
        sock = handler.connection
        sock.settimeout(0.05)
        while not stop.is_set():
            try:
                if not sock.recv(1, socket.MSG_PEEK):
                    break
            except TimeoutError:
                continue
            except OSError:
                break
        self.closed.set()
        handler.close_connection = True


@pytest.fixture
def pages(server, write_config):
    """The fault server: request 1 stalls until the fetcher lets go, later ones answer at once;
    the direct fetcher may read it (loopback) with a long timeout."""
    stall = StallUntilHangUp()
    server.script(stall, Reply(200, PAGE, content_type="text/html; charset=utf-8"))
    write_config(
        {
            "providers": [
                {
                    "name": "direct",
                    "type": "direct",
                    "options": {"allowPrivateNetwork": True, "timeoutSeconds": CALL_TIMEOUT},
                }
            ]
        }
    )
    server.stall = stall
    return server


def _call_body(url: str, request_id: int = 1) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "web_fetch", "arguments": {"urls": [url]}},
        }
    ).encode()


def _progress_call_body(url: str, request_id: int) -> bytes:
    """A tools/call with a progressToken: a client that accepts event streams gets one."""
    call = json.loads(_call_body(url, request_id))
    call["params"]["_meta"] = {"progressToken": "p1"}
    return json.dumps(call).encode()


def _raw_post(port: int, body: bytes, session: str | None = None) -> socket.socket:
    """A tools/call POST sent on a raw socket (so the test decides when to hang up)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode()
        + b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n"
        + (f"Mcp-Session-Id: {session}\r\n".encode() if session else b"")
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    return sock


def _post_json(port: int, message: dict, session: str | None = None) -> tuple[int, str | None]:
    """POST one JSON-RPC message; its status and the session id it gave."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
        **({"Mcp-Session-Id": session} if session else {}),
    }
    conn.request("POST", "/mcp", json.dumps(message), headers)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.status, response.getheader("mcp-session-id")


def _read_to_end(sock: socket.socket, seconds: float) -> tuple[bytes, bool]:
    """What *sock* receives until its chunked answer ends (then True) or it closes or
    *seconds* pass (then False)."""
    sock.settimeout(seconds)
    data = b""
    try:
        while not data.endswith(b"\r\n0\r\n\r\n"):
            chunk = sock.recv(65536)
            if not chunk:
                return data, False
            data += chunk
    except TimeoutError:
        return data, False
    return data, True


def _wait_for(condition, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def _next_call_is_served(url: str, page: str) -> bool:
    """Whether a new client's web_fetch of a quick page succeeds within a few seconds."""
    outcome = {}

    async def call():
        with anyio.fail_after(PROMPT * 2):
            async with _session(url) as session:
                result = await session.call_tool("web_fetch", {"urls": [page]})
                outcome["ok"] = not result.is_error and "quick page" in result.content[0].text

    anyio.run(call)
    return outcome.get("ok", False)


def _assert_stopped(running, pages, since: float) -> None:
    """The abandoned call shows as cancelled and, with --max-calls 1, the next client's call
    is served at once (the slot is free)."""
    assert _wait_for(lambda: "call tool=web_fetch outcome=cancelled" in running.log, PROMPT), (
        running.log
    )
    assert _next_call_is_served(running.url, pages.url("/quick"))
    assert "outcome=ok" not in running.log.split("outcome=cancelled")[0]
    assert time.monotonic() - since < CALL_TIMEOUT / 2


def test_a_client_that_hangs_up_cancels_its_call(agent_dir, pages):
    """The 2026-07-28 rule (a disconnect is a cancellation), applied to every client: the
    socket of a tools/call closes mid-call."""
    with serving(agent_dir, "--max-calls", "1") as running:
        sock = _raw_post(running.port, _call_body(pages.url("/stall")))
        assert pages.stall.arrived.wait(30)
        started = time.monotonic()
        sock.close()
        _assert_stopped(running, pages, started)


def test_notifications_cancelled_from_the_sdk_cancels_the_call(agent_dir, pages):
    """The official SDK's client at the handshake era: a call its caller gives up on is
    cancelled with `notifications/cancelled` (the POST stays open): the server stops it."""
    with serving(agent_dir, "--max-calls", "1") as running:
        started = {}

        async def abandon():
            async with _session(running.url) as session:
                with anyio.move_on_after(30):
                    async with anyio.create_task_group() as group:

                        async def call():
                            await session.call_tool("web_fetch", {"urls": [pages.url("/stall")]})

                        group.start_soon(call)
                        while not pages.stall.arrived.is_set():
                            await anyio.sleep(0.05)
                        started["at"] = time.monotonic()
                        group.cancel_scope.cancel()
                await anyio.sleep(0.5)  # the cancel notification is on its way

        anyio.run(abandon)
        _assert_stopped(running, pages, started["at"])


def test_a_2026_client_that_cancels_closes_the_stream_and_the_call_stops(agent_dir, pages):
    """The SDK's client at 2026-07-28 cancels by closing the call's response stream."""
    with serving(agent_dir, "--max-calls", "1") as running:
        started = {}

        async def abandon():
            async with Client(running.url, mode="2026-07-28") as client:
                async with anyio.create_task_group() as group:

                    async def call():
                        await client.call_tool("web_fetch", {"urls": [pages.url("/stall")]})

                    group.start_soon(call)
                    while not pages.stall.arrived.is_set():
                        await anyio.sleep(0.05)
                    started["at"] = time.monotonic()
                    group.cancel_scope.cancel()

        anyio.run(abandon)
        _assert_stopped(running, pages, started["at"])


def test_a_cancel_names_only_the_calls_of_its_own_session(agent_dir, pages):
    """Two clients whose calls have the same JSON-RPC id: one's `notifications/cancelled`
    stops its own call, never the other's (request ids are only unique within a session)."""
    pages.script(pages.stall, Slow(3.0), Reply(200, PAGE, content_type="text/html"))
    with serving(agent_dir) as running:
        results = {}

        async def canceller():
            async with _session(running.url) as session:
                with anyio.move_on_after(30):
                    async with anyio.create_task_group() as group:

                        async def call():
                            results["id"] = await session.call_tool(
                                "web_fetch", {"urls": [pages.url("/stall")]}
                            )

                        group.start_soon(call)
                        while pages.count < 2:  # the bystander's call is running too
                            await anyio.sleep(0.05)
                        group.cancel_scope.cancel()
                await anyio.sleep(0.5)

        async def bystander():
            async with _session(running.url) as session:
                while not pages.stall.arrived.is_set():
                    await anyio.sleep(0.05)
                result = await session.call_tool("web_fetch", {"urls": [pages.url("/slow")]})
                results["bystander"] = result.content[0].text

        async def both():
            with anyio.fail_after(60):
                async with anyio.create_task_group() as group:
                    group.start_soon(canceller)
                    group.start_soon(bystander)

        anyio.run(both)
        assert _wait_for(lambda: "outcome=cancelled" in running.log, PROMPT), running.log
        time.sleep(0.3)
        log = running.log
    assert "quick page" in results["bystander"], results
    assert log.count("outcome=cancelled") == 1 and log.count("outcome=ok") == 1, log


def test_a_cancelled_progress_stream_ends_as_a_whole_response(agent_dir, pages):
    """A call answered as an event stream (it asked for progress), then cancelled with
    `notifications/cancelled`: its stream ends as a complete chunked response, carrying no
    answer, and the log has the cancelled line and nothing else (it said "ASGI callable
    returned without completing response" and cut the connection mid-response)."""
    with serving(agent_dir, "--max-calls", "1") as running:
        initialize = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
        _, session = _post_json(running.port, initialize)
        assert session
        sock = _raw_post(running.port, _progress_call_body(pages.url("/stall"), 7), session)
        assert pages.stall.arrived.wait(30)
        started = time.monotonic()
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
        assert _post_json(running.port, cancel, session)[0] == 202
        answer, ended = _read_to_end(sock, PROMPT)
        sock.close()
        assert ended, answer
        head, _, events = answer.partition(b"\r\n\r\n")
        assert b"text/event-stream" in head and b'"result"' not in events
        _assert_stopped(running, pages, started)
    assert "ASGI" not in running.log and "without completing" not in running.log, running.log


def _sigint_mid_call(agent_dir, pages, body: bytes, read) -> tuple[Any, str]:
    """A server given *body* on a raw socket, then SIGINT once the stalled page is being
    fetched: what *read* got from the socket, and the log; the server exited 130."""
    proc, lines, port = _start(["--port", "0"], {"PI_CODING_AGENT_DIR": str(agent_dir)})
    try:
        assert port is not None, "".join(lines)
        sock = _raw_post(port, body)
        assert pages.stall.arrived.wait(30)
        proc.send_signal(signal.SIGINT)
        got = read(sock)
        sock.close()
        assert proc.wait(timeout=20) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    time.sleep(0.2)
    return got, "".join(lines)


def _read_answer(sock: socket.socket) -> bytes:
    """An answer's head and the first bytes of its body."""
    sock.settimeout(20)
    answer = b""
    while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < 10:
        chunk = sock.recv(65536)
        if not chunk:
            break
        answer += chunk
    return answer


def test_sigint_mid_call_answers_the_client_and_exits_cleanly(agent_dir, pages):
    """SIGINT while a call runs: running calls get the 5 s grace, then the client gets a
    JSON-RPC error saying the server is stopping (not a bare 500), the page is let go, and
    the server exits 130 with a few log lines and no traceback."""
    body = _call_body(pages.url("/stall"), 7)
    answer, log = _sigint_mid_call(agent_dir, pages, body, _read_answer)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503"), answer[:300]
    error = json.loads(body)
    assert error["id"] == 7 and "shutting down" in error["error"]["message"]
    assert pages.stall.closed.wait(PROMPT)
    assert "Traceback" not in log and "Exception" not in log, log
    assert len(log.strip().splitlines()) <= 6, log
    assert "call tool=web_fetch outcome=cancelled" in log
    assert log.rstrip().endswith("pi-web mcp: stopped")


def test_sigint_mid_progress_stream_sends_the_shutdown_error_and_ends_it(agent_dir, pages):
    """SIGINT while a call answers as an event stream: after the grace, the stream carries
    the JSON-RPC error saying the server is stopping, then ends as a whole response."""
    body = _progress_call_body(pages.url("/stall"), 9)
    (answer, ended), log = _sigint_mid_call(
        agent_dir, pages, body, lambda sock: _read_to_end(sock, 20)
    )
    assert ended, answer
    data = [line for line in answer.split(b"\r\n") if line.startswith(b"data: ")]
    error = json.loads(data[-1].removeprefix(b"data: "))
    assert error["id"] == 9 and "shutting down" in error["error"]["message"]
    assert "ASGI" not in log and "Traceback" not in log, log


@pytest.mark.parametrize("where", ["home", "agent dir"])
def test_http_clients_never_see_the_servers_paths(where, agent_dir, tmp_path):
    """An error result that names the config file (no key anywhere): over HTTP it reads
    `~/.pi/agent/web-search.json` (or `$PI_CODING_AGENT_DIR/web-search.json`), never the
    server's absolute path with its home directory and user name; `pi-web` on the server
    itself still shows the whole path."""
    import os
    import subprocess

    from tests.support.hosts import PI_WEB

    home = tmp_path / "home" / "alice-on-server"
    (home / ".pi" / "agent").mkdir(parents=True)
    env = {"HOME": str(home)}
    if where == "home":
        env["PI_CODING_AGENT_DIR"] = ""
        secret_path, shown = str(home), "~/.pi/agent/web-search.json"
    else:
        secret_path, shown = str(agent_dir), "$PI_CODING_AGENT_DIR/web-search.json"
    texts = []
    proc, lines, port = _start(["--port", "0"], {"PI_CODING_AGENT_DIR": str(agent_dir), **env})
    try:
        assert port is not None, "".join(lines)

        async def call():
            async with _session(f"http://127.0.0.1:{port}/mcp") as session:
                result = await session.call_tool("summarize", {"url": "https://example.com/a"})
                texts.append((result.is_error, result.content[0].text))

        anyio.run(call)
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    is_error, text = texts[0]
    assert is_error and shown in text, text
    assert secret_path not in text and "alice-on-server" not in text, text
    local = subprocess.run(
        [PI_WEB, "summarize", "https://example.com/a"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir), **env},
    )
    assert f"{secret_path}/" in local.stdout + local.stderr


def test_hide_local_paths_masks_whole_path_names_only(monkeypatch):
    """The home directory becomes `~` and the agent directory `$PI_CODING_AGENT_DIR` only as
    whole path names (not `/home/al` inside `/home/alice`), and a home of `/` masks nothing."""
    from pi_hostspec.mcp_http import hide_local_paths

    monkeypatch.setenv("HOME", "/home/al")
    text = "read /home/al/.pi/agent/web-search.json, not /home/alice/x or /home/al.old"
    assert hide_local_paths(text, {}) == (
        "read ~/.pi/agent/web-search.json, not /home/alice/x or /home/al.old"
    )
    environ = {"PI_CODING_AGENT_DIR": "/srv/al/pi"}
    assert hide_local_paths("in /srv/al/pi/web-search.json", environ) == (
        "in $PI_CODING_AGENT_DIR/web-search.json"
    )
    monkeypatch.setenv("HOME", "/")
    assert hide_local_paths("/etc/x and /", {}) == "/etc/x and /"
