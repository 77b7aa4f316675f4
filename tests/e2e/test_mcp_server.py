"""`pi-web mcp` end to end, driven by the official MCP SDK's own stdio client."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from tests.support import SECRET, kagi_config, serve
from tests.support.fake_apis import FakeKagi
from tests.support.hosts import MCP_INITIALIZE, PI_WEB, TIMEOUT
from tests.support.hosts import mcp_stdio_session as _session
from tests.support.hosts import result_text as _text
from tests.support.hosts import run_async as _run

PAGE = (
    "<html><head><title>Loopback page</title></head><body><nav>menu</nav><article>"
    "<h1>Hello loopback</h1><p>This page is served on 127.0.0.1 for the MCP end-to-end test. "
    "It has enough words to count as the main content for the extractor, which wants a couple "
    "of hundred characters before it trusts what it found on the page.</p></article></body></html>"
)


@pytest.fixture
def kagi(write_config):
    with FakeKagi(SECRET) as fake:
        write_config(kagi_config(fake.base_url))
        yield fake


@pytest.fixture
def page_url(httpserver):
    """One HTML page on the tests' loopback server; yields its URL (other paths: 404)."""
    return serve(httpserver, {"/page.html": (200, "text/html; charset=utf-8", PAGE)}) + "/page.html"


@pytest.fixture
def server_log(tmp_path) -> Path:
    """Where the server's stderr goes."""
    return tmp_path / "mcp-stderr.log"


def test_mcp_lists_every_tool(agent_dir, server_log, host):
    """tools/list gives our three tools with title, description, input schema and read-only/open-world hints."""

    async def test():
        async with _session(agent_dir, server_log) as session:
            listed = await session.list_tools()
        tools = {tool.name: tool for tool in listed.tools}
        assert set(tools) == {"web_search", "web_fetch", "summarize"}
        for name, tool in tools.items():
            ours = host.tools[name]
            assert tool.title == ours.label
            assert tool.description == ours.description
            assert tool.input_schema == ours.parameters
            assert tool.annotations.title == ours.label
            assert tool.annotations.read_only_hint is True
            assert tool.annotations.open_world_hint is True
        assert tools["web_search"].input_schema["required"] == ["queries"]

    _run(test)
    assert "INFO" not in server_log.read_text()


def test_mcp_web_search_against_loopback_kagi(agent_dir, server_log, kagi):
    """tools/call web_search returns the text the model sees, from the loopback Kagi, with no key anywhere."""

    results = {}

    async def test():
        async with _session(agent_dir, server_log) as session:
            results["search"] = await session.call_tool(
                "web_search", {"queries": ["x"], "limit": 2}
            )

    _run(test)
    result = results["search"]
    assert result.is_error is False
    text = _text(result)
    assert text.startswith(
        "1. x — page 1\n   https://results.example/x/1\n   All about x & more (1)"
    )
    assert "2. x — page 2" in text and "3. x — page 3" not in text
    assert kagi.requests[0]["json"] == {
        "query": "x",
        "workflow": "search",
        "format": "json",
        "limit": 2,
    }
    log = server_log.read_text()
    assert SECRET not in text + log and "INFO" not in log


def test_mcp_web_fetch_against_loopback_page(agent_dir, server_log, write_config, page_url):
    """tools/call web_fetch reads a loopback page through the direct fetcher allowed onto the private network."""
    write_config(
        {
            "providers": [
                {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}}
            ]
        }
    )
    results = {}

    async def test():
        async with _session(agent_dir, server_log) as session:
            results["ok"] = await session.call_tool("web_fetch", {"urls": [page_url]})
            results["missing"] = await session.call_tool(
                "web_fetch", {"urls": [page_url.replace("page", "gone")]}
            )

    _run(test)
    ok = results["ok"]
    assert ok.is_error is False
    text = _text(ok)
    assert "Loopback page" in text and f"URL: {page_url}" in text
    assert "# Hello loopback" in text and "served on 127.0.0.1" in text
    assert "404" in _text(results["missing"])


