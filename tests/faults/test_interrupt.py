"""Ctrl-C on `pi-web`: the process exits within a second whatever the call is doing (a stalled
body, a running extraction), with status 130 and no traceback, even on a second Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.fault_server import Reply

PI_WEB = str(Path(sys.executable).parent / "pi-web")


class StalledBody:
    """Headers at once, then nothing (until the server stops)."""

    def perform(self, handler, stop) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        handler.wfile.flush()
        stop.wait(60)
        handler.close_connection = True


def start(agent_dir: Path, url: str) -> subprocess.Popen:
    """`pi-web fetch URL` with a 30 s timeout, allowed onto loopback."""
    config = {
        "providers": [
            {
                "name": "direct",
                "type": "direct",
                "options": {"allowPrivateNetwork": True, "timeoutSeconds": 30},
            }
        ]
    }
    path = agent_dir / "web-search.json"
    path.write_text(json.dumps(config))
    path.chmod(0o600)
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)}
    return subprocess.Popen(
        [PI_WEB, "fetch", url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
        # Ctrl-C as on a terminal, even when pytest itself was started with SIGINT ignored (in
        # the background of a non-interactive shell, as `nohup python -m pytest &` is): an
        # ignored SIGINT is inherited, and Python then installs no KeyboardInterrupt handler.
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def children(pid: int) -> list[int]:
    """The processes whose parent is *pid*."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for_request(server, count: int = 1, seconds: float = 20.0) -> None:
    end = time.monotonic() + seconds
    while server.count < count and time.monotonic() < end:
        time.sleep(0.05)
    assert server.count >= count


def interrupt(proc: subprocess.Popen, times: int = 1) -> tuple[float, str]:
    """Send Ctrl-C (*times* times, 0.1 s apart); return seconds until exit and stderr."""
    start_time = time.monotonic()
    for _ in range(times):
        proc.send_signal(signal.SIGINT)
        time.sleep(0.1)
    _, err = proc.communicate(timeout=30)
    return time.monotonic() - start_time, err


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_on_a_stalled_fetch_exits_within_a_second(presses, agent_dir, server):
    """A body that stalls: Ctrl-C (once or twice) ends the process within a second, status 130."""
    server.script(StalledBody())
    proc = start(agent_dir, server.url("/page"))
    wait_for_request(server)
    time.sleep(0.3)
    elapsed, err = interrupt(proc, presses)
    assert elapsed < 1.0 + 0.1 * presses, err
    assert proc.returncode == 130
    assert "Traceback" not in err and "cancelled" in err


def test_ctrl_c_during_extraction_exits_and_stops_the_worker(agent_dir, server):
    """Ctrl-C while a hostile page is being extracted: exit within a second, no worker left."""
    server.script(Reply(200, b"<html><body>" + b"<p>x" * 1_250_000, content_type="text/html"))
    proc = start(agent_dir, server.url("/page"))
    wait_for_request(server)
    workers = children(proc.pid)
    give_up = time.monotonic() + 20  # the page is downloaded and in the worker (a busy machine)
    while not workers and time.monotonic() < give_up:
        time.sleep(0.1)
        workers = children(proc.pid)
    assert workers, "an extraction worker runs"
    time.sleep(0.5)  # the worker is reading the page
    elapsed, err = interrupt(proc)
    assert elapsed < 1.0, err
    assert proc.returncode == 130 and "Traceback" not in err
    time.sleep(0.2)
    assert not [pid for pid in workers if alive(pid)]
