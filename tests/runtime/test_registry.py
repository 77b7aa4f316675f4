"""Provider types and provider selection."""

from __future__ import annotations

import textwrap

import pytest
from pi_web_tools.api.errors import ConfigError
from pi_web_tools.api.types import ApiKey, Fetch, ProviderType, Search, SearchRequest
from pi_web_tools.runtime import registry
from pi_web_tools.runtime.registry import get_provider, provider_types, resolve_provider

from tests.support import SECRET


def test_builtin_types_register_through_the_hook():
    """kagi, exa and direct are registered like any third-party type, with capabilities."""
    types = provider_types()
    assert types["kagi"].capabilities == {"search", "fetch", "summarize"}
    assert types["kagi"].on_request == {"fetch"}
    assert types["exa"].capabilities == {"search", "fetch", "summarize"}
    assert types["direct"].capabilities == {"fetch"}
    assert types["kagi"].plugin_name == "kagi"


def test_third_party_provider_type_through_entry_point(tmp_path, monkeypatch, write_config):
    """A provider type from the pi_web_tools.providers entry-point group is usable in the config."""
    (tmp_path / "acme_search.py").write_text(
        textwrap.dedent(
            """
            from pi_web_tools import ProviderType, Search, SearchHit, SearchResponse, hookimpl

            class Acme:
                def __init__(self, config):
                    self.name = config.name
                def search(self, request, ctx):
                    return SearchResponse(hits=(SearchHit(title="Acme " + request.query, url="https://acme.test/"),))

            @hookimpl
            def register_provider_types(register):
                register(ProviderType(name="acme", factory=Acme, search=Search()))
            """
        )
    )
    dist = tmp_path / "acme_search-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-search\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pi_web_tools.providers]\nacme = acme_search\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.set_provider_types(None)
    try:
        assert "acme" in provider_types()
        write_config({"providers": [{"name": "a", "type": "acme"}]})
        selection = resolve_provider("search")
        assert selection.entry.name == "a"
        response = selection.call("search", SearchRequest(query="q"), None)
        assert response.hits[0].title == "Acme q"
    finally:
        registry.set_provider_types(None)


def test_a_duplicate_provider_type_skips_the_later_plugin_naming_both():
    """Two plugins registering one type name: the first keeps it, the second is skipped whole and
    named with the first (pi-web config and a call that needs it show the line); a plugin a test
    passes in-process still fails loudly."""
    import pluggy
    from pi_web_tools.api import hookspecs

    class One:
        @hookspecs.hookimpl
        def register_provider_types(self, register):
            register(ProviderType(name="dup", factory=object, search=Search(), key=ApiKey()))

    class Two:
        @hookspecs.hookimpl
        def register_provider_types(self, register):
            register(ProviderType(name="other", factory=object, search=Search(), key=ApiKey()))
            register(ProviderType(name="dup", factory=dict, search=Search(), key=ApiKey()))

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(One(), name="one")
    second = Two()
    pm.register(second, name="two")
    try:
        types = registry.collect_provider_types(pm)
        assert set(types) == {"dup"} and types["dup"].factory is object
        assert [str(p) for p in registry._problems] == [
            "provider plugin 'two' (unknown distribution) was skipped: provider type 'dup' is "
            "registered by one and two; remove the package that declares the "
            "pi_web_tools.providers entry point"
        ]
        with pytest.raises(ValueError, match="registered by one and two"):
            registry.collect_provider_types(pm, raise_for=[second])
    finally:
        registry._problems.clear()


def test_a_type_without_capabilities_or_with_unknown_facts_is_rejected():
    """A provider type must describe at least one capability, and only filters and modes the
    tools know."""
    with pytest.raises(ValueError, match="no capabilities"):
        ProviderType(name="x", factory=object, key=ApiKey())
    with pytest.raises(ValueError, match="unknown search filters"):
        Search(filters={"language"})
    with pytest.raises(ValueError, match="unknown fetch modes"):
        Fetch(modes={"screenshot"})


def test_what_a_type_says_of_a_capability_cannot_disagree_with_having_it():
    """A fetch-only type has no search filters or summary languages to get wrong: its
    capabilities are the ones it describes."""
    kind = ProviderType(name="f", factory=object, fetch=Fetch(modes={"text", "summary"}))
    assert kind.capabilities == {"fetch"}
    assert kind.search_filters == frozenset() and kind.summary_languages is None
    assert kind.fetch_modes == {"text", "summary"} and not kind.needs_api_key


def _two(write_config, default="exa"):
    return write_config(
        {
            "defaultProvider": default,
            "providers": [
                {"name": "kagi", "type": "kagi", "apiKey": SECRET},
                {"name": "exa", "type": "exa", "apiKey": SECRET},
            ],
        }
    )


def test_requested_provider_wins(write_config):
    """provider= picks that provider."""
    _two(write_config)
    assert resolve_provider("search", "kagi").entry.name == "kagi"


def test_default_provider_used_when_capable(write_config):
    """Without provider= the default serves when it can."""
    _two(write_config, default="exa")
    assert resolve_provider("search").entry.name == "exa"


