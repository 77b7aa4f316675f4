"""The shared HTTP layer: JSON calls, error mapping, redaction, retries, deadlines, real sockets."""

from __future__ import annotations

import email.utils
import http.server
import json
import re
import socket
import threading
import time
from collections.abc import Callable

import pytest
import requests
import responses
from pi_hostspec import ToolContext
from pi_web_tools.api._http_client import HttpClient
from pi_web_tools.api.errors import ProviderError
from pi_web_tools.api.retry import RetryPolicy

from tests.support import SECRET
from tests.support.loopback import LoopbackServer

BASE = "https://api.example.test"


def kagi_error_text(data):
    """Kagi's error shape: {"error": [{"code": ..., "msg": ...}]}."""
    return data["error"][0]["msg"]


def make_client(base_url: str = BASE, **kwargs) -> HttpClient:
    kwargs.setdefault("retry", RetryPolicy(backoff_factor=0.001, backoff_jitter=0.001 / 2))
    kwargs.setdefault("timeout", 5.0)
    return HttpClient(
        provider="test",
        base_url=base_url,
        headers={"Authorization": f"Bot {SECRET}"},
        secrets=[SECRET],
        error_text=kagi_error_text,
        **kwargs,
    )


def failure(client: HttpClient, path: str = "/search", **kwargs) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        client.request_json("GET", path, **kwargs)
    return info.value


def assert_clean(error: ProviderError) -> None:
    """One line, prefixed with the provider, and the secret nowhere."""
    message = str(error)
    assert message.startswith("test: ")
    assert "\n" not in message
    assert SECRET not in message
    assert SECRET not in repr(error)
    assert SECRET not in json.dumps(error.to_dict())


@pytest.fixture
def mocked():
    """A strict responses mock: every registered response must be used, nothing reaches the net."""
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


# --------------------------------------------------------------------------- responses-based


def test_json_success(mocked):
    """A 200 JSON answer is parsed and returned with the response; headers and params are sent."""
    mocked.get(
        f"{BASE}/search",
        json={"data": [1, 2]},
        match=[responses.matchers.query_param_matcher({"q": "x"})],
    )
    client = make_client()
    data, response = client.request_json("GET", "/search", params={"q": "x"})
    assert data == {"data": [1, 2]}
    assert response.status_code == 200
    sent = mocked.calls[0].request
    assert sent.headers["Authorization"] == f"Bot {SECRET}"
    assert sent.headers["User-Agent"].startswith("pi-web-tools/")


def test_post_json_body(mocked):
    """json_body is sent as the JSON request body."""
    mocked.post(
        f"{BASE}/contents",
        json={"ok": True},
        match=[responses.matchers.json_params_matcher({"a": 1})],
    )
    data, _ = make_client().request_json("POST", "/contents", json_body={"a": 1})
    assert data == {"ok": True}


def test_absolute_url_bypasses_base_url(mocked):
    """A path that is already an absolute URL is used as is."""
    mocked.get("https://other.example.test/x", json={"ok": 1})
    data, _ = make_client().request_json("GET", "https://other.example.test/x")
    assert data == {"ok": 1}


def test_http_400_names_status_and_api_message(mocked):
    """A 4xx names the HTTP status and the API's own error text from the error_text callback."""
    mocked.get(
        f"{BASE}/search", status=400, json={"error": [{"code": 1, "msg": "Query is too long"}]}
    )
    error = failure(make_client())
    assert "HTTP 400" in str(error)
    assert str(error).endswith(": Query is too long")
    assert error.status == 400
    assert error.retryable is False
    assert_clean(error)


def test_error_text_callback_may_return_message_and_code(mocked):
    """An error_text callback returning (message, code) fills both into the error."""
    mocked.get(
        f"{BASE}/search", status=402, json={"error": {"m": "Insufficient credit", "c": "credit"}}
    )
    client = make_client()
    client.error_text = lambda data: (data["error"]["m"], data["error"]["c"])
    error = failure(client)
    assert "HTTP 402" in str(error) and "Insufficient credit" in str(error)
    assert error.code == "credit"


def test_broken_error_text_callback_falls_back_to_snippet(mocked):
    """An error_text callback that raises on an unexpected shape falls back to the body snippet."""
    mocked.get(f"{BASE}/search", status=400, json={"message": "different shape"})
    error = failure(make_client())
    assert "HTTP 400" in str(error)
    assert "different shape" in str(error)