def test_mcp_errors_come_back_as_is_error(agent_dir, server_log, kagi):
    """Tool failures and invalid arguments are results with isError and the message; an unknown tool is a protocol error."""
    results = {}

    async def test():
        async with _session(agent_dir, server_log) as session:
            results["ftp"] = await session.call_tool("summarize", {"url": "ftp://example.com/file"})
            results["no_args"] = await session.call_tool("web_search", None)
            results["bad_type"] = await session.call_tool("web_search", {"queries": "not a list"})
            with pytest.raises(MCPError) as caught:
                await session.call_tool("no_such_tool", {})
            results["unknown"] = caught.value
            results["after"] = await session.call_tool("web_search", {"queries": ["still alive"]})

    _run(test)
    assert results["ftp"].is_error is True
    assert "only http and https are supported" in _text(results["ftp"])
    assert results["no_args"].is_error is True
    assert (
        _text(results["no_args"])
        == "Invalid arguments for web_search: queries: required field is missing"
    )
    assert results["bad_type"].is_error is True
    assert _text(results["bad_type"]).startswith("Invalid arguments for web_search: queries")
    assert results["unknown"].code == -32602
    assert "unknown tool 'no_such_tool'" in results["unknown"].message
    assert results["after"].is_error is False and "still alive — page 1" in _text(results["after"])
    assert [r["path"] for r in kagi.requests] == [
        "/api/v1/search"
    ]  # only the last call reached the API


def test_mcp_rereads_config_without_restart(agent_dir, server_log, kagi, write_config):
    """Editing web-search.json between two calls on one connection takes effect without restarting the server."""
    wrong = kagi_config(kagi.base_url)
    wrong["providers"][0]["apiKey"] = "wrong-key-123456"
    write_config(wrong)
    results = {}

    async def test():
        async with _session(agent_dir, server_log) as session:
            results["before"] = await session.call_tool("web_search", {"queries": ["x"]})
            path = write_config(kagi_config(kagi.base_url))
            stat = path.stat()
            os.utime(
                path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000)
            )  # a distinct mtime
            results["after"] = await session.call_tool("web_search", {"queries": ["x"]})

    _run(test)
    assert results["before"].is_error is True
    assert "v1 answered HTTP 401 Unauthorized" in _text(results["before"])
    assert results["after"].is_error is False
    assert _text(results["after"]).startswith("1. x — page 1")
    everything = _text(results["before"]) + _text(results["after"]) + server_log.read_text()
    assert "wrong-key-123456" not in everything and SECRET not in everything


def test_mcp_stdout_is_only_protocol(agent_dir):
    """Over raw stdio (Claude Desktop's handshake) every stdout line is JSON-RPC, and EOF ends the server with 0."""
    messages = [
        MCP_INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    proc = subprocess.Popen(
        [PI_WEB, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)},
    )
    try:
        replies = []
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:
                replies.append(json.loads(proc.stdout.readline()))
        proc.stdin.close()
        rest = proc.stdout.read()
        assert proc.wait(timeout=TIMEOUT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rest == ""
    init, listed = replies
    assert init["id"] == 1 and init["result"]["serverInfo"]["name"] == "pi-web-tools"
    assert (
        init["result"]["protocolVersion"] == "2025-06-18"
        and "tools" in init["result"]["capabilities"]
    )
    tools = {t["name"]: t for t in listed["result"]["tools"]}
    assert set(tools) == {"web_search", "web_fetch", "summarize"}
    assert tools["web_fetch"]["annotations"] == {
        "title": "Web Fetch",
        "readOnlyHint": True,
        "openWorldHint": True,
    }
    assert "inputSchema" in tools["web_fetch"]
    assert proc.stderr.read() == ""


def _stdio_server(agent_dir: Path) -> subprocess.Popen:
    """`pi-web mcp` over raw pipes, after the initialize handshake."""
    proc = subprocess.Popen(
        [PI_WEB, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)},
    )
    for message in (MCP_INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}):
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    return proc


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_mcp_first_signal_ends_the_stdio_server(agent_dir, sig, status):
    """The first SIGINT (Ctrl-C) or SIGTERM ends an idle stdio server within a second, with
    exit 130 or 0 and nothing on stderr (no traceback, no 'Exception ignored')."""
    proc = _stdio_server(agent_dir)
    try:
        started = time.monotonic()
        proc.send_signal(sig)
        assert proc.wait(timeout=TIMEOUT) == status
        assert time.monotonic() - started < 1.0
        assert proc.stderr.read() == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_mcp_sigint_during_a_slow_call_ends_the_stdio_server(agent_dir, write_config, httpserver):
    """Ctrl-C while a tool call waits on a page that answers after 10 s still ends the server
    within a second, exit 130, stderr empty."""
    write_config(
        {
            "providers": [
                {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}}
            ]
        }
    )
    arrived = threading.Event()

    def slow(request):
        from werkzeug import Response

        arrived.set()
        time.sleep(10)
        return Response("late", content_type="text/plain")

    httpserver.expect_request("/slow").respond_with_handler(slow)
    proc = _stdio_server(agent_dir)
    try:
        url = httpserver.url_for("/slow")
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "web_fetch", "arguments": {"urls": [url]}},
        }
        proc.stdin.write(json.dumps(call) + "\n")
        proc.stdin.flush()
        assert arrived.wait(TIMEOUT)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=TIMEOUT) == 130
        assert time.monotonic() - started < 1.0
        assert proc.stderr.read() == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_mcp_answers_requests_piped_before_end_of_input(agent_dir):
    """`pi-web mcp < requests`: requests that arrive together with the end of input are still
    answered (initialize and tools/list), then the server exits 0 with nothing on stderr."""
    requests = [
        MCP_INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    proc = subprocess.run(
        [PI_WEB, "mcp"],
        input="".join(json.dumps(message) + "\n" for message in requests),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env={**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)},
    )
    assert proc.returncode == 0 and proc.stderr == ""
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [reply["id"] for reply in replies] == [1, 2]
    assert len(replies[1]["result"]["tools"]) == 3


