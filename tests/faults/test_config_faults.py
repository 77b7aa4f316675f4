"""Config files that are readable by others, or not config files at all, through tool calls and
``pi-web config``."""

from __future__ import annotations

import os
import threading

import pytest
from pi_web_tools.runtime.config import MAX_CONFIG_BYTES
from pi_web_tools.views.config_report import config_report

from tests.support import SECRET, assert_clean_error, assert_no_secret
from tests.support.fault_server import Reply, json_reply

from .cases import KAGI_SEARCH

KAGI_OK = {"meta": {"id": "ok"}, "data": [{"t": 0, "url": "https://a.example/", "title": "A"}]}


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_config_readable_by_others_warns_in_report_and_details(
    mode, server, tools, write_config, capsys
):
    """A key-holding config readable by group or others still works, with a chmod warning in both places."""
    from pi_hostspec.cli import main

    server.script(json_reply(KAGI_OK))
    path = write_config(KAGI_SEARCH.config(server), mode=mode)
    assert main(["config"]) == 0  # a warning, not an error
    report = capsys.readouterr().out
    assert "Status: valid" in report
    assert f"Warning: {path} holds API keys and is readable by other users" in report
    assert f"chmod 600 {path}" in report and SECRET not in report
    outcome = tools.call("web_search", {"queries": ["x"]})
    assert not outcome.result.is_error
    (warning,) = outcome.result.details["warnings"]
    assert "readable by other users" in warning and f"{mode:o}" in warning


def test_private_config_has_no_warning(server, tools, write_config):
    """A 0600 config gives no permission warning."""
    server.script(json_reply(KAGI_OK))
    write_config(KAGI_SEARCH.config(server))
    assert "Warning" not in config_report()[0]
    assert "warnings" not in tools.call("web_search", {"queries": ["x"]}).result.details


def test_warning_also_reaches_an_error_result(server, tools, write_config):
    """The permission warning rides along in the details of a failed call too."""
    server.script(json_reply({"data": None, "error": [{"code": 2, "msg": "Unauthorized"}]}, 401))
    write_config(KAGI_SEARCH.config(server), mode=0o644)
    outcome = tools.call("web_search", {"queries": ["x"]})
    assert (
        outcome.result.is_error
        and "readable by other users" in outcome.result.details["warnings"][0]
    )


def _directory(path):
    path.mkdir()


def _empty(path):
    path.write_bytes(b"")


def _whitespace(path):
    path.write_bytes(b" \n\t\n")


def _binary(path):
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)


def _not_utf8(path):
    path.write_bytes('{"providers": []} \xe9t\xe9'.encode("latin-1"))


def _enormous(path):
    with open(path, "wb") as handle:  # a sparse 50 MB file: cheap to make, never to be read whole
        handle.truncate(50 * MAX_CONFIG_BYTES)


def _endless(path):
    path.symlink_to("/dev/zero")


def _fifo(path):
    os.mkfifo(path)


def _deeply_nested(path):
    path.write_text('{"providers": ' + "[" * 100_000 + "]" * 100_000 + "}")


BROKEN = [
    (_directory, "is a directory"),
    (_empty, "empty"),
    (_whitespace, "empty"),
    (_binary, "binary"),
    (_not_utf8, "not UTF-8"),
    (_enormous, "at most 1 MiB"),
    (_endless, "not a regular file"),
    (_fifo, "not a regular file"),
    (_deeply_nested, "nested too deeply"),
]


def call_with_deadline(tools, name, args, seconds=5.0):
    """Run a call in a thread so a config that blocks the read cannot hang the suite."""
    box = {}
    worker = threading.Thread(
        target=lambda: box.update(outcome=tools.call(name, args)), daemon=True
    )
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"{name} still running after {seconds} s"
    return box["outcome"]


