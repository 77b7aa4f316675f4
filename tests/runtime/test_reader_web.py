"""The web a reader gets: one guarded HTTP path, a token only where it belongs, bounded."""

from __future__ import annotations

import os
import stat
import threading
import time

import pytest
import responses
from pi_web_tools.api import redaction
from pi_web_tools.api.readers import Reader, ReaderError, ReaderToken
from pi_web_tools.runtime import reader_web
from pi_web_tools.runtime.reader_web import SiteWeb, token_for

TOKEN = "ghp_readerWebTestToken0000000000000000"
READER = Reader(
    name="demo",
    label="Demo",
    hosts=("demo.example",),
    read=lambda url, web: None,
    token=ReaderToken(env=("DEMO_TOKEN",), hosts=("api.demo.example", "*.files.example")),
)


@pytest.fixture(autouse=True)
def clean(monkeypatch):
    """No token in the environment; every name resolves to a public address (no DNS)."""
    from pi_web_tools.api import _netguard as netguard

    monkeypatch.delenv("DEMO_TOKEN", raising=False)
    monkeypatch.setattr(netguard, "resolve_host", lambda host, port: ["93.184.216.34"])
    reader_web.forget_command_tokens()
    yield
    reader_web.forget_command_tokens()


def web(**kw) -> SiteWeb:
    kw.setdefault("deadline", time.monotonic() + 10)
    return SiteWeb(READER, **kw)


@responses.activate
def test_the_token_goes_only_over_https_to_the_hosts_it_names(monkeypatch):
    monkeypatch.setenv("DEMO_TOKEN", TOKEN)
    for url in (
        "https://api.demo.example/a",
        "https://cdn.files.example/b",
        "http://api.demo.example/c",
        "https://demo.example/d",
        "https://files.example/e",
    ):
        responses.get(url, body="ok")
        web().get(url)
    sent = {call.request.url: call.request.headers.get("Authorization") for call in responses.calls}
    assert sent == {
        "https://api.demo.example/a": f"Bearer {TOKEN}",
        "https://cdn.files.example/b": f"Bearer {TOKEN}",
        "http://api.demo.example/c": None,
        "https://demo.example/d": None,
        "https://files.example/e": None,
    }


@responses.activate
def test_a_redirect_to_another_host_drops_the_token(monkeypatch):
    monkeypatch.setenv("DEMO_TOKEN", TOKEN)
    responses.get(
        "https://api.demo.example/a", status=302, headers={"Location": "https://other.example/x"}
    )
    responses.get("https://other.example/x", body="there")
    answer = web().get("https://api.demo.example/a")
    assert answer.body == b"there" and answer.url == "https://other.example/x"
    first, second = responses.calls
    assert first.request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert "Authorization" not in second.request.headers


@responses.activate
def test_every_hop_passes_the_network_guard():
    responses.get(
        "https://api.demo.example/a",
        status=301,
        headers={"Location": "http://169.254.169.254/latest"},
    )
    with pytest.raises(ReaderError) as info:
        web().get("https://api.demo.example/a")
    assert "refused" in info.value.message and "metadata" in info.value.message
    assert len(responses.calls) == 1


@responses.activate
def test_a_base_url_override_takes_every_request_and_never_the_token(monkeypatch):
    monkeypatch.setenv("DEMO_TOKEN", TOKEN)
    responses.get(
        "http://127.0.0.1:9/api.demo.example/a",
        status=302,
        headers={"Location": "https://cdn.files.example/b?x=1"},
    )
    responses.get("http://127.0.0.1:9/cdn.files.example/b?x=1", body="fake")
    answer = web(base_url="http://127.0.0.1:9/").get("https://api.demo.example/a")
    assert answer.body == b"fake"
    assert all("Authorization" not in call.request.headers for call in responses.calls)


@responses.activate
def test_a_busy_site_is_retried_but_a_spent_quota_is_not():
    responses.get("https://demo.example/busy", status=503)
    responses.get("https://demo.example/busy", body="fine")
    assert web().get("https://demo.example/busy").body == b"fine"
    responses.get(
        "https://demo.example/spent",
        status=429,
        headers={"x-ratelimit-remaining": "0", "Retry-After": "3600"},
    )
    answer = web().get("https://demo.example/spent")
    assert answer.status == 429
    assert sum(1 for call in responses.calls if call.request.url.endswith("/spent")) == 1