def test_first_capable_provider_when_default_cannot(write_config):
    """When the default cannot fetch by default (Kagi: on request only), the first provider
    that can does."""
    _two(write_config, default="kagi")
    assert resolve_provider("fetch").entry.name == "exa"


def test_requested_provider_without_capability(write_config):
    """Asking a provider for something it cannot do names the ones that can."""
    write_config(
        {
            "providers": [
                {"name": "b", "type": "brave", "apiKey": "k1"},
                {"name": "k", "type": "kagi", "apiKey": "k2"},
            ]
        }
    )
    with pytest.raises(
        ConfigError, match="'b' \\(type brave\\) cannot summarize. Providers that can: k"
    ):
        resolve_provider("summarize", "b")


def test_unknown_requested_provider(write_config):
    """An unknown provider name lists the configured ones."""
    _two(write_config)
    with pytest.raises(
        ConfigError, match="Unknown provider 'bing' requested. Configured providers: kagi, exa"
    ):
        resolve_provider("search", "bing")


def test_fetch_without_config_uses_direct():
    """With nothing configured, fetch falls back to the built-in direct fetcher."""
    assert resolve_provider("fetch").entry.type == "direct"


def test_search_without_anything_gives_kagi_sentence():
    """With no file and no key, search errors with the seed's exact first sentence."""
    with pytest.raises(ConfigError) as info:
        resolve_provider("search")
    assert str(info.value).startswith(
        "KAGI_API_KEY environment variable is not set. Set it to your Kagi API key to use web search."
    )
    assert "web-search.json" in str(info.value)


def test_summarize_without_anything_gives_kagi_sentence():
    """The summarize variant of the sentence."""
    with pytest.raises(ConfigError) as info:
        resolve_provider("summarize")
    assert str(info.value).startswith(
        "KAGI_API_KEY environment variable is not set. Set it to your Kagi API key to use summarize."
    )


def test_kagi_entry_without_any_key_gives_kagi_sentence(write_config):
    """A kagi entry without apiKey and no env var fails at invocation with the seed sentence."""
    write_config({"providers": [{"name": "k", "type": "kagi"}]})
    with pytest.raises(ConfigError, match="^KAGI_API_KEY environment variable is not set"):
        resolve_provider("search")


def test_exa_without_key_says_what_to_add(write_config):
    """An exa entry without apiKey fails at invocation naming the entry."""
    write_config({"providers": [{"name": "e", "type": "exa"}]})
    with pytest.raises(ConfigError, match="Provider 'e' has no API key: add \"apiKey\""):
        resolve_provider("search")


def test_provider_instances_are_reused(write_config):
    """The same entry gives the same provider object, so its HTTP session stays warm."""
    _two(write_config)
    first = resolve_provider("search", "kagi").provider
    assert resolve_provider("search", "kagi").provider is first
    selection = resolve_provider("search", "kagi")
    assert get_provider(selection.entry, selection.type) is first


def test_env_key_serves_search_when_config_has_no_search_provider(write_config, monkeypatch):
    """A config with only a fetcher plus KAGI_API_KEY still searches with Kagi."""
    monkeypatch.setenv("KAGI_API_KEY", SECRET)
    write_config({"providers": [{"name": "d", "type": "direct"}]})
    assert resolve_provider("search").entry.type == "kagi"


def test_editing_an_entry_replaces_and_closes_the_old_provider(write_config):
    """A changed entry gets a new provider and the old one's session is closed, not leaked."""
    write_config({"providers": [{"name": "kagi", "type": "kagi", "apiKey": SECRET}]})
    old = resolve_provider("search").provider
    assert old.http.session is not None  # opens the session
    write_config(
        {
            "providers": [
                {"name": "kagi", "type": "kagi", "apiKey": SECRET, "options": {"timeoutSeconds": 5}}
            ]
        }
    )
    new = resolve_provider("search").provider  # the file's size changed, so it is read again
    assert new is not old
    assert not old.http._session.is_open
    assert len(registry._instances) == 1


def test_a_provider_returning_the_wrong_type_is_a_clean_error_naming_it(host, write_config):
    """A provider that returns a dict instead of a SearchResponse fails the call cleanly, by name."""
    from pi_web_tools import testing

    class Sloppy:
        def __init__(self, config):
            self.name = config.name

        def search(self, request, ctx):
            return {"hits": []}

    sloppy = ProviderType(
        name="sloppy",
        factory=Sloppy,
        search=Search(),
    )
    with testing.provider_types(sloppy):
        write_config({"providers": [{"name": "mine", "type": "sloppy"}]})
        result = host.call("web_search", {"queries": ["q"]})
    assert result.is_error
    assert "provider 'mine' returned dict from search, expected SearchResponse" in result.text
    assert "Traceback" not in result.text and "AttributeError" not in result.text


