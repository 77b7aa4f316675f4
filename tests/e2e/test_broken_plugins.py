"""A provider plugin that cannot be imported, whose hook carries the wrong marker, whose hook
raises, or that registers a type name already taken, is skipped and named; every other
provider keeps working (through the installed pi-web)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support import SECRET, serve
from tests.support.fake_apis import FakeKagi
from tests.support.hosts import declare_distribution

BIN = Path(sys.executable).parent


@pytest.fixture
def plugins(tmp_path) -> Path:
    """A folder on PYTHONPATH holding installed-looking distributions: `broken-search` (its
    module imports a package that is not there), `wrong-marker` (its hook is marked with
    pi_hostspec's hookimpl), `raising-hook` (its hook raises: a ProviderType field that does not
    exist) and `kagi-clone` (it registers a second type named kagi)."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "broken_search.py").write_text("import not_a_real_package_xyz\n")
    (root / "wrong_marker.py").write_text(
        textwrap.dedent(
            """
            from pi_hostspec import hookimpl
            from pi_web_tools import ProviderType, Search

            @hookimpl
            def register_provider_types(register):
                register(ProviderType(name="wrong", factory=object, search=Search()))
            """
        )
    )
    (root / "raising_hook.py").write_text(
        textwrap.dedent(
            """
            from pi_web_tools import ProviderType, Search, hookimpl

            @hookimpl
            def register_provider_types(register):
                register(ProviderType(name="raising", factory=object, search=Search(), colour=1))
            """
        )
    )
    (root / "kagi_clone.py").write_text(
        textwrap.dedent(
            """
            from pi_web_tools import ProviderType, Search, hookimpl

            @hookimpl
            def register_provider_types(register):
                register(ProviderType(name="kagi", factory=object, search=Search()))
            """
        )
    )
    for dist, module, name in (
        ("broken_search-1.2.0", "broken_search", "broken"),
        ("wrong_marker-0.1.0", "wrong_marker", "wrong"),
        ("raising_hook-0.3.0", "raising_hook", "raising"),
        ("kagi_clone-2.0.0", "kagi_clone", "clone"),
    ):
        declare_distribution(root, dist, "pi_web_tools.providers", name, module)
    return root