def test_html_error_page_gives_short_tag_free_snippet(mocked):
    """An HTML 503 page becomes a short snippet (its title), without tags, after the retries."""
    page = (
        "<html><head><title>Service Unavailable</title><style>body{color:red}</style></head>"
        "<body><h1>Service Unavailable</h1><p>"
        + "The server is overloaded. " * 200
        + "</p></body></html>"
    )
    mocked.get(f"{BASE}/search", status=503, body=page, content_type="text/html")
    error = failure(make_client())
    message = str(error)
    assert "HTTP 503" in message
    assert "Service Unavailable" in message
    assert "<" not in message and ">" not in message
    assert len(message) < 300
    assert error.retryable is True
    assert_clean(error)


def test_invalid_json_with_200(mocked):
    """A 200 whose body is not JSON is an error naming the status, content type and a snippet."""
    mocked.get(f"{BASE}/search", status=200, body="<html>oops</html>", content_type="text/html")
    error = failure(make_client())
    message = str(error)
    assert "not valid JSON" in message
    assert "HTTP 200" in message
    assert "text/html" in message
    assert "oops" in message
    assert_clean(error)


def test_truncated_json_with_200(mocked):
    """A 200 whose JSON stops half way is an error, not a parser exception."""
    mocked.get(f"{BASE}/search", status=200, body='{"data": [1, 2', content_type="application/json")
    assert "not valid JSON" in str(failure(make_client()))


def test_empty_body(mocked):
    """A 200 with an empty body is an error saying so."""
    mocked.get(f"{BASE}/search", status=200, body="")
    error = failure(make_client())
    assert "empty body" in str(error)
    assert "HTTP 200" in str(error)


def test_secret_echoed_in_json_error_is_redacted(mocked):
    """The key is redacted even when the server echoes it in its own error message."""
    mocked.get(
        f"{BASE}/search",
        status=401,
        json={"error": [{"code": 401, "msg": f"Invalid key {SECRET} for this endpoint"}]},
    )
    error = failure(make_client())
    assert "HTTP 401" in str(error)
    assert "Invalid key *** for this endpoint" in str(error)
    assert_clean(error)


def test_secret_echoed_in_html_and_invalid_json_is_redacted(mocked):
    """The key is redacted from HTML error snippets and from invalid-JSON snippets too."""
    mocked.get(f"{BASE}/a", status=403, body=f"<html><body>key {SECRET} denied</body></html>")
    mocked.get(f"{BASE}/b", status=200, body=f"not json {SECRET}")
    client = make_client()
    assert_clean(failure(client, "/a"))
    assert_clean(failure(client, "/b"))


def test_retry_503_then_200_succeeds(mocked):
    """A 503 followed by a 200 succeeds after exactly two calls."""
    mocked.get(f"{BASE}/search", status=503, body="busy")
    mocked.get(f"{BASE}/search", json={"data": "ok"})
    data, _ = make_client().request_json("GET", "/search")
    assert data == {"data": "ok"}
    assert len(mocked.calls) == 2


@pytest.mark.parametrize("status", [429, 502, 503, 504])
def test_retryable_status_gives_up_after_three_calls(mocked, status):
    """A retryable status that persists is tried exactly three times (two retries), then fails."""
    mocked.get(f"{BASE}/search", status=status, json={"error": [{"msg": "slow down"}]})
    error = failure(make_client())
    assert len(mocked.calls) == 3
    assert f"HTTP {status}" in str(error)
    assert error.retryable is True


def test_429_message_says_rate_limited(mocked):
    """A final 429 says the call was rate limited and includes the API's text."""
    mocked.get(f"{BASE}/search", status=429, json={"error": [{"msg": "Too many requests"}]})
    message = str(failure(make_client()))
    assert "HTTP 429" in message and "Too many requests" in message and "rate limited" in message
    assert len(mocked.calls) == 3


@pytest.mark.parametrize("status", [400, 401, 402, 403, 404, 500])
def test_non_retryable_status_is_tried_once(mocked, status):
    """400, 401, 402, 403 (and other non-retryable statuses) are never retried: one call."""
    mocked.get(f"{BASE}/search", status=status, json={"error": [{"msg": "no"}]})
    error = failure(make_client())
    assert len(mocked.calls) == 1
    assert f"HTTP {status}" in str(error)
    assert error.status == status


