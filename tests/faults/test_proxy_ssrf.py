"""The network guard through a proxy from the environment: the host checked is the one requests
sends to the proxy, so a backslash or userinfo trick cannot reach a private address."""

from __future__ import annotations

import pytest

from tests.support.fault_server import FaultServer, Reply


@pytest.fixture
def proxy(monkeypatch):
    """A loopback 'proxy' that records every request line; set as HTTP(S)_PROXY."""
    fake = FaultServer().start()
    fake.script(Reply(200, "proxied page", content_type="text/plain"))
    monkeypatch.setenv("HTTP_PROXY", fake.url())
    monkeypatch.setenv("HTTPS_PROXY", fake.url())
    yield fake
    fake.close()


def guarded_config() -> dict:
    """The direct fetcher with the network guard on (no private network)."""
    return {"providers": [{"name": "direct", "type": "direct", "options": {"timeoutSeconds": 2}}]}


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:18081\\@public.example/ok",
        "http://169.254.169.254\\@public.example/latest/meta-data/",
        "http://[::1]:80\\@public.example/",
        "http://localhost\\@public.example/",
        "http://10.0.0.5:80\\@public.example/",
    ],
)
def test_a_backslash_cannot_smuggle_a_private_host_past_the_guard(url, proxy, tools, write_config):
    """The host after the backslash is not the one sent: the private one is refused, the proxy
    never asked."""
    write_config(guarded_config())
    outcome = tools.call("web_fetch", {"urls": [url]})
    assert outcome.result.is_error and "refused" in outcome.text, outcome.text
    assert proxy.count == 0, proxy.requests


def test_a_public_host_still_goes_through_the_proxy(proxy, tools, write_config):
    """A public name is left to the proxy (which resolves it), as before."""
    write_config(guarded_config())
    outcome = tools.call("web_fetch", {"urls": ["http://public.example/ok"]})
    assert not outcome.result.is_error, outcome.text
    assert proxy.requests[0]["path"] == "http://public.example/ok"
