"""Config loading: every message names the file, the field and shows a valid example."""

from __future__ import annotations

import os

import pytest
from pi_web_tools.api.errors import ConfigError
from pi_web_tools.runtime.config import config_path
from pi_web_tools.runtime.registry import current_config as load_config

from tests.support import SECRET


def _error(write_config, content) -> str:
    path = write_config(content)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert str(path) in message
    assert '"providers"' in message  # the minimal example is included
    return message


def test_config_path_follows_pi_coding_agent_dir(agent_dir):
    """The file lives in $PI_CODING_AGENT_DIR (pi's agent directory)."""
    assert config_path() == agent_dir / "web-search.json"


def test_config_path_defaults_to_home_pi_agent(monkeypatch, tmp_path):
    """Without the override the file is ~/.pi/agent/web-search.json."""
    monkeypatch.delenv("PI_CODING_AGENT_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config_path() == tmp_path / ".pi" / "agent" / "web-search.json"


def test_missing_file_without_key_is_empty_config(agent_dir):
    """No file and no KAGI_API_KEY gives an empty config (tools explain what to do)."""
    config = load_config()
    assert config.source == "none" and config.providers == ()


def test_missing_file_with_kagi_key_is_implicit_kagi(monkeypatch):
    """No file and KAGI_API_KEY set means one implicit Kagi provider."""
    monkeypatch.setenv("KAGI_API_KEY", SECRET)
    config = load_config()
    assert config.source == "env"
    assert [(p.name, p.type, p.api_key) for p in config.providers] == [("kagi", "kagi", SECRET)]


def test_seed_002_example_config_loads(write_config):
    """The seed's conceptual Exa config is valid as written."""
    path = write_config(
        {
            "defaultProvider": "exa-main",
            "providers": [
                {
                    "name": "exa-main",
                    "type": "exa",
                    "apiKey": "exa_123",
                    "options": {"defaultSearchLimit": 5, "defaultFetchTextMaxCharacters": 12000},
                }
            ],
        }
    )
    config = load_config(path)
    assert config.default_provider == "exa-main"
    assert config.providers[0].options.default_search_limit == 5


def test_invalid_json_names_line_and_column(write_config):
    """Invalid JSON says where: line and column."""
    message = _error(write_config, '{\n  "providers": [\n    {"name": "k",}\n  ]\n}')
    assert "not valid JSON" in message and "line 3 column" in message


def test_empty_file(write_config):
    """An empty file is named as empty."""
    assert "empty" in _error(write_config, "  \n")


def test_top_level_not_object(write_config):
    """A JSON array at the top level is rejected."""
    assert "top level must be an object" in _error(write_config, "[]")


def test_providers_missing(write_config):
    """A file without providers says so."""
    assert '"providers" is missing' in _error(write_config, {"defaultProvider": "x"})


def test_providers_wrong_type(write_config):
    """providers must be a list; a single entry written as an object is told to be wrapped."""
    assert '"providers" must be a list' in _error(write_config, {"providers": "kagi"})
    assert "put it inside [ ]" in _error(write_config, {"providers": {"name": "k", "type": "kagi"}})


def test_providers_object_of_another_extension_is_a_note(write_config):
    """ "providers" as an object keyed by service (another extension's shape) is left alone."""
    config = load_config(write_config({"providers": {"kagi": {}}, "search": {}}))
    assert config.shape == "shared" and config.providers == ()
    assert any('"providers" is an object' in str(note) for note in config.notes)


def test_providers_empty(write_config):
    """An empty provider list is an error."""
    assert '"providers" is empty' in _error(write_config, {"providers": []})


def test_duplicate_names(write_config):
    """Two providers with one name are named as duplicates."""
    message = _error(
        write_config,
        {
            "providers": [
                {"name": "k", "type": "kagi", "apiKey": "a"},
                {"name": "k", "type": "kagi", "apiKey": "b"},
            ]
        },
    )
    assert "duplicate name 'k'" in message


def test_unknown_type_lists_known_types(write_config):
    """An unknown type is named with the known types."""
    message = _error(write_config, {"providers": [{"name": "b", "type": "bing", "apiKey": "a"}]})
    assert (
        "providers[0] (b).type: unknown type" in message and "kagi" in message and "exa" in message
    )


def test_missing_type(write_config):
    """A provider without type says type is required."""
    assert ".type: required" in _error(write_config, {"providers": [{"name": "b"}]})


def test_missing_name(write_config):
    """A provider without a name is named by index."""
    assert "providers[0].name: required" in _error(write_config, {"providers": [{"type": "kagi"}]})


def test_wrong_option_type_names_field(write_config):
    """A wrong option type names the option and what was expected."""
    message = _error(
        write_config,
        {
            "providers": [
                {"name": "k", "type": "kagi", "apiKey": "a", "options": {"timeoutSeconds": "ten"}}
            ]
        },
    )
    assert (
        'providers[0] (k).options.timeoutSeconds: expected a number, got the string "ten"'
        in message
    )


def test_bad_option_value_names_rule(write_config):
    """A value out of range says the rule."""
    message = _error(
        write_config,
        {
            "providers": [
                {"name": "k", "type": "kagi", "apiKey": "a", "options": {"defaultSearchLimit": 0}}
            ]
        },
    )
    assert "defaultSearchLimit: must be between 1 and 50" in message


def test_options_not_object(write_config):
    """options must be an object."""
    message = _error(
        write_config, {"providers": [{"name": "k", "type": "kagi", "apiKey": "a", "options": 3}]}
    )
    assert "options: must be an object" in message


def test_unknown_default_provider(write_config):
    """defaultProvider must name a configured provider."""
    message = _error(
        write_config,
        {"defaultProvider": "nope", "providers": [{"name": "k", "type": "kagi", "apiKey": "a"}]},
    )
    assert "defaultProvider: 'nope' is not one of the providers (k)" in message


def test_empty_api_key_is_error(write_config):
    """An empty apiKey string is an error, not a silent fallback."""
    message = _error(write_config, {"providers": [{"name": "k", "type": "kagi", "apiKey": ""}]})
    assert "apiKey: must be a non-empty string" in message


def test_missing_api_key_is_a_key_problem(write_config):
    """A missing apiKey (Exa) is reported as a key problem naming the entry."""
    config = load_config(write_config({"providers": [{"name": "e", "type": "exa"}]}))
    [problem] = config.key_problems
    assert (problem.where, problem.what, problem.entry) == (
        "providers[0] (e).apiKey",
        "missing",
        "e",
    )
    assert str(problem) == 'providers[0] (e).apiKey: missing; add "apiKey": "..." to this entry'


def test_kagi_entry_without_key_uses_env(write_config, monkeypatch):
    """A kagi entry without apiKey falls back to KAGI_API_KEY."""
    monkeypatch.setenv("KAGI_API_KEY", SECRET)
    config = load_config(write_config({"providers": [{"name": "k", "type": "kagi"}]}))
    assert (
        config.providers[0].api_key == SECRET and config.providers[0].key_from_env == "KAGI_API_KEY"
    )


def test_unknown_option_keys_are_warnings(write_config):
    """Unknown options are warnings naming them, so a shared TypeScript config keeps working."""
    config = load_config(
        write_config(
            {
                "providers": [
                    {"name": "k", "type": "kagi", "apiKey": "a", "options": {"lens": 1, "x": 2}}
                ]
            }
        )
    )
    assert len(config.warnings) == 1
    assert "unknown option(s) 'lens', 'x' ignored" in str(config.warnings[0])


def test_unknown_top_level_keys_are_notes_and_entry_keys_warnings(write_config):
    """Top-level keys of other extensions are notes (the file is shared); unknown keys in an
    entry are warnings."""
    config = load_config(
        write_config(
            {"version": 2, "providers": [{"name": "k", "type": "kagi", "apiKey": "a", "extra": 1}]}
        )
    )
    assert any("'version'" in str(note) for note in config.notes)
    assert not any("'version'" in str(w) for w in config.warnings)
    assert any("'extra'" in str(w) for w in config.warnings)


def test_group_readable_file_with_keys_warns(write_config):
    """A key file readable by others gives a warning, not an error."""
    path = write_config({"providers": [{"name": "k", "type": "kagi", "apiKey": "a"}]}, mode=0o644)
    config = load_config(path)
    assert any(
        "readable by other users" in str(w) and "chmod 600" in str(w) for w in config.warnings
    )


def test_private_file_has_no_permission_warning(write_config):
    """A 0600 file gives no permission warning."""
    config = load_config(
        write_config({"providers": [{"name": "k", "type": "kagi", "apiKey": "a"}]})
    )
    assert config.warnings == ()


def test_config_is_reread_when_file_changes(write_config):
    """Editing the file takes effect on the next call, without a restart."""
    path = write_config({"providers": [{"name": "one", "type": "kagi", "apiKey": "a"}]})
    assert load_config(path).providers[0].name == "one"
    path.write_text('{"providers": [{"name": "two", "type": "kagi", "apiKey": "a"}]}  ')
    os.utime(path, ns=(1, 1))
    assert load_config(path).providers[0].name == "two"


def test_directory_instead_of_file(agent_dir):
    """A directory at the config path is a clean error."""
    (agent_dir / "web-search.json").mkdir()
    with pytest.raises(ConfigError, match="is a directory"):
        load_config()


def test_binary_file(write_config):
    """A binary file is a clean error."""
    path = write_config("x")
    path.write_bytes(b"\x00\x01\x02{}")
    with pytest.raises(ConfigError, match="binary"):
        load_config(path)


def test_enormous_file(write_config):
    """A file over 1 MiB is refused without parsing it."""
    path = write_config("x")
    path.write_bytes(b" " * (1024 * 1024 + 1))
    with pytest.raises(ConfigError, match="at most 1 MiB"):
        load_config(path)


def test_key_never_in_repr(write_config):
    """The API key never appears in a config's repr."""
    config = load_config(
        write_config({"providers": [{"name": "k", "type": "kagi", "apiKey": SECRET}]})
    )
    assert SECRET not in repr(config)


def test_base_url_on_direct_is_an_unknown_option(write_config):
    """baseUrl means nothing to the direct fetcher, so it is flagged rather than silently ignored."""
    config = load_config(
        write_config(
            {"providers": [{"name": "d", "type": "direct", "options": {"baseUrl": "http://x/"}}]}
        )
    )
    assert any("unknown option(s) 'baseUrl'" in str(w) for w in config.warnings)


def test_api_key_from_file_is_stripped(write_config):
    """A key pasted with a trailing newline is used without it."""
    config = load_config(
        write_config({"providers": [{"name": "k", "type": "kagi", "apiKey": f"  {SECRET}\n"}]})
    )
    assert config.providers[0].api_key == SECRET


# --- searchFallback and searchFusion ----------------------------------------------------------

SEARCHERS = [
    {"name": "kagi", "type": "kagi", "apiKey": SECRET},
    {"name": "brave", "type": "brave", "apiKey": SECRET},
    {"name": "searx", "type": "searxng", "options": {"baseUrl": "https://searx.example.org"}},
    {"name": "local", "type": "direct"},
]


def test_search_failover_is_on_in_the_providers_order_by_default(write_config):
    config = load_config(write_config({"providers": SEARCHERS}))
    assert config.search_fallback is True and config.search_fusion is None
    assert config.warnings == ()


@pytest.mark.parametrize(
    "value, expected",
    [(False, False), (True, True), (["searx", "brave"], ("searx", "brave"))],
)
def test_search_fallback_is_off_on_or_an_order(write_config, value, expected):
    config = load_config(write_config({"providers": SEARCHERS, "searchFallback": value}))
    assert config.search_fallback == expected


def test_a_search_fallback_that_cannot_be_read_turns_failover_off(write_config):
    config = load_config(write_config({"providers": SEARCHERS, "searchFallback": "brave"}))
    assert config.search_fallback is False
    assert [str(w) for w in config.warnings] == [
        "searchFallback: expected true, false or a list of provider names, got the string "
        '"brave"; search failover is off'
    ]


def test_search_fallback_names_that_cannot_search_are_ignored(write_config):
    config = load_config(
        write_config({"providers": SEARCHERS, "searchFallback": ["local", "nope", "brave"]})
    )
    assert config.search_fallback == ("brave",)
    assert [str(w) for w in config.warnings] == [
        "searchFallback: 'local' ignored (it cannot search; search providers: kagi, brave, searx)",
        "searchFallback: 'nope' ignored (no such provider; search providers: kagi, brave, searx)",
    ]


@pytest.mark.parametrize(
    "value, expected, warned",
    [
        ("all", "all", 0),
        (["kagi", "searx"], ("kagi", "searx"), 0),
        (["kagi"], None, 1),  # one provider is no fusion
        ("yes", None, 1),
    ],
)
def test_search_fusion_is_all_or_two_names_or_off(write_config, value, expected, warned):
    config = load_config(write_config({"providers": SEARCHERS, "searchFusion": value}))
    assert config.search_fusion == expected
    assert len(config.warnings) == warned


def test_the_shared_file_reads_the_search_keys_too(write_config):
    config = load_config(
        write_config({"kagiApiKey": SECRET, "braveApiKey": SECRET, "searchFallback": False})
    )
    assert config.shape == "shared" and config.search_fallback is False
