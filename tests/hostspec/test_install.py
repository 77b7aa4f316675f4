"""Install hints repeat the source this distribution was installed from (PEP 610)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from pi_hostspec import install


@pytest.mark.parametrize(
    ("direct", "expected"),
    [
        (None, ["pi-web-tools[mcp]"]),
        (
            {"url": "file:///home/me/pi%20web", "dir_info": {"editable": True}},
            ["-e", "/home/me/pi web[mcp]"],
        ),
        ({"url": "file:///src/pi-web", "dir_info": {}}, ["/src/pi-web[mcp]"]),
        (
            {
                "url": "https://github.com/o/pi-web-tools.git",
                "vcs_info": {"vcs": "git", "commit_id": "0123abc", "requested_revision": "main"},
            },
            ["pi-web-tools[mcp] @ git+https://github.com/o/pi-web-tools.git@0123abc"],
        ),
        (
            {"url": "https://example.com/pi_web_tools-0.1.0.tar.gz", "archive_info": {}},
            ["pi-web-tools[mcp] @ https://example.com/pi_web_tools-0.1.0.tar.gz"],
        ),
    ],
)
def test_requirement_repeats_the_install_source(direct, expected):
    """An index install names the distribution; a checkout its path (with -e when editable); a
    git URL the commit installed; an archive its URL."""
    assert install.requirement("mcp", direct) == expected


@pytest.mark.parametrize(
    ("origin", "expected"),
    [
        ((None, "pip"), "pip install 'pi-web-tools[extract]'"),
        ((None, "uv"), "uv pip install 'pi-web-tools[extract]'"),
        (
            ({"url": "file:///src/my checkout", "dir_info": {"editable": True}}, "pip"),
            "pip install -e '/src/my checkout[extract]'",
        ),
    ],
)
def test_install_command_is_shell_quoted_for_the_installer(monkeypatch, origin, expected):
    """The command uses the installer that installed us (uv or pip) and quotes for a shell."""
    monkeypatch.setattr(install, "_origin", lambda: origin)
    monkeypatch.setattr(install, "_environment", lambda prefix: "venv")
    _activate(monkeypatch)
    assert install.install_command("extract") == expected


@pytest.mark.parametrize(
    ("marker", "environment", "expected"),
    [
        (
            "pipx_metadata.json",
            "pipx",
            "pipx install --force 'pi-web-tools[mcp] @ git+https://g.example/r@c1'",
        ),
        (
            "uv-receipt.toml",
            "uv-tool",
            "uv tool install --force 'pi-web-tools[mcp] @ git+https://g.example/r@c1'",
        ),
        (None, "venv", "uv pip install 'pi-web-tools[mcp] @ git+https://g.example/r@c1'"),
    ],
)
def test_install_command_for_pipx_and_uv_tool_environments(
    tmp_path, monkeypatch, marker, environment, expected
):
    """pipx and `uv tool` environments are reinstalled with their own tool (pipx itself may use
    uv as its installer), with the same source and the extra."""
    if marker:
        (tmp_path / marker).write_text("")
    git = {"url": "https://g.example/r", "vcs_info": {"vcs": "git", "commit_id": "c1"}}
    monkeypatch.setattr(install, "_origin", lambda: (git, "uv"))
    monkeypatch.setattr("sys.prefix", str(tmp_path))
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path))
    assert install._environment(str(tmp_path)) == environment
    assert install.install_command("mcp") == expected


def test_install_command_in_a_uvx_environment(monkeypatch):
    """In uvx's throw-away environment (an MCP client runs `uvx --from 'pi-web-tools[mcp]'
    pi-web mcp`) the browser hint is the command to run instead: the extras it has plus
    browser, and the same subcommand; a bare `uvx --from '…[browser]' pi-web` exited 2 and
    changed nothing (issue 33, item 7)."""
    monkeypatch.setattr(install, "_origin", lambda: (None, "uv"))
    monkeypatch.setattr("sys.prefix", "/home/me/.cache/uv/archive-v0/AbC123")
    monkeypatch.setattr("sys.argv", ["/home/me/.cache/uv/archive-v0/AbC123/bin/pi-web", "mcp"])
    monkeypatch.setattr(install, "_installed_extras", lambda: ["mcp"])
    assert install.install_command("browser") == (
        "uvx --from 'pi-web-tools[mcp,browser]' pi-web mcp "
        "(in place of the command that runs now: uvx changes no environment)"
    )
    monkeypatch.setattr("sys.argv", ["/usr/bin/llm"])  # not pi-web: the MCP server it runs
    assert install.install_command("mcp").startswith("uvx --from 'pi-web-tools[mcp]' pi-web mcp ")


def test_this_install_is_found():
    """The running test suite's own install (pip, from this checkout) gives a path hint."""
    install._origin.cache_clear()
    direct, installer = install._origin()
    assert installer in ("pip", "uv")
    if direct is not None:  # installed from a checkout or URL, as the README says
        assert install.requirement("mcp")[-1].endswith("[mcp]")


def _venv(tmp_path: Path) -> Path:
    """A virtualenv's layout: bin/python and bin/pip."""
    (tmp_path / "v" / "bin").mkdir(parents=True)
    for name in ("python", "pip"):
        (tmp_path / "v" / "bin" / name).write_text("")
    return tmp_path / "v"


def _activate(monkeypatch) -> None:
    """This environment is the active one: its pip first on the PATH, VIRTUAL_ENV naming it."""
    monkeypatch.setattr(install, "_pip_installs_here", lambda: True)
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)


CHECKOUT = ({"url": "file:///src/pi-web", "dir_info": {"editable": True}}, "pip")


def test_a_hint_from_a_virtualenv_that_is_not_active_names_its_python(tmp_path, monkeypatch):
    """An MCP client runs /path/.venv/bin/pi-web without activating the virtualenv, and the
    pip on the user's PATH is another Python's: the hint names this interpreter, so it runs
    as printed (a bare `pip install` put the extra into the other Python; issue 33, item 7).
    With the virtualenv active, the bare `pip install` it always was."""
    venv = _venv(tmp_path)
    other = tmp_path / "usr" / "bin"
    other.mkdir(parents=True)
    (other / "pip").write_text("#!/bin/sh\n")
    (other / "pip").chmod(0o755)
    monkeypatch.setattr(install, "_origin", lambda: CHECKOUT)
    monkeypatch.setattr("sys.executable", str(venv / "bin" / "python"))
    monkeypatch.setattr("sys.prefix", str(venv))
    monkeypatch.setenv("PATH", str(other))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    python = shlex.quote(str(venv / "bin" / "python"))
    assert install.install_command("keyless") == (
        f"{python} -m pip install -e '/src/pi-web[keyless]'"
    )
    (venv / "bin" / "pip").chmod(0o755)
    monkeypatch.setenv("PATH", f"{venv / 'bin'}:{other}")
    assert install.install_command("keyless") == "pip install -e '/src/pi-web[keyless]'"


def test_a_uv_hint_names_the_environment_unless_it_is_the_active_one(tmp_path, monkeypatch):
    """`uv pip install` installs into the active virtualenv (or a .venv near the current
    folder): from anywhere else it names this interpreter with --python."""
    venv = _venv(tmp_path)
    monkeypatch.setattr(install, "_origin", lambda: (CHECKOUT[0], "uv"))
    monkeypatch.setattr("sys.executable", str(venv / "bin" / "python"))
    monkeypatch.setattr("sys.prefix", str(venv))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    python = shlex.quote(str(venv / "bin" / "python"))
    assert install.install_command("browser") == (
        f"uv pip install --python {python} -e '/src/pi-web[browser]'"
    )
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    assert install.install_command("browser") == "uv pip install -e '/src/pi-web[browser]'"
