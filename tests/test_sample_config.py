"""Every sample config loads and routes each tool to the provider its README promises."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pi_web_tools.api.errors import ConfigError
from pi_web_tools.runtime.registry import current_config as load_config
from pi_web_tools.runtime.registry import resolve_provider

SAMPLES = Path(__file__).resolve().parent.parent / "sample_config"


def _install(agent_dir: Path, name: str) -> Path:
    target = agent_dir / "web-search.json"
    shutil.copy(SAMPLES / name, target)
    target.chmod(0o600)
    return target


def _routes(agent_dir, name):
    _install(agent_dir, name)
    routes = {}
    for capability in ("search", "fetch", "summarize"):
        try:
            routes[capability] = resolve_provider(capability).entry.type
        except ConfigError:
            routes[capability] = None
    return routes


def test_every_sample_is_documented():
    """Each JSON sample has a row in sample_config/README.md."""
    readme = (SAMPLES / "README.md").read_text()
    for sample in SAMPLES.glob("*.json"):
        assert f"`{sample.name}`" in readme


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.json")))
def test_sample_loads_without_warnings(agent_dir, name):
    """The sample is valid and uses only known options."""
    config = load_config(_install(agent_dir, name))
    assert config.source == "file" and config.warnings == () and config.key_problems == ()


def test_kagi_only_routes(agent_dir):
    """Kagi searches and summarizes; fetch falls back to the direct fetcher."""
    assert _routes(agent_dir, "kagi-only.json") == {
        "search": "kagi",
        "fetch": "direct",
        "summarize": "kagi",
    }


def test_exa_only_routes(agent_dir):
    """Exa searches, fetches and summarizes."""
    assert _routes(agent_dir, "exa-only.json") == {
        "search": "exa",
        "fetch": "exa",
        "summarize": "exa",
    }


def test_kagi_and_exa_routes(agent_dir):
    """Kagi for search and summarize, Exa for fetch."""
    assert _routes(agent_dir, "kagi-and-exa.json") == {
        "search": "kagi",
        "fetch": "exa",
        "summarize": "kagi",
    }


def test_direct_private_network(agent_dir):
    """The explicit direct fetcher allows private networks."""
    config = load_config(_install(agent_dir, "direct-private-network.json"))
    assert config.providers[0].options.allow_private_network is True
    assert _routes(agent_dir, "direct-private-network.json")["fetch"] == "direct"


def test_brave_only_routes(agent_dir):
    """Brave searches; fetch falls back to the direct fetcher; summarize has no provider."""
    assert _routes(agent_dir, "brave-only.json") == {
        "search": "brave",
        "fetch": "direct",
        "summarize": None,
    }


def test_tavily_only_routes(agent_dir):
    """Tavily searches and fetches; summarize has no provider."""
    assert _routes(agent_dir, "tavily-only.json") == {
        "search": "tavily",
        "fetch": "tavily",
        "summarize": None,
    }


def test_keyless_ddgs_routes(agent_dir):
    """The opt-in keyless entry searches, with its backends in the configured order."""
    assert _routes(agent_dir, "keyless-ddgs.json") == {
        "search": "ddgs",
        "fetch": "direct",
        "summarize": None,
    }
    assert resolve_provider("search").provider.backends == ("duckduckgo", "brave", "mojeek")


def test_pi_web_access_shared_routes(agent_dir):
    """The flat shared file: Kagi searches and summarizes, Exa fetches (Kagi only when named)."""
    assert _routes(agent_dir, "pi-web-access-shared.json") == {
        "search": "kagi",
        "fetch": "exa",
        "summarize": "kagi",
    }


def test_team_searxng_routes(agent_dir):
    """SearXNG searches, failing over to Kagi; Kagi summarizes; fetch is the direct fetcher."""
    from pi_web_tools.runtime.registry import search_fallbacks

    assert _routes(agent_dir, "team-searxng.json") == {
        "search": "searxng",
        "fetch": "direct",
        "summarize": "kagi",
    }
    first = resolve_provider("search")
    assert [s.entry.name for s in search_fallbacks(first)] == ["kagi"]


def test_team_limits_reads_every_limit(agent_dir):
    """Each caller's rates, one caller's own, and Kagi's for everyone."""
    limits = load_config(_install(agent_dir, "team-limits.json")).limits
    assert limits.for_caller("alice") == ("limits.perToken", "60/minute; 2000/day")
    assert limits.for_caller("ci-bot") == ("limits.tokens.ci-bot", "10/minute; 200/day")
    assert limits.for_provider("kagi") == ("limits.providers.kagi", "30/minute; 1000/day")
    assert limits.for_provider("brave") is None and limits.unreadable == ()
