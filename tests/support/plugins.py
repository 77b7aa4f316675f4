"""Installed-looking plugin distributions for tests: a folder put on ``PYTHONPATH`` holding a
module and a ``*.dist-info`` whose entry point names it, as pip would leave them; and pi-web run
with that folder on its path."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

from .hosts import PI_WEB

__all__ = ["declare", "pi_web_with", "plugin_module"]


def declare(root: Path, dist: str, group: str, name: str, module: str) -> None:
    """An installed-looking distribution *dist* (``project-version``) in *root* whose entry
    point *name* of *group* is *module*."""
    info = root / f"{dist}.dist-info"
    info.mkdir()
    project, version = dist.rsplit("-", 1)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project.replace('_', '-')}\nVersion: {version}\n"
    )
    (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {module}\n")


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