@pytest.mark.parametrize(
    "make,needle", BROKEN, ids=lambda v: getattr(v, "__name__", "")[1:] or None
)
@pytest.mark.parametrize(
    "name,args",
    [
        ("web_search", {"queries": ["x"]}),
        ("web_fetch", {"urls": ["http://127.0.0.1:9/"]}),
        ("summarize", {"url": "https://example.com/"}),
    ],
    ids=["web_search", "web_fetch", "summarize"],
)
def test_broken_config_is_a_clean_error(make, needle, name, args, agent_dir, tools):
    """A config that is a directory, empty, binary, not UTF-8, enormous, endless, a FIFO or too deep is a clean error naming the file."""
    path = agent_dir / "web-search.json"
    make(path)
    outcome = call_with_deadline(tools, name, args)
    assert outcome.result.is_error
    assert f"Invalid web search config {path}" in outcome.text and needle in outcome.text
    assert "Traceback" not in outcome.text and "failed unexpectedly" not in outcome.text
    assert outcome.elapsed < 2.0
    assert_no_secret(outcome)


@pytest.mark.parametrize(
    "make,needle", BROKEN, ids=lambda v: getattr(v, "__name__", "")[1:] or None
)
def test_broken_config_in_the_report(make, needle, agent_dir):
    """`pi-web config` (config_report) says the config is invalid and why, without raising."""
    make(agent_dir / "web-search.json")
    box = {}
    worker = threading.Thread(target=lambda: box.update(report=config_report()), daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive()
    text, ok = box["report"]
    assert not ok and "Status: invalid" in text and needle in text


def test_unreadable_config_is_a_clean_error(agent_dir, tools):
    """A config the user may not read is a clean error (skipped as root, who reads everything)."""
    if os.geteuid() == 0:
        pytest.skip("root can read a 000 file")
    path = agent_dir / "web-search.json"
    path.write_text("{}")
    path.chmod(0)
    outcome = tools.call("web_search", {"queries": ["x"]})
    assert_clean_error(outcome, "cannot read it")


def test_non_finite_timeout_is_a_config_error(agent_dir, write_config, tools):
    """timeoutSeconds written as 1e999 (infinity once parsed) is refused with a clear message."""
    write_config(
        '{"providers": [{"name": "kagi", "type": "kagi", "apiKey": "k-0123456789", '
        '"options": {"timeoutSeconds": 1e999}}]}'
    )
    outcome = tools.call("web_search", {"queries": ["x"]})
    assert outcome.result.is_error and "timeoutSeconds" in outcome.text and "finite" in outcome.text


def test_huge_timeout_is_refused_with_its_range(server, tools, write_config):
    """A timeoutSeconds far beyond what a socket accepts (1e300) is refused with the range of
    the option (issue 28, Low: every numeric option has a sane range), never reaching a socket;
    it used to be accepted."""
    server.script(json_reply(KAGI_OK))
    write_config(KAGI_SEARCH.config(server, timeout=1e300))
    outcome = tools.call("web_search", {"queries": ["x"]})
    assert_clean_error(outcome, "timeoutSeconds: must be between 0.1 and 600")
    assert server.count == 0


# --------------------------------------------------------------------------- trust (round 2)


@pytest.mark.parametrize("mode", [0o620, 0o602, 0o660])
def test_config_writable_by_others_warns(mode, server, tools, write_config, capsys):
    """A config that group or others can write is warned about in the report and details (and
    its key is not sent to the baseUrl it sets: see the next test)."""
    from pi_hostspec.cli import main

    server.script(Reply(200, "page text", content_type="text/plain"))
    config = {
        "providers": [
            {"name": "kagi", "type": "kagi", "apiKey": SECRET},
            {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}},
        ]
    }
    path = write_config(config, mode=mode)
    assert main(["config"]) == 0
    report = capsys.readouterr().out
    assert f"Warning: {path} is writable by other users" in report
    assert f"chmod go-w {path}" in report and SECRET not in report
    outcome = tools.call("web_fetch", {"urls": [server.url("/a")]})
    assert any("writable by other users" in w for w in outcome.result.details["warnings"])


