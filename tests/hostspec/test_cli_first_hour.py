"""pi-web as a new user types it: one query from unquoted words, -q for several, --version,
no abbreviated options, no echoed option values, and continuation lines as pi-web commands."""

from __future__ import annotations

import json
import re

import pytest
from pi_hostspec.cli import main

from tests.support import SECRET, kagi_config, serve
from tests.support.fake_apis import FakeKagi


@pytest.fixture
def kagi(write_config):
    with FakeKagi(SECRET) as fake:
        write_config(kagi_config(fake.base_url))
        yield fake


def _queries(fake) -> list[str]:
    found = []
    for request in fake.requests:
        body = request.get("json")
        query = body.get("query") if isinstance(body, dict) else request["query"].get("q")
        if query and request["path"].endswith("/search"):
            found.append(query)
    return found


def test_unquoted_words_are_one_query(kagi, capsys):
    assert main(["search", "how", "to", "use", "asyncio"]) == 0
    assert _queries(kagi) == ["how to use asyncio"]


def test_a_repeated_q_gives_several_queries(kagi, capsys):
    assert main(["search", "-q", "rust async", "--query", "tokio"]) == 0
    assert sorted(_queries(kagi)) == ["rust async", "tokio"]


def test_search_help_says_words_are_one_query_and_q_adds_one(capsys):
    with pytest.raises(SystemExit) as info:
        main(["search", "--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Unquoted words are one query (pi-web search how to use asyncio)" in text
    assert 'repeated -q (pi-web search -q "rust async" -q "tokio")' in text


def test_search_without_a_query_says_how_to_give_one(capsys):
    assert main(["search"]) == 2
    assert "pi-web search WORDS..." in capsys.readouterr().err


def test_version_names_the_distribution_and_plugins(capsys):
    for argv in (["--version"], ["version"]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert out.startswith("pi-web (pi-web-tools ") and "plugins: web_tools" in out


def test_an_abbreviated_option_is_refused_and_its_value_never_echoed(capsys):
    with pytest.raises(SystemExit) as info:
        main(["mcp", "--http", "--token", "s3cret-token-value"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "unknown option --token (values not shown)" in err
    assert "s3cret-token-value" not in err


def test_fetch_prints_the_command_that_reads_on(httpserver, write_config, capsys):
    url = serve(httpserver, {"/long.txt": (200, "text/plain", "word " * 5000)}) + "/long.txt"
    write_config(
        {
            "providers": [
                {"name": "local", "type": "direct", "options": {"allowPrivateNetwork": True}}
            ]
        }
    )
    assert main(["fetch", url, "--max-chars", "1000"]) == 0
    out = capsys.readouterr().out
    assert re.search(
        rf"Next: pi-web fetch {re.escape(url)} --offset 1000 --max-chars 1000 --content-hash [0-9a-f]{{8}}\]$",
        out.rstrip(),
    )
    assert "web_fetch {" not in out


def test_the_model_still_gets_the_tool_call(httpserver, write_config, capsys):
    url = serve(httpserver, {"/long.txt": (200, "text/plain", "word " * 5000)}) + "/long.txt"
    write_config(
        {
            "providers": [
                {"name": "local", "type": "direct", "options": {"allowPrivateNetwork": True}}
            ]
        }
    )
    assert main(["call", "web_fetch", json.dumps({"urls": [url]}), "--json"]) == 0
    text = json.loads(capsys.readouterr().out)["content"][0]["text"]
    assert 'Next: web_fetch {"urls": [' in text


def test_config_says_valid_only_when_it_exits_0(write_config, capsys):
    """A file whose entry lacks its key exits 1 and never says valid;
    a good file says valid and exits 0."""
    write_config({"providers": [{"name": "k", "type": "kagi"}]})
    assert main(["config"]) == 1
    out = capsys.readouterr().out
    assert "Status: valid" not in out and "Status: 1 problem (see Problem below)" in out
    write_config({"providers": [{"name": "k", "type": "kagi", "apiKey": "abcdefghijkl"}]})
    assert main(["config"]) == 0
    assert "Status: valid" in capsys.readouterr().out


def test_typos_get_a_suggestion_and_ours_are_warnings(write_config, capsys):
    write_config(
        {
            "defaultProvidr": "local",
            "providers": [
                {"name": "local", "type": "direct", "optons": {"allowPrivateNetwork": True}},
                {"name": "two", "type": "direct", "options": {"allowPrivateNetwrok": True}},
            ],
        }
    )
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert "Warning: top-level key(s) 'defaultProvidr' (did you mean 'defaultProvider'?)" in out
    assert "unknown key(s) 'optons' (did you mean 'options'?)" in out
    assert "unknown option(s) 'allowPrivateNetwrok' (did you mean 'allowPrivateNetwork'?)" in out


def test_a_refusal_names_the_misspelt_option_the_user_thinks_is_set(write_config, capsys):
    """The loopback refusal says to set allowPrivateNetwork; when the file has a misspelling
    of it (ignored, with a warning only pi-web config shows), the refusal names that too."""
    write_config(
        {
            "providers": [
                {"name": "local", "type": "direct", "options": {"allowPrivateNetwrok": True}}
            ]
        }
    )
    assert main(["fetch", "http://127.0.0.1:9/page"]) == 1
    out = capsys.readouterr().out
    assert 'set "allowPrivateNetwork": true in the local provider\'s options' in out
    assert (
        "(providers[0] (local).options has 'allowPrivateNetwrok', which is ignored: did you mean "
        "'allowPrivateNetwork'?)" in out
    )


def test_a_provider_option_written_at_the_top_level_is_a_warning_that_says_where_it_goes(
    write_config, capsys
):
    write_config(
        {
            "defaultSearchLimt": 5,
            "otherExtensionKey": 1,
            "providers": [{"name": "d", "type": "direct"}],
        }
    )
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert (
        "Warning: top-level key 'defaultSearchLimt' is ignored: it looks like the provider option "
        "'defaultSearchLimit', which goes in a provider's \"options\"" in out
    )
    assert "Note: top-level key(s) 'otherExtensionKey' are not pi-web-tools settings" in out


def test_warnings_still_show_when_the_file_also_has_an_error(write_config, capsys):
    write_config({"defaultProvidr": "x", "providers": [{"name": "a", "type": "nope"}]})
    assert main(["config"]) == 1
    out = capsys.readouterr().out
    assert "Status: invalid" in out and "unknown type" in out
    assert "Warning: top-level key(s) 'defaultProvidr' (did you mean 'defaultProvider'?)" in out


@pytest.mark.parametrize("where", ["home", "xdg"])
def test_the_other_extensions_file_is_named_after_the_seed_sentence(
    where, tmp_path, monkeypatch, capsys
):
    """With no file of ours but pi-web-access's web-search.json (~/.pi, or $XDG_CONFIG_HOME/pi),
    the missing-key error keeps the seed's sentence first, then names that file and what to
    do; so does config. Once our file exists, neither mentions it."""
    home = tmp_path / "home"
    folder = home / ".pi" if where == "home" else tmp_path / "xdg" / "pi"
    folder.mkdir(parents=True)
    (folder / "web-search.json").write_text('{"kagiApiKey": "abc"}')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert main(["search", "x"]) == 1
    out = capsys.readouterr().out
    assert out.startswith(
        "KAGI_API_KEY environment variable is not set. Set it to your Kagi API key to use web search."
    )
    assert f"Note: {folder / 'web-search.json'} exists (where the pi-web-access" in out
    assert "cp " in out and "ln -s " in out
    assert main(["config"]) == 0
    assert (
        f"{folder / 'web-search.json'} exists (where the pi-web-access" in capsys.readouterr().out
    )
    from pi_web_tools.runtime.config import config_path

    config_path().write_text('{"providers": [{"name": "local", "type": "direct"}]}')
    config_path().chmod(0o600)
    main(["search", "x"])
    main(["config"])
    assert "pi-web-access" not in capsys.readouterr().out


def test_a_file_url_is_an_unsupported_scheme(capsys):
    assert main(["fetch", "file:///etc/passwd"]) == 1
    out = capsys.readouterr().out
    assert "uses file:, only http and https are supported" in out
    assert "not an absolute URL" not in out


def test_types_that_can_include_keyless_and_third_party_types(write_config, capsys):
    from pi_web_tools import ProviderType, Search, testing

    mine = ProviderType(name="mine", factory=object, search=Search())
    with testing.provider_types(mine):
        write_config({"providers": [{"name": "local", "type": "direct"}]})
        assert main(["search", "x"]) == 1
        out = capsys.readouterr().out
    assert "Provider types that can:" in out
    assert "ddgs (keyless)" in out and "mine (keyless)" in out and "kagi" in out


def test_every_command_option_and_positional_has_a_help_line():
    """pi-web --help and each command's --help describe every option and positional in a line."""
    import argparse

    from pi_hostspec import Host
    from pi_hostspec.cli import _parser

    parser = _parser(Host().commands)
    missing = []

    def walk(prog: str, node: argparse.ArgumentParser) -> None:
        for action in node._actions:
            if isinstance(action, argparse._SubParsersAction):
                described = {choice.dest for choice in action._choices_actions if choice.help}
                missing.extend(f"{prog} {name}" for name in action.choices if name not in described)
                for name, child in action.choices.items():
                    walk(f"{prog} {name}", child)
            elif not (action.help or "").strip() or action.help == argparse.SUPPRESS:
                missing.append(f"{prog} {'/'.join(action.option_strings) or action.dest}")

    walk("pi-web", parser)
    assert missing == []
    assert {"search", "fetch", "summarize", "cache", "config", "mcp"} <= set(
        parser._subparsers._group_actions[0].choices
    )


def test_the_collapsed_error_is_cut_after_a_whole_word(httpserver, write_config, capsys):
    """`pi-web call` shows an error on one line (160 characters): when it is longer, it ends
    after a whole word of the message, then an ellipsis (not `…in plai`)."""
    root = serve(httpserver, {})
    before = f'web_fetch failed for {root}/: refused: 127.0.0.1 is a loopback address; set "'
    url = f"{root}/{'p' * (150 - len(before))}"  # "allowPrivateNetwork" spans character 159
    write_config({"providers": [{"name": "local", "type": "direct"}]})
    assert main(["call", "web_fetch", json.dumps({"urls": [url]}), "--json"]) == 1
    message = json.loads(capsys.readouterr().out)["content"][0]["text"]
    assert message[150:169] == "allowPrivateNetwork"  # a cut at 159 would split it
    assert main(["call", "web_fetch", json.dumps({"urls": [url]})]) == 1
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("Error: "))
    assert line.endswith("…"), line
    shown = line.removeprefix("Error: ").removesuffix("…")
    assert len(shown) < len(message) and message.startswith(shown)
    assert message[len(shown)] == " " and not shown.endswith(" ")
    assert shown.endswith("set")


def test_pi_web_cache_gives_every_size_in_one_unit(httpserver, write_config, capsys):
    """`pi-web cache`: the size and its limit in the same unit (MB), empty or holding a page
    (before, "Size: 36.0KB of at most 200 MB")."""
    url = serve(httpserver, {"/a.txt": (200, "text/plain", "words " * 5000)}) + "/a.txt"
    write_config(
        {
            "providers": [
                {"name": "local", "type": "direct", "options": {"allowPrivateNetwork": True}}
            ]
        }
    )
    sizes = []
    for argv in (["cache"], ["fetch", url], ["cache"]):
        assert main(argv) == 0
        sizes += [x for x in capsys.readouterr().out.splitlines() if x.startswith("Size: ")]
    assert len(sizes) == 2
    for size in sizes:
        assert re.fullmatch(r"Size: \d+\.\d MB of at most \d+(\.\d+)? MB", size), size


def test_with_no_file_the_refusal_says_what_to_add_to_which_file(tmp_path, monkeypatch, capsys):
    """No config at all: the built-in direct fetcher has no entry to set an option in, so the
    refusal gives the entry to add and the file it goes in."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    assert main(["fetch", "http://127.0.0.1:9/page"]) == 1
    out = capsys.readouterr().out
    assert (
        'add {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": true}} to '
        f'the "providers" list of {tmp_path / "web-search.json"} to allow it'
    ) in out
