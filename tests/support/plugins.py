"""Installed-looking plugin distributions for tests: a folder put on ``PYTHONPATH`` holding a
module and a ``*.dist-info`` whose entry point names it, as pip would leave them; and pi-web run
with that folder on its path."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

from .hosts import PI_WEB, declare_distribution

__all__ = ["declare", "pi_web_with", "plugin_module"]

#: An installed-looking distribution (see :func:`.hosts.declare_distribution`).
declare = declare_distribution


def plugin_module(root: Path, module: str, source: str) -> None:
    """Write *module*.py (dedented *source*) into *root*."""
    (root / f"{module}.py").write_text(textwrap.dedent(source))


def pi_web_with(
    plugins: Path | None, *args: str, env: dict | None = None, timeout: float = 60
) -> subprocess.CompletedProcess:
    """The installed `pi-web` with *args*, the *plugins* folder (if any) on its path."""
    path = {"PYTHONPATH": str(plugins)} if plugins is not None else {}
    full = {**os.environ, "NO_COLOR": "1", **path, **(env or {})}
    return subprocess.run(
        [PI_WEB, *args], capture_output=True, text=True, env=full, timeout=timeout
    )
