"""`pi-web mcp --http --token-file PATH` with a path that is not a small regular file (issue 21,
Low): a FIFO hung start-up; a device or a huge file must not be read either."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from pi_hostspec import mcp_http
from pi_hostspec.mcp_http import HttpOptions, UsageError

PI_WEB = str(Path(sys.executable).parent / "pi-web")


def _read_within(path: str, seconds: float = 5.0):
    """read_tokens on *path* in a thread: (finished, error message or token)."""
    box: dict = {}

    def run():
        try:
            box["value"] = mcp_http.read_tokens(HttpOptions(token_file=path), {})
        except UsageError as exc:
            box["value"] = str(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    return not worker.is_alive(), box.get("value")


def _release(fifo: str) -> None:
    """Open the FIFO for writing once, so a reader blocked in open() returns (cleanup)."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return
    os.close(fd)


def test_a_fifo_token_file_is_refused_at_once(tmp_path):
    fifo = str(tmp_path / "token.fifo")
    os.mkfifo(fifo, 0o600)
    try:
        finished, value = _read_within(fifo)
        assert finished, "reading the token file hung on a FIFO"
        assert value == f"--token-file {fifo}: not a regular file"
    finally:
        _release(fifo)


def test_a_device_token_file_is_refused(tmp_path):
    finished, value = _read_within("/dev/zero")
    assert finished and value == "--token-file /dev/zero: not a regular file"


def test_a_huge_token_file_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "token"
    with open(path, "wb") as handle:
        handle.truncate(64 * 1024 * 1024)  # sparse: nothing to read in 64 MB of zeros
    path.chmod(0o600)
    finished, value = _read_within(str(path))
    assert finished and value.startswith(f"--token-file {path}: too large for a token")


def test_pi_web_mcp_with_a_fifo_token_file_exits_with_one_line(tmp_path, agent_dir):
    fifo = str(tmp_path / "token.fifo")
    os.mkfifo(fifo, 0o600)
    try:
        proc = subprocess.run(
            [PI_WEB, "mcp", "--http", "--host", "0.0.0.0", "--port", "0", "--token-file", fifo],
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)},
        )
    except subprocess.TimeoutExpired:
        pytest.fail("pi-web mcp --http hung reading a FIFO token file")
    finally:
        _release(fifo)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines == [f"pi-web mcp: --token-file {fifo}: not a regular file"], proc.stderr
