"""The hosts a user runs, driven as the user runs them: ``pi-web mcp`` over stdio and over
streamable HTTP through the official MCP SDK's clients (or raw HTTP where a client would hide the
status), and the ``llm`` CLI with llm-echo calling our tools."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio

from . import serve

BIN = Path(sys.executable).parent
PI_WEB = str(BIN / "pi-web")
LLM = str(BIN / "llm")
#: How long any one host interaction may take before the test fails.
TIMEOUT = 30
#: The bearer token the HTTP tests give `pi-web mcp --http` (32 characters).
TOKEN = "tok-" + "7" * 28
#: How long ``/slow.html`` of :class:`Pages` takes by default.
SLOW_SECONDS = 3.0
PAGE = (
    "<html><head><title>Loopback page</title></head><body><article><h1>Hello loopback</h1>"
    "<p>This page is served on 127.0.0.1 for the MCP streamable HTTP end-to-end test, with "
    "enough words to count as the main content of the page for the extractor.</p></article>"
    "</body></html>"
)


def run_async(test) -> None:
    """Run the coroutine function *test* to its end, failing after TIMEOUT seconds."""

    async def bounded():
        with anyio.fail_after(TIMEOUT):
            await test()

    anyio.run(bounded)


def result_text(result) -> str:
    """The text of an MCP tool result."""
    return "\n".join(block.text for block in result.content)


# --------------------------------------------------------------------------- pi-web


def pi_web(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """The `pi-web` CLI with *args* (no colour), in this test's agent dir."""
    env = dict(os.environ if env is None else env, NO_COLOR="1")
    return subprocess.run([PI_WEB, *args], capture_output=True, text=True, env=env, timeout=60)


def pi_web_call(tool: str, args: dict) -> dict:
    """`pi-web call TOOL ARGS --json`: the result as the JSON object it prints."""
    proc = pi_web("call", tool, json.dumps(args), "--json")
    assert proc.stdout, proc.stderr
    return json.loads(proc.stdout)


# --------------------------------------------------------------------------- MCP over stdio


@asynccontextmanager
async def mcp_stdio_session(agent_dir: Path, log: Path):
    """A ClientSession, initialized, with `pi-web mcp` as a stdio subprocess (stderr to *log*)."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    # The SDK passes only a few safe variables (PATH, HOME, ...) plus `env` to the server.
    params = StdioServerParameters(
        command=PI_WEB,
        args=["mcp"],
        env={
            "PI_CODING_AGENT_DIR": str(agent_dir),
            "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],  # the test's own answer cache
        },
    )
    with log.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, read_timeout_seconds=TIMEOUT) as session,
        ):
            await session.initialize()
            yield session


# --------------------------------------------------------------------------- MCP over HTTP


class Pages:
    """Pages on the tests' loopback server: ``/page.html`` at once, ``/slow.html?s=N`` after N
    seconds (SLOW_SECONDS by default)."""

    def __init__(self, httpserver):
        def slow(request):
            from werkzeug import Response

            time.sleep(float(request.args.get("s") or SLOW_SECONDS))
            return Response(PAGE, content_type="text/html; charset=utf-8")

        httpserver.expect_request("/slow.html").respond_with_handler(slow)
        self.url = serve(httpserver, {"/page.html": (200, "text/html; charset=utf-8", PAGE)})


class Running:
    """A `pi-web mcp --http` subprocess: its port and what it wrote to stderr so far."""

    def __init__(self, proc: subprocess.Popen, lines: list[str], port: int):
        self.proc, self.lines, self.port = proc, lines, port
        self.url = f"http://127.0.0.1:{port}/mcp"

    @property
    def log(self) -> str:
        return "".join(self.lines)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(timeout=15)


def start_mcp_http(
    args: list[str], env: dict[str, str], preexec_fn=None
) -> tuple[subprocess.Popen, list[str], int | None]:
    """Start `pi-web mcp --http ARGS` (*preexec_fn* runs in the child before it starts); the
    process, its stderr lines so far and its port."""
    proc = subprocess.Popen(
        [PI_WEB, "mcp", "--http", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
        preexec_fn=preexec_fn,
    )
    lines: list[str] = []
    found = threading.Event()
    port: list[int] = []

    def pump():
        for line in proc.stderr:
            lines.append(line)
            match = re.search(r"serving \d+ tools at http://\S+?:(\d+)/mcp", line)
            if match:
                port.append(int(match.group(1)))
                found.set()
        found.set()

    threading.Thread(target=pump, daemon=True).start()
    found.wait(TIMEOUT)
    return proc, lines, port[0] if port else None


@contextmanager
def mcp_http_serving(agent_dir: Path, *args: str, env: dict | None = None, preexec_fn=None):
    """`pi-web mcp --http --port 0 ARGS` running; stopped with SIGTERM (exit 0) afterwards."""
    proc, lines, port = start_mcp_http(
        ["--port", "0", *args],
        {"PI_CODING_AGENT_DIR": str(agent_dir), **(env or {})},
        preexec_fn,
    )
    try:
        assert port is not None, "".join(lines)
        running = Running(proc, lines, port)
        yield running
        assert running.stop() == 0
        assert "Traceback" not in running.log
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@asynccontextmanager
async def mcp_http_session(url: str, token: str | None = None):
    """A ClientSession, initialized, over the SDK's streamable HTTP client."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=TIMEOUT) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write, read_timeout_seconds=TIMEOUT) as session,
    ):
        await session.initialize()
        yield session


def post_mcp(port: int, headers: dict, body: dict | None = None) -> tuple[int, str]:
    """A raw POST to /mcp on 127.0.0.1 (status, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        conn.request(
            "POST",
            "/mcp",
            json.dumps(body or {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-06-18",
                **headers,
            },
        )
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


# --------------------------------------------------------------------------- llm


def run_llm(llm_home: Path, *args: str) -> subprocess.CompletedProcess:
    """The `llm` CLI with *args*, its user dir in *llm_home*, this test's agent dir."""
    env = dict(os.environ)  # carries PI_CODING_AGENT_DIR from the isolated fixture
    env["LLM_USER_PATH"] = str(llm_home)
    env["NO_COLOR"] = "1"
    return subprocess.run([LLM, *args], capture_output=True, text=True, env=env, timeout=120)


def echo_tool_results(stdout: str) -> list[dict]:
    """llm-echo prints one JSON object per chain step; the last one carries the tool results."""
    decoder = json.JSONDecoder()
    objects, index = [], 0
    while True:
        while index < len(stdout) and stdout[index].isspace():
            index += 1
        if index >= len(stdout):
            break
        obj, index = decoder.raw_decode(stdout, index)
        objects.append(obj)
    assert objects, stdout
    return objects[-1]["tool_results"]


def declare_distribution(root: Path, dist: str, group: str, name: str, module: str) -> None:
    """An installed-looking distribution *dist* (``project-version``) in *root* (a folder to
    put on ``PYTHONPATH``) whose entry point *name* of *group* is *module*."""
    info = root / f"{dist}.dist-info"
    info.mkdir()
    project, version = dist.rsplit("-", 1)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project.replace('_', '-')}\nVersion: {version}\n"
    )
    (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {module}\n")


#: An MCP ``initialize`` request at a handshake-era version, as a hand-written client sends it.
MCP_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test client", "version": "1"},
    },
}
