"""A `pi.plugins` plugin that misbehaves while it loads or runs (issue 28, Lows): one that
prints does not corrupt `pi-web call --json`, and one whose import hangs is skipped after a
bound, named once, while every host (pi-web, MCP over stdio, llm) starts and serves the
other plugins' tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.support.hosts import MCP_INITIALIZE, declare_distribution

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
#: The import bound the tests set (PI_PLUGIN_IMPORT_TIMEOUT), and the slack they allow.
BOUND = 2.0
SLACK = 8.0


def _site(tmp_path: Path, module: str, source: str, entry: str) -> Path:
    root = tmp_path / "site"
    root.mkdir()
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    declare_distribution(root, f"{module}-1.0.0", "pi.plugins", entry, module)
    return root


def _env(site: Path, agent_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(site),
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "PI_PLUGIN_IMPORT_TIMEOUT": str(BOUND),
        "NO_COLOR": "1",
    }


def test_a_plugin_that_prints_never_reaches_call_json_stdout(tmp_path, agent_dir):
    """A plugin printing at import, in register_tools and in execute (print and raw writes to
    file descriptor 1): `pi-web call --json` prints one JSON document on stdout, the noise
    goes to stderr."""
    site = _site(
        tmp_path,
        "loud_plugin",
        """
        import os
        print("noise at import")
        os.write(1, b"raw noise at import\\n")
        from pi_hostspec import Tool, ToolResult, hookimpl

        def _run(args, ctx):
            print("noise in execute")
            os.write(1, b"raw noise in execute\\n")
            return ToolResult(content="the answer")

        @hookimpl
        def register_tools(register):
            print("noise in register_tools")
            register(Tool(name="loud", label="Loud", description="Prints.",
                          parameters={"type": "object"}, execute=_run))
        """,
        "loud",
    )
    for tool, args in (("loud", "{}"), ("summarize", '{"url": "ftp://x.example/f"}')):
        proc = subprocess.run(
            [str(BIN / "pi-web"), "call", "--json", tool, args],
            capture_output=True,
            text=True,
            timeout=60,
            env=_env(site, agent_dir),
        )
        assert proc.stdout.count("\n") == 1, proc.stdout
        result = json.loads(proc.stdout)
        assert set(result) == {"content", "details", "isError"}
        assert "noise" not in proc.stdout
        for noise in ("noise at import", "raw noise at import", "noise in register_tools"):
            assert noise in proc.stderr
    assert "raw noise in execute" not in proc.stdout


HANGING = """
import threading
threading.Event().wait()  # an import that never ends (a network call, a lock, ...)
"""


def _hanging_site(tmp_path: Path) -> Path:
    return _site(tmp_path, "stuck_plugin", HANGING, "stuck")


def test_a_plugin_import_that_hangs_is_skipped_by_pi_web(tmp_path, agent_dir):
    """`pi-web tools` ends within the bound (plus start-up), lists our tools and names the
    stuck plugin once with what to do."""
    start = time.monotonic()
    proc = subprocess.run(
        [str(BIN / "pi-web"), "tools"],
        capture_output=True,
        text=True,
        timeout=BOUND + SLACK,
        env=_env(_hanging_site(tmp_path), agent_dir),
    )
    assert time.monotonic() - start < BOUND + SLACK
    assert proc.returncode == 0, proc.stderr
    assert "web_fetch" in proc.stdout
    assert proc.stderr.count("'stuck'") == 1, proc.stderr
    assert f"its import did not finish within {BOUND:g} s" in proc.stderr
    assert "pip uninstall stuck-plugin" in proc.stderr and "Traceback" not in proc.stderr


def test_a_plugin_import_that_hangs_does_not_hang_mcp_or_llm(tmp_path, agent_dir):
    """`pi-web mcp` (stdio) answers initialize and lists our tools; `llm tools list` shows
    them; both within the bound plus start-up."""
    env = _env(_hanging_site(tmp_path), agent_dir)
    start = time.monotonic()
    messages = [
        MCP_INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    proc = subprocess.run(
        [str(BIN / "pi-web"), "mcp"],
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        timeout=BOUND + SLACK,
        env=env,
    )
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert time.monotonic() - start < BOUND + SLACK
    assert {tool["name"] for tool in answers[1]["result"]["tools"]} >= {"web_fetch"}
    start = time.monotonic()
    listed = subprocess.run(
        [str(BIN / "llm"), "tools", "list"],
        capture_output=True,
        text=True,
        timeout=BOUND + SLACK,
        env=env,
    )
    assert time.monotonic() - start < BOUND + SLACK
    assert "web_fetch" in listed.stdout, listed.stdout + listed.stderr
    assert "'stuck'" in listed.stderr
