"""The `browser` fetcher, for real: a JavaScript page rendered to text in a local headless
Chromium through pi-web, the network guard checked on the wire, cancellation, and no browser
left behind. Skipped, with the reason, where Playwright or a browser is missing."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from tests.support import SECRET
from tests.support.browser_site import shell as _shell
from tests.support.loopback import LoopbackServer

pytestmark = [pytest.mark.browser]

BIN = Path(sys.executable).parent


def _missing() -> str | None:
    try:
        from pi_web_tools.providers.browser import setup_problem
    except ImportError as exc:  # pragma: no cover
        return str(exc)
    return setup_problem()


MISSING = _missing()
if MISSING:
    pytestmark.append(pytest.mark.skip(reason=f"no browser here: {MISSING}"))


class Recorder(LoopbackServer):
    """A loopback HTTP server that answers every path with *body* and records each request:
    the page server, a proxy (absolute URLs arrive) or a trap that must receive nothing."""

    def __init__(self, body: bytes = b"", delay: float = 0.0, redirects: dict | None = None):
        self.seen: list[str] = []
        self.redirects = dict(redirects or {})  # path (or absolute URL) -> Location
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                recorder.seen.append(self.path)
                if delay:
                    time.sleep(delay)
                if self.path in recorder.redirects:
                    self.send_response(302)
                    self.send_header("Location", recorder.redirects[self.path])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.do_GET()

        super().__init__(Handler)
        self.start()


@pytest.fixture
def recorders():
    made: list[Recorder] = []

    def make(body: bytes = b"", delay: float = 0.0, redirects: dict | None = None) -> Recorder:
        made.append(Recorder(body, delay, redirects))
        return made[-1]

    yield make
    for recorder in made:
        recorder.close()


def _pi_web(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "pi-web"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )


def test_an_application_shell_is_rendered_by_the_ladder_through_pi_web(recorders, write_config):
    """The direct fetcher finds an application shell; the configured browser renders it before
    the paid fetcher listed ahead of it (which gets nothing), and the section says so."""
    from tests.support.fake_apis import FakeExa

    site = recorders(_shell(""))
    with FakeExa(SECRET) as exa:
        write_config(
            {
                "defaultProvider": "direct",
                "providers": [
                    {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}},
                    {
                        "name": "exa",
                        "type": "exa",
                        "apiKey": SECRET,
                        "options": {"baseUrl": exa.base_url, "allowPrivateNetwork": True},
                    },
                    {"name": "chrome", "type": "browser", "options": {"allowPrivateNetwork": True}},
                ],
            }
        )
        proc = _pi_web("fetch", f"{site.base_url}/app")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "Note: rendered in a local browser: the page needs JavaScript" in proc.stdout
        assert "This text was drawn by JavaScript in the page." in proc.stdout
        assert exa.requests == []


def _ladder_config(write_config) -> None:
    write_config(
        {
            "providers": [
                {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}},
                {"name": "chrome", "type": "browser", "options": {"allowPrivateNetwork": True}},
            ]
        }
    )


def test_an_application_shell_is_rendered_through_mcp(recorders, write_config, tmp_path):
    """The same page through `pi-web mcp` (stdio) and the MCP SDK's client."""
    from tests.support.hosts import mcp_stdio_session as _session
    from tests.support.hosts import result_text as _text
    from tests.support.hosts import run_async as _run

    site = recorders(_shell(""))
    _ladder_config(write_config)
    texts: list[str] = []

    async def call():
        async with _session(Path(os.environ["PI_CODING_AGENT_DIR"]), tmp_path / "log") as session:
            result = await session.call_tool("web_fetch", {"urls": [f"{site.base_url}/mcp"]})
            assert not result.is_error, _text(result)
            texts.append(_text(result))

    _run(call)
    assert "Note: rendered in a local browser: the page needs JavaScript" in texts[0]
    assert "This text was drawn by JavaScript in the page." in texts[0]