def _pi_web(plugins: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(plugins)}
    return subprocess.run(
        [str(BIN / "pi-web"), *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_a_broken_plugin_leaves_the_other_providers_working(plugins, httpserver, write_config):
    """web_fetch through the built-in direct fetcher, and web_search and summarize through the
    real kagi type (not the clone), all answer as if the broken plugins were not there."""
    url = serve(httpserver, {"/a.txt": (200, "text/plain", "still fetched")}) + "/a.txt"
    with FakeKagi(SECRET) as kagi:
        write_config(
            {
                "defaultProvider": "kagi",
                "providers": [
                    {
                        "name": "kagi",
                        "type": "kagi",
                        "apiKey": SECRET,
                        "options": {"baseUrl": kagi.base_url, "apiVersion": "v1"},
                    },
                    {"name": "local", "type": "direct", "options": {"allowPrivateNetwork": True}},
                ],
            }
        )
        fetched = _pi_web(plugins, "fetch", url)
        found = _pi_web(plugins, "search", "rust", "async")
        summary = _pi_web(plugins, "summarize", "https://example.com/a")
    for proc in (fetched, found, summary):
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr
    assert "still fetched" in fetched.stdout
    assert "1. rust async" in found.stdout
    assert "A summary of https://example.com/a" in summary.stdout


def test_pi_web_config_names_each_skipped_plugin_and_how_to_remove_it(plugins, write_config):
    write_config({"providers": [{"name": "local", "type": "direct"}]})
    proc = _pi_web(plugins, "config")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (
        "Warning: provider plugin 'broken' (broken-search 1.2.0) was skipped: "
        "ModuleNotFoundError: No module named 'not_a_real_package_xyz'; fix it, or remove it: "
        "pip uninstall broken-search" in proc.stdout
    )
    assert (
        "Warning: provider plugin 'wrong' (wrong-marker 0.1.0) was skipped: its "
        "register_provider_types is marked with pi's hookimpl, not with pi_web_tools.hookimpl"
        in proc.stdout
    )
    assert (
        "Warning: provider plugin 'raising' (raising-hook 0.3.0) was skipped: its "
        "register_provider_types failed: TypeError: ProviderType.__init__() got an unexpected "
        "keyword argument 'colour'; fix it, or remove it: pip uninstall raising-hook" in proc.stdout
    )
    assert (
        "Warning: provider plugin 'clone' (kagi-clone 2.0.0) was skipped: provider type 'kagi' "
        "is registered by kagi and clone; fix it, or remove it: pip uninstall kagi-clone"
        in proc.stdout
    )
    assert "Status: valid" in proc.stdout


def test_a_call_that_needs_the_broken_type_names_the_plugin(plugins, write_config):
    write_config({"providers": [{"name": "mine", "type": "broken", "apiKey": "k" * 20}]})
    proc = _pi_web(plugins, "call", "web_search", json.dumps({"queries": ["x"]}), "--json")
    assert proc.returncode == 1
    text = json.loads(proc.stdout)["content"][0]["text"]
    # The entry of the broken type is skipped (issue 28, item 5), so nothing can search; the
    # call names the plugin and how to fix or remove it.
    assert "has no provider that can search" in text
    assert "provider plugin 'broken' (broken-search 1.2.0) was skipped" in text
    assert "pip uninstall broken-search" in text


def test_a_call_that_needs_a_type_whose_hook_has_the_wrong_marker_names_the_plugin(
    plugins, write_config
):
    """A hook marked with pi_hostspec's hookimpl registers nothing; the call that needed its
    type says which plugin was skipped and why, not only that the type is unknown."""
    write_config({"providers": [{"name": "mine", "type": "wrong", "apiKey": "k" * 20}]})
    proc = _pi_web(plugins, "call", "web_search", json.dumps({"queries": ["x"]}), "--json")
    assert proc.returncode == 1
    text = json.loads(proc.stdout)["content"][0]["text"]
    assert "has no provider that can search" in text
    assert (
        "provider plugin 'wrong' (wrong-marker 0.1.0) was skipped: its register_provider_types "
        "is marked with pi's hookimpl, not with pi_web_tools.hookimpl" in text
    )
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.fixture
def host_plugins(plugins) -> Path:
    """*plugins* plus two broken host plugins (``pi.plugins``): `bad-host`, whose module imports
    a package that is not there, and `bad-hook`, whose hook implementation pluggy refuses (an
    argument no hook specification has)."""
    (plugins / "bad_host.py").write_text("import no_such_module_abc\n")
    (plugins / "bad_hook.py").write_text(
        textwrap.dedent(
            """
            from pi_hostspec import hookimpl

            @hookimpl
            def register_tools(register, colour):
                pass
            """
        )
    )
    declare_distribution(plugins, "bad_host-0.4.0", "pi.plugins", "badhost", "bad_host")
    declare_distribution(plugins, "bad_hook-0.5.0", "pi.plugins", "badhook", "bad_hook")
    return plugins


def test_a_broken_host_plugin_is_named_on_stderr_and_the_tools_keep_working(
    host_plugins, httpserver, write_config
):
    url = serve(httpserver, {"/a.txt": (200, "text/plain", "fetched anyway")}) + "/a.txt"
    write_config(
        {
            "providers": [
                {"name": "local", "type": "direct", "options": {"allowPrivateNetwork": True}}
            ]
        }
    )
    listed = _pi_web(host_plugins, "tools")
    fetched = _pi_web(host_plugins, "fetch", url)
    for proc in (listed, fetched):
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr
        assert (
            "warning: plugin 'badhost' (bad-host 0.4.0) was skipped: ModuleNotFoundError: No "
            "module named 'no_such_module_abc'; fix it, or remove it: pip uninstall bad-host"
            in proc.stderr
        )
        assert "plugin 'badhost'" not in proc.stdout
        assert "plugin 'badhook' (bad-hook 0.5.0) was skipped: PluginValidationError" in proc.stderr
    assert "web_fetch" in listed.stdout and "web_search" in listed.stdout
    assert "fetched anyway" in fetched.stdout
