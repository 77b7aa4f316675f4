"""`pi-web mcp` over stdio when the client goes away (issue 28, Low): a client that closes
both pipes with requests still in flight ends the server quietly (exit 0, nothing on stderr:
no traceback, no "coroutine 'Queue.put' was never awaited"), however often it happens."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.hosts import MCP_INITIALIZE

pytestmark = pytest.mark.slow

PI_WEB = str(Path(sys.executable).parent / "pi-web")


def _session(agent_dir: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [PI_WEB, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # Warnings printed as Python prints them by default, whatever the test runner sets.
        env={**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir), "PYTHONWARNINGS": "default"},
    )
    proc.stdin.write((json.dumps(MCP_INITIALIZE) + "\n").encode())
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    return proc


@pytest.mark.parametrize("attempt", range(5))
def test_a_client_that_hangs_up_mid_session_leaves_nothing_on_stderr(attempt, agent_dir):
    proc = _session(agent_dir)
    burst = [{"jsonrpc": "2.0", "method": "notifications/initialized"}] + [
        {"jsonrpc": "2.0", "id": 10 + i, "method": "tools/list"} for i in range(50)
    ]
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in burst).encode())
    proc.stdin.flush()
    proc.stdout.close()  # the client stops reading, then hangs up
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert err == "", err


def test_a_client_that_closes_its_input_ends_the_session_quietly(agent_dir):
    proc = _session(agent_dir)
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    assert proc.stdout.read() == b"" and proc.stderr.read() == b""
    proc.stdout.close()
    proc.stderr.close()