def test_retries_zero_means_one_call(mocked):
    """retries=0 turns retrying off."""
    mocked.get(f"{BASE}/search", status=503, body="busy")
    failure(make_client(retry=RetryPolicy(total=0)))
    assert len(mocked.calls) == 1


def test_retry_after_is_honoured_but_capped(mocked):
    """A Retry-After far in the future is waited for only up to the policy's cap, then the retry succeeds."""
    mocked.get(f"{BASE}/search", status=429, headers={"Retry-After": "100"}, body="")
    mocked.get(f"{BASE}/search", json={"ok": True})
    start = time.monotonic()
    client = make_client(timeout=5, retry=RetryPolicy(backoff_factor=0.001, retry_after_cap=0.2))
    data, _ = client.request_json("GET", "/search")
    elapsed = time.monotonic() - start
    assert data == {"ok": True}
    assert 0.2 <= elapsed < 1.5
    assert len(mocked.calls) == 2


def test_retry_waits_never_exceed_the_deadline(mocked):
    """With a 0.3 s timeout and Retry-After: 100 the call fails fast instead of waiting."""
    mocked.get(
        f"{BASE}/search",
        status=429,
        headers={"Retry-After": "100"},
        json={"error": [{"msg": "later"}]},
    )
    start = time.monotonic()
    error = failure(make_client(timeout=0.3))
    assert time.monotonic() - start < 1.0
    assert "HTTP 429" in str(error)
    assert "retry after 100 s" in str(error)
    assert len(mocked.calls) == 1
    assert error.retry_after == 100  # the runtime rests the provider that long (team.py)


def test_a_failure_without_retry_after_names_none(mocked):
    mocked.get(f"{BASE}/search", status=403, json={"error": [{"msg": "no"}]})
    assert failure(make_client()).retry_after is None


def test_cancelled_context_fails_immediately_without_a_request(mocked):
    """A ToolContext whose cancel event is already set gives a 'cancelled' error and sends nothing."""
    ctx = ToolContext()
    ctx.cancel.set()
    start = time.monotonic()
    error = failure(make_client(), ctx=ctx)
    assert time.monotonic() - start < 0.5
    assert "cancelled" in str(error)
    assert len(mocked.calls) == 0


def test_cancel_during_retry_wait_stops_promptly_and_says_cancelled(mocked):
    """Cancelling while waiting to retry stops at once and reports the call as cancelled."""
    mocked.get(f"{BASE}/search", status=503, body="busy")
    ctx = ToolContext()
    timer = threading.Timer(0.1, ctx.cancel.set)
    timer.start()
    start = time.monotonic()
    try:
        error = failure(
            make_client(retry=RetryPolicy(backoff_factor=3.0, backoff_jitter=3.0 / 2), timeout=30),
            ctx=ctx,
        )
    finally:
        timer.cancel()
    assert time.monotonic() - start < 1.0
    assert len(mocked.calls) == 1
    assert "cancelled" in str(error)


def test_body_cap_message_names_a_sensible_limit(mocked):
    """A cap below 1 MB is still named sensibly in the 'larger than' error (not '0 MB')."""
    mocked.get(f"{BASE}/search", body=b"x" * 300_000)
    error = failure(make_client(max_body_bytes=100_000))
    assert "larger than" in str(error)
    assert "larger than 0 MB" not in str(error)


def test_session_is_created_once_and_reused():
    """The session property returns the same warm requests.Session every time."""
    client = make_client()
    assert client.session is client.session
    assert isinstance(client.session, requests.Session)


# --------------------------------------------------------------------------- real loopback servers


class Scripted(LoopbackServer):
    """The loopback server running *handle(handler, stop)* for each GET, counting connections."""

    def __init__(
        self, handle: Callable[[http.server.BaseHTTPRequestHandler, threading.Event], None]
    ):
        self.connections = 0
        self.requests: list[dict] = []
        outer = self
        lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                super().setup()
                with lock:
                    outer.connections += 1

            def do_GET(self):
                outer.requests.append(dict(self.headers))
                try:
                    handle(self, outer.stop)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def log_message(self, *args):
                pass

        super().__init__(Handler)
        self.start()


