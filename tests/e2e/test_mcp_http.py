"""`pi-web mcp --http` end to end: real servers on loopback, driven by the official SDK's
streamable HTTP client (and by raw HTTP where a client would hide the status code)."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from pi_hostspec import mcp_http
from pi_hostspec.mcp_http import HttpOptions, UsageError

from tests.support import SECRET, kagi_config
from tests.support.fake_apis import FakeKagi
from tests.support.hosts import (
    PI_WEB,
    SLOW_SECONDS,
    TIMEOUT,
    TOKEN,
    Pages,
)
from tests.support.hosts import mcp_http_serving as serving
from tests.support.hosts import mcp_http_session as _session
from tests.support.hosts import post_mcp as _post
from tests.support.hosts import result_text as _text
from tests.support.hosts import run_async as _run
from tests.support.hosts import start_mcp_http as _start

BOUND_SECONDS = 1.5


@pytest.fixture
def pages(httpserver):
    return Pages(httpserver)


@pytest.fixture
def kagi(write_config, pages):
    """Fake Kagi for search and summarize, and the direct fetcher allowed onto loopback."""
    with FakeKagi(SECRET) as fake:
        config = kagi_config(fake.base_url)
        config["providers"].append(
            {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}}
        )
        write_config(config)
        yield fake


def test_http_lists_tools_and_runs_each_one(agent_dir, kagi, pages, host):
    """Over streamable HTTP: tools/list as over stdio, and web_search, web_fetch and summarize
    answer from loopback fakes; the log has one line per call and no key or argument."""
    results = {}
    with serving(agent_dir) as server:

        async def test():
            async with _session(server.url) as session:
                results["list"] = await session.list_tools()
                results["search"] = await session.call_tool("web_search", {"queries": ["needle-q"]})
                results["fetch"] = await session.call_tool(
                    "web_fetch", {"urls": [f"{pages.url}/page.html"]}
                )
                results["summary"] = await session.call_tool(
                    "summarize", {"url": "https://example.com/a", "summary_type": "takeaway"}
                )

        _run(test)
        time.sleep(0.2)
        log = server.log
    tools = {tool.name: tool for tool in results["list"].tools}
    assert set(tools) == set(host.tools) == {"web_search", "web_fetch", "summarize"}
    assert tools["web_fetch"].input_schema == host.tools["web_fetch"].parameters
    assert tools["web_search"].annotations.read_only_hint is True
    assert _text(results["search"]).startswith("1. needle-q — page 1")
    assert "# Hello loopback" in _text(results["fetch"])
    assert _text(results["summary"]).endswith("- First point\n- Second point")
    assert not any(results[k].is_error for k in ("search", "fetch", "summary"))
    for tool in ("web_search", "web_fetch", "summarize"):
        assert re.search(rf"call tool={tool} outcome=ok duration_ms=\d+\n", log), log
    assert SECRET not in log and "needle-q" not in log and "example.com/a" not in log


def test_http_errors_are_results_and_unknown_tools_protocol_errors(agent_dir, kagi):
    """A failing call is an isError result with its message; an unknown tool is a JSON-RPC
    error; both are logged with their outcome."""
    results = {}
    with serving(agent_dir) as server:

        async def test():
            async with _session(server.url) as session:
                results["ftp"] = await session.call_tool("summarize", {"url": "ftp://x.example/f"})
                results["bad"] = await session.call_tool("web_search", {"queries": "not a list"})
                with pytest.raises(MCPError) as caught:
                    await session.call_tool("no_such_tool", {})
                results["unknown"] = caught.value

        _run(test)
        time.sleep(0.2)
        log = server.log
    assert results["ftp"].is_error and "only http and https are supported" in _text(results["ftp"])
    assert results["bad"].is_error and _text(results["bad"]).startswith(
        "Invalid arguments for web_search: queries"
    )
    assert results["unknown"].code == -32602 and "no_such_tool" in results["unknown"].message
    assert "call tool=summarize outcome=error" in log
    assert "call tool=web_search outcome=error" in log
    assert "call tool=? outcome=unknown-tool" in log and "no_such_tool" not in log


def test_http_healthz_answers_without_token(agent_dir, kagi):
    """GET /healthz is 200 with the tool count, with no token even when one is required."""
    with serving(agent_dir, env={"PI_WEB_MCP_TOKEN": TOKEN}) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=TIMEOUT)
        conn.request("GET", "/healthz")
        response = conn.getresponse()
        assert (response.status, json.loads(response.read())) == (
            200,
            {"status": "ok", "tools": 3},
        )
        conn.close()


def test_http_off_loopback_needs_a_token(agent_dir):
    """Bound to 0.0.0.0 without PI_WEB_MCP_TOKEN or --token-file, the server refuses to start
    (exit 2, one line naming both ways)."""
    proc = subprocess.run(
        [PI_WEB, "mcp", "--http", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env={**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)},
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "0.0.0.0 (not loopback) needs a bearer token" in proc.stderr
    assert "PI_WEB_MCP_TOKEN" in proc.stderr and "--token-file" in proc.stderr


def test_http_on_all_interfaces_answers_401_without_the_token(agent_dir, kagi, tmp_path):
    """Bound to 0.0.0.0 with a token file (reached over 127.0.0.1 only): no token or a wrong
    one gets 401, the right one is served; the token never appears in the log or in ps."""
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    results = {}
    with serving(agent_dir, "--host", "0.0.0.0", "--token-file", str(token_file)) as server:
        assert "bearer token required" in server.log
        # The start line says which Host names are accepted and how to add one.
        for _ in range(50):
            if "add it with --allow-host NAME" in server.log:
                break
            time.sleep(0.1)
        assert f"accepting Host: 127.0.0.1:{server.port}, localhost:{server.port}" in server.log
        assert "add it with --allow-host NAME" in server.log
        results["none"] = _post(server.port, {})
        results["wrong"] = _post(server.port, {"Authorization": "Bearer " + "x" * 32})
        results["basic"] = _post(server.port, {"Authorization": f"Basic {TOKEN}"})
        results["right"] = _post(server.port, {"Authorization": f"Bearer {TOKEN}"})

        async def test():
            with pytest.raises(Exception):  # noqa: B017 - the SDK's exception for a 401 varies
                async with _session(server.url):
                    pass
            async with _session(server.url, TOKEN) as session:
                results["list"] = await session.list_tools()

        _run(test)
        cmdline = Path(f"/proc/{server.proc.pid}/cmdline").read_bytes()
        time.sleep(0.2)
        log = server.log
    assert results["none"][0] == 401 and results["wrong"][0] == 401
    assert results["basic"][0] == 401
    assert results["right"][0] == 200 and '"web_search"' in results["right"][1]
    assert len(results["list"].tools) == 3
    assert "status=401 (missing or wrong bearer token) client=127.0.0.1" in log
    assert TOKEN not in log and TOKEN.encode() not in cmdline


def test_http_refuses_a_foreign_host_or_origin(agent_dir, kagi):
    """DNS-rebinding protection: a Host header not on the allowlist gets 421, a foreign Origin
    403; loopback names pass, and --allow-host adds a name."""
    with serving(agent_dir, "--allow-host", "mcp.internal.example") as server:
        foreign_host = _post(server.port, {"Host": "evil.example"})
        foreign_port = _post(server.port, {"Host": "127.0.0.1:1"})
        foreign_origin = _post(server.port, {"Origin": "http://evil.example"})
        localhost = _post(server.port, {"Host": f"localhost:{server.port}"})
        allowed = _post(server.port, {"Host": "mcp.internal.example"})
        allowed_origin = _post(server.port, {"Origin": "http://localhost:6274"})
        time.sleep(0.2)
        log = server.log
    assert foreign_host[0] == 421 and foreign_port[0] == 421
    assert foreign_origin[0] == 403
    assert localhost[0] == allowed[0] == allowed_origin[0] == 200
    assert log.count("(Host not allowed)") == 2 and "(Origin not allowed)" in log
    assert "evil.example" not in log


def test_http_slow_call_does_not_delay_others(agent_dir, kagi, pages):
    """20 clients call at once, one of them a web_fetch of a page that takes 6 s: the other 19
    finish long before it (in under half that, even on a busy machine), and it still succeeds."""
    done: dict[int, float] = {}
    results = {}
    with serving(agent_dir) as server:

        async def one(i: int, start: float) -> None:
            async with _session(server.url) as session:
                if i == 0:
                    args = ("web_fetch", {"urls": [f"{pages.url}/slow.html?s={2 * SLOW_SECONDS}"]})
                else:
                    args = ("web_search", {"queries": [f"q{i}"]})
                results[i] = await session.call_tool(*args)
            done[i] = time.monotonic() - start

        async def test():
            start = time.monotonic()
            async with anyio.create_task_group() as group:
                for i in range(20):
                    group.start_soon(one, i, start)

        _run(test)
    fast = [done[i] for i in range(1, 20)]
    assert all(not results[i].is_error for i in range(20))
    assert done[0] >= 2 * SLOW_SECONDS
    assert max(fast) < SLOW_SECONDS, sorted(fast)


def test_http_max_calls_bounds_parallel_calls(agent_dir, kagi, pages):
    """With --max-calls 1, two slow calls run one after the other (the bound holds)."""
    done = []
    with serving(agent_dir, "--max-calls", "1") as server:

        async def one(n: int) -> None:
            async with _session(server.url) as session:  # distinct URLs: no cache hit
                url = f"{pages.url}/slow.html?n={n}&s={BOUND_SECONDS}"
                result = await session.call_tool("web_fetch", {"urls": [url]})
                assert not result.is_error
            done.append(time.monotonic())

        async def test():
            start = time.monotonic()
            async with anyio.create_task_group() as group:
                group.start_soon(one, 1)
                group.start_soon(one, 2)
            done.append(start)

        _run(test)
    *ends, start = done
    assert max(ends) - start >= 2 * BOUND_SECONDS
    assert min(ends) - start < 2 * BOUND_SECONDS


def test_http_sigint_stops_cleanly(agent_dir, kagi):
    """SIGINT stops the HTTP server: exit 130, 'stopped' logged, no traceback."""
    proc, lines, port = _start(["--port", "0"], {"PI_CODING_AGENT_DIR": str(agent_dir)})
    try:
        assert port is not None, "".join(lines)
        assert _post(port, {})[0] == 200
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    time.sleep(0.1)
    log = "".join(lines)
    assert log.rstrip().endswith("pi-web mcp: stopped") and "Traceback" not in log


def test_http_options_need_http(capsys):
    """`pi-web mcp --port 1` without --http is a usage error (exit 2)."""
    from pi_hostspec.cli import main

    assert main(["mcp", "--port", "1"]) == 2
    assert capsys.readouterr().err == "pi-web: mcp: --port needs --http\n"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.5", False),
        ("example.com", False),
    ],
)
def test_is_loopback(host, loopback):
    """Only localhost and loopback addresses count as loopback; wildcards and names do not."""
    assert mcp_http.is_loopback(host) is loopback


def test_read_token_rules(tmp_path):
    """The token comes from the variable or the file (not both), is required off loopback, and
    must be long enough; the file's content is stripped."""
    path = tmp_path / "t"
    path.write_text(f"  {TOKEN}\n")
    path.chmod(0o600)
    loopback, everywhere = HttpOptions(), HttpOptions(host="0.0.0.0")
    assert mcp_http.read_tokens(loopback, {}) is None
    from_env = mcp_http.read_tokens(everywhere, {"PI_WEB_MCP_TOKEN": TOKEN})
    assert from_env.name_of(TOKEN.encode()) == "default"
    from_file = mcp_http.read_tokens(HttpOptions(host="0.0.0.0", token_file=str(path)), {})
    assert from_file.name_of(TOKEN.encode()) == "default" and from_file.names == ["default"]
    problems = {
        "needs a bearer token": (everywhere, {}),
        "not both": (HttpOptions(token_file=str(path)), {"PI_WEB_MCP_TOKEN": TOKEN}),
        "at least 16 characters": (everywhere, {"PI_WEB_MCP_TOKEN": "short"}),
        "No such file": (HttpOptions(token_file=str(tmp_path / "none")), {}),
    }
    for expected, (options, environ) in problems.items():
        with pytest.raises(UsageError, match=expected):
            mcp_http.read_tokens(options, environ)
    path.write_text("\n")
    with pytest.raises(UsageError, match="the file is empty"):
        mcp_http.read_tokens(HttpOptions(token_file=str(path)), {})


