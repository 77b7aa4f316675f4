"""The provider author's kit: in-process registration and the contract check."""

from __future__ import annotations

import pytest
from attrs import frozen
from pi_web_tools import (
    ApiKey,
    CommonOptions,
    Fetch,
    ProviderType,
    Search,
    SearchHit,
    SearchResponse,
    between,
    option,
    testing,
)
from pi_web_tools.providers.direct import DIRECT
from pi_web_tools.providers.exa import EXA
from pi_web_tools.providers.kagi import KAGI
from pi_web_tools.runtime.registry import provider_types, resolve_provider


@frozen(kw_only=True)
class EchoOptions(CommonOptions):
    prefix: str = option("echo")
    depth: int | None = option(None, validator=between(1, 3))


class EchoProvider:
    def __init__(self, config):
        self.name = config.name
        self.prefix = config.options.prefix

    def search(self, request, ctx):
        return SearchResponse(
            hits=(SearchHit(title=f"{self.prefix} {request.query}", url="https://e.test/"),)
        )


ECHO = ProviderType(
    name="echo",
    factory=EchoProvider,
    options_class=EchoOptions,
    search=Search(),
)


@pytest.mark.parametrize("kind", [KAGI, EXA, DIRECT, ECHO], ids=lambda t: t.name)
def test_built_in_and_example_types_pass_the_contract_check(kind):
    """The contract check accepts every built-in type and a minimal keyless one."""
    provider = testing.check_provider_type(kind)
    assert provider.name == f"{kind.name}-check"


def test_contract_check_lists_every_problem():
    """A type whose provider lacks a method and whose options are wrong gets every problem named."""

    class Broken:
        def __init__(self, config):
            self.name = config.name

    broken = ProviderType(
        name="broken", factory=Broken, search=Search(), fetch=Fetch(), key=ApiKey()
    )
    with pytest.raises(ValueError, match="options.timeoutSeconds: expected a number"):
        testing.check_provider_type(broken, options={"timeoutSeconds": "soon"})
    with pytest.raises(AssertionError) as info:
        testing.check_provider_type(broken)
    assert "no search() method" in str(info.value) and "no fetch() method" in str(info.value)


def test_options_are_validated_with_their_declared_validators():
    """An option out of its validator's range is named with the rule and the value."""
    with pytest.raises(
        ValueError, match=r"options\.depth: must be between 1 and 3, got the number 7"
    ):
        testing.check_provider_type(ECHO, options={"depth": 7})
    provider = testing.check_provider_type(ECHO, options={"prefix": "hi", "depth": 2})
    assert provider.prefix == "hi"


def test_provider_types_registers_in_process_and_restores(write_config):
    """Inside the block the type is usable from the config file; afterwards it is gone."""
    with testing.provider_types(ECHO):
        write_config({"providers": [{"name": "mine", "type": "echo", "options": {"prefix": "yo"}}]})
        selection = resolve_provider("search")
        response = testing.call(selection.provider, "search")
        assert response.hits[0].title == "yo pi web tools contract check"
        assert "kagi" in provider_types()
    assert "echo" not in provider_types()


def test_call_rejects_a_response_of_the_wrong_type():
    """call() fails, naming the provider, when a provider returns a dict instead of a response."""

    class Sloppy:
        name = "sloppy"

        def search(self, request, ctx):
            return {"hits": []}

    with pytest.raises(AssertionError, match="provider 'sloppy' returned dict from search"):
        testing.call(Sloppy(), "search")


def test_a_type_given_replaces_an_installed_one_of_the_same_name(write_config):
    """A plugin's own tests can pass its type even when the plugin is installed."""
    import attrs
    from pi_web_tools.providers.kagi import KAGI

    with testing.provider_types(attrs.evolve(KAGI, label="Test Kagi")) as types:
        assert types["kagi"].label == "Test Kagi"
    assert provider_types()["kagi"].label == "Kagi"