@pytest.mark.parametrize("mode", [0o666, 0o620, 0o602])
def test_a_file_key_is_not_sent_to_a_base_url_others_could_have_planted(
    mode, server, tools, write_config, capsys
):
    """Issue 21: a key written in a config that others can write never goes to a baseUrl read
    from it (a planted one would collect it); the call says why and what to do."""
    from pi_hostspec.cli import main

    server.script(json_reply(KAGI_OK))
    path = write_config(KAGI_SEARCH.config(server), mode=mode)
    outcome = tools.call("web_search", {"queries": ["x"]})
    assert_clean_error(outcome, "is not sent to baseUrl", f"chmod go-w {path}")
    assert server.count == 0
    assert_no_secret(outcome)
    assert main(["config"]) == 1
    report = capsys.readouterr().out
    assert "its API key is not sent to baseUrl" in report and SECRET not in report


def test_a_file_key_is_not_sent_to_a_base_url_when_the_folder_is_writable(
    server, tools, agent_dir, write_config
):
    server.script(json_reply(KAGI_OK))
    write_config(KAGI_SEARCH.config(server))
    agent_dir.chmod(0o777)
    try:
        outcome = tools.call("web_search", {"queries": ["x"]})
    finally:
        agent_dir.chmod(0o755)
    assert outcome.result.is_error and "is not sent to baseUrl" in outcome.text
    assert server.count == 0


def test_a_file_key_without_base_url_in_a_writable_config_still_works(tools, write_config):
    """No baseUrl: the key goes only to the provider's own API, as before (with the warning)."""
    from pi_web_tools.runtime.registry import current_config

    path = write_config(
        {"providers": [{"name": "kagi", "type": "kagi", "apiKey": SECRET}]}, mode=0o666
    )
    config = current_config()
    assert config.get("kagi").api_key == SECRET and config.key_problems == ()
    assert any(str(path) in str(w) for w in config.warnings)


def test_config_directory_writable_by_others_warns(server, agent_dir, write_config, capsys):
    """A directory others can write (they could replace the file) is warned about too."""
    from pi_hostspec.cli import main

    write_config(KAGI_SEARCH.config(server))
    agent_dir.chmod(0o777)
    try:
        main(["config"])  # 1: the key is also withheld from the baseUrl (tested below)
    finally:
        agent_dir.chmod(0o755)
    assert f"Warning: {agent_dir} is writable by other users" in capsys.readouterr().out


def planted(server) -> dict:
    """A Kagi entry with a baseUrl (the fault server) and no apiKey: the key comes from the env."""
    return {
        "providers": [
            {"name": "kagi", "type": "kagi", "options": {"baseUrl": server.url("/api/v0")}}
        ]
    }


def test_env_key_is_not_sent_to_a_planted_base_url(server, tools, write_config, monkeypatch):
    """A writable config's baseUrl without apiKey never receives KAGI_API_KEY; the error says why."""
    monkeypatch.setenv("KAGI_API_KEY", SECRET)
    server.script(json_reply(KAGI_OK))
    write_config(planted(server), mode=0o666)
    outcome = tools.call("web_search", {"queries": ["x"]})
    assert outcome.result.is_error, outcome.text
    assert "KAGI_API_KEY is not sent to baseUrl" in outcome.text
    assert not any(SECRET in str(r["headers"]) + r["path"] for r in server.requests)
    assert_no_secret(outcome)


def test_env_key_sent_to_a_base_url_is_said_in_the_report(server, write_config, monkeypatch):
    """With a private config the env key goes to its baseUrl, and `pi-web config` says so."""
    monkeypatch.setenv("KAGI_API_KEY", SECRET)
    write_config(planted(server))
    report, ok = config_report()
    assert ok
    assert f"KAGI_API_KEY from the environment is sent to baseUrl {server.url('/api/v0')}" in report