@pytest.fixture
def serve():
    servers: list[Scripted] = []

    def start(handle) -> Scripted:
        server = Scripted(handle)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def send_json(handler, payload, status: int = 200) -> None:
    body = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def test_real_server_json_and_user_agent(serve):
    """Against a real socket, JSON is returned and the User-Agent names pi-web-tools and its version."""
    server = serve(lambda h, stop: send_json(h, {"hello": "world"}))
    data, _ = make_client(server.base_url).request_json("GET", "/x")
    assert data == {"hello": "world"}
    agent = server.requests[0]["User-Agent"]
    assert agent.startswith("pi-web-tools/")
    from pi_web_tools import __version__

    assert agent.startswith(f"pi-web-tools/{__version__}")


def test_session_reuses_one_connection(serve):
    """Two calls through one client reuse one keep-alive TCP connection."""
    server = serve(lambda h, stop: send_json(h, {"n": 1}))
    client = make_client(server.base_url)
    client.request_json("GET", "/one")
    client.request_json("GET", "/two")
    assert len(server.requests) == 2
    assert server.connections == 1


def test_headers_that_never_come_time_out(serve):
    """A server that accepts but never answers gives a 'timed out' error within timeout + 1 s."""

    def hang(handler, stop):
        stop.wait(10)
        handler.close_connection = True

    server = serve(hang)
    start = time.monotonic()
    error = failure(make_client(server.base_url, timeout=0.5), "/hang")
    elapsed = time.monotonic() - start
    assert elapsed < 1.5
    assert "timed out" in str(error)
    assert_clean(error)


def _trickle(handler, stop, chunked: bool):
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    if chunked:
        handler.send_header("Transfer-Encoding", "chunked")
    else:
        handler.send_header("Content-Length", str(10_000_000))
    handler.end_headers()
    handler.wfile.write(b"1\r\n[\r\n" if chunked else b"[")
    while not stop.wait(0.02):
        handler.wfile.write(b"1\r\n1\r\n" if chunked else b"1")
    handler.close_connection = True


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_trickling_body_fails_within_the_deadline(serve, chunked):
    """A body that trickles forever (a byte every 20 ms) is cut off at the deadline with an error."""
    server = serve(lambda h, stop: _trickle(h, stop, chunked))
    result: dict = {}

    def call():
        start = time.monotonic()
        try:
            make_client(server.base_url, timeout=0.5).request_json("GET", "/slow")
        except ProviderError as exc:
            result["error"] = exc
        result["elapsed"] = time.monotonic() - start

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(3)
    still_running = worker.is_alive()
    server.stop.set()  # let a stuck call end so the test suite does not hang
    worker.join(3)
    assert not still_running, (
        "the call was still reading a trickling body 3 s after a 0.5 s deadline"
    )
    assert result["elapsed"] < 2.5  # the deadline and a loaded machine's slack, not 10 MB
    assert "timed out" in str(result["error"])


