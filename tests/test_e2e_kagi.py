"""End to end: the installed `pi-web` CLI against a loopback Kagi, configured through baseUrl."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import SECRET, kagi_config
from .fake_apis import FakeKagi

PI_WEB = str(Path(sys.executable).parent / "pi-web")


@pytest.fixture
def kagi(write_config):
    with FakeKagi(SECRET) as fake:
        write_config(kagi_config(fake.base_url))
        yield fake


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "KAGI_API_KEY"}
    env["NO_COLOR"] = "1"
    return subprocess.run([PI_WEB, *args], capture_output=True, text=True, env=env, timeout=60)


def test_pi_web_call_json(kagi):
    """`pi-web call web_search ... --json` prints exactly one JSON result object."""
    proc = _run("call", "web_search", '{"queries": ["rust async", "tokio"]}', "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert set(result) == {"content", "details", "isError"} and result["isError"] is False
    text = result["content"][0]["text"]
    assert text.startswith(
        'Query: "rust async"\n1. rust async — page 1\n   https://results.example/rust-async/1\n   All about rust async & more (1)\n   Published: 2026-03-01'
    )
    assert "4. tokio — page 1" in text
    assert result["details"]["apiBalance"] == 42.0
    assert SECRET not in proc.stdout + proc.stderr
    assert sorted(r["query"]["q"] for r in kagi.requests) == ["rust async", "tokio"]  # concurrent


def test_pi_web_call_rendered(kagi):
    """Without --json the call line then the collapsed (or expanded) view are printed."""
    proc = _run("call", "web_search", '{"queries": ["rust async"]}')
    assert proc.returncode == 0
    assert proc.stdout == 'web_search "rust async"\n3 results\n'
    expanded = _run("call", "web_search", '{"queries": ["rust async"]}', "--expanded").stdout
    assert expanded.startswith('web_search "rust async"\n3 results\n1. rust async — page 1')


def test_pi_web_search_shortcut(kagi):
    """`pi-web search x` prints the text the model sees."""
    proc = _run("search", "x")
    assert proc.returncode == 0
    assert proc.stdout.startswith("1. x — page 1\n   https://results.example/x/1\n")
    assert 'Related searches for "x": x tutorial; x examples' in proc.stdout


def test_pi_web_summarize_shortcut(kagi):
    """`pi-web summarize URL --type takeaway --engine agnes --lang de` sends those and prints the output."""
    proc = _run(
        "summarize",
        "https://example.com/a",
        "--type",
        "takeaway",
        "--engine",
        "agnes",
        "--lang",
        "de",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == "- First point\n- Second point\n"
    assert kagi.requests[-1]["json"] == {
        "url": "https://example.com/a",
        "summary_type": "takeaway",
        "engine": "agnes",
        "target_language": "DE",
    }


def test_pi_web_error_exit_status(kagi, write_config):
    """A wrong key gives exit 1, the 401 with the v1 hint, and no key in the output."""
    config = kagi_config(kagi.base_url)
    config["providers"][0]["apiKey"] = "wrong-key-123456"
    write_config(config)
    proc = _run("call", "web_search", '{"queries": ["x"]}')
    assert proc.returncode == 1
    assert (
        "Error: web_search failed: Kagi: HTTP 401 Unauthorized: Unauthorized (code 2)"
        in proc.stdout
    )
    assert "wrong-key-123456" not in proc.stdout + proc.stderr


def test_pi_web_config_redacts_keys(kagi):
    """`pi-web config` names the file and provider, showing at most the key's last 4 characters."""
    proc = _run("config")
    assert proc.returncode == 0
    assert "web-search.json" in proc.stdout and "- kagi: type kagi" in proc.stdout
    assert SECRET not in proc.stdout and f"…{SECRET[-4:]}" in proc.stdout