def test_bound_to_every_interface_the_machines_own_names_are_accepted():
    """With --host 0.0.0.0, clients that connect by this machine's name or addresses are
    accepted (the README's team-server example from another machine), others still get 421."""
    from pi_hostspec.mcp_http import HttpOptions, own_names, security_settings

    settings = security_settings(HttpOptions(host="0.0.0.0", port=8080), 8080)
    assert settings.enable_dns_rebinding_protection
    for name in own_names():  # 0.0.0.0 is IPv4 only: its IPv6 addresses are never reached
        assert (f"{name}:8080" in settings.allowed_hosts) is not name.startswith("[")
    every = security_settings(HttpOptions(host="::", port=8080), 8080)
    assert all(f"{name}:8080" in every.allowed_hosts for name in own_names())
    assert "evil.example:8080" not in settings.allowed_hosts
    loopback_only = security_settings(HttpOptions(host="127.0.0.1", port=8080), 8080)
    assert not any(f"{name}:8080" in loopback_only.allowed_hosts for name in own_names())


def _this_machines_address() -> str | None:
    """A non-loopback IPv4 address of this machine, found as `ip route get` would (a connected
    UDP socket sends nothing), or None when it has none."""
    import ipaddress
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("198.51.100.7", 9))
            address = probe.getsockname()[0]
    except OSError:
        return None
    return None if ipaddress.ip_address(address).is_loopback else address