@responses.activate
def test_an_oversized_answer_is_cut_and_its_json_refused():
    responses.get("https://demo.example/big", body=b"[" + b"1," * 100_000 + b"1]")
    answer = web().get("https://demo.example/big", max_bytes=1000)
    assert answer.truncated and len(answer.body) == 1000
    with pytest.raises(ReaderError, match="more than the size limit"):
        answer.json()


@responses.activate
def test_a_cancelled_call_stops():
    cancel = threading.Event()
    cancel.set()
    responses.get("https://demo.example/a", body="x")
    with pytest.raises(ReaderError, match="cancelled"):
        web(cancel=cancel).get("https://demo.example/a")


@responses.activate
def test_network_failures_are_clean_messages():
    with pytest.raises(ReaderError) as info:
        web().get("https://demo.example/nothing-registered")
    assert info.value.message.startswith("Demo: ")
    assert "Traceback" not in info.value.message


def _fake_gh(tmp_path, script: str) -> str:
    path = tmp_path / "gh"
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(tmp_path)


def test_a_token_from_a_command_is_read_once_and_redacted(tmp_path, monkeypatch):
    spec = ReaderToken(
        env=("DEMO_TOKEN",), hosts=("api.demo.example",), command=("gh", "auth", "token")
    )
    counter = tmp_path / "count"
    monkeypatch.setenv(
        "PATH", _fake_gh(tmp_path, f"echo x >> {counter}; echo gho_fromTheCli00000000")
    )
    assert token_for(spec) == "gho_fromTheCli00000000"
    assert token_for(spec) == "gho_fromTheCli00000000"
    assert counter.read_text().count("x") == 1
    assert redaction.redact_secrets("say gho_fromTheCli00000000") == "say ***"


def test_the_environment_wins_over_the_command_and_a_slow_command_is_bounded(tmp_path, monkeypatch):
    spec = ReaderToken(
        env=("DEMO_TOKEN",), hosts=("api.demo.example",), command=("gh", "auth", "token")
    )
    monkeypatch.setenv("PATH", _fake_gh(tmp_path, "/bin/sleep 10; echo late"))
    monkeypatch.setattr(reader_web, "TOKEN_COMMAND_SECONDS", 0.3)
    started = time.monotonic()
    assert token_for(spec) is None
    assert time.monotonic() - started < 3
    monkeypatch.setenv("DEMO_TOKEN", TOKEN)
    assert token_for(spec) == TOKEN


def test_no_command_is_run_when_it_is_not_installed(monkeypatch):
    spec = ReaderToken(
        env=("DEMO_TOKEN",), hosts=("api.demo.example",), command=("gh", "auth", "token")
    )
    monkeypatch.setenv("PATH", os.devnull)
    assert token_for(spec) is None


def test_a_readers_token_variables_are_redacted_once_the_readers_are_loaded(monkeypatch):
    from pi_web_tools.runtime import registry

    monkeypatch.setattr(redaction, "_env_names", set())  # nothing watched yet in this process
    monkeypatch.setenv("GH_TOKEN", "ghp_redactMe0000000000000000000000000")
    assert redaction.redact_secrets("ghp_redactMe0000000000000000000000000") != "***"
    registry.load_secrets()
    assert redaction.redact_secrets("x ghp_redactMe0000000000000000000000000 y") == "x *** y"


@responses.activate
def test_a_redirect_to_an_intranet_name_is_refused_through_a_proxy_too(monkeypatch):
    """The one host rule: a single-label name never reaches the proxy, whatever follows it."""
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    responses.get(
        "https://api.demo.example/a", status=302, headers={"Location": "http://intranet/secret"}
    )
    with pytest.raises(ReaderError) as info:
        web().get("https://api.demo.example/a")
    assert "intranet is a single-label name" in info.value.message
    assert [call.request.url for call in responses.calls] == ["https://api.demo.example/a"]