def test_mcp_without_sdk_says_how_to_install(agent_dir):
    """Without the mcp package, `pi-web mcp` prints the install hint for this very install (a
    checkout's path when installed from one) to stderr and exits 2."""
    from pi_hostspec.install import install_command, requirement

    code = "import sys; sys.modules['mcp'] = None; from pi_hostspec.cli import main; sys.exit(main(['mcp']))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    hint = install_command("mcp")
    assert proc.stderr == (
        f"pi-web mcp: the MCP server needs the 'mcp' package; install it with: {hint}\n"
    )
    assert hint.endswith("[mcp]'") and ("pip install " in hint or "-m pip install " in hint)
    assert " ".join(requirement("mcp")) in hint.replace("'", "")


def test_mcp_refuses_an_old_sdk(monkeypatch, capsys):
    """With a 1.x-style SDK (no on_list_tools constructor), serve() explains the upgrade and returns 2."""
    import mcp.server.lowlevel
    from pi_hostspec import mcp_server

    class OldServer:
        def __init__(self, name, version=None, instructions=None):
            pass

    monkeypatch.setattr(mcp.server.lowlevel, "Server", OldServer)
    assert mcp_server.serve() == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "too old (2.x needed)" in captured.err
    assert "pip install --upgrade 'mcp>=2'" in captured.err


def test_mcp_broken_plugin_exits_1(monkeypatch, capsys):
    """When the tools cannot be loaded, serve() prints one line to stderr and returns 1 without serving."""
    import pi_hostspec.host
    from pi_hostspec import mcp_server

    def explode(*args, **kwargs):
        raise RuntimeError("plugin 'bad' failed to import\ntraceback ...")

    monkeypatch.setattr(pi_hostspec.host, "Host", explode)
    assert mcp_server.serve() == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "pi-web mcp: cannot load the tools: plugin 'bad' failed to import\n"


def test_mcp_progress_per_url_when_the_client_asks(agent_dir, server_log, write_config, httpserver):
    """A client that sends a progressToken hears one progress notification per URL fetched."""
    from tests.support import serve

    root = serve(httpserver, {f"/p{i}.txt": (200, "text/plain", f"page {i}") for i in range(4)})
    write_config(
        {
            "providers": [
                {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}}
            ]
        }
    )
    heard: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append((progress, total, message))

    async def test():
        async with _session(agent_dir, server_log) as session:
            urls = [f"{root}/p{i}.txt" for i in range(4)]
            result = await session.call_tool(
                "web_fetch", {"urls": urls}, progress_callback=on_progress
            )
            assert not result.is_error

    _run(test)
    assert sorted(p for p, _, _ in heard) == [1.0, 2.0, 3.0, 4.0]
    assert {t for _, t, _ in heard} == {4.0}
    assert heard[-1][2].startswith("Fetched ")


def test_mcp_progress_per_query_when_the_client_asks(agent_dir, server_log, kagi):
    """A web_search of three queries sends one progress notification per query answered."""
    heard: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append((progress, total, message))

    async def test():
        async with _session(agent_dir, server_log) as session:
            queries = ["rust async", "tokio", "asyncio"]
            result = await session.call_tool(
                "web_search", {"queries": queries}, progress_callback=on_progress
            )
            assert not result.is_error

    _run(test)
    assert sorted(p for p, _, _ in heard) == [1.0, 2.0, 3.0]
    assert {t for _, t, _ in heard} == {3.0}
    assert heard[-1][2] == "Searching... 3/3 queries done"


# --- issue 33, item 2: the first answer, and a probe that crosses initialize -----------------

_ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "probing client", "version": "1"},
}
_INITIALIZE = MCP_INITIALIZE


