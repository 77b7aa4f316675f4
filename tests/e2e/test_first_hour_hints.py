"""Issue 33, items 7 and 8: the hints pi-web prints run as printed, and its messages say what
is wrong and what to do (through the installed pi-web, as a new user meets them)."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from tests.support.hosts import PI_WEB


def _pi_web(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PI_WEB, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )


@pytest.mark.parametrize("verb", ["cp", "ln -s"])
def test_the_copy_and_link_commands_for_the_other_extensions_file_run_as_printed(verb, tmp_path):
    """A user of the other pi web extension has only ~/.pi/web-search.json (no ~/.pi/agent):
    the printed cp and ln -s commands, run as printed, put the file where pi-web reads it
    (they failed: the folder did not exist)."""
    home = tmp_path / "home"
    (home / ".pi").mkdir(parents=True)
    theirs = home / ".pi" / "web-search.json"
    theirs.write_text('{"providers": [{"name": "direct", "type": "direct"}]}')
    theirs.chmod(0o600)
    env = {"HOME": str(home), "PI_CODING_AGENT_DIR": "", "XDG_CONFIG_HOME": str(tmp_path / "x")}
    out = _pi_web("search", "x", env=env).stdout
    command = re.search(rf"\(((?:mkdir -p \S+ && )?{verb} \S+ \S+)\)", out)
    assert command, out
    done = subprocess.run(command.group(1), shell=True, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads((home / ".pi" / "agent" / "web-search.json").read_text())["providers"]
    assert "exists (where the pi-web-access" not in _pi_web("config", env=env).stdout


def test_the_browser_hint_on_debian_is_apt_get_whatever_the_path(tmp_path, write_config):
    """On Debian or Ubuntu (/etc/os-release), a missing browser is `apt-get install chromium`,
    as the README says, even when apt-get is not on the PATH the program got (an MCP client's
    minimal environment); it read `python -m playwright install chromium`."""
    from pi_web_tools.providers import browser

    if browser.linux_family() != "debian":
        pytest.skip("not a Debian-like system")
    write_config({"providers": [{"name": "browser", "type": "browser"}]})
    empty = tmp_path / "bin"
    empty.mkdir()
    out = _pi_web("config", env={"PATH": str(empty)}).stdout
    assert "no Chromium or Chrome found; install one with: " in out, out
    assert re.search(r"install one with: (sudo )?apt-get install chromium", out), out


def test_a_kagi_entry_without_a_key_is_named_in_the_tools_message(write_config):
    """A "kagi" entry with no apiKey: the tool's message keeps the seeds' sentence, then names
    the entry that lacks the key (as pi-web config does), not an example of a file it has."""
    path = write_config({"providers": [{"name": "work", "type": "kagi"}]})
    out = _pi_web("search", "x").stdout
    assert out.startswith(
        "KAGI_API_KEY environment variable is not set. Set it to your Kagi API key to use web "
        "search."
    ), out
    assert (
        f'Or add "apiKey": "..." to the entry providers[0] (work) of {path}: it has no key' in out
    )
    assert "for example" not in out


def test_config_messages_suggest_and_show_json(write_config):
    """`baseURL` is "did you mean 'baseUrl'", a misspelt type gets the closest one, and option
    values are shown as web-search.json writes them (true, "v1"), not as Python."""
    write_config(
        {
            "providers": [
                {
                    "name": "k",
                    "type": "kagi",
                    "apiKey": "abcdef123456",
                    "options": {"baseURL": "x"},
                },
                {"name": "b", "type": "brvae", "apiKey": "x"},
            ]
        }
    )
    out = _pi_web("config").stdout
    assert "'baseURL' (did you mean 'baseUrl'?)" in out, out
    assert 'unknown type "brvae" (did you mean "brave"?); known types: ' in out, out
    write_config(
        {
            "providers": [
                {
                    "name": "k",
                    "type": "kagi",
                    "apiKey": "abcdef123456",
                    "options": {"apiVersion": "v1"},
                },
                {"name": "d", "type": "direct", "options": {"allowPrivateNetwork": True}},
            ]
        }
    )
    out = _pi_web("config").stdout
    assert 'apiVersion="v1"' in out and "allowPrivateNetwork=true" in out, out
    assert "True" not in out and "'v1'" not in out


def test_command_line_messages():
    """A bare pi-web shows its help (exit 0); an unknown option shows the usage of the
    subcommand it was given to (exit 2, its value never echoed)."""
    bare = _pi_web()
    assert bare.returncode == 0 and bare.stdout.startswith("usage: pi-web"), bare
    assert "Run pi tools from the command line" in bare.stdout
    wrong = _pi_web("fetch", "--bogus=secret-value", "https://example.com")
    assert wrong.returncode == 2
    assert wrong.stderr.startswith("usage: pi-web fetch"), wrong.stderr
    assert "--bogus" in wrong.stderr and "secret-value" not in wrong.stderr


def test_version_lists_provider_plugins(tmp_path):
    """`pi-web --version` lists the provider plugins, built-in and installed, by distribution."""
    from tests.support.hosts import declare_distribution

    site = tmp_path / "site"
    site.mkdir()
    (site / "fancy_search.py").write_text("")
    declare_distribution(
        site, "fancy_search-1.2.0", "pi_web_tools.providers", "fancy", "fancy_search"
    )
    out = _pi_web("--version", env={"PYTHONPATH": str(site)}).stdout
    lines = out.splitlines()
    assert lines[0].startswith("pi-web (pi-web-tools ")
    assert lines[1].startswith("provider plugins: ") and "kagi" in lines[1], out
    assert "fancy (fancy-search 1.2.0)" in lines[1], out


def test_the_readme_command_serves_the_fake_apis_for_trying_paid_providers(tmp_path):
    """Issue 33, item 9: the README's one line (`python -m tests.support.fake_apis`, from a
    checkout) serves the fake APIs and prints the PI_CODING_AGENT_DIR that points pi-web at
    them; every paid provider answers through it with no key of one's own; Ctrl-C stops it."""
    import signal
    import sys

    from tests.support import ROOT

    readme = (ROOT / "README.md").read_text()
    assert "python -m tests.support.fake_apis" in readme
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.fake_apis"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        lines = [proc.stdout.readline() for _ in range(3)]
        agent = re.search(r"export PI_CODING_AGENT_DIR=(\S+)", "".join(lines)).group(1)
        env = {"PI_CODING_AGENT_DIR": agent}
        for provider in ("kagi", "exa", "brave", "tavily"):
            found = _pi_web("search", "rust async", "--provider", provider, env=env)
            assert found.returncode == 0 and found.stdout.startswith("1. "), (provider, found)
        summary = _pi_web("summarize", "https://example.com/a", env=env)
        assert summary.returncode == 0, summary
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0
        assert not os.path.exists(agent)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