def test_a_contract_breach_is_its_own_type_not_a_message_that_says_returned():
    """check_response raises ProviderContractError (a ProviderError and a TypeError); a
    provider's own TypeError that happens to say "returned" is no contract breach: it is the
    provider's failure, said as its bug (type and words), like any exception a provider raises."""
    from pi_web_tools.api.errors import ProviderContractError, ProviderError
    from pi_web_tools.api.types import check_response

    with pytest.raises(ProviderContractError) as caught:
        check_response("mine", "search", {"hits": []})
    assert isinstance(caught.value, ProviderError) and isinstance(caught.value, TypeError)
    assert caught.value.provider == "mine"

    class Buggy:
        def __init__(self, config):
            self.name = config.name

        def search(self, request, ctx):
            raise TypeError("len() returned a negative value")

    from pi_web_tools import testing

    with testing.provider_types(ProviderType(name="buggy", factory=Buggy, search=Search())):
        selection = registry.Selection(
            provider=Buggy(type("C", (), {"name": "b"})),
            entry=registry.ProviderConfig(name="b", type="buggy"),
            type=provider_types()["buggy"],
            config=registry.Config(path=None, source="none"),
        )
        with pytest.raises(ProviderError) as raised:
            selection.call("search", SearchRequest(query="q"), None)
    assert not isinstance(raised.value, ProviderContractError)
    assert str(raised.value) == "b failed unexpectedly: TypeError: len() returned a negative value"
    assert raised.value.provider == "b" and raised.value.kind is None


def test_new_builtin_types_declare_what_they_offer():
    """brave, tavily and ddgs register through the hook with their capabilities and filters."""
    types = provider_types()
    assert types["brave"].capabilities == {"search"}
    assert types["tavily"].capabilities == {"search", "fetch"}
    assert types["ddgs"].capabilities == {"search"} and not types["ddgs"].needs_api_key
    assert types["brave"].shared_file_key == "braveApiKey"
    assert types["tavily"].shared_file_key == "tavilyApiKey"
    assert "start_published_date" in types["brave"].search_filters
    assert "start_published_date" in types["tavily"].search_filters
    assert types["ddgs"].search_filters == {"include_domains", "exclude_domains"}
    assert list(types)[:4] == ["kagi", "exa", "brave", "tavily"]  # precedence order


def test_nothing_configured_mentions_the_keyless_option_after_the_seed_sentence():
    """The seed sentence stays first and word for word; the ddgs opt-in follows it."""
    with pytest.raises(ConfigError) as info:
        resolve_provider("search")
    message = str(info.value)
    assert message.startswith(
        "KAGI_API_KEY environment variable is not set. Set it to your Kagi API key to use web search."
    )
    from pi_hostspec.install import install_command

    assert message.endswith(
        'To search without a key, add {"name": "free", "type": "ddgs"} to "providers" and run: '
        f"{install_command('keyless')} (free, but the search engines it reads rate-limit it)."
    )
    assert "pip install 'pi-web-tools[keyless]'" not in message  # not published: that fails


def test_summarize_without_anything_does_not_offer_the_keyless_search():
    """The keyless hint is for search only."""
    with pytest.raises(ConfigError) as info:
        resolve_provider("summarize")
    assert "ddgs" not in str(info.value)


@pytest.mark.parametrize(
    ("variable", "search", "fetch"),
    [("BRAVE_API_KEY", "brave", "direct"), ("TAVILY_API_KEY", "tavily", "tavily")],
)
def test_a_key_variable_alone_configures_its_provider(monkeypatch, variable, search, fetch):
    """With no file, BRAVE_API_KEY or TAVILY_API_KEY alone searches (and Tavily fetches)."""
    monkeypatch.setenv(variable, SECRET)
    assert resolve_provider("search").entry.type == search
    assert resolve_provider("fetch").entry.type == fetch
    assert resolve_provider("search").entry.origin == f"env {variable}"


def test_kagi_key_comes_first_among_key_variables(monkeypatch):
    """With several key variables set, Kagi is the default search provider (precedence)."""
    monkeypatch.setenv("TAVILY_API_KEY", SECRET)
    monkeypatch.setenv("BRAVE_API_KEY", SECRET + "b")
    monkeypatch.setenv("KAGI_API_KEY", SECRET + "k")
    assert resolve_provider("search").entry.type == "kagi"
    assert resolve_provider("fetch").entry.type == "tavily"


def test_brave_key_only_still_gives_the_kagi_sentence_for_summarize(monkeypatch):
    """Brave cannot summarize: summarize still asks for KAGI_API_KEY."""
    monkeypatch.setenv("BRAVE_API_KEY", SECRET)
    with pytest.raises(ConfigError, match="^KAGI_API_KEY environment variable is not set"):
        resolve_provider("summarize")


def test_ddgs_is_never_chosen_without_an_entry(write_config):
    """A file without a ddgs entry never searches keylessly; requesting it by name fails."""
    write_config({"providers": [{"name": "d", "type": "direct"}]})
    with pytest.raises(ConfigError, match="has no provider that can search .it configures: d"):
        resolve_provider("search")
    with pytest.raises(ConfigError, match="Unknown provider 'ddgs' requested"):
        resolve_provider("search", "ddgs")


def test_loading_the_provider_types_does_not_import_ddgs():
    """The ddgs library loads on the first keyless query, not when types are collected."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pi_web_tools.runtime.registry import provider_types\n"
        "assert 'ddgs' in provider_types()\n"
        "print([m for m in ('ddgs', 'primp') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
