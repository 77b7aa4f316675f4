"""End to end: a SearXNG instance on loopback (a faithful fake of searx/webapp.py's /search),
through `pi-web`, an MCP client over stdio and the `llm` CLI."""

from __future__ import annotations

import http.server
import json

import pytest

from tests.support.fake_apis import FakeSearxng
from tests.support.hosts import (
    echo_tool_results,
    mcp_stdio_session,
    pi_web,
    result_text,
    run_async,
    run_llm,
)
from tests.support.loopback import LoopbackServer

pytestmark = pytest.mark.slow

SETTINGS_FIX = 'under "search:", set "formats: [html, json]"'


def searx_config(base_url: str, **options) -> dict:
    return {
        "providers": [
            {"name": "searx", "type": "searxng", "options": {"baseUrl": base_url, **options}}
        ]
    }


@pytest.fixture
def searx(write_config):
    """An instance on this machine, allowed explicitly (its address only)."""
    with FakeSearxng() as fake:
        write_config(searx_config(fake.base_url, allowPrivateNetwork=True))
        yield fake


def test_pi_web_search_answers_from_the_instance(searx):
    proc = pi_web("search", "rust async")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(
        "1. rust async 1\n   https://searx.example/rust-async/1\n   On rust async (1)\n\n"
    )
    assert 'Related searches for "rust async": rust async tutorial' in proc.stdout
    [request] = searx.requests
    assert request["path"] == "/search"
    assert request["query"] == {"q": "rust async", "format": "json", "pageno": "1"}


def test_an_instance_on_this_machine_needs_an_explicit_allowance(write_config):
    """Loopback is refused before any request, saying which option allows that address."""
    with FakeSearxng() as fake:
        write_config(searx_config(fake.base_url))
        proc = pi_web("search", "x")
        assert proc.returncode == 1
        assert (
            f"web_search failed: searx (searxng) at {fake.base_url} refused: 127.0.0.1 is a "
            'loopback address; set "allowPrivateNetwork": true in the searx provider\'s options '
            "to allow it (that address only)"
        ) in proc.stdout + proc.stderr
        assert fake.requests == []


def test_a_single_label_host_is_refused_without_a_lookup(write_config):
    write_config(searx_config("http://searx:8888"))
    proc = pi_web("search", "x")
    assert proc.returncode == 1
    assert "searx:8888 refused: searx is a single-label name (an intranet host)" in (
        proc.stdout + proc.stderr
    )


def test_the_allowance_covers_that_address_only(write_config):
    """An allowed instance that redirects (to another service on this machine) is not followed."""
    with FakeSearxng() as other:

        class Redirect(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self.send_response(302)
                self.send_header("Location", other.url(self.path))
                self.send_header("Content-Length", "0")
                self.end_headers()

        with LoopbackServer(Redirect) as redirector:
            write_config(searx_config(redirector.base_url, allowPrivateNetwork=True))
            proc = pi_web("search", "x")
        assert proc.returncode == 1
        assert "HTTP 302: the API redirected to http://127.0.0.1:" in proc.stdout + proc.stderr
        assert "which is not followed; set baseUrl to the address it moved to" in (
            proc.stdout + proc.stderr
        )
        assert other.requests == []


def test_json_off_answers_with_the_settings_change(write_config):
    with FakeSearxng(formats=("html",)) as fake:
        write_config(searx_config(fake.base_url, allowPrivateNetwork=True))
        proc = pi_web("search", "x")
    assert proc.returncode == 1
    out = proc.stdout + proc.stderr
    assert "HTTP 403 Forbidden for format=json" in out and SETTINGS_FIX in out


def test_pi_web_config_shows_the_instance_and_what_it_lacks(write_config):
    write_config({"providers": [{"name": "searx", "type": "searxng"}]})
    proc = pi_web("config")
    assert "- searx: type searxng, can search" in proc.stdout
    assert 'Warning: searx: no baseUrl: add "options": {"baseUrl": "http://127.0.0.1:8888"}' in (
        proc.stdout
    )


def test_an_mcp_client_searches_the_instance_and_gets_the_settings_fix(
    agent_dir, write_config, tmp_path
):
    with FakeSearxng() as on, FakeSearxng(formats=("html",)) as off:
        write_config(
            {
                "providers": [
                    {
                        "name": "on",
                        "type": "searxng",
                        "options": {"baseUrl": on.base_url, "allowPrivateNetwork": True},
                    },
                    {
                        "name": "off",
                        "type": "searxng",
                        "options": {"baseUrl": off.base_url, "allowPrivateNetwork": True},
                    },
                ]
            }
        )

        async def test():
            async with mcp_stdio_session(agent_dir, tmp_path / "mcp.log") as session:
                good = await session.call_tool(
                    "web_search", {"queries": ["tokio"], "provider": "on"}
                )
                assert good.is_error is False
                assert result_text(good).startswith(
                    "1. tokio 1\n   https://searx.example/tokio/1\n"
                )
                bad = await session.call_tool(
                    "web_search", {"queries": ["tokio"], "provider": "off"}
                )
                assert bad.is_error and SETTINGS_FIX in result_text(bad)
                fused = await session.call_tool(
                    "web_search", {"queries": ["tokio"], "provider": ["on", "off"]}
                )
                assert fused.is_error is False
                text = result_text(fused)
                assert (
                    "   Found by: on\n" in text
                    and "Note: off failed: SearXNG (off): HTTP 403" in text
                )

        run_async(test)


def test_llm_runs_a_searxng_search(searx, tmp_path):
    home = tmp_path / "llm-home"
    home.mkdir()
    call = {"tool_calls": [{"name": "web_search", "arguments": {"queries": ["zig"]}}]}
    proc = run_llm(home, "-m", "echo", "-T", "web_search", json.dumps(call))
    assert proc.returncode == 0, proc.stderr
    [result] = echo_tool_results(proc.stdout)
    assert result["output"].startswith("1. zig 1\n   https://searx.example/zig/1\n")