def test_a_client_that_connects_by_the_machines_ip_is_served(agent_dir, kagi):  # noqa: F811
    """The team-server example (`--host 0.0.0.0`) reached from another machine as
    http://<this machine's IP>:<port>/mcp: its Host header is that address, and it is served,
    even where the host name resolves to 127.0.1.1 only. (Sent over 127.0.0.1 with that Host
    header, which is all the server sees of it.) Another name still gets 421."""
    address = _this_machines_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    with serving(agent_dir, "--host", "0.0.0.0", env={"PI_WEB_MCP_TOKEN": TOKEN}) as server:
        for _ in range(50):
            if "add it with --allow-host NAME" in server.log:
                break
            time.sleep(0.1)
        assert f"{address}:{server.port}" in server.log.split("accepting Host:", 1)[1]
        auth = {"Authorization": f"Bearer {TOKEN}"}
        by_ip = _post(server.port, {**auth, "Host": f"{address}:{server.port}"})
        by_other = _post(server.port, {**auth, "Host": f"intruder.example:{server.port}"})
    assert by_ip[0] == 200, by_ip
    assert by_other[0] == 421


def test_http_progress_streams_to_a_client_that_accepts_event_streams(agent_dir, kagi, pages):
    """Issue 33, item 1: a web_fetch of four URLs with a progressToken, over HTTP. The SDK's
    client (which accepts text/event-stream) hears one progress notification per URL, as over
    stdio; at 2026-07-28 too. A client that accepts JSON only gets one JSON answer."""
    from mcp.client.client import Client

    urls = [f"{pages.url}/page.html?n={i}" for i in range(4)]
    heard: dict[str, list] = {"2025": [], "2026": []}

    def listener(era: str):
        async def on_progress(progress: float, total: float | None, message: str | None):
            heard[era].append((progress, total, message))

        return on_progress

    with serving(agent_dir) as server:

        async def test():
            async with _session(server.url) as session:
                result = await session.call_tool(
                    "web_fetch",
                    {"urls": urls, "fresh": True},
                    progress_callback=listener("2025"),
                )
                assert not result.is_error
            async with Client(server.url, mode="2026-07-28") as client:
                result = await client.call_tool(
                    "web_fetch",
                    {"urls": urls, "fresh": True},
                    progress_callback=listener("2026"),
                )
                assert not result.is_error

        _run(test)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=TIMEOUT)
        body = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {
                "name": "web_fetch",
                "arguments": {"urls": urls, "fresh": True},
                "_meta": {"progressToken": "t1"},
            },
        }
        conn.request(
            "POST",
            "/mcp",
            json.dumps(body),
            {
                "Content-Type": "application/json",
                "Accept": "application/json",
                "MCP-Protocol-Version": "2025-06-18",
            },
        )
        response = conn.getresponse()
        plain = (response.status, response.getheader("Content-Type"), json.loads(response.read()))
        conn.close()
    for era in ("2025", "2026"):
        assert sorted(p for p, _, _ in heard[era]) == [1.0, 2.0, 3.0, 4.0], heard
        assert {t for _, t, _ in heard[era]} == {4.0}
        assert heard[era][-1][2].startswith("Fetched ")
    assert plain[0] == 200 and plain[1] == "application/json"
    assert plain[2]["id"] == 5 and "# Hello loopback" in plain[2]["result"]["content"][0]["text"]


