"""server.json (the MCP registry's format) agrees with the package it describes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parent.parent


def test_server_json_matches_the_package():
    """Name pattern and description length as the registry schema demands; versions, the
    command, its extra and the environment variables are the package's real ones."""
    server = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert server["$schema"].startswith("https://static.modelcontextprotocol.io/schemas/")
    assert re.fullmatch(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+", server["name"])
    assert 1 <= len(server["description"]) <= 100
    assert server["version"] == project["version"]
    (package,) = server["packages"]
    assert package["registryType"] == "pypi" and package["identifier"] == project["name"]
    assert package["version"] == project["version"]
    assert package["identifier"] in project["scripts"]  # uvx runs the identifier as a command
    assert (
        package["runtimeArguments"][0]["value"] == f"{project['name']}[mcp]=={project['version']}"
    )
    assert "mcp" in project["optional-dependencies"]
    assert [arg["value"] for arg in package["packageArguments"]] == ["mcp"]
    assert package["transport"] == {"type": "stdio"}
    names = {variable["name"] for variable in package["environmentVariables"]}
    assert names == {"KAGI_API_KEY", "PI_CODING_AGENT_DIR"}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"mcp-name: {server['name']}" in readme  # PyPI ownership marker for the registry
