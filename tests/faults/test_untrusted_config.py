"""A config that others can write chooses nothing we run (issue 28, item 3), and what pi-web
config prints of a config never shows a secret in it (a password inside a baseUrl, Low)."""

from __future__ import annotations

import json
import subprocess

import attrs
import pytest

from tests.support import SECRET, serve
from tests.support.documents import APP_SHELL
from tests.support.hosts import PI_WEB


def _pi_web(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PI_WEB, *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("file_mode", "folder_mode"),
    [(0o666, 0o700), (0o600, 0o777)],
    ids=["file-writable-by-others", "folder-writable-by-others"],
)
def test_an_untrusted_config_never_chooses_the_program_we_run(
    tmp_path, agent_dir, write_config, httpserver, file_mode, folder_mode
):
    """executablePath in a file others can change (or in a folder others can write) is not
    used: the planted program never runs, the call says why, and so does pi-web config."""
    ran = tmp_path / "planted-program-ran"
    planted = tmp_path / "chrome"
    planted.write_text(f"#!/bin/sh\ntouch {ran}\n")
    planted.chmod(0o755)
    url = serve(httpserver, {"/app": (200, "text/html", APP_SHELL)}) + "/app"
    write_config(
        {
            "providers": [
                {
                    "name": "chrome",
                    "type": "browser",
                    "options": {"executablePath": str(planted), "allowPrivateNetwork": True},
                }
            ]
        },
        mode=file_mode,
    )
    agent_dir.chmod(folder_mode)
    try:
        fetched = _pi_web("fetch", url, "--provider", "chrome")
        report = _pi_web("config")
    finally:
        agent_dir.chmod(0o700)
    assert not ran.exists(), "the program an untrusted config named was run"
    said = (
        f"executablePath {planted} is not used: the config can be changed by other users; "
        "fix its permissions"
    )
    assert fetched.returncode == 1 and said in fetched.stdout, fetched.stdout + fetched.stderr
    assert f"Problem: providers (chrome): {said}" in report.stdout, report.stdout
    assert "Traceback" not in fetched.stderr + report.stderr


def test_a_config_linked_into_a_folder_others_can_write_chooses_nothing_we_run(
    tmp_path, agent_dir, httpserver
):
    """web-search.json as a symbolic link (a dotfiles manager's) to a 0600 file in a folder
    others can write: they can replace the file, so it is as untrusted as a 0666 one. Before,
    only the link's own folder was looked at, and the planted program ran."""
    ran = tmp_path / "planted-program-ran"
    planted = tmp_path / "chrome"
    planted.write_text(f"#!/bin/sh\ntouch {ran}\n")
    planted.chmod(0o755)
    url = serve(httpserver, {"/app": (200, "text/html", APP_SHELL)}) + "/app"
    shared = tmp_path / "shared"
    shared.mkdir()
    real = shared / "web-search.json"
    real.write_text(
        json.dumps(
            {
                "providers": [
                    {
                        "name": "chrome",
                        "type": "browser",
                        "options": {"executablePath": str(planted), "allowPrivateNetwork": True},
                    }
                ]
            }
        )
    )
    real.chmod(0o600)
    (agent_dir / "web-search.json").symlink_to(real)
    shared.chmod(0o777)
    try:
        fetched = _pi_web("fetch", url, "--provider", "chrome")
        report = _pi_web("config")
    finally:
        shared.chmod(0o700)
    assert not ran.exists(), "the program a replaceable config named was run"
    said = f"executablePath {planted} is not used: the config can be changed by other users"
    assert fetched.returncode == 1 and said in fetched.stdout, fetched.stdout + fetched.stderr
    assert f"Problem: providers (chrome): {said}" in report.stdout, report.stdout
    assert f"{shared} is writable by other users (mode 777)" in report.stdout, report.stdout


def test_a_config_in_a_folder_another_user_owns_chooses_nothing_we_run(tmp_path, httpserver):
    """A 0600 file of this user's in a 0755 folder another user owns: that user can replace the
    file (with a link to any file of this user's), so it is untrusted. Before, only the folder's
    mode was looked at, and the planted program ran."""
    import os

    ran = tmp_path / "planted-program-ran"
    planted = tmp_path / "chrome"
    planted.write_text(f"#!/bin/sh\ntouch {ran}\n")
    planted.chmod(0o755)
    url = serve(httpserver, {"/app": (200, "text/html", APP_SHELL)}) + "/app"
    folder = tmp_path / "theirs"
    folder.mkdir()
    config = folder / "web-search.json"
    options = {"executablePath": str(planted), "allowPrivateNetwork": True}
    config.write_text(
        json.dumps({"providers": [{"name": "chrome", "type": "browser", "options": options}]})
    )
    config.chmod(0o600)
    folder.chmod(0o755)
    try:
        os.chown(folder, 65534, -1)
    except PermissionError:
        pytest.skip("cannot give a folder to another user here")
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(folder)}
    fetched = subprocess.run(
        [PI_WEB, "fetch", url, "--provider", "chrome"],
        capture_output=True, text=True, timeout=120, env=env,
    )
    report = subprocess.run([PI_WEB, "config"], capture_output=True, text=True, env=env)
    assert not ran.exists(), "the program a replaceable config named was run"
    said = f"executablePath {planted} is not used: the config can be changed by other users"
    assert said in fetched.stdout, fetched.stdout + fetched.stderr
    assert f"{folder} is owned by another user (uid 65534)" in report.stdout, report.stdout


