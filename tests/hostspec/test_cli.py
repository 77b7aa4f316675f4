"""pi-web, the reference host on the command line: in process, and once as the installed script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pi_hostspec.cli import main

from tests.support import SECRET

KAGI_SENTENCE = (
    "KAGI_API_KEY environment variable is not set. Set it to your Kagi API key to use web search."
)


def test_tools_lists_the_web_tools_with_labels(capsys):
    """`pi-web tools` lists web_search, web_fetch and summarize with their labels and first lines."""
    assert main(["tools"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert {"web_search", "web_fetch", "summarize"} <= set(lines)
    assert "Web Search: Search the web" in lines["web_search"]
    assert "Web Fetch: " in lines["web_fetch"]
    assert "Summarize: " in lines["summarize"]
    # first line of the description only: no "When to use" section
    assert "When to use" not in out


def test_call_unknown_tool_is_a_usage_error(capsys):
    """`pi-web call` with an unknown tool exits 2 and names the tool on stderr."""
    assert main(["call", "no_such_tool", "{}"]) == 2
    captured = capsys.readouterr()
    assert "no_such_tool" in captured.err
    assert captured.out == ""


def test_call_with_non_json_arguments_is_a_usage_error(capsys):
    """`pi-web call` with arguments that are not JSON exits 2 with a message on stderr."""
    assert main(["call", "web_search", "{queries: [x]"]) == 2
    captured = capsys.readouterr()
    assert "not valid JSON" in captured.err
    assert captured.out == ""


def test_call_json_without_key_prints_one_error_object(capsys, agent_dir):
    """Without any key, `call web_search --json` exits 1 and prints exactly one JSON error object."""
    code = main(["call", "web_search", '{"queries":["x"]}', "--json"])
    assert code == 1
    out = capsys.readouterr().out
    payload = json.loads(out)  # fails if there is anything but one JSON document
    assert set(payload) == {"content", "details", "isError"}
    assert payload["isError"] is True
    assert len(payload["content"]) == 1
    assert payload["content"][0]["type"] == "text"
    text = payload["content"][0]["text"]
    assert text.startswith(KAGI_SENTENCE)
    assert str(agent_dir / "web-search.json") in text


def test_call_invalid_arguments_is_an_error_result(capsys):
    """Arguments that break the schema give exit 1 and an error naming the field."""
    assert main(["call", "web_search", '{"queries": []}', "--json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["isError"] is True
    assert "queries" in payload["content"][0]["text"]


def test_call_without_json_renders_call_and_result(capsys):
    """Without --json, call prints the rendered call line and then the result view."""
    assert main(["call", "web_search", '{"queries":["x"]}']) == 1
    out = capsys.readouterr().out
    assert "KAGI_API_KEY" in out
    assert not out.lstrip().startswith("{")


def test_config_without_file_prints_the_path(capsys, agent_dir):
    """`pi-web config` with no config file prints which file it reads and exits 0."""
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert str(agent_dir / "web-search.json") in out


def test_config_without_file_names_every_key_variable_and_the_keyless_option(capsys):
    """With nothing configured, `pi-web config` lists each key variable and the ddgs opt-in."""
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert (
        "Status: no config file and none of KAGI_API_KEY, BRAVE_API_KEY, TAVILY_API_KEY is set."
        in out
    )
    assert 'add {"name": "free", "type": "ddgs"} to "providers"' in out
    assert (
        "brave (search); tavily (fetch, search); searxng (search); browser (fetch); ddgs (search)"
        in out
    )


def test_config_without_file_lists_the_site_readers(capsys):
    """The readers work with no config file, so `pi-web config` lists them then too."""
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert "Site readers (web_fetch without provider reads these sites" in out
    assert "- github: GitHub, files, folders" in out and "no token (GITHUB_TOKEN" in out


def test_config_that_is_invalid_still_lists_the_site_readers_web_fetch_uses(capsys, write_config):
    """web_fetch ignores an invalid file and reads with every reader on, so they are listed."""
    write_config({"providers": [{"name": "k", "type": "no-such-type"}]})
    assert main(["config"]) == 1
    out = capsys.readouterr().out
    assert "Status: invalid" in out
    assert "- github: GitHub, files, folders" in out and "(on)" in out


def test_config_never_prints_the_key(capsys, write_config):
    """`pi-web config` with a key in the file never prints the whole key."""
    write_config(
        {
            "defaultProvider": "kagi",
            "providers": [{"name": "kagi", "type": "kagi", "apiKey": SECRET}],
        }
    )
    main(["config"])
    captured = capsys.readouterr()
    assert SECRET not in captured.out + captured.err


def test_no_command_shows_the_help(capsys):
    """A bare pi-web shows what it can do (its help, on stdout) and exits 0 (issue 33, item 8:
    it was a usage error, exit 2)."""
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: pi-web") and "{tools,version,call,mcp" in out


def test_installed_console_script_lists_tools(agent_dir):
    """The installed `pi-web` console script runs and finds the web tools through entry points."""
    script = Path(sys.executable).parent / "pi-web"
    assert script.exists(), f"console script not installed next to {sys.executable}"
    env = dict(os.environ)
    proc = subprocess.run(
        [str(script), "tools"],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        check=False,
        cwd=str(agent_dir),
    )
    assert proc.returncode == 0, proc.stderr
    names = {line.split()[0] for line in proc.stdout.splitlines() if line.strip()}
    assert {"web_search", "web_fetch", "summarize"} <= names


@pytest.mark.parametrize("url", ["memcached://cache:11211", "http://valkey:6379/0", "redis:valkey"])
def test_mcp_state_that_is_no_redis_url_is_refused(url):
    """`pi-web mcp --state` with a URL no Redis client reads is a usage error naming the
    schemes it takes; it used to serve, each replica on its own state, saying so only at its
    first call."""
    from pi_hostspec import cli

    problem = cli._state_problem(url)
    assert problem is not None and "redis://HOST:6379/0" in problem


@pytest.mark.parametrize(
    "url", ["redis://valkey:6379/0", "VALKEYS://v:6380/1", "unix:///run/v.sock"]
)
def test_mcp_state_takes_every_redis_and_valkey_scheme(url):
    from pi_hostspec import cli

    assert cli._state_problem(url) is None


@pytest.mark.parametrize(
    "url",
    ["redis://:hunter2-secret@valkey:6379/0", "redis://valkey:6379/0?password=hunter2-secret"],
)
def test_mcp_state_with_a_password_is_refused_and_its_url_shown_without_it(url):
    """A password on the command line is refused in either form redis-py reads, and the start
    line shows the URL without it."""
    from pi_hostspec import cli, mcp_http

    assert "holds a password" in cli._state_problem(url)
    assert "hunter2" not in mcp_http.shown_url(url) and "***" in mcp_http.shown_url(url)


def test_a_keyboard_interrupt_raised_inside_a_tool_exits_130_not_a_key_error(
    monkeypatch, capsys
):
    """A KeyboardInterrupt a tool (a provider) raises ended the call's thread and `pi-web call`
    crashed with `KeyError: 'result'`; it is an interrupt, as Ctrl-C is: exit status 130."""
    from pi_hostspec.host import Host

    def interrupted(self, name, args, ctx=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(Host, "call", interrupted)
    assert main(["call", "web_search", '{"queries":["x"]}', "--json"]) == 130
    captured = capsys.readouterr()
    assert "KeyError" not in captured.err
    assert captured.out == ""