def test_connection_refused_after_retries(serve):
    """An unused port gives 'connection refused' after the retries, within a couple of seconds."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = make_client(
        f"http://127.0.0.1:{port}", retry=RetryPolicy(backoff_factor=0.01, backoff_jitter=0.01 / 2)
    )
    calls = []
    original = client.session.request

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    client.session.request = counting  # type: ignore[method-assign]
    start = time.monotonic()
    error = failure(client)
    assert time.monotonic() - start < 2.0
    assert "connection refused" in str(error)
    assert len(calls) == 3
    assert error.retryable is True
    assert_clean(error)


def test_body_larger_than_cap_is_refused(serve):
    """A body larger than max_body_bytes is refused with a 'larger than' error, not read to the end."""
    size = 3 * 1024 * 1024

    def big(handler, stop):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(size))
        handler.end_headers()
        chunk = b"x" * 65536
        for _ in range(size // len(chunk)):
            if stop.is_set():
                break
            handler.wfile.write(chunk)

    server = serve(big)
    error = failure(make_client(server.base_url, max_body_bytes=1024 * 1024), "/big")
    assert "larger than" in str(error)
    assert error.status == 200


def test_retry_after_http_date_is_reported_in_seconds(mocked):
    """A Retry-After given as an HTTP date is shown as seconds, not echoed raw."""
    import time as time_module

    when = email.utils.formatdate(time_module.time() + 30, usegmt=True)
    mocked.get(f"{BASE}/x", status=429, json={"error": "slow down"}, headers={"Retry-After": when})
    client = make_client(
        retry=RetryPolicy(backoff_factor=0.001, backoff_jitter=0.001 / 2)
    )  # the wait would not fit the 0.2 s budget: no retry
    with pytest.raises(ProviderError) as info:
        client.request_json("GET", "/x", timeout=0.2)
    assert re.search(r"rate limited; retry after (29|30|31) s\)", str(info.value)), str(info.value)


def test_invalid_header_value_is_a_clear_error_without_retries_or_the_key(mocked):
    """A key with a control character fails once, clearly, and the key is not echoed."""
    bad_key = "sk-bad\nkey-123456"
    client = HttpClient(
        provider="test",
        base_url=BASE,
        headers={"Authorization": f"Bot {bad_key}"},
        secrets=[bad_key],
    )
    with pytest.raises(ProviderError) as info:
        client.request_json("GET", "/x")
    assert "request header is invalid (check the API key" in str(info.value)
    assert bad_key not in str(info.value) and "sk-bad" not in str(info.value)
    assert len(mocked.calls) == 0


def test_error_headers_add_the_providers_reading_of_the_headers(mocked):
    """error_headers turns an error response's headers into words after the API's message."""
    mocked.get(
        f"{BASE}/search", status=403, json={"error": [{"msg": "Denied"}]}, headers={"X-Quota": "0"}
    )
    client = make_client(
        error_headers=lambda status, headers: f"quota {headers['x-quota']} at {status}"
    )
    assert str(failure(client)) == "test: HTTP 403 Forbidden: Denied (quota 0 at 403)"


def test_a_failing_error_headers_callback_never_hides_the_status(mocked):
    """A bug in error_headers leaves the usual message."""
    mocked.get(f"{BASE}/search", status=401, json={"error": [{"msg": "Nope"}]})
    client = make_client(error_headers=lambda status, headers: 1 / 0)
    assert str(failure(client)) == "test: HTTP 401 Unauthorized: Nope"


def test_run_interruptible_is_public():
    """Providers that call a blocking library bound it with pi_web_tools.run_interruptible."""
    import pi_web_tools
    from pi_web_tools.api._http_client import run_interruptible

    assert pi_web_tools.run_interruptible is run_interruptible


# --- the kind of a failure, as a value --------------------------------------------------------


@pytest.mark.parametrize(
    "status, kind",
    [
        (401, "authentication"),
        (403, "authentication"),
        (402, "quota"),
        (429, "rate limit"),
        (500, "outage"),
        (503, "outage"),
        (400, None),
        (404, None),
        (422, None),
    ],
)
def test_a_status_error_carries_its_kind(status, kind):
    from pi_web_tools.api import ErrorKind

    with responses.RequestsMock() as mock:
        mock.get("https://api.example/x", status=status, json={})
        client = HttpClient(
            provider="P", base_url="https://api.example", retry=RetryPolicy(total=0)
        )
        with pytest.raises(ProviderError) as caught:
            client.request_json("GET", "/x")
    assert caught.value.kind == (ErrorKind(kind) if kind else None)


def test_network_failures_carry_their_kind():
    import requests
    from pi_web_tools.api import ErrorKind

    for error, kind in (
        (requests.exceptions.ConnectTimeout("t"), ErrorKind.TIMEOUT),
        (requests.exceptions.ReadTimeout("t"), ErrorKind.TIMEOUT),
        (requests.exceptions.ConnectionError("refused"), ErrorKind.UNREACHABLE),
    ):
        with responses.RequestsMock() as mock:
            mock.get("https://api.example/x", body=error)
            client = HttpClient(
                provider="P", base_url="https://api.example", retry=RetryPolicy(total=0)
            )
            with pytest.raises(ProviderError) as caught:
                client.request_json("GET", "/x")
        assert caught.value.kind is kind, error


def test_a_client_that_does_not_follow_redirects_names_the_target():
    with responses.RequestsMock() as mock:
        mock.get("https://api.example/x", status=301, headers={"Location": "http://10.0.0.1/x"})
        client = HttpClient(provider="P", base_url="https://api.example", follow_redirects=False)
        with pytest.raises(ProviderError) as caught:
            client.request_json("GET", "/x")
    assert str(caught.value) == (
        "P: HTTP 301: the API redirected to http://10.0.0.1/x, which is not followed; set "
        "baseUrl to the address it moved to"
    )
    assert caught.value.kind is None


# --- a proxy variable requests cannot use is named, never its value ---------------------------


def _failure_through(monkeypatch, variable: str, value: str, url: str = "http://127.0.0.1:9/x"):
    """The message for a request to *url* with only *variable* set to *value*."""
    from pi_web_tools.api._http_client import network_error_message

    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.setenv(variable, value)
    with pytest.raises(requests.RequestException) as caught:
        requests.Session().get(url, timeout=2)
    return network_error_message(caught.value)


@pytest.mark.parametrize(
    "value", ["http://user:pa55word@[broken", "http://", "http://user:pa55word@:8080"]
)
def test_a_malformed_proxy_variable_is_named_not_the_base_url(monkeypatch, value):
    said = _failure_through(monkeypatch, "HTTP_PROXY", value)
    assert said == (
        "the proxy set in HTTP_PROXY is not a valid proxy URL (correct it, or unset the variable)"
    )
    assert "pa55word" not in said


def test_a_proxy_with_a_scheme_no_proxy_has_is_named(monkeypatch):
    said = _failure_through(monkeypatch, "all_proxy", "ftp://127.0.0.1:9")
    assert said == (
        "the proxy set in all_proxy uses the scheme ftp:, which a proxy cannot have "
        "(use http://, https:// or socks5://)"
    )


def test_a_socks_proxy_without_pysocks_names_the_install_command(monkeypatch):
    """requests cannot use a socks5:// proxy without PySocks; it said only `InvalidSchema`."""
    import importlib.util

    from pi_web_tools.api._http_client import network_error_message

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "socks" else real(name, *a)
    )
    monkeypatch.setenv("HTTPS_PROXY", "socks5://127.0.0.1:1080")
    monkeypatch.delenv("https_proxy", raising=False)
    said = network_error_message(
        requests.exceptions.InvalidSchema("Missing dependencies for SOCKS support.")
    )
    assert said.startswith("the proxy set in HTTPS_PROXY is a SOCKS proxy, which needs PySocks: ")
    assert said.endswith("[socks]'"), said


