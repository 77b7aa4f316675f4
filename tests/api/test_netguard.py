"""The network guard: which addresses the direct fetcher may reach."""

from __future__ import annotations

import ipaddress
import socket

import pytest
import responses
from pi_web_tools.api import _netguard as netguard
from pi_web_tools.api._netguard import classify_address, host_refusal
from pi_web_tools.providers.direct import DirectOptions, DirectProvider

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def no_proxy_env(monkeypatch):
    """No proxy variables, so the environment cannot change what is checked."""
    for name in PROXY_VARS + tuple(n.lower() for n in PROXY_VARS):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    "address, reason",
    [
        ("10.1.2.3", "a private address"),
        ("172.16.0.1", "a private address"),
        ("192.168.1.1", "a private address"),
        ("127.0.0.1", "a loopback address"),
        ("::1", "a loopback address"),
        ("169.254.169.254", "a cloud metadata address"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("169.254.10.1", "a link-local address"),
        ("fe80::1", "a link-local address"),
        ("100.64.0.1", "a shared (CGNAT) address"),
        ("100.127.255.254", "a shared (CGNAT) address"),
        ("fd00::1", "a private address"),
        ("0.0.0.0", "an unspecified address"),
        ("224.0.0.1", "a multicast address"),
        ("240.0.0.1", "a reserved address"),
        ("::ffff:127.0.0.1", "a loopback address"),
        ("::ffff:10.0.0.1", "a private address"),
        ("64:ff9b::a00:1", "a private address"),
    ],
)
def test_classifier_blocks_non_public(address, reason):
    """Loopback, private, link-local, CGNAT, metadata and other non-public addresses are named."""
    assert classify_address(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize(
    "address", ["93.184.216.34", "8.8.8.8", "2606:2800:220:1:248:1893:25c8:1946", "100.128.0.1"]
)
def test_classifier_allows_public(address):
    """Public addresses are allowed."""
    assert classify_address(ipaddress.ip_address(address)) is None


def test_host_refusal_literals_names_and_resolution(monkeypatch):
    """Literal IPs (also odd IPv4 forms) and localhost are refused; names are checked by resolution."""
    monkeypatch.setattr(
        netguard,
        "resolve_host",
        lambda host, port: {
            "public.example": ["93.184.216.34"],
            "mixed.example": ["93.184.216.34", "192.168.0.7"],
        }[host],
    )
    assert "127.0.0.1 is a loopback address" in host_refusal("127.0.0.1", 80)
    assert "is a loopback address" in host_refusal("127.1", 80)
    assert "is a loopback address" in host_refusal("2130706433", 80)
    assert host_refusal("::1", 80).startswith("refused: ::1 is a loopback address;")
    assert "localhost is a loopback address" in host_refusal("localhost", 80)
    assert "api.localhost is a loopback address" in host_refusal("api.localhost", 80)
    assert host_refusal("public.example", 443) is None
    assert "mixed.example resolves to a private address (192.168.0.7)" in host_refusal(
        "mixed.example", 443
    )


def test_host_refusal_unresolvable(monkeypatch):
    """A name that does not resolve is a clear failure."""

    def fail(host, port):
        raise socket.gaierror("Name or service not known")

    monkeypatch.setattr(netguard, "resolve_host", fail)
    assert host_refusal("nowhere.invalid", 80) == "could not resolve the host name"


def test_through_a_proxy_only_literal_hosts_are_checked(monkeypatch):
    """With an environment proxy, names are left to the proxy but IP literals and localhost are refused."""

    def must_not_resolve(host, port):
        raise AssertionError("resolved a name that the proxy should resolve")

    monkeypatch.setattr(netguard, "resolve_host", must_not_resolve)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp.example:3128")
    provider = DirectProvider("direct", DirectOptions())
    assert netguard.is_proxied("https://intranet.example/") is True
    assert provider._refusal("https://intranet.example/") is None  # no resolution either
    assert "10.0.0.5 is a private address" in provider._refusal("https://10.0.0.5/")
    assert "localhost is a loopback address" in provider._refusal("https://localhost/")
    monkeypatch.setenv("NO_PROXY", "intranet.example")
    assert netguard.is_proxied("https://intranet.example/") is False


def test_request_target_is_the_host_requests_sends_to():
    """A backslash before '@' leaves the host before it (as requests sends it), not after."""
    from pi_web_tools.api._netguard import request_target

    assert request_target("http://127.0.0.1:18081\\@public.example/ok") == (
        "http",
        "127.0.0.1",
        18081,
    )
    assert request_target("https://user:pw@Example.com/") == ("https", "example.com", 443)


@pytest.mark.parametrize("host", ["intranet", "wiki.", "INTRANET"])
def test_a_single_label_name_is_refused_before_any_proxy(host, monkeypatch):
    """The one host rule refuses single-label names as written, resolved or not (a proxy inside
    a company resolves intranet hosts); a name with a dot is left to the proxy."""

    def must_not_resolve(host, port):
        raise AssertionError("resolved a name that the rule judges as written")

    monkeypatch.setattr(netguard, "resolve_host", must_not_resolve)
    name = host.lower().rstrip(".")
    assert netguard.host_problem(host, 80, resolve=False) == (
        f"{name} is a single-label name (an intranet host)"
    )
    assert netguard.host_refusal(host, 80, proxied=True).startswith(
        f"refused: {name} is a single-label name"
    )
    assert netguard.host_problem("intranet.example", 80, resolve=False) is None


@responses.activate
def test_a_guarded_session_checks_every_hop_requests_follows(monkeypatch):
    """A session on the guarded adapter refuses a redirect hop to a single-label host even when
    requests follows the redirect by itself, through an environment proxy: the hop is never
    sent, and the refusal names the option that allows it."""
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.corp.example:3128")
    responses.add(
        responses.GET,
        "http://public.example/moved",
        status=302,
        headers={"Location": "http://intranet/secret"},
    )
    responses.add(responses.GET, "http://intranet/secret", body="secret")
    session = netguard.guarded_session(hint=netguard.allow_hint("reader"))
    with pytest.raises(netguard.RefusedAddress) as refused:
        session.get("http://public.example/moved")
    assert str(refused.value) == (
        "refused: intranet is a single-label name (an intranet host); "
        'set "allowPrivateNetwork": true in the reader provider\'s options to allow it'
    )
    assert [call.request.url for call in responses.calls] == ["http://public.example/moved"]
