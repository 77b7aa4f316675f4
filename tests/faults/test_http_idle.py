"""`pi-web mcp --http` against sockets that never send a request (issue 21, Medium 4): before
authentication, anyone who reaches the port could open connections and send nothing, or trickle
a header a byte at a time; the server must close them and keep serving authenticated calls."""

from __future__ import annotations

import socket
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from pi_hostspec import mcp_http
from pi_hostspec.tokens import Tokens

from tests.support import ROOT, SECRET, kagi_config
from tests.support.fake_apis import FakeKagi
from tests.support.hosts import TOKEN
from tests.support.hosts import mcp_http_serving as serving
from tests.support.hosts import post_mcp as _post

AUTH = {"Authorization": f"Bearer {TOKEN}"}
IDLE = 150
#: How long a connection may take to send its request head, and the slack a test allows.
HEAD = mcp_http.HEAD_TIMEOUT_SECONDS if hasattr(mcp_http, "HEAD_TIMEOUT_SECONDS") else 5.0
SLACK = 3.0


@pytest.fixture
def kagi(write_config):
    """A fake Kagi configured, so the server has tools to list."""
    with FakeKagi(SECRET) as fake:
        write_config(kagi_config(fake.base_url))
        yield fake


def _healthz(port: int) -> int:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/healthz")
        return conn.getresponse().status
    finally:
        conn.close()


def _idle_sockets(port: int, count: int) -> list[socket.socket]:
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        sockets.append(sock)
    return sockets


def _closed_by_peer(sock: socket.socket, within: float) -> float | None:
    """Seconds until the server closed *sock* (EOF or reset), or ``None`` within *within*."""
    start = time.monotonic()
    sock.settimeout(within)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                return time.monotonic() - start
    except (ConnectionResetError, BrokenPipeError):
        return time.monotonic() - start
    except TimeoutError:
        return None


def test_idle_sockets_do_not_starve_healthz_or_authenticated_calls(agent_dir, kagi):
    """150 connections that send nothing: /healthz and an authenticated tools/list still
    answer 200, never 503."""
    with serving(agent_dir, env={"PI_WEB_MCP_TOKEN": TOKEN}) as server:
        idle = _idle_sockets(server.port, IDLE)
        try:
            time.sleep(0.3)
            assert _healthz(server.port) == 200
            with ThreadPoolExecutor(10) as pool:
                statuses = list(pool.map(lambda _: _post(server.port, AUTH)[0], range(20)))
            assert statuses == [200] * 20, statuses
        finally:
            for sock in idle:
                sock.close()


def test_a_connection_that_sends_no_request_head_is_closed_within_seconds(agent_dir, kagi):
    with serving(agent_dir, env={"PI_WEB_MCP_TOKEN": TOKEN}) as server:
        idle = _idle_sockets(server.port, 20)
        try:
            closed = [_closed_by_peer(sock, HEAD + SLACK) for sock in idle[:1]]
            assert closed[0] is not None, f"still open after {HEAD + SLACK:g} s"
            assert all(_closed_by_peer(sock, 1.0) is not None for sock in idle[1:])
        finally:
            for sock in idle:
                sock.close()


def test_a_trickled_request_head_is_cut_off(agent_dir, kagi):
    """One byte every 0.5 s keeps data flowing but never finishes the head: closed anyway."""
    with serving(agent_dir, env={"PI_WEB_MCP_TOKEN": TOKEN}) as server:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200
        start = time.monotonic()
        closed_after = None
        try:
            for byte in head:
                sock.sendall(bytes([byte]))
                time.sleep(0.5)
                if time.monotonic() - start > HEAD + SLACK + 5:
                    break
        except (BrokenPipeError, ConnectionResetError):
            closed_after = time.monotonic() - start
        if closed_after is None:
            closed_after = None if _closed_by_peer(sock, 0.5) is None else time.monotonic() - start
        sock.close()
        assert closed_after is not None and closed_after <= HEAD + SLACK, closed_after


def test_a_finished_request_then_silence_is_closed_too(agent_dir, kagi):
    """A keep-alive connection that answered a call and then trickles the next head is closed."""
    import http.client

    with serving(agent_dir, env={"PI_WEB_MCP_TOKEN": TOKEN}) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("GET", "/healthz")
        assert conn.getresponse().read()
        sock = conn.sock
        start = time.monotonic()
        try:
            for byte in b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100:
                sock.sendall(bytes([byte]))
                time.sleep(0.5)
                if time.monotonic() - start > HEAD + SLACK + 5:
                    break
            closed = _closed_by_peer(sock, 0.5) is not None
        except (BrokenPipeError, ConnectionResetError):
            closed = True
        conn.close()
        assert closed and time.monotonic() - start <= HEAD + SLACK + 1