def test_pi_web_config_never_prints_a_password_inside_a_base_url(write_config):
    """A baseUrl with user:password@ is shown with the password as ***; the password is a
    secret from then on (errors that quote the URL redact it too)."""
    write_config(
        {
            "providers": [
                {
                    "name": "kagi",
                    "type": "kagi",
                    "apiKey": SECRET,
                    "options": {"baseUrl": "https://alice:hunter2-gateway-pw@gw.example/api"},
                }
            ]
        }
    )
    report = _pi_web("config")
    assert report.returncode == 0, report.stdout + report.stderr
    assert "hunter2-gateway-pw" not in report.stdout + report.stderr
    assert 'baseUrl="https://alice:***@gw.example/api"' in report.stdout


@pytest.mark.parametrize(
    ("option", "value"),
    [("timeoutSeconds", 1e308), ("timeoutSeconds", 0.0001), ("maxBytes", 10**18)],
)
def test_every_numeric_option_has_a_sane_range(write_config, option, value):
    """timeoutSeconds: 1e308 (or a timeout too short to connect) is refused with the range, as
    every other numeric option is, not accepted."""
    write_config({"providers": [{"name": "web", "type": "direct", "options": {option: value}}]})
    report = _pi_web("config")
    assert report.returncode == 1, report.stdout
    assert f"providers[0] (web).options.{option}: must be between" in report.stdout


def test_the_built_in_types_declare_a_range_for_every_numeric_option():
    """The option language's rule, checked over every built-in type: an int or float option has
    a validator that bounds it above (between or one_of), so no value is absurd."""
    from pi_web_tools.runtime.registry import provider_types

    unbounded = [
        f"{name}.{problem}"
        for name, kind in provider_types().items()
        for problem in _unbounded(kind.options_class)
    ]
    assert unbounded == []


def _unbounded(options_class: type) -> list[str]:
    import typing

    import attrs
    from pi_web_tools.api.options import option_key, options_fields

    attrs.resolve_types(options_class)
    found = []
    for field in options_fields(options_class):
        kinds = set(typing.get_args(field.type)) or {field.type}
        if kinds & {int, float} and not getattr(field.validator, "bounded", False):
            found.append(option_key(field))
    return found


@pytest.mark.parametrize(
    ("file_mode", "folder_mode"),
    [(0o666, 0o700), (0o600, 0o777)],
    ids=["file-writable-by-others", "folder-writable-by-others"],
)
def test_an_untrusted_config_never_allows_private_networks(
    host, agent_dir, write_config, httpserver, file_mode, folder_mode
):
    """allowPrivateNetwork in a file others can change widens nothing: a SearXNG baseUrl and a
    page on this machine are refused as with no allowance (no request is made), each refusal
    says why the allowance is not used, and so does pi-web config."""
    from pi_web_tools.runtime.config import clear_cache

    base = serve(httpserver, {"/page": (200, "text/plain", "private page text")})
    config = write_config(
        {
            "providers": [
                {
                    "name": "searx",
                    "type": "searxng",
                    "options": {"baseUrl": base, "allowPrivateNetwork": True},
                },
                {"name": "web", "type": "direct", "options": {"allowPrivateNetwork": True}},
            ]
        },
        mode=file_mode,
    )
    agent_dir.chmod(folder_mode)
    clear_cache()
    try:
        searched = host.call("web_search", {"queries": ["x"]})
        fetched = host.call("web_fetch", {"urls": [base + "/page"]})
        report = _pi_web("config")
    finally:
        agent_dir.chmod(0o700)
    assert httpserver.log == [], "an untrusted allowPrivateNetwork reached this machine"
    said = "allowPrivateNetwork is not used: the config can be changed by other users"
    assert searched.is_error and "127.0.0.1 is a loopback address" in searched.text
    assert searched.text.endswith(
        f"{said}; fix its permissions (chmod go-w {config}) or remove allowPrivateNetwork"
    ), searched.text
    assert "private page text" not in fetched.text and said in fetched.text, fetched.text
    assert f"providers (searx): {said}" in report.stdout, report.stdout
    assert f"providers (web): {said}" in report.stdout, report.stdout


def test_every_option_that_allows_private_networks_is_withheld_from_an_untrusted_config():
    """The rule over every built-in type: an allowPrivateNetwork option is declared as widening
    what the process reaches, so a config others can change never sets it."""
    from pi_web_tools.api.options import option_key, options_fields, reaches_further
    from pi_web_tools.runtime.registry import provider_types

    undeclared = [
        name
        for name, kind in provider_types().items()
        if attrs.has(kind.options_class)
        for field in options_fields(kind.options_class)
        if option_key(field) == "allowPrivateNetwork" and not reaches_further(field)
    ]
    assert undeclared == []


@pytest.mark.parametrize("file_mode", [0o600, 0o666], ids=["private", "writable-by-others"])
def test_the_shared_files_provider_options_reach_the_built_in_fetcher_when_trusted(
    host, write_config, httpserver, file_mode
):
    """In the shared file (no providers list), the refusal's own advice, "providerOptions":
    {"direct": {"allowPrivateNetwork": true}}, lets the built-in fetcher read a page on this
    machine; from a file others can change it does not."""
    from pi_web_tools.runtime.config import clear_cache

    url = serve(httpserver, {"/page": (200, "text/plain", "private page text")}) + "/page"
    write_config(
        {"kagiApiKey": SECRET, "providerOptions": {"direct": {"allowPrivateNetwork": True}}},
        mode=file_mode,
    )
    clear_cache()
    fetched = host.call("web_fetch", {"urls": [url]})
    if file_mode == 0o600:
        assert not fetched.is_error and "private page text" in fetched.text, fetched.text
    else:
        assert "private page text" not in fetched.text and httpserver.log == []
        assert "allowPrivateNetwork is not used: the config can be changed by other users" in (
            fetched.text
        )
        said = "providerOptions.direct: allowPrivateNetwork is not used"
        assert any(said in warning for warning in fetched.details["warnings"])