class _StdioClient:
    """A hand-written stdio client: writes lines, collects the answers (with their arrival
    time) in a thread, never blocks on reading."""

    def __init__(self, agent_dir: Path, env: dict | None = None):
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [PI_WEB, "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir), **(env or {})},
        )
        self.answers: dict = {}
        self.arrived = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            message = json.loads(line)
            with self.arrived:
                self.answers[message.get("id")] = (time.monotonic() - self.started, message)
                self.arrived.notify_all()

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def answer(self, request_id, timeout: float = TIMEOUT) -> tuple[float, dict]:
        with self.arrived:
            assert self.arrived.wait_for(lambda: request_id in self.answers, timeout), (
                request_id,
                self.answers,
            )
            return self.answers[request_id]

    def close(self) -> str:
        self.proc.stdin.close()
        self.proc.wait(timeout=TIMEOUT)
        return self.proc.stderr.read()


def test_mcp_a_probe_then_initialize_after_a_second_both_succeed(agent_dir):
    """The Vercel AI SDK's client on stdio: `server/discover` (2026-07-28), no reading for a
    second, then `initialize` on the same pipe. Both get results, whichever the client saw
    first, and the session goes on in either era: a handshake tools/list and an enveloped one
    both answer (the SDK alone locked the pipe to the probe's era and refused initialize)."""
    client = _StdioClient(agent_dir)
    client.send(
        {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": _ENVELOPE}}
    )
    time.sleep(1.0)
    client.send(_INITIALIZE)
    _, probe = client.answer(0)
    _, init = client.answer(1)
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    client.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    client.send({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": _ENVELOPE}})
    legacy, modern = client.answer(2)[1], client.answer(3)[1]
    stderr = client.close()
    assert probe["result"]["supportedVersions"] == ["2026-07-28"]
    assert init["result"]["protocolVersion"] == "2025-06-18", init
    assert init["result"]["serverInfo"]["name"] == "pi-web-tools"
    for answer in (legacy, modern):
        assert {tool["name"] for tool in answer["result"]["tools"]} >= {"web_fetch"}, answer
    assert stderr == ""


def test_mcp_answers_its_first_message_before_the_tools_have_loaded(agent_dir, tmp_path):
    """The first answer does not wait for the SDK or the plugins: with a plugin whose import
    takes 3 s, `initialize` is answered long before `tools/list` can be (which waits for the
    plugin), and the answers are those the SDK gives (no warning that they differed)."""
    from tests.support.hosts import declare_distribution

    site = tmp_path / "site"
    site.mkdir()
    (site / "sleepy_plugin.py").write_text("import time\ntime.sleep(3)\n")
    declare_distribution(site, "sleepy_plugin-1.0.0", "pi.plugins", "sleepy", "sleepy_plugin")
    client = _StdioClient(agent_dir, {"PYTHONPATH": str(site)})
    client.send(_INITIALIZE)
    first, init = client.answer(1)
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    client.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    listed, tools = client.answer(2)
    stderr = client.close()
    assert init["result"]["protocolVersion"] == "2025-06-18"
    assert listed >= 3.0 and first < listed - 2.0, (first, listed)
    assert len(tools["result"]["tools"]) == 3
    assert "differed" not in stderr and "Traceback" not in stderr, stderr


def test_early_answers_match_the_sdks(host):
    """The handshake answers written before the SDK is loaded equal the SDK's own for the same
    requests (versions, capabilities, server), and the version lists are the SDK's."""
    import anyio
    from mcp_types import version
    from pi_hostspec import mcp_server

    assert mcp_server.HANDSHAKE_VERSIONS == version.HANDSHAKE_PROTOCOL_VERSIONS
    assert mcp_server.MODERN_VERSIONS == version.MODERN_PROTOCOL_VERSIONS
    requests = [
        {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": _ENVELOPE}},
        _INITIALIZE,
        {**_INITIALIZE, "id": 2, "params": {**_INITIALIZE["params"], "protocolVersion": "1999"}},
    ]

    async def sdk_answers() -> list[dict]:
        from mcp.shared.message import SessionMessage
        from mcp_types import jsonrpc_message_adapter

        server = mcp_server.build_server(host)
        answers = []
        for request in requests:
            send_in, read_in = anyio.create_memory_object_stream(4)
            write_out, read_out = anyio.create_memory_object_stream(4)
            message = jsonrpc_message_adapter.validate_python(request, by_name=False)
            async with anyio.create_task_group() as group:
                group.start_soon(mcp_server.serve_both_eras, server, read_in, write_out)
                await send_in.send(SessionMessage(message))
                reply = await read_out.receive()
                await send_in.aclose()
            answers.append(json.loads(reply.message.model_dump_json(by_alias=True)))
        return answers

    for request, sdk in zip(requests, anyio.run(sdk_answers), strict=True):
        early = mcp_server.early_answer(request)
        assert mcp_server._handshake_facts(early) == mcp_server._handshake_facts(sdk), (early, sdk)