def test_the_request_limit_counts_requests_in_progress_not_connections():
    """The Gate answers 503 only past *limit* authorized requests in progress, and a slot comes
    back when a request ends; unauthorized requests and /healthz take no slot. (uvicorn's own
    limit, which counted every open connection, is off: the idle-socket tests above.)"""
    import asyncio

    async def scenario() -> list[int]:
        release = asyncio.Event()

        async def handler(scope, receive, send):
            await release.wait()
            await mcp_http._send_json(send, 200, {"ok": True})

        gate = mcp_http.Gate(handler, Tokens({"default": TOKEN}), 3, limit=2)

        async def request(path: str = "/mcp", token: str | None = TOKEN) -> int:
            headers = [(b"authorization", f"Bearer {token}".encode())] if token else []
            method = "GET" if path == "/healthz" else "POST"
            scope = {"type": "http", "path": path, "method": method, "headers": headers}
            sent: list[dict] = []

            async def send(message):
                sent.append(message)

            async def receive():  # the body, then a client that stays
                if not sent and not receive.__dict__.get("read"):
                    receive.read = True
                    return {"type": "http.request", "body": b"{}", "more_body": False}
                await asyncio.sleep(3600)

            try:  # a request let through to the held handler would wait for ever
                await asyncio.wait_for(gate(scope, receive, send), 2)
            except asyncio.TimeoutError:
                return 0
            return sent[0]["status"]

        held = [asyncio.create_task(request()) for _ in range(2)]
        await asyncio.sleep(0.05)
        statuses = [
            await request(token=None),  # 401, never counted
            await request("/healthz"),  # answered with both slots taken
            await request(),  # the third authorized request in progress: 503
        ]
        release.set()
        statuses += [await task for task in held]
        statuses.append(await request())  # a slot is free again
        assert gate.active == 0
        return statuses

    assert asyncio.run(scenario()) == [401, 200, 503, 200, 200, 200]


def test_the_idle_socket_bench_runs_and_no_call_fails(tmp_path):
    """`python bench/load.py --http-idle --quick`: every authenticated call succeeds while 150
    idle sockets are held open (and reopened as the server closes them)."""
    import subprocess
    import sys

    load = ROOT / "bench" / "load.py"
    proc = subprocess.run(
        [sys.executable, str(load), "--http-idle", "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if "idle sockets " in line[:20]]
    assert len(rows) == 2 and all(row[-5] == "0" for row in rows), proc.stdout


@pytest.mark.slow
def test_idle_event_streams_do_not_lock_clients_out(agent_dir, kagi):  # noqa: F811
    """150 authenticated `GET /mcp` event streams held open, as a common SDK opens one per
    connection and keeps it (issue 28, item 13): each is answered 405 (Allow: POST) at once,
    and /healthz and authenticated calls still get 200, never 503."""
    with serving(agent_dir, env={"PI_WEB_MCP_TOKEN": TOKEN}) as server:
        streams = []
        try:
            for _ in range(IDLE):
                sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
                sock.sendall(
                    f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                    f"Authorization: Bearer {TOKEN}\r\nAccept: text/event-stream\r\n"
                    "MCP-Protocol-Version: 2025-06-18\r\n\r\n".encode()
                )
                streams.append(sock)
            time.sleep(0.5)
            assert _healthz(server.port) == 200
            with ThreadPoolExecutor(10) as pool:
                statuses = list(pool.map(lambda _: _post(server.port, AUTH)[0], range(20)))
            assert statuses == [200] * 20, statuses
            heads = [sock.recv(200).split(b"\r\n") for sock in streams]
            assert all(head[0] == b"HTTP/1.1 405 Method Not Allowed" for head in heads), heads[0]
            assert all(b"allow: POST" in head for head in heads), heads[0]
        finally:
            for sock in streams:
                sock.close()
        time.sleep(0.2)
        assert "status=405" not in server.log  # the protocol's answer, not a refusal to log


def _open_files_1024() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


@pytest.mark.slow
def test_idle_sockets_past_the_open_file_limit_do_not_delay_calls(agent_dir, kagi):  # noqa: F811
    """A server allowed 1,024 open files (soft and hard limit) and 1,100 sockets that send
    nothing: authenticated calls on new connections are still answered at once (they waited
    3-5 s for the head timeout to free descriptors), and the log shows no 'Too many open
    files'."""
    import http.client
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1400:
        pytest.skip("this test opens 1,100 sockets; the open-file limit is lower")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1400), hard))
    env = {"PI_WEB_MCP_TOKEN": TOKEN}
    with serving(agent_dir, env=env, preexec_fn=_open_files_1024) as server:
        idle = []
        try:
            for _ in range(1100):
                idle.append(socket.create_connection(("127.0.0.1", server.port), timeout=10))
            time.sleep(0.5)
            seconds = []
            for _ in range(10):
                start = time.monotonic()
                conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
                conn.request("GET", "/healthz")
                assert conn.getresponse().status == 200
                conn.close()
                assert _post(server.port, AUTH)[0] == 200
                seconds.append(time.monotonic() - start)
        finally:
            for sock in idle:
                sock.close()
        time.sleep(0.2)
        log = server.log
    assert max(seconds) < HEAD / 2, [round(s, 2) for s in seconds]
    assert "Too many open files" not in log and "out of system resource" not in log, log[-2000:]
