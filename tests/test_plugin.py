"""The plugin entry point: three tools, cheap to import, renderers wired."""

from __future__ import annotations

import json
import subprocess
import sys

from pi_hostspec import Host, PlainTheme


def test_registers_three_tools(host: Host):
    """web_search, web_fetch and summarize are registered with labels and schemas."""
    assert sorted(host.tools) == ["summarize", "web_fetch", "web_search"]
    for tool in host.tools.values():
        assert tool.label and tool.parameters["type"] == "object"
        assert tool.parameters["additionalProperties"] is False


def test_plugin_import_is_lazy():
    """Importing the plugin and registering its tools loads no requests, cattrs or extraction."""
    code = (
        "import sys, json\n"
        "import pi_web_tools.plugin as p\n"
        "tools = []\n"
        "p.register_tools(register=tools.append)\n"
        "heavy = [m for m in ('requests', 'cattrs', 'trafilatura', 'lxml', 'llm', 'mcp', 'urllib3', 'ddgs', 'primp') if m in sys.modules]\n"
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
