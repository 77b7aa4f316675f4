"""Install hints that match how this distribution was installed.

``pip install 'pi-web-tools[mcp]'`` is right for an install from a package index only; from a
checkout or a git URL it would fetch something else (or nothing). The distribution's PEP 610
``direct_url.json`` says where it came from, and ``INSTALLER`` which tool put it there, so the
hint repeats the same source with the extra added. Read only when a hint is shown.
"""

from __future__ import annotations

import functools
import json
import shlex
from typing import Any
from urllib.parse import unquote, urlsplit

__all__ = ["DISTRIBUTION", "install_command", "requirement"]

#: The distribution that ships this package (and the plugin); hints name it.
DISTRIBUTION = "pi-web-tools"


@functools.cache
def _origin() -> tuple[dict | None, str]:
    """(parsed direct_url.json or None, installer name) of the installed distribution."""
    try:
        from importlib.metadata import distributions

        # The installed copy, not a build's leftover egg-info that the current directory
        # may put first on sys.path: only an installer writes INSTALLER.
        found = [d for d in distributions(name=DISTRIBUTION) if d.read_text("INSTALLER")]
    except ImportError:
        found = []
    if not found:
        return None, "pip"
    dist = found[0]
    installer = (dist.read_text("INSTALLER") or "pip").strip() or "pip"
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "null")
    except ValueError:
        direct = None
    return (direct if isinstance(direct, dict) else None), installer


def requirement(extra: str, direct: Any = ...) -> list[str]:
    """The ``pip install`` arguments that reinstall this distribution's source with *extra*:
    ``['pi-web-tools[mcp]']`` from an index, ``['-e', '/checkout[mcp]']`` from an editable
    checkout, ``['pi-web-tools[mcp] @ git+https://…@<commit>']`` from a git URL. *direct* is
    the parsed ``direct_url.json`` (None: installed from an index); by default it is read."""
    if direct is ...:
        direct = _origin()[0]
    name = f"{DISTRIBUTION}[{extra}]"
    url = direct.get("url") if isinstance(direct, dict) else None
    if not isinstance(url, str) or not url:
        return [name]
    vcs = direct.get("vcs_info")
    if isinstance(vcs, dict):
        revision = vcs.get("commit_id") or vcs.get("requested_revision")
        suffix = f"@{revision}" if revision else ""
        return [f"{name} @ {vcs.get('vcs', 'git')}+{url}{suffix}"]
    dir_info = direct.get("dir_info")
    if isinstance(dir_info, dict) and url.startswith("file:"):
        path = unquote(urlsplit(url).path)
        return ["-e", f"{path}[{extra}]"] if dir_info.get("editable") else [f"{path}[{extra}]"]
    return [f"{name} @ {url}"]


def _environment(prefix: str) -> str:
    """Which tool manages the environment at *prefix*: ``pipx``, ``uv-tool`` (``uv tool
    install``), ``uvx`` (uv's throw-away environments) or ``venv``."""
    import os

    if os.path.exists(os.path.join(prefix, "pipx_metadata.json")):
        return "pipx"
    if os.path.exists(os.path.join(prefix, "uv-receipt.toml")):
        return "uv-tool"
    if f"{os.sep}archive-v" in prefix:
        return "uvx"
    return "venv"


#: A module of each extra: the extra is installed when it can be found.
_EXTRA_MODULES = {
    "mcp": "mcp",
    "browser": "playwright",
    "llm": "llm",
    "keyless": "ddgs",
    "team": "redis",
    "socks": "socks",
}


def _installed_extras() -> list[str]:
    """The extras whose packages this environment has, in a fixed order."""
    import importlib.util

    found = []
    for name, module in _EXTRA_MODULES.items():
        try:
            if importlib.util.find_spec(module) is not None:
                found.append(name)
        except (ImportError, ValueError):
            continue
    return found


def install_command(extra: str) -> str:
    """A shell command that adds *extra* to this install, quoted for a POSIX shell:
    ``pip install 'pi-web-tools[mcp]'``, ``uv pip install …`` when uv installed it,
    ``pipx install --force …`` / ``uv tool install --force …`` for their environments, and
    for uvx's throw-away ones the ``uvx --from '…[mcp,browser]' pi-web mcp`` to run instead
    (every extra it has, plus *extra*)."""
    import os
    import sys

    direct, installer = _origin()
    environment = _environment(sys.prefix)
    if environment == "uvx":
        # uvx builds a new environment for each --from and changes none: the hint is the
        # command to run instead, with the extras this one has plus the new one, and the
        # same subcommand (what an MCP client starts: pi-web mcp).
        extras = [*(name for name in _installed_extras() if name != extra), extra]
        spec = requirement(",".join(extras), direct)
        here = os.path.basename(sys.argv[0]) if sys.argv else ""
        words = sys.argv[1:] if here in ("pi-web", "pi-web-tools") else ["mcp"]
        command = shlex.join(["uvx", "--from", spec[-1], "pi-web", *(words or ["mcp"])])
        return f"{command} (in place of the command that runs now: uvx changes no environment)"
    spec = requirement(extra, direct)
    tool = {
        "pipx": "pipx install --force",
        "uv-tool": "uv tool install --force",
    }.get(environment) or _venv_installer(installer)
    return " ".join([tool, *(shlex.quote(arg) for arg in spec)])


def _venv_installer(installer: str) -> str:
    """The install command that reaches this environment from any shell: a bare ``pip`` (or
    ``uv pip``) only when it would install here (this environment is the active one), else
    one naming this interpreter, so a hint printed by a server an MCP client started from a
    virtualenv it never activated does not install into another Python."""
    import os
    import sys

    python = shlex.quote(sys.executable)
    if installer == "uv":
        active = os.environ.get("VIRTUAL_ENV") or ""
        here = active != "" and os.path.realpath(active) == os.path.realpath(sys.prefix)
        return "uv pip install" if here else f"uv pip install --python {python}"
    return "pip install" if _pip_installs_here() else f"{python} -m pip install"


def _pip_installs_here() -> bool:
    """Whether the ``pip`` found on the PATH is this environment's."""
    import os
    import shutil
    import sys

    found = shutil.which("pip")
    if not found:
        return False
    return os.path.dirname(os.path.realpath(found)) == os.path.realpath(
        os.path.dirname(sys.executable)
    )