def test_http_401_tells_clients_to_send_the_bearer_token_not_to_start_oauth(agent_dir, kagi):
    """Issue 33, item 3: without the token, a Bearer challenge with no resource_metadata (no
    OAuth here), and nothing at the OAuth discovery addresses (RFC 9728's well-known URIs,
    RFC 8414's and OpenID Connect's): a client following the MCP authorization spec stops
    there and uses the token it was given. A wrong token gets error="invalid_token". Every
    body says to send Authorization: Bearer <token>."""

    def request(method: str, path: str, headers: dict) -> tuple[int, str | None, dict]:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=TIMEOUT)
        try:
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            conn.request(method, path, body if method == "POST" else None, headers)
            response = conn.getresponse()
            return (
                response.status,
                response.getheader("WWW-Authenticate"),
                json.loads(response.read() or b"{}"),
            )
        finally:
            conn.close()

    post_headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    with serving(agent_dir, env={"PI_WEB_MCP_TOKEN": TOKEN}) as server:
        missing = request("POST", "/mcp", post_headers)
        wrong = request("POST", "/mcp", {**post_headers, "Authorization": "Bearer " + "x" * 20})
        discovery = [
            request("GET", path, {})
            for path in (
                "/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource",
                "/.well-known/oauth-authorization-server",
                "/.well-known/openid-configuration",
            )
        ]
        right = request("POST", "/mcp", {**post_headers, "Authorization": f"Bearer {TOKEN}"})
        time.sleep(0.2)
        log = server.log
    assert missing[0] == 401 and missing[1] == 'Bearer realm="pi-web mcp"'
    assert wrong[0] == 401 and wrong[1].startswith(
        'Bearer realm="pi-web mcp", error="invalid_token"'
    )
    for _status, challenge, body in (missing, wrong):
        assert "resource_metadata" not in challenge
        assert "Authorization: Bearer <token>" in body["error"] and "not OAuth" in body["error"]
    for status, _, body in discovery:
        assert status == 404 and "not OAuth" in body["error"]
    assert right[0] == 200 and len(right[2]["result"]["tools"]) == 3
    assert "well-known" not in log  # the discovery probes are answered, not logged as refusals
