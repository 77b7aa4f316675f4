"""Shared fixtures (an isolated agent directory, no ambient keys or proxies, a host, the page
server) and the layout's one rule about speed: every test under a folder named in SLOW_FOLDERS is
marked ``slow``, so ``python -m pytest -m "not slow"`` is the quick loop.

Helpers a test imports live in ``tests/support``, never here."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from pi_hostspec import Host, get_plugin_manager

#: Folders whose tests are all ``slow``: end to end through the installed hosts, and the fault
#: suite. A test elsewhere is quick; one that is not belongs in one of these.
SLOW_FOLDERS = ("e2e", "faults")

_HERE = Path(__file__).resolve().parent

_AMBIENT = (
    "KAGI_API_KEY",
    "EXA_API_KEY",
    "BRAVE_API_KEY",
    "TAVILY_API_KEY",
    "NO_COLOR",
    "PI_DISABLE_PLUGINS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "PI_WEB_STATE",
)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Mark every test under a slow folder ``slow`` (before ``-m`` selects)."""
    for item in items:
        where = Path(str(item.path)).resolve().relative_to(_HERE).parts
        if where[0] in SLOW_FOLDERS:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """Point the agent dir, the answer cache and temp files into tmp_path; clear keys, proxies and
    in-process state."""
    from pi_web_tools import testing

    agent = tmp_path / "agent"
    agent.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    for name in _AMBIENT:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("GH_CONFIG_DIR", str(tmp_path / "gh"))  # a gh CLI here is logged out
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    testing.reset()
    yield agent
    testing.reset()


@pytest.fixture
def agent_dir(isolated) -> Path:
    """The isolated agent directory (``PI_CODING_AGENT_DIR``)."""
    return isolated


@pytest.fixture
def write_config(agent_dir):
    """Write ``web-search.json`` (a dict as JSON, or raw text) with mode 0600; return its path."""

    def write(content, mode: int = 0o600) -> Path:
        path = agent_dir / "web-search.json"
        path.write_text(
            content if isinstance(content, str) else json.dumps(content), encoding="utf-8"
        )
        path.chmod(mode)
        return path

    return write


@pytest.fixture(scope="session")
def make_httpserver():
    """pytest-httpserver's server, the one loopback page server of the tests: on 127.0.0.1,
    threaded (a slow page must not hold the others of a call), 404 for a path not served."""
    from pytest_httpserver import HTTPServer

    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    yield server
    server.clear()
    if server.is_running():
        server.stop()


@pytest.fixture
def httpserver(make_httpserver):
    """The page server, emptied for this test; a path nobody serves is 404, as on a real site."""
    make_httpserver.clear()
    make_httpserver.no_handler_status_code = 404
    return make_httpserver


@pytest.fixture
def host() -> Host:
    """A host with only the web tools plugin, no entry points."""
    import pi_web_tools.plugin

    return Host(get_plugin_manager(load_entrypoints=False, plugins=[pi_web_tools.plugin]))


@pytest.fixture(scope="session")
def redis_server():
    """A real ``redis-server`` on a free loopback port for the whole session (skipped, with
    the reason, where none is installed); tests marked ``redis`` use it."""
    from tests.support.redis_server import MISSING, RedisServer

    if MISSING:
        pytest.skip(MISSING)
    server = RedisServer().start()
    yield server
    server.close()


@pytest.fixture
def shared_state(redis_server, monkeypatch):
    """``PI_WEB_STATE`` pointing at the session's Redis, emptied for this test; the server."""
    from pi_web_tools.runtime import state

    if redis_server.proc is None:  # a test stopped it
        redis_server.start()
    redis_server.client().flushall()
    monkeypatch.setenv("PI_WEB_STATE", redis_server.url)
    state.reset()
    yield redis_server
    state.reset()


def pytest_terminal_summary(terminalreporter):
    """Say how many real-browser and real-Redis tests ran (CI's log shows whether a browser and
    a redis-server were there)."""
    stats = terminalreporter.stats
    for marker in ("browser", "redis"):
        ran = sum(
            1
            for key in ("passed", "failed", "error")
            for report in stats.get(key, [])
            if getattr(report, "when", "call") == "call"
            and marker in getattr(report, "keywords", {})
        )
        skipped = [
            report
            for report in stats.get("skipped", [])
            if marker in getattr(report, "keywords", {})
        ]
        if ran or skipped:
            line = f"{marker} tests: {ran} ran, {len(skipped)} skipped"
            if skipped and isinstance(skipped[0].longrepr, tuple):
                line += f" ({skipped[0].longrepr[2]})"
            terminalreporter.write_line(line)
