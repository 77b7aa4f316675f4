"""The pi-web subcommands' text: the model's calls at the end of a section become the pi-web
command that does the same."""

from __future__ import annotations

import json
import re

import pytest
from pi_web_tools.views.commands import _as_command_lines

URL = "https://example.com/guide"


def test_every_call_at_the_end_of_a_section_becomes_a_pi_web_command():
    text = "\n".join(
        [
            f'[Showing characters 0–12000 of 45210. Next: web_fetch {{"urls": ["{URL}"], "offset": 12000}}]',
            f'[3 passages for the question, from 45210 characters; the best at offset 8. Read around it: web_fetch {{"urls": ["{URL}"], "offset": 8}}]',
            f'[9 occurrences in 45210 characters ("x" 9). Read around one: web_fetch {{"urls": ["{URL}"], "offset": 5, "provider": "local"}}]',
            f'[No passage of this page\'s characters 0–500000 of 900000 answers the question well: this page may not answer the question. The rest: web_fetch {{"urls": ["{URL}"], "question": "how do I x?", "offset": 500000}}. Read it in windows: web_fetch {{"urls": ["{URL}"]}}, or look for exact words with find.]',
        ]
    )
    lines = _as_command_lines(text).splitlines()
    assert lines[0].endswith(f"Next: pi-web fetch {URL} --offset 12000]")
    assert lines[1].endswith(f"Read around it: pi-web fetch {URL} --offset 8]")
    assert lines[2].endswith(f"Read around one: pi-web fetch {URL} --offset 5 --provider local]")
    assert f"The rest: pi-web fetch {URL} --offset 500000 --question 'how do I x?'. " in lines[3]
    assert lines[3].endswith(
        f"Read it in windows: pi-web fetch {URL}, or look for exact words with --find.]"
    )
    assert "web_fetch {" not in "\n".join(lines)


def test_a_find_call_becomes_one_find_option_per_term():
    text = (
        f'[60 occurrences in 2000 characters ("a b" 60); 40 more not shown, after offset 700. The '
        f'rest: web_fetch {{"urls": ["{URL}"], "find": ["a b", "c"], "offset": 701}}. Read around '
        f'one: web_fetch {{"urls": ["{URL}"], "offset": 5}}]'
    )
    line = _as_command_lines(text)
    assert f"The rest: pi-web fetch {URL} --offset 701 --find 'a b' --find c. " in line


def test_a_continuations_content_hash_becomes_its_option_and_a_changed_pages_call_a_command():
    text = "\n".join(
        [
            f'[Showing characters 0–12000 of 45210. Next: web_fetch {{"urls": ["{URL}"], "offset": 12000, "content_hash": "1a2b3c4d"}}]',
            f'Note: this page changed since ...; to read the new copy from its start: web_fetch {{"urls": ["{URL}"]}}',
        ]
    )
    lines = _as_command_lines(text).splitlines()
    assert lines[0].endswith(f"Next: pi-web fetch {URL} --offset 12000 --content-hash 1a2b3c4d]")
    assert lines[1].endswith(f"to read the new copy from its start: pi-web fetch {URL}")


@pytest.mark.redis
def test_pi_web_usage_shows_calls_per_day_caller_and_provider(shared_state, capsys):
    from pi_hostspec.cli import main
    from pi_web_tools.runtime import state

    state.count("alice", "kagi", 12)
    state.count("bob", "exa")
    state.reset()  # the command runs in a process of its own
    assert main(["usage", "--days", "2"]) == 0
    out = capsys.readouterr().out
    assert f"Calls to providers per caller in redis://127.0.0.1:{shared_state.port}/0" in out
    assert re.search(rf"{state.today()}  alice   kagi         12", out), out
    assert re.search(rf"{state.today()}  bob     exa           1", out), out
    assert "Total: 13 calls by 2 callers." in out
    assert main(["usage", "--json"]) == 0
    counts = json.loads(capsys.readouterr().out)["days"]
    assert counts == {state.today(): {"alice": {"kagi": 12}, "bob": {"exa": 1}}}


def test_pi_web_usage_without_a_shared_state_says_where_counts_are(capsys):
    from pi_hostspec.cli import main

    assert main(["usage"]) == 1
    assert "PI_WEB_STATE=redis://HOST:6379/0" in capsys.readouterr().out


def test_pi_web_usage_with_an_unreachable_state_says_so_without_its_password(monkeypatch, capsys):
    from pi_hostspec.cli import main

    monkeypatch.setenv("PI_WEB_STATE", "redis://:pw-0123456789abc@127.0.0.1:1/0")
    assert main(["usage"]) == 1
    out = capsys.readouterr().out
    assert "Shared state redis://:***@127.0.0.1:1/0 unavailable: ConnectionError" in out
    assert "pw-0123456789abc" not in out


@pytest.mark.redis
def test_pi_web_config_shows_the_shared_state_and_the_limits(shared_state, write_config, capsys):
    from pi_hostspec.cli import main

    write_config(
        {
            "providers": [{"name": "direct", "type": "direct"}],
            "limits": {"perToken": "60/minute", "providers": {"direct": "5/second"}},
        }
    )
    main(["config"])
    out = capsys.readouterr().out
    assert f"Shared state: redis://127.0.0.1:{shared_state.port}/0 (answers)" in out
    assert "Limits (in the shared state): each caller 60/minute; provider direct 5/second" in out


@pytest.mark.redis
def test_pi_web_cache_names_the_shared_state_and_clear_empties_its_answers(shared_state, capsys):
    from pi_hostspec.cli import main
    from pi_web_tools.runtime import cache, state

    cache.put(cache.CacheSettings(), "web_fetch", "k", {"x": 1})
    state.count("alice", "kagi")
    assert main(["cache"]) == 0
    assert f"Shared state: redis://127.0.0.1:{shared_state.port}/0: answers are kept there" in (
        capsys.readouterr().out
    )
    assert main(["cache", "clear"]) == 0
    assert "Shared answers cleared: 1 removed" in capsys.readouterr().out
    assert shared_state.client().keys("pi-web:cache:*") == []
    assert shared_state.client().keys("pi-web:usage:*")  # counts are not answers: kept
