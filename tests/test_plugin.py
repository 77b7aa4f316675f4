"""The plugin entry point: three tools, cheap to import, renderers wired."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest
from pi_hostspec import Host, PlainTheme

from tests.support import ROOT


def test_registers_three_tools(host: Host):
    """web_search, web_fetch and summarize are registered with labels and schemas."""
    assert sorted(host.tools) == ["summarize", "web_fetch", "web_search"]
    for tool in host.tools.values():
        assert tool.label and tool.parameters["type"] == "object"
        assert tool.parameters["additionalProperties"] is False


def test_plugin_import_is_lazy():
    """Importing the plugin and registering its tools loads no requests, cattrs, extraction or
    ranking (bm25s, numpy, PyStemmer), and no block model."""
    code = (
        "import sys, json\n"
        "import pi_web_tools.plugin as p\n"
        "tools = []\n"
        "p.register_tools(register=tools.append)\n"
        "heavy = [m for m in ('requests', 'cattrs', 'trafilatura', 'lxml', 'llm', 'mcp', 'urllib3', 'ddgs', 'primp', 'bm25s', 'numpy', 'Stemmer', 'pi_web_tools.pages.block_model', 'pi_web_tools.pages.blocks') if m in sys.modules]\n"
        "print(json.dumps({'tools': len(tools), 'heavy': heavy}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == {"tools": 3, "heavy": []}


def test_hooks_render_through_the_host(host: Host):
    """The host's render calls reach the plugin's renderers."""
    assert (
        host.render_call("web_fetch", {"urls": ["https://a/", "https://b/"]}, PlainTheme())
        == "web_fetch 2 URLs"
    )


@pytest.mark.parametrize(
    ("face", "home"),
    [("plugin/api/__init__.py", "HOME"), ("hostspec/__init__.py", "_HOME")],
)
def test_each_lazy_face_shows_type_checkers_exactly_its_names(face, home):
    """A face's ``if TYPE_CHECKING:`` imports are its lazy map, name for name and module for
    module, and its literal ``__all__`` lists the same names: a type checker sees real types
    where a run imports nothing until first use."""
    tree = ast.parse((ROOT / face).read_text(encoding="utf-8"))
    lazy, exported, checked = {}, [], {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id == home:
                lazy = ast.literal_eval(node.value)
            elif node.targets[0].id == "__all__":
                exported = ast.literal_eval(node.value)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for child in node.body:
                assert isinstance(child, ast.ImportFrom) and child.level == 1
                checked.update({alias.name: child.module for alias in child.names})
    assert checked == lazy
    assert sorted(exported) == sorted(lazy)


def test_the_package_face_shows_the_api_names_to_type_checkers():
    """``pi_web_tools`` re-exports the API face under TYPE_CHECKING too (a star import of a
    module whose ``__all__`` is a literal)."""
    text = (ROOT / "plugin" / "__init__.py").read_text(encoding="utf-8")
    assert "if TYPE_CHECKING:" in text and "from .api import *" in text