def test_an_application_shell_is_rendered_through_llm(recorders, write_config, tmp_path):
    """The same page through `llm -T web_fetch` (llm-echo calls the tool)."""
    from tests.support.hosts import echo_tool_results as _echo_tool_results
    from tests.support.hosts import run_llm as _llm

    site = recorders(_shell(""))
    _ladder_config(write_config)
    call = {"tool_calls": [{"name": "web_fetch", "arguments": {"urls": [f"{site.base_url}/llm"]}}]}
    home = tmp_path / "llm-home"
    home.mkdir()
    proc = _llm(home, "-m", "echo", "-T", "web_fetch", json.dumps(call))
    assert proc.returncode == 0, proc.stderr
    [result] = _echo_tool_results(proc.stdout)
    assert "Note: rendered in a local browser: the page needs JavaScript" in result["output"]
    assert "This text was drawn by JavaScript in the page." in result["output"]


class Trap:
    """A loopback TCP port and UDP port that record every connection and datagram that arrives
    (any arrival is a leak: an HTTP request, a preconnect, WebRTC's TURN or STUN)."""

    def __init__(self):
        self.connections: list[bytes] = []
        self.datagrams: list[bytes] = []
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.port = self.tcp.getsockname()[1]
        self.udp_port = self.udp.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()
        threading.Thread(target=self._receive, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.tcp.accept()
            except OSError:
                return
            conn.settimeout(1)
            try:
                self.connections.append(conn.recv(100))
            except OSError:
                self.connections.append(b"")
            conn.close()

    def _receive(self):
        while True:
            try:
                self.datagrams.append(self.udp.recv(2000)[:20])
            except OSError:
                return

    def close(self):
        self.tcp.close()
        self.udp.close()


def _private_requests(trap: Trap) -> str:
    """A script asking for a metadata address, another loopback port and a 10.x image, by
    fetch, image, iframe, beacon, WebSocket and WebRTC (STUN over UDP, TURN over TCP)."""
    return (
        "fetch('http://169.254.169.254/latest/meta-data/').catch(()=>{});"
        f"fetch('http://127.0.0.1:{trap.port}/steal').catch(()=>{{}});"
        "var i=new Image(); i.src='http://10.1.2.3/pixel.png'; document.body.appendChild(i);"
        f"var f=document.createElement('iframe'); f.src='http://127.0.0.1:{trap.port}/frame';"
        "document.body.appendChild(f);"
        f"navigator.sendBeacon('http://127.0.0.1:{trap.port}/beacon', 'x');"
        f"try {{ new WebSocket('ws://127.0.0.1:{trap.port}/ws'); }} catch (e) {{}}"
        "try { var pc = new RTCPeerConnection({iceServers: ["
        f"{{urls: 'stun:127.0.0.1:{trap.udp_port}'}},"
        f"{{urls: 'turn:127.0.0.1:{trap.port}?transport=tcp', username: 'u', credential: 'c'}},"
        "{urls: 'stun:169.254.169.254:3478'}]});"
        "pc.createDataChannel('x'); pc.createOffer().then(o => pc.setLocalDescription(o));"
        "} catch (e) {}"
    )


def test_the_pages_requests_to_private_addresses_are_never_sent(recorders, write_config):
    """A page whose scripts ask for a metadata address, another loopback port and a 10.x image
    (by fetch, image, iframe, beacon, WebSocket and WebRTC): nothing of it is sent, on the wire.

    The page is reached under a public-looking name through a loopback proxy from the
    environment (a proxied name is the proxy's to resolve, so the guard lets it through with
    allowPrivateNetwork off, as for the direct fetcher); every HTTP request the guard let
    through would reach that proxy, which records it. The trap records any TCP connection or
    UDP datagram to the loopback port the page names. Then, with allowPrivateNetwork on, the
    same page's requests do reach the proxy: the scripts ask, and the guard is what refused."""
    trap = Trap()
    try:
        proxy = recorders(_shell(_private_requests(trap), words="behind a proxy"))
        env = {
            "HTTP_PROXY": proxy.base_url,
            "http_proxy": proxy.base_url,
            "NO_PROXY": "",
            "no_proxy": "",
        }
        write_config({"providers": [{"name": "chrome", "type": "browser"}]})
        proc = _pi_web("fetch", "http://shell.example/page", env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "This text was behind a proxy in the page." in proc.stdout
        time.sleep(1.0)
        assert proxy.seen == ["http://shell.example/page"]
        assert trap.connections == []
        assert trap.datagrams == []

        write_config(
            {
                "providers": [
                    {"name": "chrome", "type": "browser", "options": {"allowPrivateNetwork": True}}
                ]
            }
        )
        proc = _pi_web("fetch", "http://shell.example/allowed", env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        time.sleep(1.0)
        asked = set(proxy.seen)
        assert "http://169.254.169.254/latest/meta-data/" in asked
        assert f"http://127.0.0.1:{trap.port}/steal" in asked
        assert "http://10.1.2.3/pixel.png" in asked
        assert f"http://127.0.0.1:{trap.port}/frame" in asked
        assert f"http://127.0.0.1:{trap.port}/beacon" in asked
        # The browser's own network stack (WebRTC, WebSockets) reaches nothing even then.
        assert trap.connections == []
        assert trap.datagrams == []
    finally:
        trap.close()


def test_redirects_are_followed_through_the_route(recorders):
    """The page's document redirects (it lands on the target, whose relative URLs resolve
    there), and so does a script's request; both are answered through the route."""
    from pi_web_tools.api.types import FetchRequest
    from pi_web_tools.providers.browser import BrowserOptions, BrowserProvider

    script = (
        "fetch('moved').then(r => r.text()).then(t => {"
        "document.querySelector('h1').textContent = 'Fetched: ' + t.slice(0, 40); });"
    )
    site = recorders(_shell(script), redirects={"/start": "/app/final", "/app/moved": "/data"})
    provider = BrowserProvider("chrome", BrowserOptions(allow_private_network=True))
    page = provider.fetch(FetchRequest(urls=(f"{site.base_url}/start",)), None).pages[0]
    assert page.ok, page.error
    assert page.final_url == f"{site.base_url}/app/final"
    assert "Fetched: <html><head><title>App</title>" in page.text
    assert site.seen[:2] == ["/start", "/app/final"]
    assert "/app/moved" in site.seen and "/data" in site.seen


def test_a_redirect_to_a_private_address_is_not_followed(recorders, monkeypatch):
    """A public-looking page (through a loopback proxy) whose document, or whose script's
    request, redirects to a loopback port or the metadata address: neither is sent."""
    from pi_web_tools.api.types import FetchRequest
    from pi_web_tools.providers.browser import BrowserOptions, BrowserProvider

    trap = Trap()
    try:
        script = "fetch('http://shell.example/sub').catch(() => {});"
        proxy = recorders(
            _shell(script),
            redirects={
                "http://shell.example/go": f"http://127.0.0.1:{trap.port}/redirected",
                "http://shell.example/sub": "http://169.254.169.254/latest/meta-data/",
            },
        )
        monkeypatch.setenv("HTTP_PROXY", proxy.base_url)
        monkeypatch.setenv("http_proxy", proxy.base_url)
        provider = BrowserProvider("chrome", BrowserOptions())
        went = provider.fetch(FetchRequest(urls=("http://shell.example/go",)), None).pages[0]
        assert not went.ok
        assert went.error.startswith("refused: 127.0.0.1 is a loopback address; "), went.error
        assert "in the chrome provider" in went.error
        page = provider.fetch(FetchRequest(urls=("http://shell.example/page",)), None).pages[0]
        assert page.ok, page.error
        time.sleep(0.5)
        assert proxy.seen == [
            "http://shell.example/go",
            "http://shell.example/page",
            "http://shell.example/sub",
        ]
        assert trap.connections == []
    finally:
        trap.close()


def test_pi_web_config_says_the_browser_is_ready(write_config):
    write_config({"providers": [{"name": "chrome", "type": "browser"}]})
    proc = _pi_web("config")
    assert proc.returncode == 0, proc.stdout
    assert "Note: chrome: ready on this machine" in proc.stdout
    write_config(
        {
            "providers": [
                {"name": "chrome", "type": "browser", "options": {"executablePath": "/no/such"}}
            ]
        }
    )
    assert "Warning: chrome: no browser at executablePath '/no/such'" in _pi_web("config").stdout


def test_cancellation_stops_a_render_within_a_second(recorders):
    """A page that never finishes: the call's cancellation returns within a second."""
    from pi_hostspec.types import ToolContext
    from pi_web_tools.api.types import FetchRequest
    from pi_web_tools.providers.browser import BrowserOptions, BrowserProvider

    slow = recorders(b"<html><body>late</body></html>", delay=30)
    provider = BrowserProvider("chrome", BrowserOptions(allow_private_network=True))
    ctx = ToolContext()
    threading.Timer(1.0, ctx.cancel.set).start()
    started = time.monotonic()
    response = provider.fetch(FetchRequest(urls=(f"{slow.base_url}/hang",)), ctx)
    assert time.monotonic() - started < 2.0
    assert response.pages[0].error == "cancelled"


CHILD = """
import sys, time
from pi_web_tools.api.types import FetchRequest
from pi_web_tools.providers.browser import BrowserOptions, BrowserProvider
provider = BrowserProvider("chrome", BrowserOptions(allow_private_network=True))
page = provider.fetch(FetchRequest(urls=(sys.argv[1],)), None).pages[0]
print("rendered" if page.ok else page.error, flush=True)
if sys.argv[2] == "hang":
    time.sleep(60)
else:  # exit once told to (the test has seen the browser running)
    sys.stdin.readline()
"""


def _browsers(pid: int) -> set[str]:
    """The browser processes process *pid* started (their command line carries its id)."""
    found = subprocess.run(
        ["pgrep", "-f", "--", f"--pi-web-tools-browser={pid}( |$)"], capture_output=True, text=True
    )
    return set(found.stdout.split())


def _gone(pids: set[str], seconds: float) -> set[str]:
    """*pids* still alive after waiting up to *seconds* for them to end."""
    left = set(pids)
    for _ in range(int(seconds * 10)):
        left = {pid for pid in left if Path(f"/proc/{pid}").exists()}
        if not left:
            break
        time.sleep(0.1)
    return left


@pytest.mark.parametrize("ending", ["exit", "ctrl-c", "sigterm", "sigkill"])
def test_no_browser_outlives_its_process(ending, recorders):
    """After a render, the process ends (normally, Ctrl-C to its process group as a terminal
    sends it, terminated, killed): within seconds no browser process it started is left."""
    site = recorders(_shell(""))
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, f"{site.base_url}/", "exit" if ending == "exit" else "hang"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # A shell without job control starts background commands with SIGINT ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert child.stdout.readline().strip() == "rendered"
    running = _browsers(child.pid)
    assert running, "the browser should be running now"
    if ending == "exit":
        child.stdin.close()
    elif ending == "ctrl-c":
        os.killpg(child.pid, signal.SIGINT)
    elif ending == "sigterm":
        child.send_signal(signal.SIGTERM)
    elif ending == "sigkill":
        child.send_signal(signal.SIGKILL)
    child.wait(30)
    assert _gone(running | _browsers(child.pid), 10) == set()


def test_a_browser_that_died_is_started_again(recorders):
    """The browser is killed between two calls: the next call starts a new one and renders."""
    from pi_web_tools.api.types import FetchRequest
    from pi_web_tools.providers.browser import BrowserOptions, BrowserProvider

    site = recorders(_shell(""))
    provider = BrowserProvider("chrome", BrowserOptions(allow_private_network=True))
    assert provider.fetch(FetchRequest(urls=(f"{site.base_url}/1",)), None).pages[0].ok
    first = _browsers(os.getpid())
    assert first
    for pid in first:
        os.kill(int(pid), signal.SIGKILL)
    assert _gone(first, 10) == set()
    page = provider.fetch(FetchRequest(urls=(f"{site.base_url}/2",)), None).pages[0]
    assert page.ok, page.error
    assert "drawn by JavaScript" in page.text
    assert _browsers(os.getpid()) - first


def test_no_cookie_or_storage_outlives_a_call(recorders):
    """A cookie and localStorage set in one call are gone in the next (a fresh context per
    call); keepStorage keeps them."""
    from pi_web_tools.api.types import FetchRequest
    from pi_web_tools.providers.browser import BrowserOptions, BrowserProvider

    script = (
        "var was = (document.cookie || 'none') + '/' + (localStorage.getItem('k') || 'none');"
        "document.cookie = 'session=abc; max-age=3600'; localStorage.setItem('k', 'kept');"
        "document.querySelector('h1').textContent = 'Seen before: ' + was;"
    )
    site = recorders(_shell(script))
    for keep, second in (
        (False, "Seen before: none/none"),
        (True, "Seen before: session=abc/kept"),
    ):
        options = BrowserOptions(allow_private_network=True, keep_storage=keep)
        provider = BrowserProvider(f"chrome-{keep}", options)
        first = provider.fetch(FetchRequest(urls=(f"{site.base_url}/a",)), None).pages[0]
        assert "Seen before: none/none" in first.text, first.text
        again = provider.fetch(FetchRequest(urls=(f"{site.base_url}/b",)), None).pages[0]
        assert second in again.text, again.text


def test_a_download_is_refused(httpserver):
    """A URL that answers with an attachment is refused with a clean message."""
    from pi_web_tools.api.types import FetchRequest
    from pi_web_tools.providers.browser import BrowserOptions, BrowserProvider

    httpserver.expect_request("/file.bin").respond_with_data(
        b"\x00" * 1000,
        content_type="application/octet-stream",
        headers={"Content-Disposition": "attachment; filename=file.bin"},
    )
    provider = BrowserProvider("chrome", BrowserOptions(allow_private_network=True))
    page = provider.fetch(FetchRequest(urls=(httpserver.url_for("/file.bin"),)), None).pages[0]
    assert not page.ok
    assert page.error == "the URL is a download, which the browser fetcher refuses"


def test_five_shells_render_in_parallel(recorders):
    """Five pages of one call load at once: the call takes far less than five single ones."""
    from pi_web_tools.api.types import FetchRequest
    from pi_web_tools.providers.browser import BrowserOptions, BrowserProvider

    site = recorders(_shell(""), delay=1.0)
    provider = BrowserProvider("chrome", BrowserOptions(allow_private_network=True, max_pages=5))
    provider.fetch(FetchRequest(urls=(f"{site.base_url}/warm",)), None)  # the browser is up
    started = time.monotonic()
    pages = provider.fetch(
        FetchRequest(urls=tuple(f"{site.base_url}/{i}" for i in range(5))), None
    ).pages
    took = time.monotonic() - started
    assert all(page.ok for page in pages), [page.error for page in pages]
    assert took < 4.0, f"5 pages of 1 s each took {took:.1f} s"
    assert json.dumps([page.url for page in pages])


def test_an_https_page_is_verified_against_requests_ca_bundle(write_config, tmp_path):
    """An HTTPS page reaches the browser through the call's proxy (its tunnel answered by
    pi-web-tools) and is fetched by requests, verified against REQUESTS_CA_BUNDLE: with the
    site's CA it renders; without, the URL fails for TLS and the site gets no request."""
    from tests.support.browser_site import browser_config, fetch_json, html, outcomes, tls_site

    site, ca = tls_site({"/page": html(_shell(words="served over TLS"))}, tmp_path)
    try:
        write_config(browser_config(allowPrivateNetwork=True))
        url = f"https://127.0.0.1:{site.port}/page"
        trusted = fetch_json(url, env={"REQUESTS_CA_BUNDLE": str(ca)})
        assert outcomes(trusted) == {url: "ok"}, trusted
        assert "This text was served over TLS in the page." in trusted["content"][0]["text"]
        untrusted = fetch_json(url)
        assert outcomes(untrusted) == {
            url: "the page could not be loaded (TLS/SSL error (check the certificate or "
            "REQUESTS_CA_BUNDLE))"
        }, untrusted
        assert site.asked() == ["/page"]
    finally:
        site.close()
