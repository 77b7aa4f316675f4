"""End to end: `pi-web` with the shared ``web-search.json`` in the shapes other pi extensions
write (flat keys; nested search/fetch/providers objects), and with an invalid file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import SECRET
from tests.support.fake_apis import FakeExa, FakeKagi

PI_WEB = str(Path(sys.executable).parent / "pi-web")
EXA_KEY = "exa-SENTINEL-0a9b8c7d6e"


def _run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run([PI_WEB, *args], capture_output=True, text=True, env=env, timeout=60)


def _json(proc: subprocess.CompletedProcess) -> dict:
    return json.loads(proc.stdout)


@pytest.fixture
def fakes():
    with FakeKagi(SECRET, versions=("v1",)) as kagi, FakeExa(EXA_KEY) as exa:
        yield kagi, exa


def _pi_web_access_file(kagi, exa) -> dict:
    """The flat shape of pi-web-access, plus our providerOptions to reach the fakes."""
    return {
        "provider": "exa",
        "exaApiKey": EXA_KEY,
        "perplexityApiKey": "pplx-not-ours",
        "geminiApiKey": "gem-not-ours",
        "searchRouting": {"default": "exa"},
        "kagiApiKey": SECRET,
        "providerOptions": {"kagi": {"baseUrl": kagi.base_url}, "exa": {"baseUrl": exa.base_url}},
    }


def test_a_pi_web_access_file_gives_working_search_and_fetch(fakes, write_config):
    """Flat kagiApiKey and exaApiKey become providers kagi and exa (in precedence order): search
    goes to Kagi, fetch to Exa (Kagi fetches only when named), summarize to Kagi."""
    kagi, exa = fakes
    write_config(_pi_web_access_file(kagi, exa))
    search = _run("call", "web_search", '{"queries": ["x"]}', "--json")
    assert search.returncode == 0, search.stdout
    assert _json(search)["details"]["provider"] == "kagi"
    fetch = _run("call", "web_fetch", '{"urls": ["https://a.example/p"]}', "--json")
    assert fetch.returncode == 0, fetch.stdout
    assert _json(fetch)["details"]["provider"] == "exa"
    assert "Text of https://a.example/p" in _json(fetch)["content"][0]["text"]
    out = search.stdout + fetch.stdout + search.stderr + fetch.stderr
    assert SECRET not in out and EXA_KEY not in out


def test_config_lists_foreign_keys_as_notes_and_says_where_providers_came_from(fakes, write_config):
    """`pi-web config`: valid, each provider's origin, the other extensions' keys as a note."""
    kagi, exa = fakes
    write_config(_pi_web_access_file(kagi, exa))
    proc = _run("config")
    assert proc.returncode == 0, proc.stdout
    assert 'Status: valid, with no "providers" list' in proc.stdout
    assert "- kagi: type kagi" in proc.stdout and "from file key kagiApiKey" in proc.stdout
    assert "- exa: type exa" in proc.stdout and "from file key exaApiKey" in proc.stdout
    assert proc.stdout.index("- kagi:") < proc.stdout.index("- exa:")
    assert (
        "Note: top-level key(s) 'provider', 'perplexityApiKey', 'geminiApiKey', 'searchRouting' "
        "are not pi-web-tools settings" in proc.stdout
    )
    assert "pplx-not-ours" not in proc.stdout and "Warning" not in proc.stdout


def test_a_providers_list_wins_over_flat_keys(fakes, write_config):
    """With a providers list, flat keys are ignored (and said to be)."""
    kagi, exa = fakes
    config = _pi_web_access_file(kagi, exa)
    del config["providerOptions"]
    config["providers"] = [
        {"name": "mine", "type": "exa", "apiKey": EXA_KEY, "options": {"baseUrl": exa.base_url}}
    ]
    write_config(config)
    search = _run("call", "web_search", '{"queries": ["x"]}', "--json")
    assert _json(search)["details"]["provider"] == "mine"
    report = _run("config").stdout
    assert "flat key(s) 'exaApiKey', 'kagiApiKey' ignored" in report or (
        "flat key(s) 'kagiApiKey', 'exaApiKey' ignored" in report
    )
    assert "- kagi:" not in report


NESTED = {
    "search": {"provider": "exa", "maxResults": 5},
    "fetch": {"provider": "jina"},
    "providers": {"exa": {"apiKey": "exa-nested-not-ours"}, "jina": {"apiKey": "jina-x"}},
}


def test_a_nested_adapter_file_is_explained_not_a_traceback(write_config):
    """ "providers" as an object (the nested adapter): web_search says what the file lacks and
    how to add a key; pi-web config explains the object; no traceback."""
    write_config(NESTED)
    proc = _run("call", "web_search", '{"queries": ["x"]}', "--json")
    assert proc.returncode == 1
    text = _json(proc)["content"][0]["text"]
    assert "has no provider that can search" in text
    assert "another pi extension's object" in text
    assert '"kagiApiKey": "..."' in text and "Or set KAGI_API_KEY" in text
    report = _run("config")
    assert '"providers" is an object, the shape of another pi extension' in report.stdout
    assert "Traceback" not in proc.stdout + proc.stderr + report.stdout + report.stderr


def test_a_nested_adapter_file_with_a_key_variable_searches(fakes, write_config):
    """The nested file plus KAGI_API_KEY: Kagi is an implicit provider, named after its type."""
    kagi, _ = fakes
    write_config({**NESTED, "providerOptions": {"kagi": {"baseUrl": kagi.base_url}}})
    proc = _run("search", "x", env={"KAGI_API_KEY": SECRET})
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.startswith("1. x — page 1")


def test_an_invalid_file_still_fetches_with_a_note(write_config):
    """An invalid file: web_fetch runs the direct fetcher (here it refuses loopback, as it
    should) and says, in a note, that the config was ignored and why; web_search reports the
    problem."""
    write_config('{"providers": [{"name": "k", "type": "nope"}]}')
    proc = _run("call", "web_fetch", '{"urls": ["http://127.0.0.1:9/x"]}', "--json")
    result = _json(proc)
    text = result["content"][0]["text"]
    assert text.startswith("Note: the config file was ignored (Invalid web search config ")
    assert 'unknown type "nope"' in text and "built-in direct fetcher" in text
    assert "127.0.0.1 is a loopback address" in text  # the direct fetcher ran
    assert result["details"]["provider"] == "direct"
    search = _run("call", "web_search", '{"queries": ["x"]}', "--json")
    assert "Invalid web search config" in _json(search)["content"][0]["text"]
    report = _run("config").stdout
    assert "Note: web_fetch still works" in report


def test_an_error_about_one_entry_shows_an_example_of_its_type(write_config):
    """The example after a config error uses the type of the entry at fault."""
    write_config({"providers": [{"name": "e", "type": "exa", "apiKey": ""}]})
    proc = _run("call", "web_search", '{"queries": ["x"]}', "--json")
    text = _json(proc)["content"][0]["text"]
    assert '"type": "exa"' in text and '"type": "kagi"' not in text


def test_summarize_with_a_brave_only_file_names_what_the_file_lacks(write_config):
    """Point 5: with a file, the missing-provider message names what it configures and what
    to add; with no file the seed's sentence stays first."""
    write_config({"providers": [{"name": "b", "type": "brave", "apiKey": "brave-123456789"}]})
    proc = _run("call", "summarize", '{"url": "https://a.example/"}', "--json")
    text = _json(proc)["content"][0]["text"]
    assert text.startswith("web-search.json") is False
    assert "has no provider that can summarize (it configures: b (search))" in text
    assert "Provider types that can: kagi, exa." in text
    report = _run("config").stdout
    assert "Warning: no configured provider can summarize" in report