def test_an_invalid_request_url_with_usable_proxies_still_names_the_base_url(monkeypatch):
    said = _failure_through(monkeypatch, "HTTPS_PROXY", "http://127.0.0.1:3128", url="http://[x/")
    assert said == "the request URL is invalid (check baseUrl)"


def test_a_proxy_with_credentials_and_no_host_is_named_not_a_type_error(monkeypatch):
    """requests fails on ``http://user:pass@`` with a TypeError; it said `unexpected error`."""
    from pi_web_tools.api._http_client import network_error_message, new_session, send

    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://user:pa55word@")
    with pytest.raises(requests.RequestException) as caught:
        send(new_session(), "GET", "http://127.0.0.1:9/x", deadline=time.monotonic() + 5)
    said = network_error_message(caught.value)
    assert said == (
        "the proxy set in HTTP_PROXY is not a valid proxy URL (correct it, or unset the variable)"
    )
    assert "pa55word" not in said


def test_a_broken_proxy_of_another_scheme_leaves_an_invalid_request_url_named(monkeypatch):
    """An https URL that cannot be prepared (port 99999) is never sent through HTTP_PROXY."""
    said = _failure_through(monkeypatch, "HTTP_PROXY", "http://[x", url="https://127.0.0.1:99999/")
    assert said == "the request URL is invalid (check baseUrl)"


@pytest.mark.parametrize("value", ["   ", " http://127.0.0.1:3128"])
def test_a_proxy_variable_with_stray_spaces_is_named(monkeypatch, value):
    said = _failure_through(monkeypatch, "http_proxy", value)
    assert said == (
        "the proxy set in http_proxy is not a valid proxy URL (correct it, or unset the variable)"
    )


def test_the_proxy_named_is_the_one_requests_uses_the_lower_case_one(monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:3128")
    said = _failure_through(monkeypatch, "http_proxy", "http://[x")
    assert said.startswith("the proxy set in http_proxy is not a valid proxy URL")
